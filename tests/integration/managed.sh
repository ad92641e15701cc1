#!/bin/sh
# managed.sh - `pacer bench MODEL` starting its own engine: each adapter's command line
# (through a fake engine that records its argv), start-up failures with the log's tail,
# model resolution from a Hugging Face cache layout (GGUF and HF-format checkpoints, each
# for the engines that load it), the uncached read sample, and signals: Ctrl-C during start-up,
# once during a run, SIGTERM and SIGHUP — with no engine process left behind.
. tests/lib.sh
FAKE="$PWD/tests/tools/fake_engine.py"
export HOME="$TMP/home"; mkdir -p "$HOME"
unset HF_HOME HF_HUB_CACHE
export FAKE_ENGINE_ARGV="$TMP/argv" FAKE_ENGINE_PIDFILE="$TMP/engine.pid"
MODEL="$TMP/tiny.gguf"; head -c 4096 /dev/urandom > "$MODEL"
SHORT="--reps 1 --tokens 8"

# alive PID...: one of them is a live process (a zombie that init has not reaped yet is not)
alive() { for p in "$@"; do st=$(ps -o stat= -p "$p" 2>/dev/null) && case $st in Z*) ;; *) return 0 ;; esac; done; return 1; }
# group_gone: no live process is left in the fake engine's process group (its child included)
group_gone() {
  pid=$(cat "$FAKE_ENGINE_PIDFILE" 2>/dev/null) || return 1
  ! alive $(ps -eo pid=,pgid= | awk -v g="$pid" '$2 == g { print $1 }') $(cat "$FAKE_ENGINE_PIDFILE.child" 2>/dev/null)
}
# on the way out, whatever failed: no engine left behind by a failing case
reap() { pid=$(cat "$FAKE_ENGINE_PIDFILE" 2>/dev/null) && kill -9 -- "-$pid" 2>/dev/null
         child=$(cat "$FAKE_ENGINE_PIDFILE.child" 2>/dev/null) && kill -9 "$child" 2>/dev/null; cleanup; }
trap reap EXIT INT TERM

