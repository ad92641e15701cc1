#!/bin/sh
# board_web.sh - the board's website against a real 'pacer board' seeded with real receipts
# (varied with tests/tools/receipt_vary.py): over HTTP with curl (security headers, cookie
# flags with and without a loopback host, CSRF and cross-site posts refused, a 10 MB upload
# refused with the board still serving, one suite per view, private submissions hidden, the
# no-script upload and withdrawal), then in headless Chromium (tests/browser/board.test.js:
# the upload flow with nothing sent before confirm, profiles by cookie, keyboard navigation
# of the map, filters, hostile display names). Chromium is Debian's chromium, driven by npm
# playwright-core; without them the browser part is skipped visibly (and fails when CI=true).
# The ranking cases of test_board_site also run here on a private PostgreSQL cluster.
. tests/lib.sh
. tests/board_lib.sh

make_receipt ok || fail "a real community-v2 receipt"
make_receipt v1 --suite community-v1 || fail "a real community-v1 receipt"
vary() { python3 tests/tools/receipt_vary.py "$TMP/ok.json" "$TMP/$1.json" --run-id "web-$1" --model "$2" \
  --gpu "$3" --tok-s "$4" --first-ms "$5"; }
vary a1 org/m "GPU One" 120 80;     vary a2 org/m2 "GPU One" 95 110
vary b1 org/moe "GPU Two" 60 300;   vary b2 org/m "GPU Two" 140 70
vary c1 org/m3 "GPU Three" 30 900;  vary s1 org/secret "GPU One" 50 100
vary n1 org/m "GPU One" 77 90;      vary w1 org/m2 "GPU Two" 88 95
vary up1 org/m "GPU One" 101 85;    vary up2 org/m2 "GPU Two" 66 130
vary up3 org/moe "GPU Three" 55 200
vary xss1 org/m3 "GPU One" 45 400;  vary xss2 org/m3 "GPU Two" 47 380
start_hub || fail "fixture hub starts"
PACER_LOG=info start_board web --db "$TMP/web.db" || { fail "board starts"; finish; exit; }
LOG="$TMP/web.log"

tok() { "$PACER" board token create "$1" --db "$TMP/web.db" 2>/dev/null; }
ALICE=$(tok alice); BOB=$(tok bob); CAROL=$(tok carol)
for u in "a1 $ALICE" "a2 $ALICE" "b1 $BOB" "b2 $BOB" "c1 $CAROL"; do
  set -- $u; upload "$TMP/$1.json" "$2"; [ "$CODE" = 201 ] || fail "seed upload $1" "$CODE $(cat "$TMP/answer.json")"
done
upload "$TMP/v1.json" "$CAROL"; [ "$CODE" = 201 ] || fail "seed upload v1" "$CODE"
upload "$TMP/s1.json" "$ALICE"; SECRET_ID=$(jget id)
check "a private checkpoint waits for review" [ "$(jget state)" = pending-review ]

# ---- pages over HTTP ----
H="$TMP/h.txt"
curl -s -D "$H" -o "$TMP/dash.html" "$BOARD/"
check "dashboard: 200, HTML" grep -qi '^content-type: text/html; charset=utf-8' "$H"
check "dashboard: strict CSP (own script and style only, no inline, no framing)" \
  grep -qi "^content-security-policy: default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'" "$H"
check "dashboard: nosniff, no framing, same-origin referrer" sh -c "grep -qi '^x-content-type-options: nosniff' '$H' &&
  grep -qi '^x-frame-options: DENY' '$H' && grep -qi '^referrer-policy: same-origin' '$H'"
check "dashboard: v2 only (5 published v2 runs of 3 contributors)" \
  sh -c "grep -q 'data-count=\"runs\">5<' '$TMP/dash.html' && grep -q 'data-count=\"contributors\">3<' '$TMP/dash.html'"
curl -s -o "$TMP/v1.html" "$BOARD/?suite=community-v1"
check "v1 tab: the v1 run alone" sh -c "grep -q 'data-count=\"runs\">1<' '$TMP/v1.html'"
check "an unknown suite is a bad request" [ "$(curl -s -o /dev/null -w '%{http_code}' "$BOARD/?suite=nope")" = 400 ]
check "style sheet and script served with their types" sh -c "
  curl -s -o /dev/null -w '%{content_type}' '$BOARD/assets/board.css' | grep -q '^text/css' &&
  curl -s -o /dev/null -w '%{content_type}' '$BOARD/assets/board.js' | grep -q '^text/javascript'"
