#!/bin/sh
# bench_private.sh - what a run writes holds no private facts (canaries: host name, home
# directory, a GPU UUID and serial in the manifest, a prompt marker in a custom suite; and
# what a server says: error bodies, stream error events, finish reasons, token hashes and
# manifest strings carrying a home path, a host name, IPv4/IPv6 addresses, an e-mail
# address, a bearer token and the start of the prompt it received), while the receipt still
# says why each attempt failed and the run's local server log keeps the full text; and real
# signals give the documented exit codes: SIGINT 130 with the cancelled attempt kept,
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
R=$(find "$H/.pacer/benchmarks" -name '*.json' ! -name '*.drafts.json')

# a server whose every word carries canaries (tests/data/fault/canary-*.script); the code and
# chat prompts each meet an error body and an error event, and two complete streams
SERVER_CANARIES="/home/canary-user-4d2f canary-user-4d2f gpu-canary-7 10.77.31.201 fd00:77:31::201 ops-canary@example.org sk-canaryT0k3nAbC123xYz789QwE"
start_server words "--pace-us 0" canary-manifest.script canary-http-500.script canary-stream-error.script \
  canary-finish.script canary-finish.script canary-http-500.script canary-stream-error.script canary-finish.script
HOME="$H" $PACER bench some-org/some-model --server "$URL" --model-id m --reps 1 --tokens 16 \
  > "$TMP/words.out" 2>&1
rc=$?
check "server-canary run exits 2 (incomplete cells)" [ $rc -eq 2 ]
W=$(find "$H/.pacer/benchmarks" -name '*.json' ! -name '*.drafts.json' ! -path "$R")
LOG=$(find "$H/.pacer/runs" -name server.log)
check "the run's server log is 0600 in a 0700 directory" sh -c \
  "[ \"\$(stat -c %a '$LOG')\" = 600 ] && [ \"\$(stat -c %a \"\$(dirname '$LOG')\")\" = 700 ]"

# every file pacer wrote, the server log aside (local, never published): no canary, and no
# 12 characters in a row of what the server quoted of a prompt (raw, as JSON, or folded)
files=$(find "$H/.pacer" -type f ! -name server.log)
check "runs wrote two receipts and two drafts files" [ "$(echo "$files" | grep -c '\.json$')" -eq 4 ]
leak=0
for f in $files; do
  for c in "$HOST" "$H" "home-canary" "$UUID" "SN-CANARY" "canary-host" "$MARK" "$(id -un)" $SERVER_CANARIES; do
    if grep -qF -- "$c" "$f"; then leak=1; echo "# leak: '$c' in $(basename "$f")"; fi
  done
done
check "no canary in any file the runs wrote" [ $leak -eq 0 ]
check "no run of the quoted prompts in any file the runs wrote" python3 - suites/community-v2.json $files <<'PY'
import json, sys
quoted = [w["prompt"][:40] for w in json.load(open(sys.argv[1]))["workloads"]]
forms = set()
for q in quoted:
    for form in (q, json.dumps(q)[1:-1], " ".join(q.split())):
        forms.update(form[i:i + 12] for i in range(len(form) - 11))
bad = [(f, w) for f in sys.argv[2:] for w in forms if w in open(f, encoding="utf-8").read()]
print("\n".join("# leak: %r in %s" % (w, f) for f, w in bad[:5]))
sys.exit(1 if bad else 0)
PY
check "the receipt says why each attempt failed, in pacer's words and the server's (sanitized)" python3 - "$W" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
atts = [a for c in r["cells"] for a in c["attempts"]]
failed = [a for a in atts if a["status"] != "ok"]
assert len(failed) == 4 and all(a["reason"] for a in failed), failed
assert sorted(a["reason"] for a in failed) == ["HTTP 500"] * 2 + ["server error in stream"] * 2, failed
for a in failed:
    m = a["server_message"]
    for p in ("<prompt>", "<path>", "<host>", "<address>", "<email>", "<secret>"):
        assert p in m, (p, m)
ok = [a for a in atts if a["status"] == "ok"]
assert len(ok) == 4 and all(a["finish_reason"] == "other" and a["token_hash"] == "" for a in ok), ok
assert r["manifest"]["status"] == "rejected" and r["manifest"]["reason"] == "platform holds a host name", r["manifest"]
assert r["hardware"]["source"] == "unknown" and not r["ranked"]
PY
check "the server log holds every canary and the quoted prompts in full" python3 - suites/community-v2.json "$LOG" $SERVER_CANARIES <<'PY'
import json, sys
log = open(sys.argv[2], encoding="utf-8").read()
quoted = [w["prompt"][:40] for w in json.load(open(sys.argv[1]))["workloads"]]
missing = [c for c in sys.argv[3:] if c not in log]
missing += [q for q in quoted if json.dumps(q)[1:-1] not in log]
assert not missing, missing
for what in ("manifest: rejected", "HTTP error body", "stream error event", "finish_reason", "token_hash"):
    assert what in log, what