# argv_is FILE EXPECTED...: the last command line recorded by the fake engine is exactly
# EXPECTED (one argument each; PORT stands for any port number)
argv_is() {
  python3 - "$@" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
got = json.loads(lines[-1]) if lines else None
want = sys.argv[2:]
ok = got is not None and len(got) == len(want) and all(
    (w == "PORT" and g.isdigit()) or g == w for g, w in zip(got, want))
if not ok: print("argv:", got, "\nwant:", want)
sys.exit(0 if ok else 1)
PY
}
# a Hugging Face checkpoint directory, as vllm, sglang and mlx load it
CKPT="$TMP/ckpt"; mkdir -p "$CKPT"; echo '{"model_type":"llama"}' > "$CKPT/config.json"
head -c 8192 /dev/urandom > "$CKPT/model.safetensors"
DRAFT_GGUF="$TMP/draft.gguf"; head -c 1024 /dev/urandom > "$DRAFT_GGUF"
DRAFT_DIR="$TMP/draftdir"; mkdir -p "$DRAFT_DIR"; head -c 1024 /dev/urandom > "$DRAFT_DIR/d-q8_0.gguf"
VLLM_SPEC="{\"model\":\"$DRAFT_DIR\",\"num_speculative_tokens\":4}"
for engine in builtin llama.cpp vllm sglang mlx; do
  case $engine in builtin|llama.cpp) model=$MODEL ;; *) model=$CKPT ;; esac
  case $engine in
    builtin) base="serve $MODEL --host 127.0.0.1 --port PORT --name tiny.gguf --parallel 1"; nocache="--no-prompt-cache"
             drafter=$DRAFT_GGUF; dflags="--drafter $DRAFT_GGUF" ;;
    llama.cpp) base="--model $MODEL --host 127.0.0.1 --port PORT --alias tiny.gguf --parallel 1"
             nocache="--cache-reuse 0 --no-cache-prompt"
             drafter=$DRAFT_DIR; dflags="--model-draft $DRAFT_DIR/d-q8_0.gguf" ;;
    vllm) base="serve $CKPT --host 127.0.0.1 --port PORT --served-model-name ckpt --max-num-seqs 1"
             nocache="--no-enable-prefix-caching"
             drafter=$DRAFT_DIR; dflags="--speculative-config" ;;
    sglang) base="-m sglang.launch_server --model-path $CKPT --host 127.0.0.1 --port PORT --served-model-name ckpt --max-running-requests 1"
             nocache="--disable-radix-cache"; drafter=$DRAFT_DIR
             dflags="--speculative-algorithm EAGLE --speculative-draft-model-path $DRAFT_DIR" ;;
    mlx) base="--model $CKPT --host 127.0.0.1 --port PORT --decode-concurrency 1 --prompt-concurrency 1"
             nocache="--prompt-cache-size 0"
             drafter=$DRAFT_DIR; dflags="--draft-model $DRAFT_DIR" ;;
  esac
  : > "$FAKE_ENGINE_ARGV"; rm -f "$FAKE_ENGINE_PIDFILE"
  "$PACER" bench "$model" --engine "$engine" --engine-bin "$FAKE" $SHORT --output "$TMP/r-$engine.json" >"$TMP/out" 2>&1
  rc=$?; cp "$TMP/out" "$TMP/out-$engine"
  # the expected command lines are split on blanks on purpose
  if [ $rc -eq 0 ] && argv_is "$FAKE_ENGINE_ARGV" $base $nocache && group_gone; then
    pass "adapter $engine: argv with the cache-disabling flags, run complete, engine stopped"
  else fail "adapter $engine" "rc=$rc"; cat "$TMP/out"; fi
  : > "$FAKE_ENGINE_ARGV"; rm -f "$FAKE_ENGINE_PIDFILE"
  "$PACER" bench "$model" --engine "$engine" --engine-bin "$FAKE" --drafter "$drafter" $SHORT \
    --output "$TMP/rd-$engine.json" >"$TMP/out" 2>&1
  rc=$?
  if [ "$engine" = vllm ]; then set -- $base $nocache $dflags "$VLLM_SPEC"; else set -- $base $nocache $dflags; fi
  if [ $rc -eq 0 ] && argv_is "$FAKE_ENGINE_ARGV" "$@" && group_gone && ! grep -q "$TMP" "$TMP/rd-$engine.json"; then
    pass "adapter $engine: argv with the drafter flags; the drafter path is in no receipt"
  else fail "adapter $engine with a drafter" "rc=$rc"; cat "$TMP/out"; fi
done

: > "$FAKE_ENGINE_ARGV"
"$PACER" bench "$MODEL" --engine-bin "$FAKE" --drafter "$DRAFT_GGUF" --serial $SHORT --output "$TMP/s.json" >"$TMP/out" 2>&1
check "--serial overriding --drafter says so" grep -q "serial overrides --drafter" "$TMP/out"
check "--serial: pacer serve gets --serial and no drafter" argv_is "$FAKE_ENGINE_ARGV" serve "$MODEL" --host 127.0.0.1 \
  --port PORT --name tiny.gguf --parallel 1 --no-prompt-cache --serial
for engine in llama.cpp vllm; do
  case $engine in llama.cpp) m=$MODEL ;; *) m=$CKPT ;; esac
  : > "$FAKE_ENGINE_ARGV"
  "$PACER" bench "$m" --engine "$engine" --engine-bin "$FAKE" --serial $SHORT --output "$TMP/s2.json" >"$TMP/out" 2>&1
  check "--serial: $engine (no drafting of its own) gets its plain command line" \
    python3 -c 'import json,sys; a=json.loads(open(sys.argv[1]).read().splitlines()[-1]); sys.exit("--serial" in a)' "$FAKE_ENGINE_ARGV"
done
"$PACER" bench "$MODEL" --engine-bin "$FAKE" --drafter "$TMP/no-such-drafter.gguf" $SHORT --output "$TMP/x.json" >"$TMP/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "no-such-drafter.gguf: no such file" "$TMP/out" && [ ! -e "$TMP/x.json" ]; then
  pass "a drafter that does not exist is refused before start-up"; else fail "missing drafter" "rc=$rc"; cat "$TMP/out"; fi
