#!/bin/sh
# lab_prefill.sh - `pacer lab prefill`: bad input refused before anything runs (a missing or
# non-executable build, a bad --rounds, an unknown configuration, a missing store, a used
# results directory); `--before build/pacer --after build/pacer` on a synthetic checkpoint
# over the built-in lab-prefill-v1 suite: every pair in order (round 1 before first, round 2
# after first, ...), ratios near 1 (a wide band: tests never assert speed), the same greedy
# tokens, both hashes, the prompts, power readings, placeholders for paths; through the fake
# engine: the commit a build's --version names, two builds in two checkouts of one git
# repository (their commits, uncommitted changes, the source diff), a store changed mid-sample
# invalidating the sample and ending the run, and Ctrl-C keeping what was measured.
. tests/lib.sh
HOME="$TMP/home"; export HOME; mkdir -p "$HOME"
FAKE="$TMP/bin/fake-engine"; mkdir -p "$TMP/bin"; cp tests/tools/fake_engine.py "$FAKE"; chmod +x "$FAKE"
export FAKE_ENGINE_PIDFILE="$TMP/engine.pid"
reap() { pid=$(cat "$FAKE_ENGINE_PIDFILE" 2>/dev/null) && kill -9 -- "-$pid" 2>/dev/null; cleanup; }
trap reap EXIT INT TERM
MD="$TMP/models"; mkdir -p "$MD"
M="$MD/tiny-f16.gguf"
"$PACER" model synth -o "$M" --dim 64 --layers 1 --heads 2 --ffn 128 --ctx 8192 --type f16 --seed 7 >/dev/null 2>&1
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

# --- bad input: a clear error, exit 1, nothing written ---
printf '#!/bin/sh\n' > "$TMP/bin/not-exec"
mkdir -p "$TMP/used" && echo x > "$TMP/used/file"
refused() { # NAME EXPECTED-TEXT ARGS...
  name=$1; want=$2; shift 2
  "$PACER" lab prefill "$@" >"$TMP/bad.out" 2>&1
  rc=$?
  if [ $rc -eq 1 ] && grep -qF -- "$want" "$TMP/bad.out" && [ ! -e "$TMP/bad" ]; then pass "refused: $name"
  else fail "refused: $name" "rc=$rc"; cat "$TMP/bad.out"; fi
}
refused "a missing build" "--before: $TMP/bin/nope is not an executable file" --before "$TMP/bin/nope" --after "$PACER" --model "$M" --out "$TMP/bad"
refused "a build that is not executable" "--after: $TMP/bin/not-exec is not an executable file" --before "$PACER" --after "$TMP/bin/not-exec" --model "$M" --out "$TMP/bad"
refused "a directory as a build" "is not an executable file" --before "$TMP/bin" --after "$PACER" --model "$M" --out "$TMP/bad"
refused "--rounds 0" "--rounds: expected 1..1000, not '0'" --before "$PACER" --after "$PACER" --model "$M" --rounds 0 --out "$TMP/bad"
refused "--rounds x" "--rounds: expected 1..1000, not 'x'" --before "$PACER" --after "$PACER" --model "$M" --rounds x --out "$TMP/bad"
refused "an unknown configuration" "--configs: the suite has no configuration 'fp8'" --before "$PACER" --after "$PACER" --model "$M" --configs given,fp8 --out "$TMP/bad"
refused "a missing store" "configuration q8_0: its store tiny-q8_0.gguf is not on disk" --before "$PACER" --after "$PACER" --model "$M" --configs q8_0 --out "$TMP/bad"
refused "no --after" "--after BIN is required" --before "$PACER" --model "$M" --out "$TMP/bad"
refused "a missing model" "lab prefill:" --before "$PACER" --after "$PACER" --model "$MD/none.gguf" --out "$TMP/bad"
"$PACER" lab prefill --before "$PACER" --after "$PACER" --model "$M" --out "$TMP/used" >"$TMP/bad.out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "exists and is not an empty directory" "$TMP/bad.out" && [ "$(ls "$TMP/used")" = file ]; then
  pass "refused: a results directory already in use, left as it was"; else fail "used directory" "rc=$rc"; cat "$TMP/bad.out"; fi
