#!/bin/sh
# bench_manifest.sh - what an attached server's manifest changes in a receipt (ranked,
# attested facts, rank count, backend declarations), a failed warm-up, and the live
# progress line on a terminal.
. tests/lib.sh
export HOME="$TMP/home" # run directories (server logs) stay inside the test
F=tests/data/fault

start_server() { # NAME SCRIPT...
  n=$1; shift
  args=""
  for s in "$@"; do args="$args --script $F/$s"; done
  "$TOOLS/fault_server" --port-file "$TMP/$n.port" --pace-us 0 $args >/dev/null 2>&1 &
  track $!
  wait_file "$TMP/$n.port" 10 || { fail "$n: fault server did not start"; return 1; }
  URL="http://127.0.0.1:$(cat "$TMP/$n.port")"
}
field() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

start_server ok manifest-ok.script normal-256.script
$PACER bench org/m --server "$URL" --model-id m --output "$TMP/ok.json" > /dev/null 2>&1
check "accepted manifest, standard complete run: exit 0" [ $? -eq 0 ]
check "ranked" [ "$(field "$TMP/ok.json" "r['ranked']")" = True ]
check "hardware attested from the manifest" [ "$(field "$TMP/ok.json" "r['hardware']['source'], r['hardware']['gpus'][0]['name']")" = "('attested', 'Test GPU 24GB')" ]
check "revision and checkpoint hashes attested" [ "$(field "$TMP/ok.json" "r['model']['revision_source'], len(r['model']['checkpoint_hashes'])")" = "('attested', 1)" ]
check "ranked receipt inspects" $PACER bench inspect "$TMP/ok.json" > /dev/null

start_server mismatch manifest-ok.script normal.script
$PACER bench org/m --server "$URL" --model-id m --backend cpu --reps 1 --tokens 16 --output "$TMP/mm.json" > /dev/null 2>&1
check "declared backend differing from the manifest stays a declaration" [ "$(field "$TMP/mm.json" "r['backend']")" = "{'name': 'cpu', 'source': 'declared'}" ]
check "... and the receipt is unranked, saying why" grep -q "declared backend differs" "$TMP/mm.json"

start_server ranks manifest-ranks3.script normal.script
$PACER bench org/m --server "$URL" --model-id m --reps 1 --tokens 16 --output "$TMP/r3.json" > /dev/null 2>&1
check "rank count above 2 is unranked" grep -q "rank count above 2" "$TMP/r3.json"

# a failed warm-up is kept and makes its cell incomplete
start_server warm manifest-404.script http-503.script normal.script
$PACER bench org/m --server "$URL" --model-id m --reps 1 --tokens 16 --output "$TMP/warm.json" > /dev/null 2>&1
check "failed warm-up: exit 2" [ $? -eq 2 ]
check "failed warm-up kept, its cell incomplete" [ "$(field "$TMP/warm.json" "r['cells'][0]['status'], r['cells'][0]['attempts'][0]['warmup'], r['cells'][0]['attempts'][0]['status'], r['cells'][1]['status']")" = "('incomplete', True, 'failed', 'complete')" ]
$PACER bench inspect "$TMP/warm.json" > "$TMP/warm.txt"
check "inspect shows the warm-up's reason" grep -q "warm-up 0: failed: HTTP 503" "$TMP/warm.txt"

# progress: one live line on a terminal's stderr
start_server tty manifest-404.script normal.script
script -qec "$PACER bench org/m --server $URL --model-id m --reps 1 --tokens 16 --output $TMP/tty.json" /dev/null > "$TMP/tty.txt" 2>&1
check "terminal: live progress line with cell, repetition and tok/s" grep -q "\[1/4 code/sampled\] rep 1/1 .*tok/s" "$TMP/tty.txt"
finish