check "HEAD of the dashboard" [ "$(curl -s -I -o /dev/null -w '%{http_code}' "$BOARD/")" = 200 ]
check "unknown page: an HTML 404; unknown API route: JSON" sh -c "
  curl -s '$BOARD/nowhere' | grep -q 'There is no page at this address' &&
  curl -s '$BOARD/api/v1/nowhere' | grep -q '\"not_found\"'"
check "a pending submission's page is not public" [ "$(curl -s -o /dev/null -w '%{http_code}' "$BOARD/r/$SECRET_ID")" = 404 ]
check "the most benchmarks table ranks alice and bob first together" \
  sh -c "grep -o '<section class=\"card\" id=\"most\".*</section>' '$TMP/dash.html' | grep -q '<td class=\"place\">1</td><td><a href=\"/c/c-[0-9a-f]*\">alice</a></td><td class=\"num\">2</td>.*<td class=\"place\">1</td><td><a href=\"/c/c-[0-9a-f]*\">bob</a>'"

# cookies and CSRF, as a browser without script would send them
JAR="$TMP/jar.txt"
curl -s -c "$JAR" -D "$H" -o "$TMP/form.html" "$BOARD/upload"
check "upload form: a CSRF cookie, HttpOnly and SameSite=Strict, no Secure on loopback" \
  sh -c "tr -d '\r' < '$H' | grep -qi '^set-cookie: pacer_csrf=[0-9a-f]\{32\}; Path=/; HttpOnly; SameSite=Strict$'"
curl -s -D "$H" -o /dev/null -H 'Host: board.example' "$BOARD/upload"
check "behind a public host name the cookie is Secure" grep -qi '^set-cookie: pacer_csrf=.*; HttpOnly; SameSite=Strict; Secure' "$H"
CSRF=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$TMP/form.html")
post() { # post FILE NAME TOKEN [CURL ARGS...]: the upload form as a browser posts it; status in $CODE
  f=$1; n=$2; t=$3; shift 3
  CODE=$(curl -s -b "$JAR" -c "$JAR" -o "$TMP/post.html" -w '%{http_code}' -F "csrf=$t" -F "display_name=$n" \
    -F "consent=on" -F "receipt=@$f;type=application/json" "$@" "$BOARD/upload")
}
posts() { grep -c 'http: POST /upload' "$LOG"; }
n0=$(posts)
post "$TMP/n1.json" "No Script" "$CSRF" -H "Origin: http://evil.example"
check "a cross-site post (foreign Origin) is refused" sh -c "[ $CODE = 403 ] && grep -q 'Refused' '$TMP/post.html'"
post "$TMP/n1.json" "No Script" "$CSRF" -H "Sec-Fetch-Site: cross-site"
check "a cross-site post (Sec-Fetch-Site) is refused" [ "$CODE" = 403 ]
post "$TMP/n1.json" "No Script" "0000000000000000000000000000000000000000000000000000000000000000"
check "a post with a wrong CSRF token is refused" [ "$CODE" = 403 ]
CODE=$(curl -s -o /dev/null -w '%{http_code}' -F "csrf=$CSRF" -F "display_name=x" -F "receipt=@$TMP/n1.json" "$BOARD/upload")
check "a post without the CSRF cookie is refused" [ "$CODE" = 403 ]
post "$TMP/n1.json" "No Script" "$CSRF" -H "Origin: $BOARD"
check "the board's own form (no script) publishes" sh -c "[ $CODE = 201 ] && grep -q 'id=\"result-state\">public<' '$TMP/post.html'"
check "it set a profile cookie" grep -q 'pacer_profile' "$JAR"
COOKIE=$(awk '$6 == "pacer_profile" {print $7}' "$JAR")
upload "$TMP/w1.json" "$COOKIE"
check "the profile cookie is no API upload token" [ "$CODE" = 401 ]
check "the refused posts stored nothing" sh -c "curl -s '$BOARD/' | grep -q 'data-count=\"runs\">6<'"
check "the access log shows every post" [ $(( $(posts) - n0 )) = 5 ]
RID=$(sed -n 's|.*id="result-url" href="/r/\([^"]*\)".*|\1|p' "$TMP/post.html")
MYPID=$(grep -o 'href="/c/c-[0-9a-f]*"' "$TMP/post.html" | head -n 1 | sed 's|href="/c/||; s|"||')
curl -s -b "$JAR" -c "$JAR" -o "$TMP/mine.html" "$BOARD/r/$RID"
TOKW=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$TMP/mine.html")
check "its contributor is offered withdrawal" [ -n "$TOKW" ]
check "others are not" sh -c "! curl -s '$BOARD/r/$RID' | grep -q withdraw"
CODE=$(curl -s -b "$JAR" -o /dev/null -w '%{http_code}' -d "csrf=$TOKW" "$BOARD/r/$RID/withdraw" -H "Origin: http://evil.example")
check "a cross-site withdrawal is refused" [ "$CODE" = 403 ]
CODE=$(curl -s -b "$JAR" -o /dev/null -w '%{http_code}' -d "csrf=$TOKW" "$BOARD/r/$RID/withdraw")
check "withdrawal by its contributor" [ "$CODE" = 303 ]
check "a withdrawn result earns nothing" sh -c "curl -s '$BOARD/' | grep -q 'data-count=\"runs\">5<'"

