#!/bin/sh
# Runs every benchmark program in $BUILD/bench in turn. Benchmarks measure and print
# figures; they never fail on speed.
set -u
BUILD=${BUILD:-build}
export BUILD
case " ${OPT:-} ${CFLAGS:-} " in *sanitize*) echo "warning: measuring a sanitizer build";; esac
rc=0
for b in "$BUILD"/bench/*; do
  [ -x "$b" ] || continue
  echo "== $(basename "$b")"
  "$b" || rc=1
done
# benchmarks that drive the programs from the shell (the board's website under wrk)
for s in bench/*.sh; do
  [ "$s" = bench/run.sh ] && continue
  echo "== $(basename "$s" .sh)"
  sh "$s" || rc=1
done
exit $rc
