#!/bin/sh
# board_client.sh - 'pacer bench publish | login | logout' and 'bench --publish' against a real
# board and capture listeners: the token kept out of every file and output but the 0600
# credentials file (a canary: the token itself), bound to its exact URL, never sent through
# a redirect or a proxy; $PACER_BENCHMARK_TOKEN used and never saved; the refusals that come
# before any run, credential lookup or upload.
. tests/lib.sh
. tests/board_lib.sh

make_receipt ok || fail "a real receipt"
mutate "$TMP/ok.json" "$TMP/local.json" "r['model']['publishable'] = False" \
  "$TMP/proxy.json" "r['run_id'] = 'via-proxy'" "$TMP/env.json" "r['run_id'] = 'env-token'"
start_hub || fail "fixture hub starts"
TOK=$("$PACER" board token create carol --db "$TMP/board.db" 2>/dev/null)
start_board b --db "$TMP/board.db" || fail "board starts"
H="$TMP/home"; mkdir -p "$H"; OUT="$TMP/out"; mkdir -p "$OUT"
P() { n=$1; shift; HOME="$H" "$PACER" "$@" > "$OUT/$n.out" 2> "$OUT/$n.err"; }
curl -s "$BOARD/api/v1/capabilities" > "$TMP/caps.json"
# capture NAME [ARGS]: a recording listener; sets $CAP and $CAP_LOG
capture() {
  cn=$1; shift
  CAP_LOG="$TMP/$cn.log"; : > "$CAP_LOG"
  python3 tests/tools/capture_server.py --port-file "$TMP/$cn.port" --log "$CAP_LOG" --caps "$TMP/caps.json" "$@" \
    2>"$TMP/$cn.err" &
  track $!
  wait_file "$TMP/$cn.port" 20 || fail "capture listener $cn starts"
  CAP="http://127.0.0.1:$(cat "$TMP/$cn.port")"
}

# login and the stored token
echo "not-the-token" | P badlogin bench login --token-stdin --upload-url "$BOARD"
check "login with a token the board does not know fails, nothing stored" \
  sh -c "[ $? -ne 0 ] && grep -q 'does not accept this token' '$OUT/badlogin.err' && [ ! -e '$H/.pacer/credentials.json' ]"
printf '%s\n' "$TOK" | P login bench login --token-stdin --upload-url "$BOARD/"
check "login --token-stdin stores the token" sh -c "[ $? -eq 0 ] && grep -q 'logged in to $BOARD as carol' '$OUT/login.out'"
check "credentials file mode 0600, directory 0700" \
  [ "$(stat -c %a "$H/.pacer/credentials.json") $(stat -c %a "$H/.pacer")" = "600 700" ]
check "credentials bound to the exact URL" grep -q "\"$BOARD\"" "$H/.pacer/credentials.json"
P pub bench publish "$TMP/ok.json" --yes
check "publish with the stored token, to the board logged into" grep -q "^published: $BOARD/r/s-" "$OUT/pub.out"
check "publish showed what was sent first" sh -c "grep -q 'about to publish to $BOARD' '$OUT/pub.out' && grep -q 'Test GPU 24GB' '$OUT/pub.out'"

# another URL never receives it
capture other
P other bench publish "$TMP/ok.json" --yes --upload-url "$CAP"
check "another URL: refused as not logged in" sh -c "[ $? -ne 0 ] && grep -q 'not logged in to $CAP' '$OUT/other.err'"
check "another URL got no token and no upload" sh -c "! grep -q -e 'auth=yes' -e '^POST' '$CAP_LOG'"
LOCALHOST_URL=$(echo "$BOARD" | sed 's/127.0.0.1/localhost/')
P samehost bench publish "$TMP/ok.json" --yes --upload-url "$LOCALHOST_URL"
check "the same board under another name is another URL" grep -q "not logged in to $LOCALHOST_URL" "$OUT/samehost.err"

# redirects are not followed, by the capabilities request or the upload
capture target; TARGET_LOG=$CAP_LOG; TARGET=$CAP
capture redir --redirect "$TARGET/api/v1/capabilities"
P redir bench publish "$TMP/ok.json" --yes --upload-url "$CAP"
check "a 302 answer is not followed" sh -c "[ $? -ne 0 ] && grep -q 'redirect' '$OUT/redir.err' && [ ! -s '$TARGET_LOG' ]"
capture redirpost --redirect-post "$TARGET/api/v1/receipts"
HOME="$H" PACER_BENCHMARK_TOKEN=$TOK "$PACER" bench publish "$TMP/ok.json" --yes --upload-url "$CAP" > "$OUT/rp.out" 2> "$OUT/rp.err"
check "a 302 to the upload is not followed: the token goes nowhere else" \
  sh -c "[ $? -ne 0 ] && grep -q 'redirect' '$OUT/rp.err' && [ ! -s '$TARGET_LOG' ]"
check "a failed publication says the saved receipt can still be uploaded" \
  grep -q "the saved receipt $TMP/ok.json can be uploaded through the website" "$OUT/rp.err"

# proxy variables are ignored
capture proxy
HOME="$H" http_proxy="$CAP" https_proxy="$CAP" HTTP_PROXY="$CAP" HTTPS_PROXY="$CAP" ALL_PROXY="$CAP" all_proxy="$CAP" \
  "$PACER" bench publish "$TMP/proxy.json" --yes > "$OUT/proxy.out" 2> "$OUT/proxy.err"
