#!/bin/sh
# bench/peers.sh - `make bench-peers`: llama.cpp's llama-bench and pacer's bench_engine on the
# same synthetic 1B-shaped GGUFs (dim 2048, 16 layers, 32/8 heads, ffn 8192), interleaved
# round by round, with the ratio pacer / llama.cpp per test. Builds nothing: llama-bench
# comes from `make interop` (or LLAMA_BENCH); bench_engine from `make bench`'s build.
#   LLAMA_BENCH   llama-bench to run (default $PEERS_DIR/bin/llama-bench, PEERS_DIR=build-peers)
#   BENCH_THREADS threads for both (default: the online CPUs); a list ("2,16") measures each
#                 count in every round, one table each, then each engine's prefill and decode
#                 scaling from the first count to the last (the medians' ratio, and pacer's
#                 range of the per-round ratios: its runs at both counts sat side by side)
#   BENCH_TYPES   weight types (default "f16 q8_0 q4_0 q4_k"; also q6_k and q4_k_m, llama.cpp's
#                 Q4_K_M mixture; a type bench_engine cannot synthesize is reported and skipped)
#   BENCH_PP      prompt lengths (default 128,512); BENCH_TG decode length (default 32)
#   BENCH_DEPTH   tokens already in the context when each test starts (llama-bench's -d;
#                 default 0): the tests are named ppN@dDEPTH, tgN@dDEPTH
#   LLAMA_BENCH_ARGS  more llama-bench options, one value each (e.g. "-fa 0": its attention
#                 without flash attention, faster in its decode at depth on some CPUs)
#   BENCH_ROUNDS  rounds, each one llama-bench run and one pacer run per type and thread count
#                 (default 3)
#   BENCH_RAW     a file that receives every measurement ("ENGINE TYPE TEST ROUND TOK/S THREADS";
#                 the memory's read speed before each pair of runs as "memory TYPE read ROUND
#                 GB/S THREADS", the cores' arithmetic as "compute TYPE rate ROUND G/S THREADS")
#   PACER_KERNELS pacer's kernel level (scalar|avx2|avxvnni|avx512|avx512vnni|amx; default the
#                 CPU's best; the first line names it): with a llama-bench built for the same
#                 instructions, the engines compare as on a CPU that has only those
#   PACER_PREFETCH  where pacer's decode kernels prefetch the weights (l1|l2; default l2 on
#                 AMD CPUs, l1 elsewhere)
# Before each pair of runs the memory's read speed is measured (bench_engine --bandwidth, about
# 4 s): each table is followed by its range, and where it moved by more than a quarter, a
# warning: decode reads the weights from memory, and on hosts whose memory speed jumps its
# figures move with it, often by more than the engines differ. So is the cores' arithmetic
# (bench_engine --compute, 0.3 s: prefill's kernel in cache, every thread busy, G multiply-adds
# a second a thread): with a list of thread counts, how far it scaled bounds how far any
# engine's prefill can (a virtual machine's cores may slow as more of them are busy: other
# tenants on the same physical cores, clocks).
# An engine that fails (an exit status, or a signal: SIGILL from a peer built for another CPU)
# ends its type's rounds; the table shows what was measured, the failures follow, exit 1.
set -u
BUILD=${BUILD:-build}
export BUILD
PEERS_DIR=${PEERS_DIR:-build-peers}
LLAMA_BENCH=${LLAMA_BENCH:-$PEERS_DIR/bin/llama-bench}
THREADS=${BENCH_THREADS:-$(getconf _NPROCESSORS_ONLN)}
case ,$THREADS, in *,,* | *[!0-9,]* | *,0*) echo "bench-peers: BENCH_THREADS must be thread counts separated by commas (2,16), not '$THREADS'" >&2; exit 2;; esac
THREAD_LIST=$(echo "$THREADS" | tr ',' ' ')
[ -z "$(echo "$THREAD_LIST" | tr ' ' '\n' | sort | uniq -d)" ] || { echo "bench-peers: BENCH_THREADS names a thread count twice: '$THREADS'" >&2; exit 2; }
TYPES=${BENCH_TYPES:-f16 q8_0 q4_0 q4_k}
PP=${BENCH_PP:-128,512}
TG=${BENCH_TG:-32}
ROUNDS=${BENCH_ROUNDS:-3}
DEPTH=${BENCH_DEPTH:-0}
case $DEPTH in '' | *[!0-9]*) echo "bench-peers: BENCH_DEPTH must be a number of tokens, not '$DEPTH'" >&2; exit 2;; esac
AT=""
[ "$DEPTH" -gt 0 ] && AT="@d$DEPTH"
ENGINE="$BUILD/bench/bench_engine"

if [ ! -x "$LLAMA_BENCH" ]; then
  echo "bench-peers: no llama-bench at $LLAMA_BENCH: run 'make interop' first (or set LLAMA_BENCH / PEERS_DIR)" >&2
  exit 1
fi
if [ ! -x "$ENGINE" ]; then
  echo "bench-peers: no $ENGINE: run 'make bench' (or make $ENGINE) first" >&2
  exit 1