PY
check "the run names the server log" grep -q "server messages in full: ~/.pacer/runs/.*/server.log" "$TMP/words.out"
check "the run prints the sanitized reason" grep -q "incomplete code/.*: HTTP 500: prompt '<prompt>' rejected" "$TMP/words.out"
HOME="$H" $PACER bench inspect "$W" > "$TMP/words.txt" 2>&1
check "inspect: each failed attempt with its reason and excerpt, and where the full text is" sh -c "
  [ \$(grep -c 'failed: HTTP 500: prompt .<prompt>. rejected: cannot load <path> on <host>' '$TMP/words.txt') -eq 2 ] &&
  [ \$(grep -c 'failed: server error in stream: prompt .<prompt>. lost' '$TMP/words.txt') -eq 2 ] &&
  grep -q 'server messages in full: ~/.pacer/runs/.*/server.log' '$TMP/words.txt'"
# a receipt that still holds a server's private words (one written before pacer sanitized
# them) is refused before anything leaves the machine
python3 - "$W" "$TMP/old.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
a = next(a for c in r["cells"] for a in c["attempts"] if a["status"] != "ok")
a["server_message"] = "cannot load /home/canary-user-4d2f/m.gguf"
json.dump(r, open(sys.argv[2], "w"))
PY
HOME="$H" $PACER bench publish "$TMP/old.json" --yes --upload-url "http://127.0.0.1:9" > "$TMP/pub.out" 2>&1
prc=$?
check "publish refuses a receipt holding a server's path, naming the field, not the text" sh -c \
  "[ $prc -eq 1 ] && grep -q 'server_message holds a file-system path' '$TMP/pub.out' && ! grep -q canary-user '$TMP/pub.out'"
check "neither the run nor inspect prints a server canary" sh -c \
  "! grep -qE 'canary-user|gpu-canary|10\.77\.31|fd00:77|ops-canary|sk-canary|import threading|Postgres datab' '$TMP/words.txt' '$TMP/words.out'"
# a load sweep meets the same server: its levels' attempts hold only sanitized words, the run
# log the full text; a server's words planted in a level's attempt are refused by publish
LH="$TMP/home-load-canary-6e02"
mkdir -p "$LH"
start_server loadwords "--pace-us 0" canary-manifest.script canary-http-500.script canary-stream-error.script \
  canary-finish.script canary-finish.script
HOME="$LH" $PACER bench some-org/some-model --server "$URL" --model-id m --concurrency 4 --requests 4 --tokens 16 \
  --calibration-ms 20 > "$TMP/loadwords.out" 2>&1
rc=$?
check "load sweep against the canary server exits 2" [ $rc -eq 2 ]
LW=$(find "$LH/.pacer/benchmarks" -name '*.json' ! -name '*.drafts.json')
LLOG=$(find "$LH/.pacer/runs" -name server.log)
leak=0
for f in $(find "$LH/.pacer" -type f ! -name server.log); do
  for c in "$HOST" "$LH" "$(id -un)" $SERVER_CANARIES; do
    if grep -qF -- "$c" "$f"; then leak=1; echo "# leak: '$c' in $(basename "$f")"; fi
  done
done
for c in $SERVER_CANARIES; do
  if grep -qF -- "$c" "$TMP/loadwords.out"; then leak=1; echo "# leak: '$c' printed"; fi
done
check "load sweep: no canary in any file the run wrote, no server canary printed" [ $leak -eq 0 ]
check "load sweep: the level's failed attempts say why, with the server's words sanitized" python3 - "$LW" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
atts = r["load"]["levels"][0]["attempts"]
failed = sorted((a for a in atts if a["status"] != "ok"), key=lambda a: a["reason"])
assert [a["reason"] for a in failed] == ["HTTP 500", "server error in stream"], failed
for a in failed:
    for p in ("<prompt>", "<path>", "<host>", "<address>", "<email>", "<secret>"):
        assert p in a["server_message"], (p, a["server_message"])
PY
check "load sweep: the server log holds every canary in full" python3 - "$LLOG" $SERVER_CANARIES <<'PY'
import sys
log = open(sys.argv[1], encoding="utf-8").read()
assert "load sweep" in log and not [c for c in sys.argv[2:] if c not in log], log[:300]
PY
python3 - "$LW" "$TMP/load-old.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
a = next(a for a in r["load"]["levels"][0]["attempts"] if a["status"] != "ok")
a["server_message"] = "upstream gpu-canary-7.cluster.example.net failed"
json.dump(r, open(sys.argv[2], "w"))
PY
HOME="$LH" $PACER bench publish "$TMP/load-old.json" --yes --upload-url "http://127.0.0.1:9" > "$TMP/load-pub.out" 2>&1
prc=$?
check "publish refuses a load level's attempt holding a server's host name, naming the field" sh -c \
  "[ $prc -eq 1 ] && grep -q 'load.levels\[0\].attempts\[[0-9]*\].server_message holds a host name' '$TMP/load-pub.out' &&
   ! grep -q gpu-canary '$TMP/load-pub.out'"

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
