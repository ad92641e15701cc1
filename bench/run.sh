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
# benchmarks that drive the programs from the shell (the board's website under wrk); the
# comparison with llama.cpp is `make bench-peers`'s (it needs `make interop`'s build)
for s in bench/*.sh; do
  case "$s" in bench/run.sh|bench/peers.sh) continue;; esac
  echo "== $(basename "$s" .sh)"
  sh "$s" || rc=1
done
exit $rc
