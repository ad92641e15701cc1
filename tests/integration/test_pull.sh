#!/bin/sh
# test_pull.sh - 'pacer pull' against the fixture hub on 127.0.0.1: the exact cache layout,
# a second pull that downloads nothing, a cut transfer that resumes and verifies, a corrupted
# file rejected, the token kept secret, a many-quantization GGUF repo listed, not downloaded,
# and the pulled tree resolved from the cache with no network (hub_resolve tool).
. tests/lib.sh
FIX="$PWD/tests/tools/fixture_hub.py"
COMMIT=5d1e2f3a4b5c6d7e8f90a1b2c3d4e5f60718293a
CANARY="hf_canary$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
mkdir -p "$TMP/hub/org/two" "$TMP/hub/org/quants" "$TMP/hub/org/big"
printf '{"architectures":["LlamaForCausalLM"]}\n' > "$TMP/hub/org/two/config.json"
head -c 300000 /dev/urandom > "$TMP/hub/org/two/model.gguf"
for q in Q4_0 Q8_0 F16; do head -c 3000 /dev/urandom > "$TMP/hub/org/quants/m-$q.gguf"; done
echo "# quants" > "$TMP/hub/org/quants/README.md"
head -c 200000 /dev/urandom > "$TMP/hub/org/big/weights.gguf"
mkdir -p "$TMP/hub/org/big/tok"; echo '{"model":{}}' > "$TMP/hub/org/big/tok/tokenizer.json"

# start_hub NAME ARGS...: runs the fixture hub, sets $EP to its endpoint and $LOG to its log
start_hub() {
  name=$1; shift
  LOG="$TMP/$name.log"; : > "$LOG"
  FIXTURE_TOKEN=${FIXTURE_TOKEN:-} python3 "$FIX" --root "$TMP/hub" --commit $COMMIT --tag v1 \
    --port-file "$TMP/$name.port" --log "$LOG" "$@" 2>"$TMP/$name.err" &
  HUB_PID=$!; track $HUB_PID
  wait_file "$TMP/$name.port" 10 || { fail "$name hub starts"; return 1; }
  EP="http://127.0.0.1:$(cat "$TMP/$name.port")"
}
stop_hub() { kill $HUB_PID 2>/dev/null; wait $HUB_PID 2>/dev/null; }
pull() { HF_ENDPOINT="$EP" HF_HUB_CACHE="$CACHE" "$PACER" pull "$@" >>"$TMP/out" 2>>"$TMP/err"; }

# 1. layout of a two-file repo, compared as a tree
CACHE="$TMP/cache1"
start_hub h1
pull org/two; check "pull of a two-file repo succeeds" test $? -eq 0
c_sha1=$(git hash-object "$TMP/hub/org/two/config.json")
m_sha256=$(sha256sum "$TMP/hub/org/two/model.gguf" | cut -d' ' -f1)
sort > "$TMP/want.tree" <<EOT
d blobs 
d refs 
d snapshots 
d snapshots/$COMMIT 
f blobs/$c_sha1 
f blobs/$m_sha256 
f refs/main 
l snapshots/$COMMIT/config.json ../../blobs/$c_sha1
l snapshots/$COMMIT/model.gguf ../../blobs/$m_sha256
EOT
(cd "$CACHE/models--org--two" && find . -mindepth 1 -printf '%y %P %l\n' | sort) > "$TMP/got.tree"
check "cache tree is exactly blobs/, relative snapshot links, refs/main" cmp -s "$TMP/want.tree" "$TMP/got.tree"
diff "$TMP/want.tree" "$TMP/got.tree" >&2
check "refs/main holds the commit, no newline" test "$(cat "$CACHE/models--org--two/refs/main")" = $COMMIT
check "blob bytes equal the hub's" cmp -s "$CACHE/models--org--two/snapshots/$COMMIT/model.gguf" "$TMP/hub/org/two/model.gguf"
check "large file came through the redirect to the storage path" grep -q "^GET /storage/$m_sha256 " "$LOG"
check "summary names the snapshot" grep -q "snapshot $CACHE/models--org--two/snapshots/$COMMIT" "$TMP/out"

