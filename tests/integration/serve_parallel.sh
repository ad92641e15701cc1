# serve_parallel.sh - continuous batching in 'pacer serve --parallel N' on a synthetic Q8_0
# model: 4 concurrent greedy requests give token for token what the same requests give one
# at a time (without drafting, with n-gram lookup, with prompts 3 rows a pass beside the
# decoding; streamed too) and really share passes; a client that never reads its stream does
# not stop another request from finishing; a client that disconnects frees its slot long
# before its generation would have ended; --parallel 1 still answers, and a bad --parallel
# or --prefill-chunk is refused.
. tests/lib.sh

"$PACER" model synth -o "$TMP/m.gguf" --dim 256 --layers 4 --type q8_0 --text-only --seed 5 >/dev/null 2>"$TMP/synth.err" ||
  { fail "synth a model" "$(cat "$TMP/synth.err")"; finish; exit 1; }

# serve NAME ARGS...: starts 'pacer serve'; $URL is its address
serve() {
  name=$1; shift
  PORT=$(free_port)
  "$PACER" serve "$TMP/m.gguf" --port "$PORT" --threads 2 "$@" >"$TMP/$name.ready" 2>"$TMP/$name.err" &
  SPID=$!
  track $SPID
  URL="http://127.0.0.1:$PORT"
  wait_file "$TMP/$name.ready" 30 || { fail "$name: ready" "$(cat "$TMP/$name.err")"; return 1; }
}
stop() { kill -TERM $SPID; wait $SPID 2>/dev/null; }
body() { echo "{\"prompt\":\"request $1: the quick brown fox\",\"max_tokens\":48,\"temperature\":0$2}"; }
# ask NAME I [EXTRA]: request I's completion into $TMP/NAME.I.json
ask() { curl -s -m 120 -H 'Content-Type: application/json' --data-binary "$(body "$2" "$3")" "$URL/v1/completions" >"$TMP/$1.$2.json"; }
# out FILE: the text and the token hash of a body, or of a stream's final chunk
out() {
  python3 -c 'import json,sys
t = open(sys.argv[1]).read()
if t.startswith("data:"):
    ev = [json.loads(l[6:]) for l in t.splitlines() if l.startswith("data: {")]
    print(repr("".join(e["choices"][0]["text"] for e in ev if e.get("choices"))), [e["token_hash"] for e in ev if "token_hash" in e][0])
else:
    v = json.loads(t); print(repr(v["choices"][0]["text"]), v["token_hash"], v["usage"]["completion_tokens"])' "$1" 2>/dev/null
}
metric() { curl -s "$URL/metrics" | sed -n "s/^$1 //p"; }

# the reference: one request at a time, one slot, no drafting
serve ref --parallel 1 --serial --ctx 512 || { finish; exit 1; }
for i in 1 2 3 4; do ask ref $i; done
stop
for i in 1 2 3 4; do
  got=$(out "$TMP/ref.$i.json")
  check "reference $i: 48 tokens" [ "${got##* }" = 48 ]
done

