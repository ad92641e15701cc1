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
exit $rc