# 2. a second pull downloads nothing
: > "$LOG"
pull org/two; check "second pull succeeds" test $? -eq 0
check "second pull fetches no file" sh -c "! grep -q -e resolve -e storage '$LOG'"
check "second pull reports 0 downloaded" grep -q "0 downloaded, 2 already cached" "$TMP/out"
pull org/two@v1; check "pull of a tag shares the blobs" test "$(ls "$CACHE/models--org--two/blobs" | wc -l)" -eq 2
check "refs/v1 written" test "$(cat "$CACHE/models--org--two/refs/v1")" = $COMMIT
stop_hub
# a second commit with the same files: a new snapshot, the blobs stored once, nothing fetched
C2=0f0e0d0c0b0a09080706050403020100f0e0d0c0
LOG="$TMP/h1c.log"; : > "$LOG"
python3 "$FIX" --root "$TMP/hub" --commit $C2 --port-file "$TMP/h1c.port" --log "$LOG" 2>/dev/null &
HUB_PID=$!; track $HUB_PID; wait_file "$TMP/h1c.port" 10; EP="http://127.0.0.1:$(cat "$TMP/h1c.port")"
pull org/two; check "pull of a second commit succeeds" test $? -eq 0
check "two snapshots share two blobs" sh -c "test \$(ls '$CACHE/models--org--two/snapshots' | wc -l) -eq 2 && test \$(ls '$CACHE/models--org--two/blobs' | wc -l) -eq 2"
check "nothing fetched for shared files" sh -c "! grep -q -e resolve -e storage '$LOG'"
check "refs/main moved to the new commit" test "$(cat "$CACHE/models--org--two/refs/main")" = $C2
check "refs/v1 still names the old one" test "$(cat "$CACHE/models--org--two/refs/v1")" = $COMMIT
stop_hub

# 3. resolve the pulled tree from the cache, hub stopped
HF_HUB_CACHE="$CACHE" "$TOOLS/hub_resolve" org/two > "$TMP/res" 2>&1
check "hub_cache_resolve finds the pulled snapshot without network" \
  grep -qx "commit $C2 gguf $CACHE/models--org--two/snapshots/$C2/model.gguf repo org/two" "$TMP/res"
HF_HUB_CACHE="$CACHE" "$TOOLS/hub_resolve" org/two v1 > "$TMP/res" 2>&1
check "hub_cache_resolve follows refs/v1" grep -qx "commit $COMMIT gguf .*/snapshots/$COMMIT/model.gguf repo org/two" "$TMP/res"
HF_HUB_CACHE="$CACHE" "$TOOLS/hub_resolve" org/two $COMMIT > "$TMP/res" 2>&1
check "hub_cache_resolve takes a commit" grep -q "^commit $COMMIT " "$TMP/res"
HF_HUB_CACHE="$CACHE" "$TOOLS/hub_resolve" org/absent > "$TMP/res" 2>&1
check "a repo not in the cache names 'pacer pull'" grep -q "pacer pull org/absent" "$TMP/res"
# pacer bench REPO on the pulled tree: found without network, snapshot commit recorded
HOME="$TMP" HF_HUB_CACHE="$CACHE" "$PACER" bench org/two --engine-bin "$PWD/tests/tools/fake_engine.py" --reps 1 --tokens 4 \
  --output "$TMP/pulled.json" > "$TMP/res" 2>&1
check "pacer bench REPO after the pull records the snapshot commit as revision" \
  python3 -c "import json,sys; m=json.load(open('$TMP/pulled.json'))['model']; sys.exit(0 if m['id']=='org/two' and m['revision']=='$C2' else 1)"

# 4. cut mid-file: first pull fails and keeps only .incomplete; the next resumes with Range
CACHE="$TMP/cache2"; rm -f "$TMP/out" "$TMP/err"
start_hub h2 --drop-after 70000 --refuse-range
pull org/big; check "a cut transfer fails the pull" test $? -ne 0
big_sha=$(sha256sum "$TMP/hub/org/big/weights.gguf" | cut -d' ' -f1)
check "partial kept as .incomplete" test "$(stat -c %s "$CACHE/models--org--big/blobs/$big_sha.incomplete" 2>/dev/null)" = 70000
check "no blob and no snapshot link for a partial file" \
  sh -c "! test -e '$CACHE/models--org--big/blobs/$big_sha' && ! test -e '$CACHE/models--org--big/snapshots/$COMMIT/weights.gguf'"
stop_hub
start_hub h3
pull org/big; check "the next pull completes" test $? -eq 0
check "it resumed with Range from the partial size" grep -q "^GET /storage/$big_sha range=bytes=70000- " "$LOG"
check "the resumed file verifies" cmp -s "$CACHE/models--org--big/snapshots/$COMMIT/weights.gguf" "$TMP/hub/org/big/weights.gguf"
check "no .incomplete left" sh -c "! ls '$CACHE/models--org--big/blobs/' | grep -q incomplete"
stop_hub
# in-run retry: a drop once, resumed within the same pull
CACHE="$TMP/cache3"
start_hub h4 --drop-after 50000
pull org/big; check "a pull retries a dropped transfer with Range" test $? -eq 0
check "the retry asked bytes=50000-" grep -q "range=bytes=50000-" "$LOG"
tok_sha1=$(git hash-object "$TMP/hub/org/big/tok/tokenizer.json")
check "a nested file links one level further up" \
  test "$(readlink "$CACHE/models--org--big/snapshots/$COMMIT/tok/tokenizer.json")" = "../../../blobs/$tok_sha1"
stop_hub