FAKE_ENGINE_NO_DRAFTS=1 "$PACER" bench "$MODEL" --engine-bin "$FAKE" --drafter "$DRAFT_GGUF" $SHORT --output "$TMP/nd.json" >"$TMP/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q "server drafted no tokens" "$TMP/out" && grep -q "server drafted no tokens" "$TMP/nd.drafts.json"; then
  pass "a drafter passed, no tokens drafted: the run says so"; else fail "drafted no tokens" "rc=$rc"; cat "$TMP/out"; fi
check "drafted tokens reported: no such note" sh -c "! grep -q 'drafted no tokens' '$TMP/rd-builtin.drafts.json'"

# GPUs HIP keeps that cannot be named (an unmatched GPU- entry): the hardware is partial
mkdir -p "$TMP/fakebin"
printf '#!/bin/sh\ncat "%s"\n' "$PWD/tests/data/probe/rocminfo-mi25x3.txt" > "$TMP/fakebin/rocminfo"; chmod +x "$TMP/fakebin/rocminfo"
PATH="$TMP/fakebin:$PATH" HIP_VISIBLE_DEVICES=0,GPU-4a1f6e0c "$PACER" bench "$MODEL" --engine-bin "$FAKE" $SHORT \
  --output "$TMP/hip.json" >"$TMP/out" 2>&1
check "an unmatched HIP GPU- entry: hardware source partial" python3 -c "
import json,sys; h=json.load(open('$TMP/hip.json'))['hardware']
sys.exit(not (h['source']=='partial' and h['gpus_source']=='partial' and len(h['gpus'])==1))"
PATH="$TMP/fakebin:$PATH" HIP_VISIBLE_DEVICES=0 "$PACER" bench "$MODEL" --engine-bin "$FAKE" $SHORT \
  --output "$TMP/hip0.json" >"$TMP/out" 2>&1
check "every kept GPU named: hardware source probed" python3 -c "
import json,sys; h=json.load(open('$TMP/hip0.json'))['hardware']; sys.exit(h['source']!='probed' or len(h['gpus'])!=1)"

# a model whose family has no raw-text mode (the engine's /v1/models says so): under the v2
# rules the code workload goes to the chat route, recorded per sample; v1 never relabels
FAKE_ENGINE_RAW_TEXT=0 "$PACER" bench "$MODEL" --engine-bin "$FAKE" $SHORT --output "$TMP/raw.json" >"$TMP/out" 2>&1
rc=$?
check "no raw text declared: v2 code cells on the chat route, every sample says so (exit $rc)" python3 -c "
import json,sys; r=json.load(open('$TMP/raw.json'))
sys.exit(not (r['settings']['chat_only'] and all(c['route']=='chat' and all(a['route']=='chat' for a in c['attempts']) for c in r['cells'])
  and r['exit_status']==0))"
check "... and the receipt inspects (route check)" "$PACER" bench inspect "$TMP/raw.json"
"$PACER" bench "$MODEL" --engine-bin "$FAKE" $SHORT --output "$TMP/raw1.json" >"$TMP/out" 2>&1
check "raw text not declared absent: code on the completions route" python3 -c "
import json,sys; r=json.load(open('$TMP/raw1.json')); sys.exit(r['cells'][0]['route']!='completions' or r['settings']['chat_only'])"

# llama.cpp's backend is what its log says the weights were loaded on, never "auto"
FAKE_ENGINE_LOG_LINE="load_tensors:        CUDA0 model buffer size =    23.50 MiB" \
  "$PACER" bench "$MODEL" --engine llama.cpp --engine-bin "$FAKE" $SHORT --output "$TMP/lc.json" >"$TMP/out" 2>&1