head -c 10485760 /dev/zero | tr '\0' ' ' > "$TMP/big.json"
post "$TMP/big.json" "Big" "$CSRF"
check "a 10 MB upload is refused" sh -c "[ $CODE = 413 ] && grep -q 'larger than the board accepts' '$TMP/post.html'"
CODE=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $ALICE" --data-binary @"$TMP/big.json" "$BOARD/api/v1/receipts")
check "a 10 MB API upload is refused" [ "$CODE" = 413 ]
check "the board still serves, nothing stored" sh -c "curl -s '$BOARD/' | grep -q 'data-count=\"runs\">5<'"
post "$TMP/w1.json" "Renamed Carla" "$CSRF"
check "a known profile uploading under a new name takes it" sh -c "[ $CODE = 201 ] && [ -n '$MYPID' ] &&
  curl -s '$BOARD/c/$MYPID' | grep -q '<h1>Renamed Carla</h1>' && curl -s '$BOARD/' | grep -q '>Renamed Carla</a>'"

# ---- the ranking cases of test_board_site on PostgreSQL (SQLite: the unit pass) ----
if pg_start; then
  for t in ties_share_honours unrounded_values_decide pending_and_withdrawn_earn_nothing unknown_sizes_unranked \
           a_new_display_name_shows_everywhere_and_merges_nothing v1_and_v2_never_mixed; do
    db=$(pg_db "rank_$t")
    PACER_TEST_PG="$db" "$BUILD/tests/test_board_site" --jobs 1 --filter "site_rank/$t" > "$TMP/pg-$t.txt" 2>&1
    check "PostgreSQL: $t" grep -q 'Passing: 1 | Failing: 0 | Crashing: 0' "$TMP/pg-$t.txt"
  done
  pg_stop
elif [ "${CI:-}" = true ]; then fail "ranking on PostgreSQL" "$PG_WHY"
else skip "ranking on PostgreSQL" "$PG_WHY"
fi

# ---- in a browser ----
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ] || [ ! -d node_modules/playwright-core ]; then
  why="Chromium (Debian chromium) or npm playwright-core is not installed"
  if [ "${CI:-}" = true ]; then fail "browser tests" "$why"; else skip "browser tests" "$why"; fi
else
  mkdir -p "$TMP/evil"
  EVIL_PORT=$(free_port)
  cat > "$TMP/evil/evil.html" <<EOT
<!DOCTYPE html><form id="f" method="post" action="$BOARD/upload" enctype="multipart/form-data">
<input name="csrf" value="$CSRF"><input name="display_name" value="evil"><textarea name="receipt">$(cat "$TMP/w1.json")</textarea>
</form><script>document.getElementById('f').submit()</script>
EOT
  python3 -m http.server "$EVIL_PORT" --bind 127.0.0.1 --directory "$TMP/evil" >/dev/null 2>&1 &
  track $!
  CHROMIUM="$CHROMIUM" node tests/browser/board.test.js "$BOARD" "$TMP" "$LOG" "http://localhost:$EVIL_PORT" \
    > "$TMP/browser.out" 2>&1
  rc=$?
  while IFS= read -r line; do
    case "$line" in
      "ok - "*) pass "browser: ${line#ok - }";;
      "FAIL - "*) fail "browser: ${line#FAIL - }";;
    esac
  done < "$TMP/browser.out"
  grep -q '^ok - ' "$TMP/browser.out" || fail "browser run" "$(tail -n 5 "$TMP/browser.out")"
  [ $rc -eq 0 ] || grep -q '^FAIL - ' "$TMP/browser.out" || fail "browser run exit $rc" "$(tail -n 5 "$TMP/browser.out")"
fi
finish
