#!/bin/sh
# managed.sh - `pacer bench MODEL` starting its own engine: each adapter's command line
# (through a fake engine that records its argv), start-up failures with the log's tail,
# model resolution from a Hugging Face cache layout, and signals: Ctrl-C during start-up,
# once during a run, SIGTERM and SIGHUP — with no engine process left behind.
. tests/lib.sh
FAKE="$PWD/tests/tools/fake_engine.py"
export HOME="$TMP/home"; mkdir -p "$HOME"
unset HF_HOME HF_HUB_CACHE
export FAKE_ENGINE_ARGV="$TMP/argv" FAKE_ENGINE_PIDFILE="$TMP/engine.pid"
MODEL="$TMP/tiny.gguf"; head -c 4096 /dev/urandom > "$MODEL"
SHORT="--reps 1 --tokens 8"

group_gone() { pid=$(cat "$FAKE_ENGINE_PIDFILE" 2>/dev/null) || return 1; ! kill -0 -- "-$pid" 2>/dev/null; }

for engine in builtin llama.cpp vllm sglang mlx; do
  : > "$FAKE_ENGINE_ARGV"; rm -f "$FAKE_ENGINE_PIDFILE"
  "$PACER" bench "$MODEL" --engine "$engine" --engine-bin "$FAKE" $SHORT --output "$TMP/r-$engine.json" >"$TMP/out" 2>&1
  rc=$?
  argv=$(cat "$FAKE_ENGINE_ARGV")
  case $engine in
    builtin) want='"serve", "'"$MODEL"'", "--host", "127.0.0.1", "--port", "[0-9]*", "--name", "tiny.gguf", "--no-prompt-cache"' ;;
    llama.cpp) want='"--model", "'"$MODEL"'", "--host", "127.0.0.1", "--port", "[0-9]*", "--alias", "tiny.gguf", "--cache-reuse", "0"' ;;
    vllm) want='"serve", "'"$MODEL"'", "--host", "127.0.0.1", "--port", "[0-9]*", "--served-model-name", "tiny.gguf", "--no-enable-prefix-caching"' ;;
    sglang) want='"-m", "sglang.launch_server", "--model-path", "'"$MODEL"'", "--host", "127.0.0.1", "--port", "[0-9]*", "--served-model-name", "tiny.gguf", "--disable-radix-cache"' ;;
    mlx) want='"--model", "'"$MODEL"'", "--host", "127.0.0.1", "--port", "[0-9]*", "--prompt-cache-size", "0"' ;;
  esac
  if [ $rc -eq 0 ] && echo "$argv" | grep -q "^\[$want\]$" && group_gone; then pass "adapter $engine: argv, run complete, engine stopped"
  else fail "adapter $engine" "rc=$rc argv=$argv"; cat "$TMP/out"; fi
done

: > "$FAKE_ENGINE_ARGV"
"$PACER" bench "$MODEL" --engine-bin "$FAKE" --drafter "$TMP/draft.gguf" $SHORT --output "$TMP/d.json" >/dev/null 2>&1
check "drafter flag passed to the builtin engine" grep -q '"--drafter", "'"$TMP"'/draft.gguf"' "$FAKE_ENGINE_ARGV"
check "drafter path never in the receipt" sh -c "! grep -q draft.gguf '$TMP/d.json'"
"$PACER" bench "$MODEL" --engine-bin "$FAKE" --drafter "$TMP/draft.gguf" --serial $SHORT --output "$TMP/s.json" >"$TMP/out" 2>&1
check "--serial overriding --drafter says so" grep -q "serial overrides --drafter" "$TMP/out"

python3 - "$TMP/r-builtin.json" <<'PY' && pass "managed receipt: mode, engine, probed hardware, file name + sha256, unpublishable" || fail "managed receipt fields"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["mode"] == "managed" and r["engine"] == "builtin", r["mode"]
assert r["hardware"]["source"] == "probed"
assert r["python_version"] == "none"
m = r["model"]
assert m["id"] == "tiny.gguf" and m["publishable"] is False
assert m["checkpoint_hashes"][0]["file"] == "tiny.gguf" and len(m["checkpoint_hashes"][0]["sha256"]) == 64
assert "/" not in json.dumps(m["checkpoint_hashes"])
PY
check "managed receipt names no local path" sh -c "! grep -q '$TMP' '$TMP/r-builtin.json'"
check "inspect shows a managed receipt" sh -c "'$PACER' bench inspect '$TMP/r-builtin.json' | grep -q 'mode *managed'"