# a complete .incomplete (a crash before the rename) is verified and moved, not fetched again
CACHE="$TMP/cache8"; mkdir -p "$CACHE/models--org--big/blobs"
cp "$TMP/hub/org/big/weights.gguf" "$CACHE/models--org--big/blobs/$big_sha.incomplete"
start_hub h8
pull org/big; check "a complete partial is verified and placed" test $? -eq 0
check "without fetching it again" sh -c "! grep -q storage '$LOG' && test -f '$CACHE/models--org--big/blobs/$big_sha'"
stop_hub

# 5. corrupted byte: rejected, nothing placed
CACHE="$TMP/cache4"; : > "$TMP/err"
start_hub h5 --corrupt
pull org/big; check "a corrupted file fails the pull" test $? -ne 0
check "the message names the mismatch" grep -q "does not match" "$TMP/err"
check "nothing placed: no blob, no link, no partial of the bad file" \
  sh -c "! ls '$CACHE/models--org--big/blobs/' | grep -q '^$big_sha' && ! test -e '$CACHE/models--org--big/snapshots/$COMMIT/weights.gguf'"
stop_hub

# 6. HF_TOKEN: sent, gated without it, never printed or written
CACHE="$TMP/cache5"; : > "$TMP/out"; : > "$TMP/err"
FIXTURE_TOKEN="$CANARY" start_hub h6
pull org/two; check "gated repo without a token fails" test $? -ne 0
check "the 401 message says to set HF_TOKEN" grep -q "set HF_TOKEN" "$TMP/err"
HF_TOKEN="$CANARY" pull org/two; check "with HF_TOKEN the gated repo pulls" test $? -eq 0
check "the token was sent" grep -q "auth=yes" "$LOG"
HF_TOKEN="$CANARY" pull org/nope
HF_TOKEN="$CANARY" pull org/two@nosuchrev
stop_hub
HF_TOKEN="$CANARY" pull org/two # the hub is gone: the "no network" message
check "HF_TOKEN appears in no output and no file (the whole test directory and the cache)" \
  sh -c "! grep -r -q -F '$CANARY' '$TMP' && ! grep -r -q -F '$CANARY' '$CACHE'"

# 7. GGUF repo with several quantizations, no --include: listed, nothing downloaded
CACHE="$TMP/cache6"; : > "$TMP/out"
start_hub h7
pull org/quants; rc=$?
check "many quantizations without --include exits non-zero" test $rc -eq 2
check "the listing names each .gguf with its size" sh -c "grep -q 'm-Q4_0.gguf' '$TMP/out' && grep -q 'm-Q8_0.gguf' '$TMP/out' && grep -q 'm-F16.gguf' '$TMP/out' && grep -q 'GB' '$TMP/out'"
check "nothing downloaded" sh -c "! grep -q -e resolve -e storage '$LOG' && ! test -e '$CACHE/models--org--quants/blobs'"
pull org/quants --include '*Q8_0.gguf'; check "--include picks one" test $? -eq 0
check "only that file is in the snapshot" test "$(ls "$CACHE/models--org--quants/snapshots/$COMMIT")" = m-Q8_0.gguf
CACHE="$TMP/cache7"
pull org/two --exclude '*.json'; check "--exclude drops files" test "$(ls "$CACHE/models--org--two/snapshots/$COMMIT")" = model.gguf
pull org/two@nosuchrev; check "unknown revision fails" test $? -ne 0
check "its message names the revision" grep -q "revision 'nosuchrev' not found" "$TMP/err"
pull org/missing; check "unknown repo says not found" grep -q "repo org/missing not found" "$TMP/err"
stop_hub
HF_ENDPOINT="http://127.0.0.1:$(free_port)" HF_HUB_CACHE="$CACHE" "$PACER" pull org/two 2>"$TMP/err2"
check "no network is named" grep -q "cannot reach" "$TMP/err2"

# disk full: the download's .incomplete file leads to /dev/full, where every write fails with ENOSPC
if [ -w /dev/full ]; then
  CACHE="$TMP/cache9"; mkdir -p "$CACHE/models--org--big/blobs"
  ln -s /dev/full "$CACHE/models--org--big/blobs/$big_sha.incomplete"
  start_hub h9
  HF_ENDPOINT="$EP" HF_HUB_CACHE="$CACHE" "$PACER" pull org/big >/dev/null 2>"$TMP/err3"; rc=$?
  stop_hub
  if [ $rc -ne 0 ] && grep -q "disk full" "$TMP/err3" && [ ! -e "$CACHE/models--org--big/blobs/$big_sha" ] &&
     [ ! -e "$CACHE/models--org--big/snapshots/$COMMIT/weights.gguf" ]; then
    pass "disk full is named, and nothing is placed"; else fail "disk full" "rc=$rc $(cat "$TMP/err3")"; fi
else skip "disk full" "no writable /dev/full"; fi
finish
