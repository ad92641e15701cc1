#!/bin/sh
# Runs every test: the Criterion unit binaries in $BUILD/tests, then the integration
# scripts tests/integration/*.sh. Each reports its own counts; this adds them up and
# ends with one line "N passed, N failed" (skips are counted and shown beside).
# With arguments, runs only the tests whose names contain one of them.
set -u
BUILD=${BUILD:-build}
export BUILD
passed=0; failed=0; skipped=0; broken=""
want() {
  [ $# -eq 0 ] && return 0
  for w in $FILTER; do case "$1" in *"$w"*) return 0;; esac; done
  return 1
}
FILTER="$*"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in "$BUILD"/tests/test_*; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  [ -n "$FILTER" ] && ! want "$name" && continue
  "$t" --jobs 1 >"$log" 2>&1
  rc=$?
  line=$(grep 'Synthesis:' "$log" | tail -n 1)
  p=$(echo "$line" | sed -n 's/.*Passing: \([0-9]*\).*/\1/p')
  f=$(echo "$line" | sed -n 's/.*Failing: \([0-9]*\).*/\1/p')
  c=$(echo "$line" | sed -n 's/.*Crashing: \([0-9]*\).*/\1/p')
  s=$(echo "$line" | sed -n 's/.*Skipped: \([0-9]*\).*/\1/p')
  p=${p:-0}; f=${f:-0}; c=${c:-0}; s=${s:-0}
  # Criterion counts skipped tests as passing; move them over.
  p=$((p - s)); [ $p -lt 0 ] && p=0
  f=$((f + c))
  if [ -z "$line" ] || { [ $rc -ne 0 ] && [ $f -eq 0 ]; }; then f=$((f + 1)); fi
  passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
  if [ $f -ne 0 ]; then cat "$log"; broken="$broken $name"; fi
  printf '%-32s %s passed, %s failed, %s skipped\n' "$name" "$p" "$f" "$s"
done
for t in tests/integration/*.sh; do
  [ -f "$t" ] || continue
  name=$(basename "$t" .sh)
  [ -n "$FILTER" ] && ! want "$name" && continue
  sh "$t" >"$log" 2>&1
  rc=$?
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
  p=$(echo "$line" | sed -n 's/^\([0-9]*\) passed.*/\1/p')
  f=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
  s=$(echo "$line" | sed -n 's/.* \([0-9]*\) skipped.*/\1/p')
  p=${p:-0}; f=${f:-0}; s=${s:-0}
  if [ -z "$line" ] || { [ $rc -ne 0 ] && [ $f -eq 0 ]; }; then f=$((f + 1)); fi
  passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
  if [ $f -ne 0 ]; then cat "$log"; broken="$broken $name"; fi
  printf '%-32s %s passed, %s failed, %s skipped\n' "$name" "$p" "$f" "$s"
done
[ -n "$broken" ] && echo "failing:$broken"
echo "$passed passed, $failed failed ($skipped skipped)"
[ $failed -eq 0 ]