for mode in serial lookup chunked; do
  case $mode in
    serial) serve par$mode --parallel 4 --serial --ctx 512 || continue ;;
    lookup) serve par$mode --parallel 4 --ctx 512 || continue ;;
    chunked) serve par$mode --parallel 4 --serial --ctx 512 --prefill-chunk 3 || continue ;;
  esac
  pids=""
  for i in 1 2 3 4; do ask par$mode $i & pids="$pids $!"; done
  wait $pids
  pids=""
  for i in 1 2 3 4; do
    curl -s -m 120 -H 'Content-Type: application/json' --data-binary "$(body $i ',"stream":true')" "$URL/v1/completions" >"$TMP/sse$mode.$i" &
    pids="$pids $!"
  done
  wait $pids
  passes=$(metric pacer_decode_passes_total); rows=$(metric pacer_decode_rows_total)
  prompt_rows=$(metric pacer_decode_prompt_rows_total)
  echo "# --parallel 4 ($mode): $passes decode passes, $rows rows, $prompt_rows prompt rows"
  ask par$mode 5 # one at a time on the same server (slot 0's cache reused)
  ask par$mode 1
  mv "$TMP/par$mode.1.json" "$TMP/one$mode.json"; stop
  for i in 1 2 3 4; do
    want=$(out "$TMP/ref.$i.json")
    [ -n "$want" ] || fail "reference $i has output"
    got=$(out "$TMP/sse$mode.$i")
    if [ "$got" = "${want% *}" ]; then pass "$mode: request $i streamed beside 3 others = alone"; else fail "$mode: request $i streamed beside 3 others = alone" "$got vs $want"; fi
  done
  for i in 2 3 4; do
    got=$(out "$TMP/par$mode.$i.json"); want=$(out "$TMP/ref.$i.json")
    if [ "$got" = "$want" ]; then pass "$mode: request $i beside 3 others = alone"; else fail "$mode: request $i beside 3 others = alone" "$got vs $want"; fi
  done
  check "$mode: the same request alone afterwards = alone" [ "$(out "$TMP/one$mode.json")" = "$(out "$TMP/ref.1.json")" ]
  if [ $mode != lookup ]; then
    check "$mode: concurrent requests shared passes (rows $rows > passes $passes)" [ "$rows" -gt "$passes" ]
    check "$mode: the prompts went through the passes ($prompt_rows rows)" [ "$prompt_rows" -gt 0 ]
  fi
done

# a client that sends a streamed request and never reads does not hold the decoder
serve stall --parallel 2 --serial --ctx 4096 || { finish; exit 1; }
python3 - "$PORT" >"$TMP/stall.out" 2>&1 <<'EOF' &
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(("127.0.0.1", int(sys.argv[1])))
b = b'{"prompt":"never read","max_tokens":4000,"temperature":0,"stream":true,"logprobs":5}'
s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(b), b))
print("sent", flush=True)
time.sleep(300)
EOF
STALL=$!
track $STALL
wait_file "$TMP/stall.out" 10
i=0; while [ "$(metric pacer_slots_busy)" != 1 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
check "the unread stream is generating" [ "$(metric pacer_slots_busy)" = 1 ]
ask stall 1
check "another request finishes beside the unread stream, same output" [ "$(out "$TMP/stall.1.json")" = "$(out "$TMP/ref.1.json")" ]
kill $STALL; wait $STALL 2>/dev/null
stop

# a client that goes away frees its slot (one slot: the next request needs it)
serve cancel --parallel 1 --serial --ctx 4096 || { finish; exit 1; }
curl -sN -m 120 -H 'Content-Type: application/json' -d '{"prompt":"go away","max_tokens":4000,"temperature":0,"stream":true}' \
  "$URL/v1/completions" 2>/dev/null | head -c 300 >/dev/null
i=0; while [ "$(metric pacer_slots_busy)" != 0 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
rows=$(metric pacer_decode_rows_total)
check "a disconnected stream frees its slot before its 4000 tokens ($rows rows decoded)" [ "$(metric pacer_slots_busy)" = 0 -a "$rows" -lt 3000 ]
ask cancel 1
check "--parallel 1: the next request gets the slot, same output" [ "$(out "$TMP/cancel.1.json")" = "$(out "$TMP/ref.1.json")" ]
stop

"$PACER" serve "$TMP/m.gguf" --parallel 0 >/dev/null 2>"$TMP/bad.err"
check "--parallel 0 is refused" sh -c "[ $? -eq 1 ] && grep -q 'parallel must be' '$TMP/bad.err'"
"$PACER" serve "$TMP/m.gguf" --parallel 2 --prefill-chunk 0 >/dev/null 2>"$TMP/bad.err"
check "--prefill-chunk 0 is refused" sh -c "[ $? -eq 1 ] && grep -q 'prefill-chunk must be' '$TMP/bad.err'"
"$PACER" serve "$TMP/m.gguf" --parallel 2 --drafter "$TMP/m.gguf" >/dev/null 2>"$TMP/bad.err"
check "--drafter with --parallel 2 is refused, saying why" sh -c "[ $? -eq 1 ] && grep -q 'parallel 1 only' '$TMP/bad.err'"
finish