# the builtin engine for real: pacer serve on a synthetic checkpoint
"$PACER" model synth -o "$TMP/real.gguf" --dim 64 --layers 2 --heads 4 --ffn 128 --type q8_0 --seed 3 >/dev/null 2>&1
"$PACER" bench "$TMP/real.gguf" --threads 1 --reps 1 --tokens 8 --output "$TMP/real.json" >"$TMP/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && "$PACER" bench inspect "$TMP/real.json" | grep -q "mode *managed" && ! pgrep -f "serve $TMP/real.gguf" >/dev/null; then
  pass "builtin engine (pacer serve) managed run: complete, engine stopped"; else fail "builtin managed run" "rc=$rc"; cat "$TMP/out"; fi

# start-up failures
FAKE_ENGINE_MODE=die "$PACER" bench "$MODEL" --engine-bin "$FAKE" $SHORT --output "$TMP/x.json" >"$TMP/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "fatal: cannot load model (fake)" "$TMP/out" && [ ! -e "$TMP/x.json" ]; then pass "engine dies at start-up: exit 1 with the log's last lines"; else fail "engine dies" "rc=$rc"; fi
FAKE_ENGINE_MODE=hang "$PACER" bench "$MODEL" --engine-bin "$FAKE" --startup-timeout 2 $SHORT --output "$TMP/x.json" >"$TMP/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "not ready after 2 s" "$TMP/out" && group_gone; then pass "never ready: exit 1 after --startup-timeout, engine stopped"; else fail "never ready" "rc=$rc"; fi
"$PACER" bench "$MODEL" --engine no-such-engine >"$TMP/out" 2>&1
check "unknown engine refused" grep -q "unknown engine" "$TMP/out"

# Hugging Face cache resolution
: > "$FAKE_ENGINE_ARGV"
"$PACER" bench some-org/not-cached --engine-bin "$FAKE" $SHORT >"$TMP/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "pacer pull some-org/not-cached" "$TMP/out" && [ ! -s "$FAKE_ENGINE_ARGV" ]; then pass "uncached repo: exit 1 with the pull hint, nothing started"; else fail "uncached repo" "rc=$rc"; cat "$TMP/out"; fi
C=0123456789abcdef0123456789abcdef01234567
R="$TMP/hf/models--some-org--tiny-model"
mkdir -p "$R/blobs" "$R/snapshots/$C" "$R/refs"
cp "$MODEL" "$R/blobs/abc123"; ln -s ../../blobs/abc123 "$R/snapshots/$C/tiny-q8_0.gguf"; printf '%s' "$C" > "$R/refs/main"
HF_HUB_CACHE="$TMP/hf" "$PACER" bench some-org/tiny-model --engine-bin "$FAKE" $SHORT --output "$TMP/hf.json" >"$TMP/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && python3 -c "import json,sys; r=json.load(open('$TMP/hf.json')); m=r['model']; sys.exit(0 if m['id']=='some-org/tiny-model' and m['revision']=='$C' and m['publishable'] else 1)"; then
  pass "cached repo id: complete, revision = snapshot commit"; else fail "cached repo id" "rc=$rc"; cat "$TMP/out"; fi

# signals: run pacer in the background, signal it, check exit code, receipt, engine group
signal_case() { # NAME SIGNAL MODE WAIT_FOR EXPECT_RC RECEIPT(yes|no) [second signal]
  rm -f "$FAKE_ENGINE_PIDFILE" "$TMP/sig.json"
  FAKE_ENGINE_MODE=$3 "$PACER" bench "$MODEL" --engine-bin "$FAKE" --reps 2 --tokens 200 --output "$TMP/sig.json" >"$TMP/sig.out" 2>&1 &
  bp=$!
  if [ "$4" = ready ]; then i=0; while ! grep -q "ready" "$TMP/sig.out" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; sleep 0.5
  else wait_file "$FAKE_ENGINE_PIDFILE" 10; sleep 0.3; fi
  kill -"$2" $bp
  [ -n "${7:-}" ] && { sleep 1; kill -"$7" $bp; }
  wait $bp; rc=$?
  sleep 0.3
  ok=1
  [ $rc -eq "$5" ] || ok=0
  if [ "$6" = yes ]; then [ -s "$TMP/sig.json" ] && grep -q '"cancelled"' "$TMP/sig.json" || ok=0; else [ ! -e "$TMP/sig.json" ] || ok=0; fi
  group_gone || ok=0
  if [ $ok -eq 1 ]; then pass "$1"; else fail "$1" "rc=$rc"; cat "$TMP/sig.out"; fi
}
signal_case "Ctrl-C during start-up: exit 130, nothing saved, engine gone" INT hang pid 130 no
signal_case "Ctrl-C once during the run: exit 130, receipt saved, engine gone" INT slow ready 130 yes
signal_case "SIGTERM during the run: exit 143, no receipt, engine gone" TERM slow ready 143 no
signal_case "SIGHUP during the run: exit 129, no receipt, engine gone" HUP slow ready 129 no
# the engine ignores SIGTERM, so the first Ctrl-C waits out its grace period; the second kills it at once
signal_case "second Ctrl-C: kills the engine at once and exits" INT stubborn ready 130 no INT
finish