[ -z "$(ls "$HOME/.pacer/lab/logs" 2>/dev/null)" ] && pass "no engine was started for bad input" || fail "bad input started an engine"

# --- the same build twice on a synthetic checkpoint: ratios near 1, alternation visible ---
"$PACER" lab prefill --before "$PACER" --after "$PACER" --model "$M" --rounds 4 --out "$TMP/same" >"$TMP/same.out" 2>"$TMP/same.err"
rc=$?
if [ $rc -eq 0 ] && [ -s "$TMP/same/report.json" ] && [ -s "$TMP/same/summary.md" ] && grep -q "^short " "$TMP/same.out"; then
  pass "build/pacer against itself: exit 0, report.json, summary.md, the ratio table printed"
else fail "prefill run" "rc=$rc"; cat "$TMP/same.err"; fi
python3 - "$TMP/same/report.json" "$TMP" <<'PY' && pass "report: pairs alternate by round, ratios near 1 over four rounds, same greedy tokens, hashes, prompts, power, placeholders" || fail "report content"
import json, re, sys
rep, tmp = json.load(open(sys.argv[1])), sys.argv[2]
assert rep["format"] == "pacer-lab-prefill" and rep["state"]["status"] == "complete", rep["state"]
assert rep["suite"]["id"] == "lab-prefill-v1" and re.fullmatch("[0-9a-f]{64}", rep["suite"]["digest"]) and rep["suite"]["source"] == "built-in"
b, a = rep["binaries"]["before"], rep["binaries"]["after"]
assert re.fullmatch("[0-9a-f]{64}", b["sha256"]) and b["sha256"] == a["sha256"], (b, a)
assert b["version"].startswith("pacer "), b
d = rep["source_diff"]
assert (d["available"] and d["from"] == d["to"] and d["summary"].startswith("the same commit")) or (not d["available"] and d["reason"]), d
assert [p["length"] for p in rep["prompts"]] == ["short", "medium", "long"]
sizes = [len(p["prompt"]) for p in rep["prompts"]]
assert sizes[0] < sizes[1] < sizes[2] and all(p["cap"] == 8 for p in rep["prompts"]), sizes
assert rep["settings"]["tokens"] == 8 and rep["settings"]["rounds"] == 4 and rep["settings"]["configs"] == ["given"]
assert rep["command"] == ["pacer", "lab", "prefill", "--before", "<binary>", "--after", "<binary>", "--model", "<model>",
                          "--rounds", "4", "--out", "<results>"], rep["command"]
text = json.dumps(rep)
assert tmp not in text and "tiny-f16.gguf" in text, "a local path in the report"
s = rep["samples"]
assert len(s) == 24, len(s)
want = []
for r in range(1, 5):
    for length in ("short", "medium", "long"):
        order = ["before", "after"] if r % 2 else ["after", "before"]
        want += [(r, length, order[0], True), (r, length, order[1], False)]
got = [(x["round"], x["workload"], x["binary"], x["first"]) for x in s]
assert got == want, got
for x in s:
    assert x["id"] == "r%d-%s-given-%s" % (x["round"], x["workload"], x["binary"]), x["id"]
    assert x["finish"] in ("capped", "eos") and x["validity"] == "valid", (x["id"], x["finish"], x["error"])
    assert x["prefill_tok_s"] > 0 and x["server_prefill_tok_s"] > 0 and x["prefill_tokens"] > 0, x["id"]
    assert abs(x["server_prompt_ms"] - x["prefill_tokens"] * 1000 / x["server_prefill_tok_s"]) < 1e-6 * x["server_prompt_ms"], x["id"]
    assert 0 < x["first_text_ns"] and x["server_prompt_ms"] * 1e6 <= x["first_text_ns"] * 1.01, x["id"]
    assert x["decode_tokens"] <= 8 and len(x["power"]["readings"]) >= 2 and x["power"]["changed"] is False, x["id"]
    assert isinstance(x["output"], str) and len(x["output"]) > 0, x["id"]
