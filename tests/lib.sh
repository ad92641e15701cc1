# lib.sh - helpers for the integration scripts in tests/integration/ (sourced). A script calls `pass NAME`,
# `fail NAME [WHY]`, `skip NAME WHY` or `check NAME COMMAND...`, and ends with `finish`,
# which prints "N passed, N failed, N skipped" and sets the exit status.
# $PACER is the binary under test, $TOOLS the test tools, $TMP a fresh directory that
# is removed on exit; every process recorded with `track PID` is killed on exit.
BUILD=${BUILD:-build}
PACER="$PWD/$BUILD/pacer"
TOOLS="$PWD/$BUILD/tools"
SHARED="$PWD/../shared"
[ -d "$SHARED" ] || SHARED=""
T_PASS=0; T_FAIL=0; T_SKIP=0; T_PIDS=""
TMP=$(mktemp -d)
cleanup() { for p in $T_PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"; }
trap cleanup EXIT INT TERM
track() { T_PIDS="$T_PIDS $1"; }
pass() { T_PASS=$((T_PASS + 1)); echo "ok - $1"; }
fail() { T_FAIL=$((T_FAIL + 1)); echo "FAIL - $1${2:+: $2}"; }
skip() { T_SKIP=$((T_SKIP + 1)); echo "skipped - $1${2:+: $2}"; }
# skip_absent NAME WHAT: NAME needs reference data (../shared, the npm tokenizer) that is
# absent: skipped visibly, but a failure when CI=true, where the data must be present
skip_absent() { if [ "${CI:-}" = true ]; then fail "$1" "$2 is absent, and CI=true needs it"; else skip "$1" "$2 is absent"; fi; }
check() { n=$1; shift; if "$@"; then pass "$n"; else fail "$n"; fi; }
finish() { echo "$T_PASS passed, $T_FAIL failed, $T_SKIP skipped"; [ $T_FAIL -eq 0 ]; }
# free_port: prints a TCP port that was free on 127.0.0.1 a moment ago
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# wait_file FILE [SECONDS]: waits until FILE exists and is not empty
wait_file() { i=0; while [ ! -s "$1" ] && [ $i -lt $(( ${2:-10} * 20 )) ]; do sleep 0.05; i=$((i+1)); done; [ -s "$1" ]; }
