#!/bin/sh
# board_web.sh - the board's website under load: a 'pacer board' on SQLite seeded with 1,000
# receipts (tests/tools/board_seed.py: a community of contributors, machines and models,
# every receipt uploaded through the intake), then wrk on the dashboard, a profile and a
# receipt page. Prints requests/s and latency percentiles; never fails on speed. Needs wrk
# (Debian wrk); BOARD_RECEIPTS=N changes the count; PACER_SHOTS=DIR also takes screenshots
# of the pages in headless Chromium.
. tests/lib.sh
. tests/board_lib.sh
command -v wrk >/dev/null 2>&1 || { echo "board_web: wrk is not installed (Debian wrk): skipped"; exit 0; }
N=${BOARD_RECEIPTS:-1000}
make_receipt base || { echo "board_web: no base receipt"; exit 1; }
start_hub || { echo "board_web: the fixture hub did not start"; exit 1; }
python3 tests/tools/board_seed.py "$TMP/base.json" "$TMP/seed" "$TMP/hub" --receipts "$N" > "$TMP/plan.txt"
PACER_LOG=warn start_board load --db "$TMP/load.db" --accept-backends cuda,rocm,mlx,cpu ||
  { echo "board_web: the board did not start"; exit 1; }
for who in $(cut -d' ' -f1 "$TMP/plan.txt" | uniq); do
  echo "$who $("$PACER" board token create "$who" --db "$TMP/load.db" 2>/dev/null)"
done > "$TMP/tokens.txt"
t0=$(date +%s.%N)
while read -r who file; do
  tok=$(grep "^$who " "$TMP/tokens.txt" | cut -d' ' -f2)
  echo "-H \"Authorization: Bearer $tok\" -H Content-Type:application/json --data-binary @$file -o /dev/null -w %{http_code}_ $BOARD/api/v1/receipts"
done < "$TMP/plan.txt" | xargs -P 4 -L 1 curl -s > "$TMP/codes.txt"
t1=$(date +%s.%N)
tr '_' '\n' < "$TMP/codes.txt" | grep . > "$TMP/codes1.txt"
echo "board_web: $(grep -c '^201$' "$TMP/codes1.txt") of $N uploads published (statuses: $(sort "$TMP/codes1.txt" | uniq -c | tr -s ' \n' ' ')) in $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s, 4 curl processes"
curl -s "$BOARD/" > "$TMP/dash.html"
echo "board_web: dashboard $(wc -c < "$TMP/dash.html") bytes, $(grep -o 'data-count="runs">[0-9]*' "$TMP/dash.html" | sed 's/.*>//') results"
PROFILE=$(grep -o 'href="/c/c-[0-9a-f]*"' "$TMP/dash.html" | head -n 1 | sed 's/href="//; s/"$//')
RECEIPT=$(grep -o 'href="/r/s-[0-9a-f]*"' "$TMP/dash.html" | head -n 1 | sed 's/href="//; s/"$//')
load() { # load NAME PATH [CONNECTIONS]: wrk for 10 s, 2 threads, 32 connections by default
  wrk -t2 -c"${3:-32}" -d10s --latency "$BOARD$2" > "$TMP/wrk.txt" 2>&1
  rps=$(sed -n 's/^Requests\/sec: *//p' "$TMP/wrk.txt")
  p50=$(awk '$1=="50%"{print $2}' "$TMP/wrk.txt"); p99=$(awk '$1=="99%"{print $2}' "$TMP/wrk.txt")
  errs=$(grep -E 'Non-2xx|Socket errors' "$TMP/wrk.txt" | tr '\n' ' ')
  echo "board_web: $1: $rps requests/s, p50 $p50, p99 $p99 ${errs:+($errs)}"
}
echo "board_web: wrk -t2 -c32 -d10s on $(nproc) CPUs (shared with whatever else runs; load average $(cut -d' ' -f1 /proc/loadavg))"
load "dashboard /" "/"
load "dashboard / (8 connections)" "/" 8
load "profile $PROFILE" "$PROFILE"
load "receipt $RECEIPT" "$RECEIPT"
if [ -n "${PACER_SHOTS:-}" ]; then
  cp "$(head -n 1 "$TMP/plan.txt" | cut -d' ' -f2)" "$TMP/up1.json"
  mkdir -p "$PACER_SHOTS"
  PACER_SHOTS_ONLY=1 node tests/browser/board.test.js "$BOARD" "$TMP" "$TMP/load.log"
fi
stop_board
