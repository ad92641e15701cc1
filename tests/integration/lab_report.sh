#!/bin/sh
# lab_report.sh - the reports of a lab run: a run through the fake engine (two configurations,
# two rounds, answers that end by themselves, an answer full of markup, five drawings: one
# valid, one with <script>, one truncated, one with the wrong root, one entity bomb) writes
# report.json, summary.md, plots and a gallery; `pacer lab summarize` on a copy reproduces
# them byte for byte and keeps README.md; --update-readme and `pacer lab readme` write README.md;
# a copy with a tampered answer is refused by both; the
# gallery in headless Chromium (when Chromium and playwright-core are installed) shows every
# drawing through <img>, marks the bad ones invalid, and runs no script.
. tests/lib.sh
HOME="$TMP/home"; export HOME; mkdir -p "$HOME"
FAKE="$TMP/bin/fake-engine"; mkdir -p "$TMP/bin"; cp tests/tools/fake_engine.py "$FAKE"; chmod +x "$FAKE"
export FAKE_ENGINE_PIDFILE="$TMP/engine.pid" FAKE_ENGINE_ANSWERS="$TMP/answers" FAKE_ENGINE_STOP_AT=5
reap() { pid=$(cat "$FAKE_ENGINE_PIDFILE" 2>/dev/null) && kill -9 -- "-$pid" 2>/dev/null; cleanup; }
trap reap EXIT INT TERM

A="$TMP/answers"; mkdir -p "$A"
printf 'Here: <b>bold</b> & <script>document.title="pwned"</script> "quoted" \x27single\x27.\n' > "$A/html"
ok='<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100" width="200" height="200"><rect width="100" height="100" fill="#cde"/><circle cx="50" cy="50" r="30" fill="#d9480f"/></svg>'
printf 'A pelican:\n%s\n' "$ok" > "$A/draw"
printf '%s\n' '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100" width="200" height="200"><rect width="100" height="100" fill="#f00"/><script>parent.document.title="pwned";top.location="about:blank#pwned"</script></svg>' > "$A/draw.script"
printf '%s\n' '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><rect width="10" height=' > "$A/draw.trunc"
printf '%s\n' '<html xmlns="http://www.w3.org/2000/svg"><svg viewBox="0 0 10 10"/></html>' > "$A/draw.root"
python3 - "$A/draw.bomb" <<'PY'
import sys
ents = ['<!ENTITY a0 "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA">']
ents += ['<!ENTITY a%d "%s">' % (i, ("&a%d;" % (i - 1)) * 10) for i in range(1, 9)]
open(sys.argv[1], "w").write('<?xml version="1.0"?><!DOCTYPE svg [%s]><svg xmlns="http://www.w3.org/2000/svg"><text>&a8;</text></svg>\n' % "".join(ents))
PY
python3 - "$TMP/suite.json" <<'PY'
import json, sys
w = lambda name, kind, phase, prompt: {"name": name, "kind": kind, "phase": phase, "route": "chat", "cap": 4096, "prompt": prompt}
json.dump({"id": "lab-report-test", "version": 1, "kind": "lab", "rounds": 2,
           "settings": {"temperature": 0.0, "seed": 0, "thinking": "default", "context": None, "check_every_s": 1},
           "configurations": [{"name": "f16", "weights": "f16"}, {"name": "q8_0", "weights": "q8_0"}] +
                             [{"name": v, "weights": "f16", "args": ["--fake-answer", v]} for v in ("script", "trunc", "root", "bomb")],
           "workloads": [w("short", "completion", "rounds", "Say hello."),
                         w("markup", "completion", "once", "Answer with @html"),
                         w("draw", "svg", "once", "Draw @draw")]}, open(sys.argv[1], "w"), indent=1)
PY
MD="$TMP/models"; mkdir -p "$MD"
"$PACER" model synth -o "$MD/tiny-f16.gguf" --dim 64 --layers 1 --heads 2 --ffn 128 --type f16 --seed 7 >/dev/null 2>&1
"$PACER" lab run "$MD/tiny-f16.gguf" --binary "$FAKE" --suite "$TMP/suite.json" --build-stores --output "$TMP/run" \
  --update-readme --note "reports test" >"$TMP/run.out" 2>"$TMP/run.err"