tokens = {x["workload"]: x["prefill_tokens"] for x in s}
assert tokens["short"] < tokens["medium"] < tokens["long"], tokens
assert len(rep["pairs"]) == 12 and all(p["ratio"] is not None and p["outputs"] == "same" for p in rep["pairs"])
assert [p["first"] for p in rep["pairs"]] == ["before"] * 3 + ["after"] * 3 + ["before"] * 3 + ["after"] * 3
for e in rep["lengths"]:
    lo, hi = (0.25, 4) if e["length"] == "short" else (0.5, 2)  # a short prompt is a few ms: noise weighs more
    assert e["ratio"]["n"] == 4 and lo <= e["ratio"]["median"] <= hi, e
    assert e["ratio"]["min"] <= e["ratio"]["median"] <= e["ratio"]["max"], e
    assert e["outputs"] == {"compared": 4, "same": 4, "differ_rounds": []}, e["outputs"]
    assert e["prompt_tokens"]["before"] == e["prompt_tokens"]["after"] == tokens[e["length"]]
PY
python3 - "$TMP/same/summary.md" <<'PY' && pass "summary.md: hardware first, both builds, the ratio table per length, every sample" || fail "summary.md"
import sys
md = open(sys.argv[1]).read().split("\n")
assert md[0].startswith("Hardware: ") and "threads" in md[0], md[0]
assert any(l.startswith("- before: sha256 ") for l in md) and any(l.startswith("- after: sha256 ") for l in md)
assert "- the two builds are the same file (one sha256): the ratios show the spread of the measurement itself" in md
i = md.index("## Prefill after/before")
assert md[i + 2].startswith("| length | configuration | prompt tokens |"), md[i + 2]
rows = [l for l in md[i + 4:i + 7]]
assert [r.split(" | ")[0] for r in rows] == ["| short", "| medium", "| long"] and all("same (4 rounds)" in r for r in rows), rows
assert sum(1 for l in md if l.startswith("| r") and "-given-" in l) == 24
assert "| r2-short-given-after | after (first) |" in "\n".join(md)
PY

# --- the fake engine: a commit from --version; a store rebuilt under a sample ---
FAKE_ENGINE_COMMIT=4e1aa92 FAKE_ENGINE_MODE=touch-model \
  "$PACER" lab prefill --before "$FAKE" --after "$FAKE" --model "$M" --out "$TMP/store" >"$TMP/store.out" 2>"$TMP/store.err"
rc=$?
python3 - "$TMP/store/report.json" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
b = rep["binaries"]["before"]
assert b["commit"] == "4e1aa92" and b["commit_source"] == "its --version" and b["version"] == "version: 1 (4e1aa92)", b
assert rep["state"]["status"] == "stopped" and "store-built" in rep["state"]["reason"], rep["state"]
s = rep["samples"]
assert len(s) == 1 and s[0]["id"] == "r1-short-given-before", [x["id"] for x in s]
assert s[0]["validity"] == "invalidated" and s[0]["validity_reason"].startswith("store-built"), s[0]
p = rep["pairs"][0]
assert p["ratio"] is None and "invalidated" in p["why"], p
PY
if [ $? -eq 0 ] && [ $rc -eq 2 ] && grep -q "lab prefill stopped: r1-short-given-before: store-built" "$TMP/store.err"; then
  pass "a store changed during a sample: that sample invalidated, the run stopped (exit 2), the report kept; the commit from --version"
else fail "store change" "rc=$rc"; cat "$TMP/store.err"; fi

