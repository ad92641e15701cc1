#!/bin/sh
# bench.sh - 'pacer bench' end to end against the scripted fault server: a full community-v2
# run, an injected fault, pinned suite digests, inspect refusing tampered receipts.
. tests/lib.sh
export HOME="$TMP/home" # run directories (server logs) stay inside the test
F=tests/data/fault
V1=7f899b8ece92e46e3912a89f256aa5e7933dc82f45a0982cfc309fe4591f9c29
V2=34a6896eb576cd8e70a10676bc0a0f3b716a03740c23ae1bfc26868210bc79c0

# start_server NAME SCRIPT...: starts the fault server (manifest script first), sets $URL
start_server() {
  n=$1; shift
  args=""
  for s in "$@"; do args="$args --script $F/$s"; done
  "$TOOLS/fault_server" --port-file "$TMP/$n.port" --pace-us 0 $args >/dev/null 2>&1 &
  track $!
  wait_file "$TMP/$n.port" 10 || { fail "$n: fault server did not start"; return 1; }
  URL="http://127.0.0.1:$(cat "$TMP/$n.port")"
}

$PACER bench suites > "$TMP/suites.txt"
check "suites: community-v1 digest pinned" grep -q "digest *$V1" "$TMP/suites.txt"
check "suites: community-v2 digest pinned" grep -q "digest *$V2" "$TMP/suites.txt"
check "suites: prompt hashes shown" grep -q "prompt [0-9]* bytes, sha256 [0-9a-f]\{64\}" "$TMP/suites.txt"

# full community-v2 run: 4 cells x (1 warm-up + 5 repetitions)
start_server full manifest-404.script normal-256.script
$PACER bench some-org/some-model --server "$URL" --model-id m --output "$TMP/full.json" > "$TMP/full.out" 2> "$TMP/full.err"
rc=$?
check "full v2 run exits 0" [ $rc -eq 0 ]
check "full v2 run prints the receipt path" grep -q "receipt: $TMP/full.json" "$TMP/full.out"
check "drafts file beside the receipt" [ -s "$TMP/full.drafts.json" ]
check "receipt mode 0600" [ "$(stat -c %a "$TMP/full.json")" = 600 ]
check "nothing but the summary on a non-terminal stderr" [ ! -s "$TMP/full.err" ]
$PACER bench inspect "$TMP/full.json" > "$TMP/full.txt"
check "inspect accepts the receipt" [ $? -eq 0 ]
check "inspect shows 4 complete cells" [ "$(grep -c ' complete$' "$TMP/full.txt")" -eq 4 ]
check "24 attempts, 4 warm-ups" python3 -c "
import json,sys; r=json.load(open('$TMP/full.json'))
a=[x for c in r['cells'] for x in c['attempts']]
sys.exit(not (len(a)==24 and sum(x['warmup'] for x in a)==4 and all(c['aggregates'] for c in r['cells'])
  and r['suite']['digest']=='$V2' and r['hardware']['source']=='unknown' and not r['ranked']))"
$PACER bench inspect --json "$TMP/full.json" > "$TMP/full.inspect.json"
check "inspect --json prints the receipt" python3 -c "import json; json.load(open('$TMP/full.inspect.json'))['run_id']"
# --format csv and md: the cell table, every median the same digits as the text view
$PACER bench inspect "$TMP/full.json" --format csv > "$TMP/full.csv"
check "inspect --format csv exits 0" [ $? -eq 0 ]
$PACER bench inspect --format=md "$TMP/full.json" > "$TMP/full.md"
check "inspect --format md exits 0" [ $? -eq 0 ]
$PACER bench inspect --format json "$TMP/full.json" | cmp -s - "$TMP/full.inspect.json"
check "inspect --format json is --json" [ $? -eq 0 ]
check "inspect csv, md and text show the same numbers" python3 - "$TMP/full.txt" "$TMP/full.csv" "$TMP/full.md" <<'PY'
import csv, sys
text = [l.split() for l in open(sys.argv[1]) if l.rstrip().endswith((" complete", " incomplete"))]
rows = list(csv.reader(open(sys.argv[2])))
assert rows[0] == ["workload", "setting", "route", "stream_tok_s", "first_text_ms", "duration_ms", "server_tok_s", "status"], rows[0]
md = [[c.strip() for c in l.strip().strip("|").split("|")] for l in open(sys.argv[3]).read().splitlines()[2:]]
assert len(text) == len(rows) - 1 == len(md) == 4, (len(text), len(rows), len(md))
for t, c, m in zip(text, rows[1:], md):
    assert t == [v or "-" for v in c] == m, (t, c, m)