"$PACER" bench "$MODEL" --engine llama.cpp --engine-bin "$FAKE" $SHORT --output "$TMP/lc0.json" >>"$TMP/out" 2>&1
backend() { python3 -c 'import json,sys; b=json.load(open(sys.argv[1]))["backend"]; print(b["name"], b["source"])' "$1"; }
if [ "$(backend "$TMP/lc.json")" = "cuda reported" ] && [ "$(backend "$TMP/lc0.json")" = "unknown unknown" ]; then
  pass "llama.cpp backend: from the engine's log (cuda), else unknown"
else fail "llama.cpp backend" "$(backend "$TMP/lc.json") / $(backend "$TMP/lc0.json")"; cat "$TMP/out"; fi

# greedy-only engine: the sampled cells are refused with the server's reason and incomplete
FAKE_ENGINE_MODE=greedy-only "$PACER" bench "$MODEL" --engine-bin "$FAKE" $SHORT --output "$TMP/g.json" >"$TMP/out" 2>&1
rc=$?
python3 - "$TMP/g.json" <<'PY' && st=0 || st=1
import json, sys
r = json.load(open(sys.argv[1]))
status = {(c["workload"], c["setting"]): c["status"] for c in r["cells"]}
assert all(v == ("complete" if s == "greedy" else "incomplete") for (w, s), v in status.items()), status
# the server's words stay with the attempt, as a sanitized excerpt; the cell's reasons are pacer's
assert all("greedily only" in c["attempts"][0]["server_message"] and c["reasons"][0].endswith("HTTP 400")
           for c in r["cells"] if c["setting"] == "sampled"), [c["reasons"] for c in r["cells"]]
PY
if [ $rc -eq 2 ] && [ $st -eq 0 ] && grep -q "incomplete code/sampled: .*decodes greedily only" "$TMP/out"; then
  pass "greedy-only engine: its reason printed, sampled cells incomplete (exit 2)"; else fail "greedy-only engine" "rc=$rc st=$st"; cat "$TMP/out"; fi
FAKE_ENGINE_MODE=greedy-only "$PACER" bench "$MODEL" --engine-bin "$FAKE" $SHORT --temperatures 0 --output "$TMP/g0.json" >"$TMP/out" 2>&1
check "greedy-only engine with --temperatures 0: complete" test $? -eq 0

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
python3 - "$TMP/r-vllm.json" <<'PY' && pass "hf-dir receipt: every weight file by name + sha256, local directory unpublishable" || fail "hf-dir receipt fields"
import json, sys
m = json.load(open(sys.argv[1]))["model"]
assert m["checkpoint_format"] == "hf-dir" and m["id"] == "ckpt" and m["publishable"] is False, m
assert [h["file"] for h in m["checkpoint_hashes"]] == ["model.safetensors"], m
assert len(m["checkpoint_hashes"][0]["sha256"]) == 64
PY
check "hf-dir receipt names no local path" sh -c "! grep -q '$TMP' '$TMP/r-vllm.json'"

# the uncached read sample: taken before the engine starts, recorded with its method (or
# with the reason it was skipped: tmpfs, pages that stay cached); its figure is never judged
read_sample() { # RECEIPT: prints "figure METHOD", "skipped REASON" or "absent"
  python3 -c 'import json,sys
v = json.load(open(sys.argv[1]))["hardware"]["volume"]
s = v.get("read_sample")
if s is None: print("absent")
elif "skipped" in s: assert s["gb_per_s"] is None and s["method"] == "none"; print("skipped", s["skipped"])
else: assert s["gb_per_s"] > 0 and s["bytes"] == 4096 and s["seconds"] > 0; print("figure", s["method"])' "$1"
}
rs=$(read_sample "$TMP/r-builtin.json")
echo "read sample of the GGUF: $rs"
case $rs in "figure o_direct"|"figure fadvise"|"skipped memory-file-system"|"skipped pages-stay-cached") pass "managed run: the receipt has the read sample with its method, or why it was skipped" ;;
  *) fail "managed run read sample" "$rs" ;; esac
