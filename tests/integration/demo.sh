# demo.sh - `pacer bench` with no model, as a new user runs it: a fresh HOME, the binary
# copied outside the checkout (so the demo model gets the byte-level vocabulary), at every
# kernel level this CPU has (PACER_KERNELS). The demo model is text only: no reply may end
# before its budget, so every cell completes and the run exits 0. To keep the test short
# it runs the chat workload (whose sampled warm-up ended at once before the demo model was
# text only) from a suite file, one repetition of 64 tokens; `make demo` runs the whole suite.
. tests/lib.sh
mkdir -p "$TMP/bin" "$TMP/elsewhere"
cp "$PACER" "$TMP/bin/pacer"
python3 -c "
import json; d=json.load(open('suites/community-v2.json')); d['id']='demo-chat'
d['workloads']=[w for w in d['workloads'] if w['name']=='chat']
json.dump(d,open('$TMP/chat.json','w'))"
levels="scalar avx2"
grep -qw avx_vnni /proc/cpuinfo && levels="$levels avxvnni"
grep -qw avx512f /proc/cpuinfo && levels="$levels avx512"
grep -qw avx2 /proc/cpuinfo || levels="scalar"
[ -n "${PACER_SANITIZE:-}" ] && levels=$(echo "$levels" | awk '{print $NF}') # the sanitizer build: the best level only
for k in $levels; do
  home="$TMP/home-$k"; mkdir -p "$home"
  (cd "$TMP/elsewhere" && HOME="$home" PACER_KERNELS=$k "$TMP/bin/pacer" bench --suite "$TMP/chat.json" --reps 1 --tokens 64 \
    --threads 2 --output "$TMP/demo-$k.json") >"$TMP/out-$k" 2>&1
  rc=$?
  if [ $rc -eq 0 ] && [ -s "$home/.pacer/models/demo-v2-bytes.gguf" ] && grep -q "kernels $k)" "$home"/.pacer/runs/*/engine.log &&
     python3 - "$TMP/demo-$k.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert all(c["status"] == "complete" for c in r["cells"]) and len(r["cells"]) == 2, [c["reasons"] for c in r["cells"]]
assert all(a["completion_tokens"] == 64 and a["output_bytes"] > 0 for c in r["cells"] for a in c["attempts"])
PY
  then pass "demo outside the checkout, fresh HOME, PACER_KERNELS=$k: exit 0, every reply runs to its budget"
  else fail "demo at PACER_KERNELS=$k" "exit $rc"; cat "$TMP/out-$k"; fi
done
HOME="$TMP/home-x" PACER_KERNELS=avx1024 "$TMP/bin/pacer" bench >"$TMP/out-x" 2>&1
check "PACER_KERNELS with an unknown level: exit 1, says so" sh -c "[ $? -eq 1 ] && grep -q 'expected scalar, avx2 or avx512' '$TMP/out-x'"
HOME="$TMP/home-x" PACER_PREFETCH=l3 "$TMP/bin/pacer" bench >"$TMP/out-p" 2>&1
check "PACER_PREFETCH not l1 or l2: exit 1, says so" sh -c "[ $? -eq 1 ] && grep -q 'PACER_PREFETCH=l3: expected l1 or l2' '$TMP/out-p'"
finish