# --- two builds in two checkouts of one repository: their commits and the source diff ---
G="$TMP/repo"; mkdir -p "$G"
git -C "$G" init -q && echo 1 > "$G/kernel.c" && git -C "$G" add kernel.c &&
  git -C "$G" -c user.name=t -c user.email=t@example.invalid commit -qm old && A=$(git -C "$G" rev-parse HEAD) &&
  echo 2 > "$G/kernel.c" && git -C "$G" -c user.name=t -c user.email=t@example.invalid commit -qam new && B=$(git -C "$G" rev-parse HEAD) &&
  git -C "$G" worktree add -q --detach "$TMP/old" "$A" && mkdir -p "$G/build" "$TMP/old/build" &&
  cp "$FAKE" "$G/build/engine" && cp "$FAKE" "$TMP/old/build/engine" && echo 3 > "$G/kernel.c"
FAKE_ENGINE_COMMIT= FAKE_ENGINE_STOP_AT=3 "$PACER" lab prefill --before "$TMP/old/build/engine" --after "$G/build/engine" --model "$M" \
  --engine llama.cpp --rounds 1 --out "$TMP/diff" >"$TMP/diff.out" 2>"$TMP/diff.err"
rc=$?
python3 - "$TMP/diff" "$A" "$B" <<'PY' && [ $rc -eq 0 ] && pass "two llama.cpp-style builds in two checkouts: each build's commit from its checkout (after: uncommitted changes named), git diff between them in source.diff" || { fail "source diff" "rc=$rc"; cat "$TMP/diff.err"; }
import hashlib, json, sys
d, a, b = sys.argv[1:]
rep = json.load(open(d + "/report.json"))
bb, ab = rep["binaries"]["before"], rep["binaries"]["after"]
assert bb["commit"] == a and ab["commit"] == b and bb["version"] == "version: 1", (bb, ab)
assert bb["commit_source"] == ab["commit_source"] == "the HEAD of the git checkout it sits in"
assert bb["dirty"] is False and ab["dirty"] is True, (bb["dirty"], ab["dirty"])
sd = rep["source_diff"]
text = open(d + "/source.diff", "rb").read()
assert sd["available"] and sd["from"] == a and sd["to"] == b and sd["file"] == "source.diff", sd
assert sd["summary"] == "1 file changed, 1 insertion(+), 1 deletion(-)" and sd["bytes"] == len(text), sd
assert sd["sha256"] == hashlib.sha256(text).hexdigest() and b"-1\n+2\n" in text, text
assert rep["state"]["status"] == "complete" and len(rep["samples"]) == 6 and rep["settings"]["engine"] == "llama.cpp"
assert all(x["finish"] == "eos" and x["decode_tokens"] == 3 for x in rep["samples"])
md = open(d + "/summary.md").read()
assert "- source diff: 1 file changed, 1 insertion(+), 1 deletion(-) (source.diff)" in md and "uncommitted changes" in md, md
PY

# --- Ctrl-C: what was measured stays ---
FAKE_ENGINE_MODE=slow "$PACER" lab prefill --before "$FAKE" --after "$FAKE" --model "$M" --rounds 3 --out "$TMP/cancel" \
  >"$TMP/cancel.out" 2>"$TMP/cancel.err" &
cpid=$!
track $cpid
i=0
measured() { python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["samples"]))' "$TMP/cancel/report.json" 2>/dev/null || echo 0; }
while [ $i -lt 400 ] && [ "$(measured)" -lt 2 ]; do sleep 0.05; i=$((i + 1)); done
kill -INT $cpid
wait $cpid
rc=$?
n=$(json "$TMP/cancel/report.json" 'len(d["samples"])')
st=$(json "$TMP/cancel/report.json" 'd["state"]["status"]')
if [ $rc -eq 130 ] && [ "$n" -ge 2 ] && [ "$n" -lt 18 ] && [ "$st" = cancelled ] && [ -s "$TMP/cancel/summary.md" ]; then
  pass "Ctrl-C: exit 130, the samples measured so far ($n) kept, state cancelled"
else fail "Ctrl-C" "rc=$rc n=$n state=$st"; cat "$TMP/cancel.err"; fi
finish