check "inspect shows the read sample" sh -c "'$PACER' bench inspect '$TMP/r-builtin.json' | grep -q '^read sample  *[0-9s]'"
check "inspect shows the checkpoint's weight files" sh -c "'$PACER' bench inspect '$TMP/r-vllm.json' | grep -q '^checkpoint  *hf-dir, 1 weight file: model.safetensors'"
check "hf-dir: the read sample is of the weight file, before the engine starts" \
  sh -c "grep -A1 'read sample of model.safetensors' '$TMP/out-vllm' | grep -q 'starting vllm'"
"$PACER" bench "$MODEL" --engine-bin "$FAKE" --no-read-sample $SHORT --output "$TMP/nrs.json" >"$TMP/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ "$(read_sample "$TMP/nrs.json")" = absent ] && ! "$PACER" bench inspect "$TMP/nrs.json" | grep -q '^read sample'; then
  pass "--no-read-sample: no read sample taken, recorded or shown"; else fail "--no-read-sample" "rc=$rc"; cat "$TMP/out"; fi
# on a file system in memory the probe refuses: the run goes on and records why
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] && SHM=$(mktemp -d /dev/shm/pacer-managed.XXXXXX); then
  cp "$MODEL" "$SHM/shm.gguf"
  "$PACER" bench "$SHM/shm.gguf" --engine-bin "$FAKE" $SHORT --output "$TMP/shm.json" >"$TMP/out" 2>&1
  rc=$?
  rs=$(read_sample "$TMP/shm.json"); rm -rf "$SHM"
  if [ $rc -eq 0 ] && [ "$rs" = "skipped memory-file-system" ] && grep -q "read sample of shm.gguf skipped: memory-file-system" "$TMP/out"; then
    pass "tmpfs: the read sample is skipped with its reason, the run completes"; else fail "read sample on tmpfs" "rc=$rc $rs"; cat "$TMP/out"; fi
else skip "read sample on tmpfs" "/dev/shm is not tmpfs"; fi
# the validator holds the facts to their field table: a path as a file name, a sample with
# both a figure and a reason
python3 - "$TMP/r-builtin.json" "$TMP" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
bad = json.loads(json.dumps(r)); bad["model"]["checkpoint_hashes"][0]["file"] = sys.argv[2] + "/tiny.gguf"
json.dump(bad, open(sys.argv[2] + "/bad-path.json", "w"))
bad = json.loads(json.dumps(r)); bad["hardware"]["volume"]["read_sample"] = {"bytes": 1, "seconds": 1.0, "gb_per_s": 1e-9, "method": "o_direct", "skipped": "pages-stay-cached"}
json.dump(bad, open(sys.argv[2] + "/bad-sample.json", "w"))
bad = json.loads(json.dumps(r)); bad["model"]["checkpoint_format"] = 3
json.dump(bad, open(sys.argv[2] + "/bad-format.json", "w"))
PY
check "inspect refuses a checkpoint file named by a path" sh -c "'$PACER' bench inspect '$TMP/bad-path.json' 2>&1 | grep -q 'privacy check failed'"
check "inspect refuses a read sample with a figure and a reason" sh -c "'$PACER' bench inspect '$TMP/bad-sample.json' 2>&1 | grep -q 'field check failed: a read sample'"
check "inspect refuses a fact of the wrong type" sh -c "'$PACER' bench inspect '$TMP/bad-format.json' 2>&1 | grep -q \"field check failed: 'model.checkpoint_format'\""
check "inspect shows a managed receipt" sh -c "'$PACER' bench inspect '$TMP/r-builtin.json' | grep -q 'mode *managed'"

# the builtin engine for real: pacer serve on a synthetic checkpoint
"$PACER" model synth -o "$TMP/real.gguf" --dim 64 --layers 2 --heads 4 --ffn 128 --type q8_0 --seed 3 >/dev/null 2>&1
"$PACER" bench "$TMP/real.gguf" --threads 1 --reps 1 --tokens 8 --output "$TMP/real.json" >"$TMP/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && "$PACER" bench inspect "$TMP/real.json" | grep -q "mode *managed" && ! pgrep -f "serve $TMP/real.gguf" >/dev/null; then
  pass "builtin engine (pacer serve) managed run: complete, engine stopped"; else fail "builtin managed run" "rc=$rc"; cat "$TMP/out"; fi
