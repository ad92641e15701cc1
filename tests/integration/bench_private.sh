#!/bin/sh
# bench_private.sh - what a run writes holds no private facts (canaries: host name, home
# directory, a GPU UUID and serial in the manifest, a prompt marker in a custom suite), and
# real signals give the documented exit codes: SIGINT 130 with the cancelled attempt kept,
# SIGTERM 143 and SIGHUP 129 with no receipt.
. tests/lib.sh
F=tests/data/fault
UUID=GPU-5f0c1e2a-9b7d-4c3e-8a61-2d4b6e8f0a13
MARK=PROMPT-CANARY-91b7e3
HOST=$(hostname)

start_server() { # NAME PACE SCRIPT...
  n=$1; pace=$2; shift 2
  args=""
  for s in "$@"; do args="$args --script $F/$s"; done
  "$TOOLS/fault_server" --port-file "$TMP/$n.port" $pace $args >/dev/null 2>&1 &
  track $!
  wait_file "$TMP/$n.port" 10 || { fail "$n: fault server did not start"; return 1; }
  URL="http://127.0.0.1:$(cat "$TMP/$n.port")"
}

# a custom suite whose prompts carry the marker
python3 - "$MARK" "$TMP/canary-suite.json" <<'PY'
import json, sys
mark, out = sys.argv[1], sys.argv[2]
d = json.load(open("suites/community-v2.json"))
d["id"] = "canary"
for w in d["workloads"]:
    w["prompt"] = "# " + mark + "\n" + w["prompt"]
json.dump(d, open(out, "w"))
PY

# canaries: HOME points into a directory whose name is a canary; receipts go to ~/.pacer
H="$TMP/home-canary-5d21"
mkdir -p "$H"
start_server canary "--pace-us 0" manifest-serials.script normal.script
HOME="$H" CUDA_VISIBLE_DEVICES="$UUID" $PACER bench some-org/some-model --server "$URL" --model-id m \
  --suite "$TMP/canary-suite.json" --reps 1 --tokens 16 --backend cuda > "$TMP/canary.out" 2>&1
rc=$?
check "canary run exits 0" [ $rc -eq 0 ]
check "receipt directory is 0700" [ "$(stat -c %a "$H/.pacer/benchmarks")" = 700 ]
files=$(find "$H/.pacer" -type f)
check "run wrote a receipt and a drafts file" [ "$(echo "$files" | grep -c '\.json$')" -eq 2 ]
leak=0
for f in $files; do
  for c in "$HOST" "$H" "home-canary" "$UUID" "SN-CANARY" "canary-host" "$MARK" "$(id -un)"; do
    if grep -qF -- "$c" "$f"; then leak=1; echo "# leak: '$c' in $(basename "$f")"; fi
  done
done
check "no canary in any file the run wrote" [ $leak -eq 0 ]
R=$(echo "$files" | grep -v drafts)
check "accepted manifest: hardware attested, backend attested" python3 -c "
import json,sys; r=json.load(open('$R'))
sys.exit(not (r['hardware']['source']=='attested' and r['backend']['source']=='attested'
  and r['model']['revision']=='0123abcd' and not r['suite']['standard'] and not r['ranked']))"

# SIGINT once during an attempt: exit 130, receipt saved with the cancelled attempt
start_server sig "" manifest-404.script normal-256.script
sig_run() { # NAME SIGNAL
  $PACER bench some-org/some-model --server "$URL" --model-id m --reps 1 --tokens 16 \
    --output "$TMP/$1.json" > "$TMP/$1.out" 2>&1 &
  p=$!
  sleep 0.4
  kill -s "$2" $p
  wait $p
}
sig_run int INT; rc=$?
check "SIGINT exits 130" [ $rc -eq 130 ]
check "SIGINT saves the receipt" [ -s "$TMP/int.json" ]
check "receipt holds the cancelled attempt" python3 -c "
import json,sys; r=json.load(open('$TMP/int.json'))
a=[x for c in r['cells'] for x in c['attempts']]
sys.exit(not (r['cancelled'] and r['exit_status']==130 and a and a[-1]['status']=='cancelled'))"
$PACER bench inspect "$TMP/int.json" > "$TMP/int.txt" 2>&1
check "cancelled receipt inspects, cancelled attempt listed" grep -q "cancelled" "$TMP/int.txt"
sig_run term TERM; rc=$?
check "SIGTERM exits 143" [ $rc -eq 143 ]
check "SIGTERM saves no receipt" sh -c "[ ! -e '$TMP/term.json' ] && [ ! -e '$TMP/term.drafts.json' ]"
sig_run hup HUP; rc=$?
check "SIGHUP exits 129" [ $rc -eq 129 ]
check "SIGHUP saves no receipt" [ ! -e "$TMP/hup.json" ]
finish
