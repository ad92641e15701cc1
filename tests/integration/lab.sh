#!/bin/sh
# lab.sh - `pacer lab run`: the plan of --dry-run; a real run on a synthetic checkpoint with two
# configurations (the second built with --build-stores), tiny caps, one round, archived; then,
# through the fake engine: kill -9 mid-sample and a resume that re-runs exactly that sample, a
# cap raise that re-runs only capped answers, a lowered cap and a changed binary refused, a
# looping answer stopped by the cycle detector, an engine over the memory limit, an engine that
# dies, a scripted power change; and a canary scan of every results directory.
. tests/lib.sh
HOME="$TMP/home-canary-7f3a"; export HOME; mkdir -p "$HOME"
HOST=$(hostname)
FAKE="$TMP/bin/fake-engine"; mkdir -p "$TMP/bin"; cp tests/tools/fake_engine.py "$FAKE"; chmod +x "$FAKE"
export FAKE_ENGINE_ARGV="$TMP/argv" FAKE_ENGINE_PIDFILE="$TMP/engine.pid"
reap() { pid=$(cat "$FAKE_ENGINE_PIDFILE" 2>/dev/null) && kill -9 -- "-$pid" 2>/dev/null; cleanup; }
trap reap EXIT INT TERM

# a lab suite with tiny caps: two configurations, two round workloads, an SVG workload last
suite() { # FILE SHORT_CAP LONG_CAP DRAW_CAP
  python3 - "$@" <<'PY'
import json, sys
f, short, long_, draw = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
w = lambda name, kind, phase, cap, prompt: {"name": name, "kind": kind, "phase": phase, "route": "chat", "cap": cap, "prompt": prompt}
json.dump({"id": "lab-test", "version": 1, "kind": "lab", "rounds": 1,
           "settings": {"temperature": 0.0, "seed": 0, "thinking": "default", "context": None, "check_every_s": 1},
           "configurations": [{"name": "f16", "weights": "f16"}, {"name": "q8_0", "weights": "q8_0"}],
           "workloads": [w("short", "completion", "rounds", short, "Say hello."),
                         w("long", "completion", "rounds", long_, "Count to twenty."),
                         w("draw", "svg", "once", draw, "Draw a pelican riding a bicycle as SVG.")]},
          open(f, "w"), indent=1)
PY
}
suite "$TMP/suite.json" 4 16 24
MD="$TMP/models"; mkdir -p "$MD"
"$PACER" model synth -o "$MD/tiny-f16.gguf" --dim 64 --layers 1 --heads 2 --ffn 128 --type f16 --seed 7 >/dev/null 2>&1
IDS="r1-short-f16 r1-short-q8_0 r1-long-f16 r1-long-q8_0 r1-draw-f16 r1-draw-q8_0"
# json FILE EXPR: prints a Python expression over the parsed JSON document `d`
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
engines() { wc -l < "$FAKE_ENGINE_ARGV" | tr -d ' '; }

# --- the plan, and nothing written for it ---
"$PACER" lab run "$MD/tiny-f16.gguf" --suite "$TMP/suite.json" --dry-run --output "$TMP/dry" >"$TMP/plan" 2>"$TMP/err"
rc=$?
got=$(awk '/^  +[0-9]+  r/ {print $2}' "$TMP/plan" | tr '\n' ' ')
if [ $rc -eq 0 ] && [ "$got" = "$IDS " ] && grep -q "^  q8_0 .*tiny-q8_0.gguf .*missing" "$TMP/plan" && [ ! -e "$TMP/dry" ] &&
   [ ! -e "$MD/tiny-q8_0.gguf" ]; then pass "--dry-run: the plan in order, the missing store named, nothing written"
else fail "--dry-run" "rc=$rc got=$got"; cat "$TMP/plan" "$TMP/err"; fi
"$PACER" lab run "$MD/tiny-f16.gguf" --suite "$TMP/suite.json" --output "$TMP/nostore" >"$TMP/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "not on disk: q8_0 (tiny-q8_0.gguf); --build-stores" "$TMP/out" && [ ! -e "$TMP/nostore" ]; then
  pass "a missing store is named and refused without --build-stores"; else fail "missing store" "rc=$rc"; cat "$TMP/out"; fi