PY
$PACER bench inspect "$TMP/full.json" --format xml > /dev/null 2> "$TMP/fmt.err"
check "inspect --format xml refused" sh -c "[ $? -eq 1 ] && grep -q 'text, json, csv or md' '$TMP/fmt.err'"

# tampered digest and forged aggregate are refused, saying which check failed
python3 -c "
import json; r=json.load(open('$TMP/full.json'))
r['suite']['digest']='0'*64; json.dump(r,open('$TMP/tampered.json','w'))
r=json.load(open('$TMP/full.json'))
r['cells'][0]['aggregates']['stream_tok_s']['median']*=1.5; json.dump(r,open('$TMP/forged.json','w'))
r=json.load(open('$TMP/full.json'))
r['cells'][1]['attempts'][2]['completion_tokens']=100; json.dump(r,open('$TMP/short.json','w'))
r=json.load(open('$TMP/full.json'))
r['cells'][0]['attempts'][3]['seed']=7; json.dump(r,open('$TMP/seed.json','w'))"
$PACER bench inspect "$TMP/seed.json" > /dev/null 2> "$TMP/seed.err"
check "changed seed refused by the seed check" grep -q "seed check failed" "$TMP/seed.err"
$PACER bench inspect "$TMP/tampered.json" > /dev/null 2> "$TMP/tampered.err"
check "tampered digest refused" [ $? -ne 0 ]
check "tampered digest: message names the digest check" grep -q "digest check failed" "$TMP/tampered.err"
$PACER bench inspect "$TMP/forged.json" > /dev/null 2> "$TMP/forged.err"
check "forged aggregate refused" [ $? -ne 0 ]
check "forged aggregate: message names the aggregate check" grep -q "aggregate check failed" "$TMP/forged.err"
$PACER bench inspect "$TMP/short.json" > /dev/null 2> "$TMP/short.err"
check "relabelled short reply refused" [ $? -ne 0 ]

# one fault injected into one repetition of the first cell: exit 2, that cell incomplete
start_server fault manifest-404.script normal-256.script normal-256.script dropped.script normal-256.script
$PACER bench some-org/some-model --server "$URL" --model-id m --output "$TMP/fault.json" > "$TMP/fault.out" 2>&1
rc=$?
check "injected fault exits 2" [ $rc -eq 2 ]
$PACER bench inspect "$TMP/fault.json" > "$TMP/fault.txt"
check "fault receipt inspects" [ $? -eq 0 ]
check "faulted cell incomplete, others complete" sh -c "grep -q 'code *sampled .* incomplete' '$TMP/fault.txt' && [ \$(grep -c ' complete\$' '$TMP/fault.txt') -eq 3 ]"
check "the fault's reason is shown" grep -q "repetition 2: failed:" "$TMP/fault.txt"