# pacer serve drafts by n-gram lookup by default; --serial turns it off: no token proposed
proposed() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["totals"]["draft_proposed"])' "$1"; }
"$PACER" bench "$TMP/real.gguf" --threads 1 --reps 1 --tokens 64 --temperatures 0 --output "$TMP/look.json" >"$TMP/out" 2>&1
"$PACER" bench "$TMP/real.gguf" --threads 1 --reps 1 --tokens 64 --temperatures 0 --serial --output "$TMP/ser.json" >"$TMP/out" 2>&1
rc=$?
look=$(proposed "$TMP/look.drafts.json"); ser=$(proposed "$TMP/ser.drafts.json")
if [ $rc -eq 0 ] && [ "$ser" = 0 ] && [ "$look" -gt 0 ]; then
  pass "builtin --serial: drafts.json shows 0 proposed tokens ($look without --serial)"
else fail "builtin --serial" "rc=$rc proposed $ser with --serial, $look without"; cat "$TMP/out"; fi
python3 - "$TMP/real.json" <<'PY' && pass "managed receipt: platform linux, one sequence slot, the engine's backend" || fail "managed platform/slots/backend"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["platform"]["name"] == "linux", r["platform"]
assert r["settings"]["sequence_slots"] == 1, r["settings"]
assert r["backend"] == {"name": "cpu", "source": "declared"}, r["backend"]
PY

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
# a complete standard run of a cached repo on a machine without a GPU: public, never ranked,
# and the run and inspect say why (the spec's definition of ranked)
HF_HUB_CACHE="$TMP/hf" "$PACER" bench some-org/tiny-model --engine-bin "$FAKE" --drafter none --output "$TMP/hfs.json" >"$TMP/outs" 2>&1
rc=$?
if [ $rc -eq 0 ] && python3 - "$TMP/hfs.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["suite"]["standard"] and r["model"]["publishable"] and r["exit_status"] == 0, r["suite"]
assert r["ranks"] == {"count": 1, "source": "managed"}, r["ranks"]
if not r["hardware"]["gpus"]:
    assert r["ranked"] is False and "no GPU reported" in r["unranked_reasons"], r["unranked_reasons"]
PY
then pass "standard managed run of a cached repo, no GPU: complete, not ranked (no GPU reported)"
else fail "CPU-only cached repo ranked" "rc=$rc"; cat "$TMP/outs"; fi
if python3 -c 'import json,sys; sys.exit(bool(json.load(open(sys.argv[1]))["hardware"]["gpus"]))' "$TMP/hfs.json"; then
  check "run warns: a public managed receipt with no GPU" grep -q "^warning: public managed receipt with no GPU reported" "$TMP/outs"
  check "inspect warns the same" sh -c "'$PACER' bench inspect '$TMP/hfs.json' | grep -q 'public managed receipt with no GPU reported'"
fi
python3 -c "import json; r=json.load(open('$TMP/hfs.json')); r['ranked']=True; r['unranked_reasons']=[]; json.dump(r,open('$TMP/hfs-forged.json','w'))"
check "inspect says when a receipt is marked ranked that the rules do not rank" \
  sh -c "'$PACER' bench inspect '$TMP/hfs-forged.json' 2>&1 | grep -q 'marked ranked, but the ranking rules say: no GPU reported'"
check "--drafter auto, no drafter cached: none passed, and why" \
  sh -c "grep -q 'drafter: none: some-org/tiny-model-drafter is not usable from the cache' '$TMP/out' && ! tail -n 1 '$FAKE_ENGINE_ARGV' | grep -q -e --drafter"