# --- a real run: pacer serve on the synthetic checkpoint, the q8_0 store built first ---
"$PACER" lab run "$MD/tiny-f16.gguf" --suite "$TMP/suite.json" --build-stores --archive --output "$TMP/real" \
  --note "first light" >"$TMP/real.out" 2>"$TMP/real.err"
rc=$?
if [ $rc -eq 0 ] && grep -q "building store tiny-q8_0.gguf for q8_0: needs 0.00 GB" "$TMP/real.err" && [ -s "$MD/tiny-q8_0.gguf" ]; then
  pass "real run: exit 0, the q8_0 store built first with the space it needs printed"
else fail "real run" "rc=$rc"; cat "$TMP/real.err"; fi
python3 - "$TMP/real" $IDS <<'PY' && pass "real run: a record, an answer (hash matching) per sample; state complete; report has every sample" || fail "real run directory"
import hashlib, json, os, sys
d, ids = sys.argv[1], sys.argv[2:]
run = json.load(open(d + "/run.json"))
assert run["state"]["status"] == "complete" and run["plan"] == ids, run["state"]
assert open(d + "/.gitignore").read().strip().endswith("*")
for i in ids:
    r = json.load(open("%s/samples/%s.json" % (d, i)))
    a = open(d + "/" + r["answer_file"], "rb").read()
    assert hashlib.sha256(a).hexdigest() == r["answer_sha256"] and r["answer_bytes"] == len(a), i
    assert r["finish"] in ("eos", "capped", "cycle") and r["load_ns"] > 0 and r["peak_rss_bytes"] > 0, r
    assert r["kind"] == ("svg" if "draw" in i else "completion")
    if r["kind"] == "svg": assert r["svg"] is not None and r["validity"] in ("valid", "content-invalid"), r
rep = json.load(open(d + "/report.json"))
assert [s["id"] for s in rep["samples"]] == ids and rep["pending"] == []
assert {(c["config"], c["workload"]) for c in rep["cells"]} == {(c, w) for c in ("f16", "q8_0") for w in ("short", "long", "draw")}
sig = run["signature"]
assert sig["stores"]["q8_0"]["file"] == "tiny-q8_0.gguf" and sig["model"]["file"] == "tiny-f16.gguf"
assert sig["caps"] == {"short": 4, "long": 16, "draw": 24} and run["sessions"][0]["note"] == "first light"
assert run["provenance"]["command"][:3] == ["pacer", "lab", "run"] and "<model>" in run["provenance"]["command"]
PY
check "real run: the engine logs go under ~/.pacer/lab/logs, one per configuration" \
  sh -c "grep -q 'ready on' '$HOME/.pacer/lab/logs/real/f16/engine.log' && grep -q 'ready on' '$HOME/.pacer/lab/logs/real/q8_0/engine.log'"
check "real run: report.json is canonical JSON" python3 -c "
import json,sys; t=open('$TMP/real/report.json').read(); sys.exit(0 if t == json.dumps(json.loads(t), sort_keys=True, separators=(',', ':'), ensure_ascii=False) else 1)"
check "real run: the archive beside the directory holds every file" python3 -c "
import zipfile,os,sys; n=set(zipfile.ZipFile('$TMP/real.zip').namelist())
want={os.path.relpath(os.path.join(r,f),'$TMP') for r,_,fs in os.walk('$TMP/real') for f in fs}
sys.exit(0 if n==want and 'real/run.json' in n and not os.path.exists('$TMP/real.zip.partial') else 1)"