fi
case " ${OPT:-} ${CFLAGS:-} " in *sanitize*) echo "warning: measuring a sanitizer build" >&2;; esac

raw=$(mktemp)
out=$(mktemp)
fails=$(mktemp)
trap 'rm -f "$raw" "$out" "$out.err" "$fails"' EXIT
# An engine's failure on a type: said now, and again after the table (the failures file).
failed() { # ENGINE TYPE STATUS
  if [ "$3" -gt 128 ]; then
    how="killed by SIG$(kill -l "$(( $3 - 128 ))" 2>/dev/null)"
  else
    how="exit status $3"
  fi
  echo "bench-peers: $1 failed on $2 ($how): $(tail -1 "$out.err")" >&2
  echo "bench-peers: FAILED: $1 on $2 ($how); its later rounds were skipped" >>"$fails"
}
cflags=$(cat "$(dirname "$LLAMA_BENCH")/cflags" 2>/dev/null)
level=$("$ENGINE" --kernels) || exit 1 # PACER_KERNELS unknown, or not on this CPU: bench_engine says which
things() { if [ "$1" = 1 ]; then echo "$1 $2"; else echo "$1 ${2}s"; fi; } # COUNT WORD, as the table's awk says it
echo "bench-peers: $LLAMA_BENCH${cflags:+ (built with $cflags)}${LLAMA_BENCH_ARGS:+ $LLAMA_BENCH_ARGS} against $ENGINE (kernels $level), $(things "$THREADS" thread), pp $PP, tg $TG${AT:+, depth $DEPTH}, $(things "$ROUNDS" round) interleaved" >&2
for type in $TYPES; do
  model=$("$ENGINE" --synth "$type") || { echo "bench-peers: $type skipped (no synthetic model)" >&2; continue; }
  r=1
  while [ "$r" -le "$ROUNDS" ]; do
    # one timed run a test per round and thread count, each after an untimed run of the same
    # test (llama-bench warms up itself, bench_engine the same way); llama-bench: jsonl, one
    # object a test. An engine that fails keeps the figures already measured and skips the
    # type's rest.
    for th in $THREAD_LIST; do
      bw=$("$ENGINE" --bandwidth -t "$th" 2>/dev/null | cut -f3)
      [ -n "$bw" ] && echo "memory $type read $r $bw $th" >>"$raw"
      cr=$("$ENGINE" --compute -t "$th" 2>/dev/null | cut -f3)
      [ -n "$cr" ] && echo "compute $type rate $r $cr $th" >>"$raw"
      # shellcheck disable=SC2086 # LLAMA_BENCH_ARGS: words on purpose
      "$LLAMA_BENCH" -m "$model" -t "$th" -p "$PP" -n "$TG" ${AT:+-d "$DEPTH"} ${LLAMA_BENCH_ARGS:-} -r 1 -o jsonl >"$out" 2>"$out.err"
      rc=$?
      if [ $rc -ne 0 ]; then
        failed llama-bench "$type" $rc
        break 2
      fi
      sed -n 's/.*"n_prompt": *\([0-9]*\).*"n_gen": *\([0-9]*\).*"avg_ts": *\([0-9.e+-]*\).*/\1 \2 \3/p' "$out" |
        while read -r np ng ts; do
          if [ "$ng" -gt 0 ]; then t="tg$ng$AT"; else t="pp$np$AT"; fi
          echo "llama.cpp $type $t $r $ts $th"
        done >>"$raw"
      "$ENGINE" -m "$model" -t "$th" -p "$PP" -n "$TG" -d "$DEPTH" >"$out" 2>"$out.err"
      rc=$?
      if [ $rc -ne 0 ]; then
        failed bench_engine "$type" $rc
        break 2
      fi
      awk -v ty="$type" -v r="$r" -v th="$th" -F '\t' '$1 == "pacer" { print "pacer", ty, $4, r, $5, th }' "$out" >>"$raw"
    done
    r=$((r + 1))
  done
done

[ -n "${BENCH_RAW:-}" ] && cp "$raw" "$BENCH_RAW"