# a receipt of a suite file: inspect shows it and says it was not validated; with --suite
# FILE it is validated against that file (same digest), and another file is refused
python3 -c "
import json; d=json.load(open('suites/community-v2.json')); d['id']='my-suite'; d['repetitions']=1
for w in d['workloads']: w['max_tokens']=16
json.dump(d,open('$TMP/my-suite.json','w'))
d['repetitions']=2; json.dump(d,open('$TMP/other-suite.json','w'))"
start_server custom manifest-404.script normal.script
$PACER bench org/m --server "$URL" --model-id m --suite "$TMP/my-suite.json" --output "$TMP/custom.json" > /dev/null 2>&1
check "suite file run: exit 0" [ $? -eq 0 ]
$PACER bench inspect "$TMP/custom.json" > "$TMP/custom.txt" 2> "$TMP/custom.err"
rc=$?
check "inspect of a suite-file receipt without --suite: shown (exit $rc), says not validated" \
  sh -c "[ $rc -eq 0 ] && grep -q ' complete\$' '$TMP/custom.txt' && grep -q 'not validated' '$TMP/custom.txt'"
$PACER bench inspect "$TMP/custom.json" --suite "$TMP/my-suite.json" > "$TMP/custom2.txt" 2>&1
rc=$?
check "inspect --suite FILE validates it (exit $rc)" sh -c "[ $rc -eq 0 ] && ! grep -q 'not validated' '$TMP/custom2.txt'"
$PACER bench inspect "$TMP/custom.json" --suite "$TMP/other-suite.json" > /dev/null 2> "$TMP/custom3.err"
rc=$?
check "inspect --suite with another file: refused by the digest check (exit $rc)" \
  sh -c "[ $rc -eq 1 ] && grep -q 'digest check failed' '$TMP/custom3.err'"
python3 -c "
import json; r=json.load(open('$TMP/custom.json')); r['cells'][0]['attempts'][0]['completion_tokens']=3; json.dump(r,open('$TMP/custom-bad.json','w'))"
$PACER bench inspect "$TMP/custom-bad.json" --suite "$TMP/my-suite.json" > /dev/null 2>&1
check "inspect --suite FILE judges the attempts under the file's rules" [ $? -eq 1 ]

# community-v1 receipts inspect under v1 rules and are never relabelled as v2
start_server v1 manifest-404.script normal-256.script
$PACER bench some-org/some-model --server "$URL" --model-id m --suite community-v1 --output "$TMP/v1.json" > /dev/null 2>&1
check "full v1 run exits 0" [ $? -eq 0 ]
$PACER bench inspect "$TMP/v1.json" > "$TMP/v1.txt" 2>&1
check "v1 receipt inspects under v1 rules" grep -q "community-v1 (v1 rules, standard)" "$TMP/v1.txt"
python3 -c "
import json; r=json.load(open('$TMP/v1.json'))
r['suite'].update(id='community-v2', version=2, digest='$V2'); json.dump(r,open('$TMP/v1as2.json','w'))"
$PACER bench inspect "$TMP/v1as2.json" > /dev/null 2> "$TMP/v1as2.err"
check "a v1 receipt relabelled v2 is refused" [ $? -ne 0 ]
check "relabel: message names the suite check" grep -q "suite check failed" "$TMP/v1as2.err"

# --chat-only: the code prompt goes as one chat message and every sample records its route
start_server chat manifest-404.script normal.script
$PACER bench some-org/some-model --server "$URL" --model-id m --chat-only --reps 1 --tokens 16 \
  --temperatures 0.7 --output "$TMP/chat.json" > /dev/null 2>&1
check "chat-only short custom run exits 0" [ $? -eq 0 ]
check "chat-only: every sample routed through chat, run marked non-standard" python3 -c "
import json,sys; r=json.load(open('$TMP/chat.json'))
a=[x for c in r['cells'] for x in c['attempts']]
sys.exit(not (len(r['cells'])==2 and all(x['route']=='chat' for x in a) and not r['suite']['standard']
  and r['settings']['max_tokens']==16 and 'non-standard' in ' '.join(r['unranked_reasons'])))"
check "custom run inspects" $PACER bench inspect "$TMP/chat.json" > /dev/null
$PACER bench m --server "$URL" --model-id m --chat-only --suite community-v1 --output "$TMP/x.json" > /dev/null 2>&1
check "--chat-only with v1 rules is refused (exit 1)" [ $? -eq 1 ]
$PACER bench m --server "$URL" --reps 0 > /dev/null 2>&1
check "bad arguments exit 1" [ $? -eq 1 ]