# --- the fake engine: runs of the same binary, steered by FAKE_ENGINE_* variables ---
SYS="$TMP/sys"
plug() { # ac|battery, memory in kB
  mkdir -p "$SYS/sys/class/power_supply/AC" "$SYS/sys/class/power_supply/BAT0" "$SYS/proc"
  printf 'Mains\n' > "$SYS/sys/class/power_supply/AC/type"; printf 'Battery\n' > "$SYS/sys/class/power_supply/BAT0/type"
  if [ "$1" = ac ]; then printf '1\n' > "$SYS/sys/class/power_supply/AC/online"; printf 'Charging\n' > "$SYS/sys/class/power_supply/BAT0/status"
  else printf '0\n' > "$SYS/sys/class/power_supply/AC/online"; printf 'Discharging\n' > "$SYS/sys/class/power_supply/BAT0/status"; fi
  printf 'MemTotal: %s kB\nMemFree: 1000 kB\n' "$2" > "$SYS/proc/meminfo"
}
plug ac 8000000
export PACER_LAB_SYS_ROOT="$SYS" FAKE_ENGINE_SYS_ROOT="$SYS"
lab() { "$PACER" lab run "$MD/tiny-f16.gguf" --binary "$FAKE" --suite "$TMP/suite.json" "$@"; }

# kill -9 in the middle of the last sample; --resume runs exactly that one
suite "$TMP/slow.json" 4 4 50
: > "$FAKE_ENGINE_ARGV"
FAKE_ENGINE_MODE=slow "$PACER" lab run "$MD/tiny-f16.gguf" --binary "$FAKE" --suite "$TMP/slow.json" --output "$TMP/k" >"$TMP/k.out" 2>&1 &
lp=$!
i=0; while ! grep -q '"running": "r1-draw-q8_0"' "$TMP/k/run.json" 2>/dev/null && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done
sleep 0.4
kill -9 $lp; wait $lp 2>/dev/null
sleep 0.3
python3 - "$TMP/k" <<'PY' && pass "after kill -9 mid-sample: five records, the sixth pending, run.json names it" || fail "directory after kill -9"
import json, os, sys
d = sys.argv[1]
run = json.load(open(d + "/run.json")); rep = json.load(open(d + "/report.json"))
assert run["state"]["running"] == "r1-draw-q8_0", run["state"]
assert sorted(os.listdir(d + "/samples")) == sorted(i + ".json" for i in ["r1-short-f16", "r1-short-q8_0", "r1-long-f16", "r1-long-q8_0", "r1-draw-f16"])
assert rep["pending"] == ["r1-draw-q8_0"] and len(rep["samples"]) == 5
assert not [f for f in os.listdir(d + "/samples") if ".tmp." in f]
PY
sums() { (cd "$1/samples" && sha256sum $(ls | grep -v "$2")); }
before=$(sums "$TMP/k" r1-draw-q8_0)
: > "$FAKE_ENGINE_ARGV"
FAKE_ENGINE_MODE=slow "$PACER" lab run "$MD/tiny-f16.gguf" --binary "$FAKE" --suite "$TMP/slow.json" --output "$TMP/k" --resume >"$TMP/k2.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ "$(engines)" = 1 ] && [ "$(sums "$TMP/k" r1-draw-q8_0)" = "$before" ] &&
   [ "$(grep -c 'kept from before' "$TMP/k2.out")" = 5 ] && [ "$(json "$TMP/k/samples/r1-draw-q8_0.json" 'd["attempt"], d["finish"]')" = "1 capped" ]; then
  pass "--resume after kill -9: exactly the killed sample runs again (one engine start), the others untouched"
else fail "resume after kill -9" "rc=$rc engines=$(engines)"; cat "$TMP/k2.out"; fi

# caps: answers reach EOS after 10 tokens; 'short' (cap 4) is capped, 'long' (16) and 'draw' (24) are not
export FAKE_ENGINE_STOP_AT=10
lab --output "$TMP/c" >"$TMP/c.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ "$(json "$TMP/c/samples/r1-short-f16.json" 'd["finish"], d["capped_by"]')" = "capped cap" ] &&
   [ "$(json "$TMP/c/samples/r1-long-q8_0.json" 'd["finish"], d["decode_tokens"]')" = "eos 10" ] &&
   [ "$(json "$TMP/c/samples/r1-draw-f16.json" 'd["validity"], d["svg"]["valid"]')" = "content-invalid False" ] &&
   [ "$(json "$TMP/c/report.json" '[c["excluded"]["capped"] for c in d["cells"] if c["workload"] == "short"]')" = "[1, 1]" ]; then
  pass "capped answers are kept and excluded from medians; EOS answers enter them; a drawing without SVG is content-invalid"