# the target's own drafter in the cache: --drafter auto passes it and names it (repo@commit)
D=89abcdef0123456789abcdef0123456789abcdef
DR="$TMP/hf/models--some-org--tiny-model-drafter"
mkdir -p "$DR/blobs" "$DR/snapshots/$D" "$DR/refs"
cp "$DRAFT_GGUF" "$DR/blobs/def456"; ln -s ../../blobs/def456 "$DR/snapshots/$D/tiny-drafter.gguf"; printf '%s' "$D" > "$DR/refs/main"
: > "$FAKE_ENGINE_ARGV"
HF_HUB_CACHE="$TMP/hf" "$PACER" bench some-org/tiny-model --engine-bin "$FAKE" $SHORT --output "$TMP/hfd.json" >"$TMP/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && argv_is "$FAKE_ENGINE_ARGV" serve "$TMP/hf/models--some-org--tiny-model/snapshots/$C/tiny-q8_0.gguf" --host 127.0.0.1 \
     --port PORT --name some-org/tiny-model --parallel 1 --no-prompt-cache --drafter "$DR/snapshots/$D/tiny-drafter.gguf" &&
   grep -q "drafter some-org/tiny-model-drafter@$D" "$TMP/out" &&
   python3 -c "import json,sys; s=json.load(open('$TMP/hfd.json'))['settings']; sys.exit(0 if s['drafter']=='some-org/tiny-model-drafter@$D' and s['drafter_passed'] else 1)"; then
  pass "--drafter auto: the cached ORG/NAME-drafter is passed, named in the output and the receipt"
else fail "--drafter auto with a cached drafter" "rc=$rc"; cat "$TMP/out"; fi
HF_HUB_CACHE="$TMP/hf" "$PACER" bench some-org/tiny-model --engine-bin "$FAKE" --drafter none $SHORT --output "$TMP/hfn.json" >"$TMP/out" 2>&1
check "--drafter none: nothing passed even when one is cached" sh -c "! tail -n 1 '$FAKE_ENGINE_ARGV' | grep -q -e --drafter"
: > "$FAKE_ENGINE_ARGV"
HF_HUB_CACHE="$TMP/hf" "$PACER" bench "$MODEL" --engine-bin "$FAKE" --drafter some-org/tiny-model-drafter $SHORT --output "$TMP/hfr.json" >"$TMP/out" 2>&1
check "--drafter REPO: taken from the cache" argv_is "$FAKE_ENGINE_ARGV" serve "$MODEL" --host 127.0.0.1 --port PORT --name tiny.gguf \
  --parallel 1 --no-prompt-cache --drafter "$DR/snapshots/$D/tiny-drafter.gguf"
: > "$FAKE_ENGINE_ARGV"
HF_HUB_CACHE="$TMP/hf" "$PACER" bench "$MODEL" --engine-bin "$FAKE" --drafter some-org/absent-drafter $SHORT >"$TMP/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "pacer pull some-org/absent-drafter" "$TMP/out" && [ ! -s "$FAKE_ENGINE_ARGV" ]; then
  pass "--drafter REPO not cached: exit 1 with the pull hint, nothing started"; else fail "uncached drafter repo" "rc=$rc"; cat "$TMP/out"; fi

# a Hugging Face format repo in the cache: vllm is given its snapshot directory; the builtin
# engine (GGUF only) refuses it by name and starts nothing; and the other way round
H=fedcba9876543210fedcba9876543210fedcba98
HR="$TMP/hf/models--some-org--tiny-hf"
mkdir -p "$HR/blobs" "$HR/snapshots/$H" "$HR/refs"
echo '{"model_type":"llama"}' > "$HR/blobs/cfg"; head -c 8192 /dev/urandom > "$HR/blobs/w1"
ln -s ../../blobs/cfg "$HR/snapshots/$H/config.json"; ln -s ../../blobs/w1 "$HR/snapshots/$H/model.safetensors"
printf '%s' "$H" > "$HR/refs/main"
: > "$FAKE_ENGINE_ARGV"
HF_HUB_CACHE="$TMP/hf" "$PACER" bench some-org/tiny-hf --engine vllm --engine-bin "$FAKE" $SHORT --output "$TMP/hfv.json" >"$TMP/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && argv_is "$FAKE_ENGINE_ARGV" serve "$HR/snapshots/$H" --host 127.0.0.1 --port PORT --served-model-name some-org/tiny-hf \
     --max-num-seqs 1 --no-enable-prefix-caching &&
   python3 - "$TMP/hfv.json" "$HR/blobs/w1" "$H" <<'PY'