check "https_proxy and friends are ignored" sh -c "grep -q '^published: ' '$OUT/proxy.out' && [ ! -s '$CAP_LOG' ]"

# logout, then the token from the environment: used, never saved
P logout bench logout
check "logout removes the stored token" sh -c "grep -q 'logged out' '$OUT/logout.out' && [ ! -e '$H/.pacer/credentials.json' ]"
P nourl bench publish "$TMP/ok.json" --yes
check "after logout there is no board to publish to" grep -q 'no results board' "$OUT/nourl.err"
HOME="$H" PACER_BENCHMARK_TOKEN=$TOK "$PACER" bench publish "$TMP/env.json" --yes --upload-url "$BOARD" \
  > "$OUT/env.out" 2> "$OUT/env.err"
check "PACER_BENCHMARK_TOKEN publishes" grep -q '^published: ' "$OUT/env.out"
check "PACER_BENCHMARK_TOKEN is not saved" [ ! -e "$H/.pacer/credentials.json" ]

# refusals before any request
capture quiet
P local bench publish "$TMP/local.json" --yes --upload-url "$CAP"
check "a local model is refused before any request" \
  sh -c "[ $? -ne 0 ] && grep -q 'local model cannot be published' '$OUT/local.err' && [ ! -s '$CAP_LOG' ]"
P plain bench publish "$TMP/ok.json" --yes --upload-url http://example.com
check "plain http to another machine is refused" grep -q 'only for a board on this machine' "$OUT/plain.err"
P userinfo bench publish "$TMP/ok.json" --yes --upload-url "https://user:pw@board.example"
check "a URL with a user and password is refused" grep -q 'no user' "$OUT/userinfo.err"
HOME="$H" PACER_BENCHMARK_TOKEN=$TOK setsid -w "$PACER" bench publish "$TMP/ok.json" --upload-url "$CAP" \
  > "$OUT/noyes.out" 2> "$OUT/noyes.err" < /dev/null
check "no terminal and no --yes: nothing uploaded" \
  sh -c "grep -q 'pass --yes' '$OUT/noyes.err' && ! grep -q '^POST' '$CAP_LOG'"

touch "$TMP/model.gguf"
capture quiet2
P runlocal bench "$TMP/model.gguf" --publish --yes --upload-url "$CAP"
check "bench --publish: a local model refused before the run" \
  sh -c "[ $? -ne 0 ] && grep -q 'local model' '$OUT/runlocal.err' && [ ! -s '$CAP_LOG' ] && [ ! -d '$H/.pacer/benchmarks' ]"
HOME="$H" PACER_BENCHMARK_TOKEN=$TOK "$PACER" bench org/m --server http://127.0.0.1:9 --model-id m --backend rocm \
  --publish --yes --upload-url "$BOARD" > "$OUT/runrocm.out" 2> "$OUT/runrocm.err"
check "bench --publish: ROCm refused before the run" \
  sh -c "grep -q 'does not take rocm' '$OUT/runrocm.err' && ! grep -q 'cannot reach' '$OUT/runrocm.err'"
P runnotoken bench org/m --server http://127.0.0.1:9 --model-id m --publish --yes --upload-url "$BOARD"
check "bench --publish: not logged in, refused before the run" \
  sh -c "grep -q 'not logged in' '$OUT/runnotoken.err' && ! grep -q 'cannot reach' '$OUT/runnotoken.err'"
stop_board
start_board v1only --db "$TMP/board.db" --accept v1 || fail "a v1-only board starts"
HOME="$H" PACER_BENCHMARK_TOKEN=$TOK "$PACER" bench org/m --server http://127.0.0.1:9 --model-id m --publish --yes \
  --upload-url "$BOARD" > "$OUT/runv2.out" 2> "$OUT/runv2.err"
check "bench --publish: v2 refused before the run by a board that does not take it" \
  sh -c "grep -q 'does not take community-v2' '$OUT/runv2.err' && ! grep -q 'cannot reach' '$OUT/runv2.err'"
stop_board
start_board b2 --db "$TMP/board.db" || fail "board restarts"
"$TOOLS/fault_server" --port-file "$TMP/fs.port" --pace-us 0 --script $FAULT/manifest-ok.script \
  --script $FAULT/normal-256.script >/dev/null 2>&1 &
track $!; wait_file "$TMP/fs.port" 10
HOME="$H" PACER_BENCHMARK_TOKEN=$TOK "$PACER" bench org/m --server "http://127.0.0.1:$(cat "$TMP/fs.port")" --model-id m \
  --publish --yes --upload-url "$BOARD" > "$OUT/run.out" 2> "$OUT/run.err"
check "bench --publish: runs, saves, publishes" sh -c "[ $? -eq 0 ] && grep -q '^receipt: ' '$OUT/run.out' && grep -q '^published: ' '$OUT/run.out'"
stop_board

# the canary: the token is in no output and no file (receipts, board store and log included)
check "token canary: no output holds the token" sh -c "! grep -rqa '$TOK' '$OUT'"
check "token canary: no file under HOME holds it" sh -c "! grep -rqa '$TOK' '$H'"
check "token canary: not in the board's store or log" sh -c "! cat '$TMP/board.db'* '$TMP'/*.log | grep -qa '$TOK'"
finish