else fail "caps" "rc=$rc"; cat "$TMP/c.out"; fi
before=$(sums "$TMP/c" r1-short)
: > "$FAKE_ENGINE_ARGV"
lab --output "$TMP/c" --resume --case-cap short=32 >"$TMP/c2.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ "$(engines)" = 2 ] && [ "$(sums "$TMP/c" r1-short)" = "$before" ] &&
   [ "$(json "$TMP/c/samples/r1-short-q8_0.json" 'd["finish"], d["cap"], d["attempt"], d["earlier"][0]["finish"], d["earlier"][0]["cap"]')" = "eos 32 2 capped 4" ] &&
   [ "$(json "$TMP/c/run.json" 'len(d["signatures"]), d["signatures"][0]["caps"]["short"], d["signature"]["caps"]["short"]')" = "1 4 32" ]; then
  pass "a raised cap re-runs only that workload's capped answers; the earlier attempt and signature are kept"
else fail "cap raise" "rc=$rc engines=$(engines)"; cat "$TMP/c2.out"; fi
cp -r "$TMP/c" "$TMP/c-copy"
lab --output "$TMP/c" --resume --case-cap long=8 >"$TMP/c3.out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "the cap of long would drop from 16 to 8" "$TMP/c3.out" && diff -r "$TMP/c" "$TMP/c-copy" >/dev/null; then
  pass "a lowered cap is refused, nothing changed"; else fail "lowered cap" "rc=$rc"; cat "$TMP/c3.out"; fi
cp "$FAKE" "$TMP/bin/fake-engine-2"; echo "# rebuilt" >> "$TMP/bin/fake-engine-2"
"$PACER" lab run "$MD/tiny-f16.gguf" --binary "$TMP/bin/fake-engine-2" --suite "$TMP/suite.json" --output "$TMP/c" --resume >"$TMP/c4.out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "cannot resume: the engine binary (its sha256) differs" "$TMP/c4.out" && diff -r "$TMP/c" "$TMP/c-copy" >/dev/null; then
  pass "a changed binary is refused, nothing changed"; else fail "changed binary" "rc=$rc"; cat "$TMP/c4.out"; fi
lab --output "$TMP/c" --resume --rounds 2 >"$TMP/c5.out" 2>&1
check "changed selections are refused by name" grep -q "cannot resume: the selections" "$TMP/c5.out"
unset FAKE_ENGINE_STOP_AT

# the default results directory: results/<UTC>/, results/ itself ignored by Git too (archives)
mkdir -p "$TMP/dflt"
(cd "$TMP/dflt" && "$PACER" lab run "$MD/tiny-f16.gguf" --binary "$FAKE" --suite "$TMP/suite.json" --configs f16 --cases short \
  --archive >"$TMP/dflt.out" 2>&1)
rc=$?
run_dir=$(ls -d "$TMP"/dflt/results/20*Z 2>/dev/null | head -n 1)
if [ $rc -eq 0 ] && [ -n "$run_dir" ] && [ -s "$run_dir.zip" ] && grep -qx '[*]' "$TMP/dflt/results/.gitignore" && grep -qx '[*]' "$run_dir/.gitignore" &&
   grep -q "r1-short-f16 *capped" "$TMP/dflt.out"; then pass "default directory results/<UTC>/ and its zip, both ignored by Git; every sample listed"
else fail "default results directory" "rc=$rc"; cat "$TMP/dflt.out"; fi