rc=$?
R="$TMP/run"
if [ $rc -eq 0 ] && [ -s "$R/summary.md" ] && [ -s "$R/gallery/index.html" ] && [ -s "$R/plots/decode.svg" ] &&
   [ -s "$R/plots/length-time.svg" ] && [ -s "$R/README.md" ]; then
  pass "lab run writes summary.md, the plots and the gallery; README.md with --update-readme"
else fail "lab run with reports" "rc=$rc"; cat "$TMP/run.err"; fi

# --- summarize on a copy: the same bytes, README.md kept ---
cp -r "$R" "$TMP/copy"; C="$TMP/copy"
rm -rf "$C/report.json" "$C/summary.md" "$C/plots" "$C/gallery"
printf 'my own notes\n' > "$C/README.md"
"$PACER" lab summarize "$C" >"$TMP/sum.out" 2>&1
rc=$?
same=yes
for f in report.json summary.md plots/decode.svg plots/length-time.svg gallery/index.html; do cmp -s "$R/$f" "$C/$f" || same="no ($f)"; done
if [ $rc -eq 0 ] && [ "$same" = yes ] && [ "$(cat "$C/README.md")" = "my own notes" ]; then
  pass "summarize on a copy reproduces report.json, summary.md, plots and gallery byte for byte; README.md kept"
else fail "summarize reproduces" "rc=$rc same=$same"; cat "$TMP/sum.out"; fi

python3 - "$R" <<'PY' && pass "summary.md: hardware first, one table per metric with configurations as columns, exclusions and SVG rates" || fail "summary.md content"
import sys
d = sys.argv[1]
md = open(d + "/summary.md").read().split("\n")
assert md[0].startswith("Hardware: ") and "threads" in md[0] and "GiB memory" in md[0], md[0]
for h in ("## Prefill tok/s (client)", "## Decode tok/s (client)", "## Completion time (s)", "## Answer tokens", "## SVG validity"):
    assert h in md, h
i = md.index("## Answer tokens")
assert md[i + 2] == "| workload | f16 | q8_0 | script | trunc | root | bomb |", md[i + 2]
short = [l for l in md[i:] if l.startswith("| short |")][0]
assert short == "| short |" + " 5 (5-5) n=2 |" * 6, short
draw = [l for l in md[i:] if l.startswith("| draw |")][0]
assert draw.startswith("| draw | ") and draw.endswith(" |" + " -, 1 content_invalid |" * 4), draw
j = md.index("## SVG validity")
assert md[j + 2:j + 10] == ["| configuration | valid | checked |", "|---|---|---|", "| f16 | 1 | 1 |", "| q8_0 | 1 | 1 |",
                            "| script | 0 | 1 |", "| trunc | 0 | 1 |", "| root | 0 | 1 |", "| bomb | 0 | 1 |"], md[j:]
assert "- [decode tok/s per configuration](plots/decode.svg)" in md and "(gallery/index.html)" in "\n".join(md)
PY

python3 - "$R" <<'PY' && pass "gallery: every answer escaped, every drawing by <img> and never inlined, bad drawings invalid; plots are SVG" || fail "gallery content"
import json, re, sys, xml.etree.ElementTree as ET
d = sys.argv[1]
g = open(d + "/gallery/index.html").read()
assert "<svg" not in g and "<script" not in g.lower(), "markup inlined"
assert "&lt;script&gt;document.title=&quot;pwned&quot;&lt;/script&gt;" in g and "&lt;b&gt;bold&lt;/b&gt; &amp;" in g
assert "http://" not in g.replace('http://www.w3.org', '') and "https://" not in g
rep = json.load(open(d + "/report.json"))
for s in rep["samples"]:
    assert 'id="%s"' % s["id"] in g, s["id"]
    f = (s["svg"] or {}).get("file")
    if f: assert '<img class="drawing" src="../%s"' % f in g, f
verdict = {s["config"]: s["svg"]["valid"] for s in rep["samples"] if s["svg"]}
assert verdict == {"f16": True, "q8_0": True, "script": False, "trunc": False, "root": False, "bomb": False}, verdict
reasons = {s["config"]: s["svg"]["reason"] for s in rep["samples"] if s["svg"]}
assert "script" in reasons["script"] and ("amplification" in reasons["bomb"].lower() or "entit" in reasons["bomb"].lower()), reasons
assert g.count('<p class="ok">valid SVG</p>') == 2 and g.count('<p class="bad">invalid SVG: ') == 4, g.count("invalid SVG")
for p in ("plots/decode.svg", "plots/length-time.svg"):
    root = ET.parse(d + "/" + p).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg", root.tag
