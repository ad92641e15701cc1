# probe.sh - `pacer probe`: the JSON is valid, carries the CPU, memory, kernel, OS, power
# and volume facts, and nothing identifying (host name, home, user name, MAC, UUID); the
# uncached read sample gives a figure twice in a row.
. tests/lib.sh

OUT="$TMP/probe.json"
if "$PACER" probe --json >"$OUT" 2>"$TMP/err"; then pass "probe --json runs"; else fail "probe --json runs" "$(cat "$TMP/err")"; fi
check "output is valid JSON" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$OUT"

facts() {
  python3 - "$1" <<'PY'
import json, sys
hw = json.load(open(sys.argv[1]))
need = [("cpu", "model"), ("cpu", "threads"), ("os", "kernel"), ("os", "name"),
        ("power", "state"), ("volume", "capacity_bytes"), ("volume", "free_bytes")]
bad = [s + "." + k for s, k in need if hw.get(s, {}).get(k) in (None, "", "unknown")]
bad += [s + ".source" for s in ("cpu", "os", "power", "volume")
        if hw[s].get("source") not in ("probed", "partial")]
if not isinstance(hw.get("memory_bytes"), int) or hw["memory_bytes"] < 1: bad.append("memory_bytes")
if hw.get("source") not in ("probed", "partial"): bad.append("source")
if "gpu_count" not in hw or "gpus" not in hw: bad.append("gpu_count/gpus")
if hw.get("gpus_source") not in ("probed", "partial", "unknown"): bad.append("gpus_source")
print(" ".join(bad))
sys.exit(1 if bad else 0)
PY
}
check "cpu, memory, kernel, os, power and volume facts with sources" facts "$OUT"

host=$(hostname 2>/dev/null); user=$(id -un 2>/dev/null)
scan() {
  f=$1; found=""
  [ -n "$host" ] && grep -qiw -- "$host" "$f" && found="$found host"
  [ -n "$user" ] && grep -qiw -- "$user" "$f" && found="$found user"
  [ -n "$HOME" ] && [ "$HOME" != "/" ] && grep -qF -- "$HOME" "$f" && found="$found home"
  grep -qiE '([0-9a-f]{2}[:-]){5}[0-9a-f]{2}' "$f" && found="$found mac"
  grep -qiE '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}' "$f" && found="$found uuid"
  grep -qi 'GPU-' "$f" && found="$found gpu-uuid"
  [ -z "$found" ] || { echo "identifying:$found"; return 1; }
}
check "json output holds nothing identifying" scan "$OUT"
"$PACER" probe >"$TMP/probe.txt" 2>&1
check "text output holds nothing identifying" scan "$TMP/probe.txt"
check "text output names sources" grep -q '^cpu \[probed\]' "$TMP/probe.txt"

# the scan itself must be able to fail
printf '{"x":"%s"}\n' "5f0c1e2a-9b7d-4c3e-8a61-2d4b6e8f0a13" >"$TMP/canary.json"
if scan "$TMP/canary.json" >/dev/null; then fail "canary scan catches a UUID"; else pass "canary scan catches a UUID"; fi

# uncached read sample on a real file, twice in a row: both figures present and positive, and
# the method one that bypasses the page cache (the figures are printed, never compared: tests
# do not assert on speed; the unit test checks with mincore that the cache is not what is read)
SAMPLE_DIR="$PWD/$BUILD/probe-sample.$$"
mkdir -p "$SAMPLE_DIR"
dd if=/dev/urandom of="$SAMPLE_DIR/model.bin" bs=1M count=64 status=none
gbps() {
  "$PACER" probe --json --no-gpus --model "$SAMPLE_DIR/model.bin" --read-sample |
    python3 -c 'import json,sys; s=json.load(sys.stdin)["volume"]["read_sample"]; print("%.3f %s %d" % (s["gb_per_s"], s["method"], s["bytes"]))'
}
first=$(gbps); second=$(gbps)
rm -rf "$SAMPLE_DIR"
echo "read sample: first $first, second $second (GB/s, method, bytes)"
positive() { [ -n "$1" ] && python3 -c 'import sys; v=float(sys.argv[1]); sys.exit(0 if v > 0 else 1)' "$1"; }
check "read sample, first run" positive "${first%% *}"
check "read sample, second run" positive "${second%% *}"
check "read sample reads the whole small file" [ "${first##* }" = 67108864 ]
method=${first#* }; method=${method%% *}
check "read sample bypasses the page cache (o_direct, or fadvise with the pages dropped)" \
  sh -c "[ '$method' = o_direct ] || [ '$method' = fadvise ]"
# a file in memory (tmpfs takes O_DIRECT since Linux 6.6): no figure rather than a cached one
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
  head -c 4194304 /dev/urandom > /dev/shm/pacer-probe-$$.bin
  s=$("$PACER" probe --json --no-gpus --model /dev/shm/pacer-probe-$$.bin --read-sample |
      python3 -c 'import json,sys; s=json.load(sys.stdin)["volume"].get("read_sample", {}); print(s.get("gb_per_s"), s.get("skipped"))')
  rm -f /dev/shm/pacer-probe-$$.bin
  check "no read sample on tmpfs (it would be the page cache's figure), and why" [ "$s" = "None memory-file-system" ]
else skip "no read sample on tmpfs" "/dev/shm is not tmpfs"; fi

"$PACER" probe --read-sample >/dev/null 2>&1
check "--read-sample without --model is refused" [ $? -eq 1 ]
finish