# a looping answer: the detector ends the sample, keeps the evidence, the suite goes on
suite "$TMP/loop.json" 2000 4 4
FAKE_ENGINE_MODE=loop "$PACER" lab run "$MD/tiny-f16.gguf" --binary "$FAKE" --suite "$TMP/loop.json" --cases short --configs f16 \
  --output "$TMP/loop" >"$TMP/loop.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ "$(json "$TMP/loop/samples/r1-short-f16.json" 'd["finish"], d["cycle"]["block_words"], d["cycle"]["repeats"] >= 4, d["cycle"]["block"].split()[0], d["completion_ns"] < 8e9')" = "cycle 40 True w0 True" ] &&
   [ "$(json "$TMP/loop/report.json" 'd["cells"][0]["excluded"]["cycle"], d["cells"][0]["in_median"]')" = "1 []" ]; then
  pass "a loop is stopped by the cycle detector mid-answer: evidence kept, excluded from medians, run complete"
else fail "cycle" "rc=$rc"; cat "$TMP/loop.out"; fi

# failures that stop the suite, each retried by --resume
stop_case() { # NAME MODE EXPECT_IN_RECORD
  FAKE_ENGINE_MODE=$2 lab --output "$TMP/$1" --cases short,long --configs f16 >"$TMP/$1.out" 2>&1
  rc=$?
  if [ $rc -eq 2 ] && [ "$(ls "$TMP/$1/samples")" = "r1-short-f16.json" ] && grep -q "$3" "$TMP/$1/samples/r1-short-f16.json" &&
     [ "$(json "$TMP/$1/run.json" 'd["state"]["status"]')" = stopped ]; then pass "$1: the sample is marked, the suite stops (exit 2)"
  else fail "$1" "rc=$rc"; cat "$TMP/$1.out"; fi
}
plug ac 65536
stop_case memory memory '"validity_reason": "memory-limit: the engine'"'"'s peak'
plug ac 8000000
lab --output "$TMP/memory" --resume >"$TMP/memory2.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ "$(json "$TMP/memory/samples/r1-short-f16.json" 'd["validity"], d["attempt"], d["earlier"][0]["validity"]')" = "valid 2 invalidated" ]; then
  pass "memory: --resume retries the invalidated sample"; else fail "memory resume" "rc=$rc"; cat "$TMP/memory2.out"; fi
stop_case died die-mid '"error": "the engine exited during the request'
lab --output "$TMP/died" --resume >"$TMP/died2.out" 2>&1
check "died: --resume retries the sample and completes" [ $? -eq 0 ]
stop_case power unplug '"validity_reason": "power source changed: ac -> battery"'
lab --output "$TMP/power" --resume >"$TMP/power2.out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "the run was measured on power 'ac' and the machine is on 'battery' now" "$TMP/power2.out"; then
  pass "power: --resume on the other power source is refused"; else fail "power resume on battery" "rc=$rc"; cat "$TMP/power2.out"; fi
plug ac 8000000
lab --output "$TMP/power" --resume >"$TMP/power3.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ "$(json "$TMP/power/samples/r1-short-f16.json" 'd["validity"], [r["state"] for r in d["earlier"][0]["power"]["readings"]][-1]')" = "valid battery" ]; then
  pass "power: plugged in again, --resume retries the sample; every reading is kept"; else fail "power resume" "rc=$rc"; cat "$TMP/power3.out"; fi

stop_case store touch-model '"validity_reason": "store-built: the weight store changed during the sample"'
lab --output "$TMP/store" --resume >"$TMP/store2.out" 2>&1
check "store changed: --resume retries the sample and completes" [ $? -eq 0 ]