import hashlib, json, sys
m = json.load(open(sys.argv[1]))["model"]
want = hashlib.sha256(open(sys.argv[2], "rb").read()).hexdigest()
assert m["id"] == "some-org/tiny-hf" and m["revision"] == sys.argv[3] and m["revision_source"] == "cache-snapshot", m
assert m["publishable"] is True and m["checkpoint_format"] == "hf-dir", m
assert m["checkpoint_hashes"] == [{"file": "model.safetensors", "sha256": want}], m
PY
then pass "vllm on a cached HF-format repo: given the snapshot directory; receipt has revision, weight files by name + sha256"
else fail "vllm on a cached HF-format repo" "rc=$rc"; cat "$TMP/out"; fi
check "HF-format receipt names no local path" sh -c "! grep -q '$TMP' '$TMP/hfv.json'"
: > "$FAKE_ENGINE_ARGV"
HF_HUB_CACHE="$TMP/hf" "$PACER" bench some-org/tiny-hf --engine-bin "$FAKE" $SHORT --output "$TMP/hfb.json" >"$TMP/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "engine builtin loads a GGUF file, and some-org/tiny-hf@$H in the cache is a Hugging Face checkpoint without a .gguf file: use --engine vllm, sglang or mlx" "$TMP/out" &&
   [ ! -s "$FAKE_ENGINE_ARGV" ] && [ ! -e "$TMP/hfb.json" ]; then
  pass "builtin engine refuses a cached HF-format repo by name; nothing started"; else fail "builtin on an HF-format repo" "rc=$rc"; cat "$TMP/out"; fi
"$PACER" bench "$CKPT" --engine-bin "$FAKE" $SHORT --output "$TMP/hfb.json" >"$TMP/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "engine builtin loads a GGUF file, and $CKPT is a Hugging Face checkpoint directory" "$TMP/out" &&
   [ ! -s "$FAKE_ENGINE_ARGV" ] && [ ! -e "$TMP/hfb.json" ]; then
  pass "builtin engine refuses a local HF checkpoint directory; nothing started"; else fail "builtin on an HF directory" "rc=$rc"; cat "$TMP/out"; fi
"$PACER" bench "$MODEL" --engine vllm --engine-bin "$FAKE" $SHORT --output "$TMP/hfb.json" >"$TMP/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "engine vllm loads a Hugging Face checkpoint directory (config.json plus \*.safetensors or \*.bin), and $MODEL is a single file" "$TMP/out" &&
   [ ! -s "$FAKE_ENGINE_ARGV" ] && [ ! -e "$TMP/hfb.json" ]; then
  pass "vllm refuses a GGUF file by name; nothing started"; else fail "vllm on a GGUF file" "rc=$rc"; cat "$TMP/out"; fi

# signals: run pacer in the background, signal it, check exit code, receipt, engine group
signal_case() { # NAME SIGNAL MODE WAIT_FOR EXPECT_RC RECEIPT(yes|no) [second signal]
  rm -f "$FAKE_ENGINE_PIDFILE" "$FAKE_ENGINE_PIDFILE.child" "$TMP/sig.json"
  FAKE_ENGINE_MODE=$3 "$PACER" bench "$MODEL" --engine-bin "$FAKE" --reps 2 --tokens 200 --output "$TMP/sig.json" >"$TMP/sig.out" 2>&1 &
  bp=$!
  if [ "$4" = ready ]; then i=0; while ! grep -q "ready" "$TMP/sig.out" 2>/dev/null && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; sleep 0.5
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
# the engine and its child ignore SIGTERM, so the first Ctrl-C waits out the grace period; the
# second kills the whole group at once (the child included) and exits
signal_case "second Ctrl-C: kills the engine's whole group at once and exits" INT stubborn ready 130 no INT
if [ -s "$FAKE_ENGINE_PIDFILE.child" ] && ! alive "$(cat "$FAKE_ENGINE_PIDFILE.child")"; then
  pass "second Ctrl-C: the engine's child process was started and is gone"; else fail "second Ctrl-C: engine child"; fi
finish
