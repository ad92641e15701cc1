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

# optional manifest facts: missing ones stay unknown, the rest is still attested
cat > "$TMP/partial.script" <<'EOF2'
status 200 OK
header Content-Type: application/json
framing length
chunk 0 {"manifest_version":1,"backend":"cuda","platform":"linux","python_version":"3.11.9","hardware":{"cpu":{"model":"Test CPU","cores":8},"memory_bytes":1024,"gpus":[{"name":"Test GPU","memory_bytes":10}],"gpu_count":1}}
end close
EOF2
"$TOOLS/fault_server" --port-file "$TMP/partial.port" --pace-us 0 --script "$TMP/partial.script" --script "$F/normal.script" >/dev/null 2>&1 &
track $!
wait_file "$TMP/partial.port" 10
URL="http://127.0.0.1:$(cat "$TMP/partial.port")"
$PACER bench org/m --server "$URL" --model-id m --context 4096 --reps 1 --tokens 16 --output "$TMP/partial.json" > /dev/null 2>&1
check "a manifest without revision, rank count, checkpoint or GPU cores is accepted, those unknown" python3 -c "
import json,sys; r=json.load(open('$TMP/partial.json'))
m=r['manifest']; h=r['hardware']
assert m['status']=='accepted' and m['version']==1 and m['rank_count'] is None, m
assert r['model']['revision']=='unknown' and r['model']['revision_source']=='unknown' and r['model']['checkpoint_hashes']==[], r['model']
assert h['source']=='partial' and h['gpus']==[{'name':'Test GPU','memory_bytes':10,'cores':None}] and h['cpu']['cores']==8, h
assert r['backend']=={'name':'cuda','source':'attested'} and r['platform']['source']=='attested', r['backend']
assert r['ranks']=={'count':None,'source':'unknown'}, r['ranks']
for why in ('rank count unknown','no checkpoint revision'): assert why in r['unranked_reasons'], r['unranked_reasons']
"
check "an accepted manifest's python_version is recorded" python3 -c "
import json,sys; sys.exit(json.load(open('$TMP/partial.json'))['python_version']!='3.11.9')"
check "attached model id and --context are client declarations" python3 -c "
import json,sys; m=json.load(open('$TMP/partial.json'))['model']
sys.exit(not (m['id']=='org/m' and m['id_source']=='declared' and m['declared_context']==4096))"
start_server nomani manifest-404.script normal.script
$PACER bench org/m --server "$URL" --model-id m --reps 1 --tokens 16 --output "$TMP/nomani.json" > /dev/null 2>&1
check "unattested attached run: python_version 'unknown'" python3 -c "
import json,sys; r=json.load(open('$TMP/nomani.json')); sys.exit(r['python_version']!='unknown' or r['manifest']['status']!='rejected')"

# pacer serve's own manifest, for a GGUF outside any Hugging Face snapshot (no revision)
$PACER model synth -o "$TMP/own.gguf" --dim 64 --layers 1 --heads 4 --ffn 128 --type q8_0 >/dev/null 2>&1
$PACER serve "$TMP/own.gguf" --port 0 --threads 1 >"$TMP/own.ready" 2>"$TMP/own.err" &
track $!
wait_file "$TMP/own.ready" 30
OWN=$(grep -o 'http://[0-9.:]*' "$TMP/own.ready" | head -n 1)
$PACER bench own --server "$OWN" --model-id own.gguf --reps 1 --tokens 8 --temperatures 0 --output "$TMP/own.json" > /dev/null 2>&1
check "pacer serve's own manifest is accepted (no revision: unknown)" python3 -c "
import json,sys; r=json.load(open('$TMP/own.json'))
sys.exit(not (r['manifest']['status']=='accepted' and r['backend']=={'name':'cpu','source':'attested'}
  and r['model']['revision']=='unknown' and len(r['model']['checkpoint_hashes'])==1 and r['ranks']['count']==1))"

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