# Ctrl-C during a sample: exit 130, the sample in flight has no record; --resume runs it
suite "$TMP/int.json" 4 100 4
FAKE_ENGINE_MODE=slow "$PACER" lab run "$MD/tiny-f16.gguf" --binary "$FAKE" --suite "$TMP/int.json" --configs f16 --output "$TMP/int" >"$TMP/int.out" 2>&1 &
lp=$!
i=0; while ! grep -q '"running": "r1-long-f16"' "$TMP/int/run.json" 2>/dev/null && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done
sleep 0.5
kill -INT $lp; wait $lp; rc=$?
if [ $rc -eq 130 ] && [ ! -e "$TMP/int/samples/r1-long-f16.json" ] && [ "$(json "$TMP/int/run.json" 'd["state"]["status"]')" = cancelled ] &&
   grep -q "cancelled during r1-long-f16" "$TMP/int.out"; then pass "Ctrl-C: exit 130, the sample in flight left unrecorded"
else fail "Ctrl-C" "rc=$rc"; cat "$TMP/int.out"; fi
FAKE_ENGINE_MODE=slow "$PACER" lab run "$MD/tiny-f16.gguf" --binary "$FAKE" --suite "$TMP/int.json" --output "$TMP/int" --resume >"$TMP/int2.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ "$(json "$TMP/int/samples/r1-long-f16.json" 'd["attempt"], d["decode_tokens"]')" = "1 100" ]; then
  pass "Ctrl-C: --resume runs the interrupted sample"; else fail "resume after Ctrl-C" "rc=$rc"; cat "$TMP/int2.out"; fi

# a repo in the Hugging Face cache (--root): its stores are built under ~/.pacer, not in the snapshot
C=0123456789abcdef0123456789abcdef01234567
R="$TMP/hf/models--some-org--tiny"; mkdir -p "$R/blobs" "$R/snapshots/$C" "$R/refs"
cp "$MD/tiny-f16.gguf" "$R/blobs/b1"; ln -s ../../blobs/b1 "$R/snapshots/$C/tiny-f16.gguf"; printf '%s' "$C" > "$R/refs/main"
lab_repo() { "$PACER" lab run some-org/tiny --root "$TMP/hf" --binary "$FAKE" --suite "$TMP/suite.json" "$@"; }
lab_repo --configs q8_0 --cases short --build-stores --output "$TMP/repo" >"$TMP/repo.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ -s "$HOME/.pacer/lab/stores/some-org+tiny/$C/tiny-q8_0.gguf" ] && [ ! -e "$R/snapshots/$C/tiny-q8_0.gguf" ] &&
   [ "$(json "$TMP/repo/run.json" 'd["signature"]["model"]["identity"], "<root>" in d["provenance"]["command"]')" = "some-org/tiny@$C True" ]; then
  pass "a cached repo: identity repo@revision, its store built under ~/.pacer/lab/stores, --root as <root>"
else fail "cached repo" "rc=$rc"; cat "$TMP/repo.out"; fi

# no path of this machine, host name or home directory anywhere in a results directory or archive
leak=0
for d in real k c loop memory died power store int repo dflt; do
  for c in "$TMP" "$HOME" "home-canary" "$HOST"; do
    # archives are compressed: a short host name can occur in their bytes by chance, so they
    # are read below, member by member, instead
    if grep -rqF --exclude='*.zip' -- "$c" "$TMP/$d"; then echo "canary '$c' in $d"; grep -rlF --exclude='*.zip' -- "$c" "$TMP/$d"; leak=1; fi
  done
done
for z in "$TMP/real.zip" $(find "$TMP/dflt" -name '*.zip'); do
  python3 -c "import zipfile,sys; z=zipfile.ZipFile(sys.argv[1]); b=b''.join(z.read(n) for n in z.namelist()) + ''.join(z.namelist()).encode(); sys.exit(1 if any(c.encode() in b for c in sys.argv[2:]) else 0)" \
    "$z" "$TMP" "$HOME" "home-canary" "$HOST" || { echo "canary in the archive $z"; leak=1; }
done
check "no canary (paths, home, host name) in any results directory or archive" [ $leak -eq 0 ]
check "nothing written into the current directory" sh -c "[ -z \"\$(find . -maxdepth 1 -newer '$TMP/suite.json' -name '20*')\" ]"
pgrep -f "$FAKE" >/dev/null && fail "no fake engine left running" || pass "no fake engine left running"
finish