# Per thread count, type and test: each engine's median and range over the rounds, the ratio
# of the medians, and the range of the per-round ratios (each round's two runs sat side by
# side). With more than one thread count, each engine's scaling from the first to the last.
LC_ALL=C awk -v threads="$THREADS" '
function median(list, n,   a, i, j, t) {
  n = split(list, a, " ")
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function things(n, word) { return n " " word (n == 1 ? "" : "s") }
function lo(list,   a, n, i, m) { n = split(list, a, " "); m = a[1]; for (i = 2; i <= n; i++) if (a[i] + 0 < m + 0) m = a[i]; return m }
function hi(list,   a, n, i, m) { n = split(list, a, " "); m = a[1]; for (i = 2; i <= n; i++) if (a[i] + 0 > m + 0) m = a[i]; return m }
# the range of the per-round ratios of a[ka, key, kb, r] to a[na, key, nb, r], in rmin, rmax
function rounds_range(ka, kb, na, nb, key,   r, q) {
  rmin = ""; rmax = ""
  for (r = 1; r <= rounds; r++) {
    if (!((ka, key, kb, r) in val) || !((na, key, nb, r) in val)) continue
    q = val[ka, key, kb, r] / val[na, key, nb, r]
    if (rmin == "" || q < rmin) rmin = q
    if (rmax == "" || q > rmax) rmax = q
  }
}
# a measurement of the host taken before each pair of runs: its range and median, and a
# warning where it moved by more than a quarter
function spread(list, head, unit, moves,   n, r, l, h) {
  if ((n = split(list, r, " ")) == 0) return
  l = lo(list); h = hi(list)
  printf "(%s before each pair of runs: %.1f-%.1f %s, median %.1f, %s", head, l, h, unit, median(list), things(n, "read")
  if (l > 0 && h / l > 1.25) printf "; it moved %.2fx: %s figures move with it", h / l, moves
  printf ")\n"
}
$4 > rounds { rounds = $4 }
$1 == "memory" { mem[$6] = mem[$6] " " $5; next }
$1 == "compute" { cpu[$6] = cpu[$6] " " $5; next }
{
  key = $2 " " $3
  if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
  v[$1, key, $6] = v[$1, key, $6] " " $5
  val[$1, key, $6, $4] = $5
}
END {
  n_th = split(threads, tl, ",")
  w = 6 # the test column: as wide as its longest name (tg32@d4096)
  for (k = 1; k <= nk; k++) { split(order[k], kt, " "); if (length(kt[2]) > w) w = length(kt[2]) }
  for (i = 1; i <= n_th; i++) {
    th = tl[i]
    if (i > 1) print ""
    printf "%-6s %-*s %24s %24s %8s %15s\n", "type", w, "test", "llama.cpp tok/s (range)", "pacer tok/s (range)", "ratio", "per round"
    for (k = 1; k <= nk; k++) {
      key = order[k]; split(key, kt, " ")
      if (v["llama.cpp", key, th] == "" || v["pacer", key, th] == "") continue
      rounds_range("pacer", th, "llama.cpp", th, key)
      ml = median(v["llama.cpp", key, th]); mp = median(v["pacer", key, th])
      printf "%-6s %-*s %8.1f (%6.1f-%6.1f) %8.1f (%6.1f-%6.1f) %8.2f %7.2f-%5.2f\n", kt[1], w, kt[2],
        ml, lo(v["llama.cpp", key, th]), hi(v["llama.cpp", key, th]), mp, lo(v["pacer", key, th]), hi(v["pacer", key, th]),
        mp / ml, rmin, rmax
    }
    printf "(%s; ratio = pacer median / llama.cpp median; per round = the range of the paired ratios)\n", things(th, "thread")
    spread(mem[th], "memory read at " things(th, "thread"), "GB/s", "decode (tg)")
    spread(cpu[th], th == 1 ? "arithmetic of a thread alone" : sprintf("arithmetic a thread with %d busy", th), "G multiply-adds/s", "prefill (pp)")
  }
  if (n_th < 2) exit
  a = tl[1]; b = tl[n_th]
  printf "\nscaling from %d to %d threads (%.2f times the threads): tok/s at %d / tok/s at %d\n", a, b, b / a, b, a
  printf "%-6s %-*s %10s %10s %15s %12s\n", "type", w, "test", "llama.cpp", "pacer", "pacer per round", "pacer / ideal"
  for (k = 1; k <= nk; k++) {
    key = order[k]; split(key, kt, " ")
    if (v["pacer", key, a] == "" || v["pacer", key, b] == "") continue
    sl = v["llama.cpp", key, a] == "" || v["llama.cpp", key, b] == "" ? "-" : sprintf("%.2f", median(v["llama.cpp", key, b]) / median(v["llama.cpp", key, a]))
    sp = median(v["pacer", key, b]) / median(v["pacer", key, a])
    rounds_range("pacer", b, "pacer", a, key)
    printf "%-6s %-*s %10s %10.2f %9.2f-%5.2f %12.2f\n", kt[1], w, kt[2], sl, sp, rmin, rmax, sp / (b / a)
  }
  if (cpu[a] != "" && cpu[b] != "" && median(cpu[a]) > 0) {
    pace = median(cpu[b]) / median(cpu[a])
    printf "(the cores'"'"' arithmetic, every thread busy, scaled %.2f: a thread'"'"'s pace at %d threads %.2f of that at %d;\n", pace * b / a, b, pace, a
    printf " prefill that is all arithmetic scales no further)\n"
  }
}' "$raw"

[ -s "$fails" ] || exit 0
cat "$fails" >&2
grep -q "llama-bench on .*SIGILL" "$fails" && echo "bench-peers: llama-bench stopped with SIGILL: a peer built for another CPU, or llama.cpp's AMX kernels; make interop builds one for this CPU and checks its AMX kernels (PEERS_NO_AMX=1: without AMX)" >&2
exit 1
