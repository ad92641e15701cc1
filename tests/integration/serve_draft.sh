# serve_draft.sh - drafting in 'pacer serve' on a synthetic pair (a 2-layer target and a
# 1-layer drafter of the same seed and vocabulary): greedy output is token-for-token the same
# with --serial, with n-gram lookup and with --drafter (streamed too), lookup and the drafter
# get drafts accepted, the manifest names the mode, and a drafter with another vocabulary is
# refused with a clear message.
. tests/lib.sh

# seed 8 falls into a repeating loop within 64 greedy tokens: what lookup can draft
for spec in "t 2" "d 1"; do
  set -- $spec
  "$PACER" model synth -o "$TMP/$1.gguf" --dim 64 --layers "$2" --seed 8 >/dev/null 2>"$TMP/synth.err" ||
    { fail "synth $1" "$(cat "$TMP/synth.err")"; finish; exit 1; }
done

# serve NAME ARGS...: starts 'pacer serve' on the target; $URL is its address
serve() {
  name=$1; shift
  PORT=$(free_port)
  "$PACER" serve "$TMP/t.gguf" --port "$PORT" --ctx 256 --threads 1 "$@" >"$TMP/$name.ready" 2>"$TMP/$name.err" &
  SPID=$!
  track $SPID
  URL="http://127.0.0.1:$PORT"
  wait_file "$TMP/$name.ready" || { fail "$name: ready" "$(cat "$TMP/$name.err")"; return 1; }
}
stop() { kill -TERM $SPID; wait $SPID 2>/dev/null; }

# ask NAME N BODY: one completion, saved as $TMP/NAME.N.json
ask() { curl -s -H 'Content-Type: application/json' --data-binary "$3" "$URL/v1/completions" >"$TMP/$1.$2.json"; }
# field FILE KEY: a timings value, or text / token_hash
field() {
  python3 -c 'import json,sys
v=json.load(open(sys.argv[1]))
k=sys.argv[2]
print(v["token_hash"] if k=="token_hash" else repr(v["choices"][0]["text"]) if k=="text" else v["timings"][k])' "$1" "$2"
}

BODIES='{"prompt":"abcabcabcabcabcabc","max_tokens":64,"temperature":0}
{"prompt":"the cat sat on the mat. the cat sat on the mat. the","max_tokens":48,"temperature":0,"cache_prompt":false}'

for mode in serial lookup drafter self; do
  case $mode in
    serial) serve $mode --serial || continue ;;
    lookup) serve $mode || continue ;;
    drafter) serve $mode --drafter "$TMP/d.gguf" || continue ;;
    self) serve $mode --drafter "$TMP/t.gguf" || continue ;; # the target as its own drafter
  esac
  i=0
  echo "$BODIES" | while IFS= read -r body; do i=$((i + 1)); ask $mode $i "$body"; done
  curl -sN -H 'Content-Type: application/json' \
    -d '{"prompt":"abcabcabcabcabcabc","max_tokens":64,"temperature":0,"stream":true}' \
    "$URL/v1/completions" >"$TMP/$mode.sse"
  curl -s "$URL/v1/benchmark/manifest" >"$TMP/$mode.manifest"
  stop
done

for i in 1 2; do
  want=$(field "$TMP/serial.$i.json" token_hash)
  check "prompt $i: serial output has a hash" [ ${#want} -eq 64 ]
  check "prompt $i: serial drafts nothing" [ "$(field "$TMP/serial.$i.json" draft_n)" = 0 ]
  for mode in lookup drafter self; do
    got=$(field "$TMP/$mode.$i.json" token_hash)
    if [ "$got" = "$want" ] && [ "$(field "$TMP/$mode.$i.json" text)" = "$(field "$TMP/serial.$i.json" text)" ]; then
      pass "prompt $i: $mode greedy output identical to serial"
    else
      fail "prompt $i: $mode greedy output identical to serial" "$(field "$TMP/$mode.$i.json" text) vs $(field "$TMP/serial.$i.json" text)"
    fi
  done
done
for mode in lookup drafter self; do
  # (check uses $n itself: these names stay apart)
  d_n=$(field "$TMP/$mode.1.json" draft_n); d_acc=$(field "$TMP/$mode.1.json" draft_n_accepted)
  d_rounds=$(field "$TMP/$mode.1.json" verify_rounds); d_pred=$(field "$TMP/$mode.1.json" predicted_n)
  echo "# $mode: predicted_n $d_pred, verify_rounds $d_rounds, draft_n $d_n, draft_n_accepted $d_acc"
  check "$mode: drafts accepted (draft_n_accepted > 0)" [ "$d_acc" -gt 0 ]
  check "$mode: accepted <= proposed" [ "$d_acc" -le "$d_n" ]
  check "$mode: fewer verify rounds than tokens" [ "$d_rounds" -lt "$((d_pred - 1))" ]
  check "$mode: manifest names the drafting mode" python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["drafting"]==sys.argv[2], m' \
    "$TMP/$mode.manifest" "$( [ $mode = lookup ] && echo lookup || echo drafter)"
done
check "self-drafting accepts every draft" [ "$(field "$TMP/self.1.json" draft_n)" = "$(field "$TMP/self.1.json" draft_n_accepted)" ]
for mode in serial lookup drafter; do
  check "$mode: streamed output has the serial hash" grep -q "\"token_hash\":\"$(field "$TMP/serial.1.json" token_hash)\"" "$TMP/$mode.sse"
done

# a drafter must share the vocabulary (the byte-level target against a GPT-2 vocabulary)
OTHER="$SHARED/models/rand-gpt2vocab-f16.gguf"
if [ -n "$SHARED" ] && [ -r "$OTHER" ]; then
  PORT=$(free_port)
  "$PACER" serve "$TMP/t.gguf" --port "$PORT" --threads 1 --drafter "$OTHER" >"$TMP/bad.out" 2>"$TMP/bad.err"
  rc=$?
  check "another vocabulary is refused" [ "$rc" -ne 0 ]
  check "the refusal says why" grep -q "share the vocabulary" "$TMP/bad.err"
else
  skip_absent "another vocabulary is refused" "../shared"
fi
finish