# nothing listens at the URL: a clear error (exit 1) and no receipt of failed attempts
port=$(free_port)
$PACER bench org/m --server "http://127.0.0.1:$port" --model-id m --output "$TMP/unreach.json" > /dev/null 2> "$TMP/unreach.err"
check "unreachable server exits 1" [ $? -eq 1 ]
check "unreachable server: says so, no receipt" sh -c "grep -q 'cannot reach the server' '$TMP/unreach.err' && [ ! -e '$TMP/unreach.json' ]"
$PACER bench inspect "$TMP/missing.json" > /dev/null 2> "$TMP/missing.err"
check "inspect of a missing file: exit 1, says not found" sh -c "[ $? -eq 1 ] && grep -q 'not found' '$TMP/missing.err'"
printf '{"schema_version":' > "$TMP/corrupt.json"
$PACER bench inspect "$TMP/corrupt.json" > /dev/null 2> "$TMP/corrupt.err"
check "inspect of a corrupt file: exit 1, says not valid JSON" sh -c "[ $? -eq 1 ] && grep -q 'not valid JSON' '$TMP/corrupt.err'"

# completion rules end to end: 200 of 256 tokens, stopped naturally
start_server stop2 manifest-404.script stop-200.script
$PACER bench org/m --server "$URL" --model-id m --output "$TMP/stop2.json" > /dev/null 2>&1
check "v2 natural stop: exit 2 (greedy cells short)" [ $? -eq 2 ]
check "v2: sampled cells complete, greedy cells incomplete" python3 -c "
import json,sys; r=json.load(open('$TMP/stop2.json'))
st=[(c['setting'],c['status']) for c in r['cells']]
a=r['cells'][0]['attempts'][1]
sys.exit(not (st==[('sampled','complete'),('greedy','incomplete')]*2 and a['finish_reason']=='stop' and a['completion_tokens']==200))"
check "v2 natural-stop receipt inspects" $PACER bench inspect "$TMP/stop2.json" > /dev/null
start_server stop1 manifest-404.script stop-200.script
$PACER bench org/m --server "$URL" --model-id m --suite community-v1 --output "$TMP/stop1.json" > /dev/null 2>&1
check "v1 natural stop: exit 2" [ $? -eq 2 ]
check "v1: every cell incomplete" python3 -c "
import json,sys; r=json.load(open('$TMP/stop1.json'))
sys.exit(not (len(r['cells'])==4 and all(c['status']=='incomplete' for c in r['cells'])))"

# empty replies fail and are never retried through another route; request shape
"$TOOLS/fault_server" --port-file "$TMP/empty.port" --pace-us 0 --log "$TMP/empty.log" \
  --script $F/manifest-404.script --script $F/empty-output.script >/dev/null 2>&1 &
track $!
wait_file "$TMP/empty.port" 10
URL="http://127.0.0.1:$(cat "$TMP/empty.port")"
$PACER bench org/m --server "$URL" --model-id m --reps 1 --tokens 16 --output "$TMP/empty.json" > /dev/null 2>&1
check "empty output: exit 2" [ $? -eq 2 ]
check "empty output: every attempt failed 'empty output'" [ "$(grep -c '"reason": "empty output' "$TMP/empty.json")" -eq 8 ]
check "no retries: one manifest GET + 8 attempts" [ "$(wc -l < "$TMP/empty.log")" -eq 9 ]
check "code cells on /v1/completions, chat cells on /v1/chat/completions" sh -c \
  "[ \$(grep -c 'POST /v1/completions ' '$TMP/empty.log') -eq 4 ] && [ \$(grep -c 'POST /v1/chat/completions ' '$TMP/empty.log') -eq 4 ]"
check "prompt reuse disabled in every request" [ "$(grep -c '"cache_prompt":false' "$TMP/empty.log")" -eq 8 ]

finish