assert "<rect class=\"s0\"" in open(d + "/plots/decode.svg").read()
PY

python3 - "$R" <<'PY' && pass "README.md: what was run, where, the headline table, the note, how to reproduce" || fail "README.md content"
import json, sys
d = sys.argv[1]
md = open(d + "/README.md").read()
run = json.load(open(d + "/run.json"))
for want in ("## What was run", "- suite: lab-report-test (sha256 %s)" % run["signature"]["suite"]["digest"],
             "binary sha256 " + run["signature"]["binary"]["sha256"], "  - script: f16 weights, store tiny-f16.gguf, engine arguments: `--fake-answer` `script`",
             "- workloads (answer cap in tokens): short (4096), markup (4096), draw (4096)", "## Where\n\nHardware: ",
             "> reports test", "## How to reproduce",
             "pacer lab run <model> --binary <binary> --suite <suite> --build-stores --output <results> --update-readme --note 'reports test'"):
    assert want in md, want
assert "Headline: decode tok/s" in md and "/tmp" not in md and "home" not in md
PY
mv "$C/README.md" "$C/README.own"
"$PACER" lab readme "$C" >"$TMP/readme.out" 2>&1
check "lab readme on a copy writes the same README.md" cmp -s "$R/README.md" "$C/README.md"

# --- a tampered answer: refused, nothing rewritten ---
cp -r "$R" "$TMP/bad"
printf 'changed' >> "$TMP/bad/answers/r1-short-f16.txt"
before=$(sha256sum "$TMP/bad/report.json" "$TMP/bad/summary.md")
"$PACER" lab summarize "$TMP/bad" >"$TMP/bad.out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "sample r1-short-f16 fails its own checks" "$TMP/bad.out" &&
   [ "$before" = "$(sha256sum "$TMP/bad/report.json" "$TMP/bad/summary.md")" ]; then
  pass "summarize refuses a directory whose answer fails its hash, and writes nothing"
else fail "tampered answer" "rc=$rc"; cat "$TMP/bad.out"; fi
"$PACER" lab readme "$TMP/bad" >"$TMP/bad2.out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "lab readme: sample r1-short-f16 fails its own checks" "$TMP/bad2.out" &&
   cmp -s "$R/README.md" "$TMP/bad/README.md"; then pass "lab readme refuses it too, README.md untouched"
else fail "readme on a tampered run" "rc=$rc"; cat "$TMP/bad2.out"; fi
"$PACER" lab summarize "$TMP/nowhere" >"$TMP/none.out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "lab summarize: .*run.json" "$TMP/none.out" && [ ! -e "$TMP/nowhere" ]; then
  pass "summarize on a directory without a run: a clear error, nothing created"
else fail "summarize on a missing directory" "rc=$rc"; cat "$TMP/none.out"; fi
check "lab summarize --help, lab readme --help" sh -c "'$PACER' lab summarize --help | grep -q 'usage: pacer lab summarize DIR' &&
  '$PACER' lab readme --help | grep -q 'usage: pacer lab readme DIR'"

# --- the gallery in headless Chromium ---
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ] || [ ! -d node_modules/playwright-core ]; then
  why="Chromium (Debian chromium) or npm playwright-core is not installed"
  if [ "${CI:-}" = true ]; then fail "gallery in Chromium" "$why"; else skip "gallery in Chromium" "$why"; fi
else
  CHROMIUM="$CHROMIUM" node tests/browser/lab_gallery.test.js "$R/gallery/index.html" >"$TMP/browser.out" 2>&1
  cat "$TMP/browser.out"
  T_PASS=$((T_PASS + $(grep -c '^ok - ' "$TMP/browser.out")))
  nf=$(grep -c '^FAIL - ' "$TMP/browser.out"); T_FAIL=$((T_FAIL + nf))
  grep -q '^ok - ' "$TMP/browser.out" || fail "gallery in Chromium" "no check ran"
fi
finish
