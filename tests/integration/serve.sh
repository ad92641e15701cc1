# serve.sh - 'pacer serve' on a synthetic model: each bad input gets its status and a JSON
# error, a normal request still succeeds, streaming ends in [DONE], 'pacer request' gives
# ok samples on both routes with usage, timings and a token hash, SIGTERM stops it cleanly.
. tests/lib.sh

"$PACER" model synth -o "$TMP/m.gguf" --dim 64 --layers 2 >/dev/null 2>"$TMP/synth.err" ||
  { fail "synth a model" "$(cat "$TMP/synth.err")"; finish; exit 1; }
PORT=$(free_port)
"$PACER" serve "$TMP/m.gguf" --name tiny --port "$PORT" --ctx 128 >"$TMP/ready" 2>"$TMP/serve.err" &
SPID=$!
track $SPID
wait_file "$TMP/ready" || { fail "serve prints a ready line" "$(cat "$TMP/serve.err")"; finish; exit 1; }
URL="http://127.0.0.1:$PORT"
check "one ready line" [ "$(wc -l <"$TMP/ready")" -eq 1 ]

# code METHOD PATH BODY: prints the status; the body lands in $TMP/body
code() { curl -s -o "$TMP/body" -w '%{http_code}' -X "$1" -H 'Content-Type: application/json' ${3:+--data-binary "$3"} "$URL$2"; }
is_error() { python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["error"]; assert isinstance(e["message"],str) and isinstance(e["type"],str)' "$TMP/body" 2>/dev/null; }

expect() { # NAME WANT METHOD PATH [BODY]
  got=$(code "$3" "$4" "$5")
  if [ "$got" = "$2" ] && is_error; then pass "$1"; else fail "$1" "status $got, want $2: $(head -c 200 "$TMP/body")"; fi
}
expect "malformed JSON" 400 POST /v1/completions '{"prompt": "a",'
expect "wrong type" 400 POST /v1/completions '{"prompt":"a","max_tokens":"many"}'
expect "bad messages" 400 POST /v1/chat/completions '{"messages":"hi"}'
expect "unknown model" 404 POST /v1/completions '{"model":"nope","prompt":"a"}'
expect "unknown route" 404 GET /v1/nothing
LONG=$(python3 -c 'print("word " * 400)')
expect "too many tokens" 400 POST /v1/completions "{\"prompt\":\"$LONG\"}"
BIG=$(python3 -c 'print("{\"prompt\":\"" + "a" * 1100000 + "\"}")')
printf '%s' "$BIG" >"$TMP/big.json"
got=$(curl -s -o "$TMP/body" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary @"$TMP/big.json" "$URL/v1/completions")
if [ "$got" = 413 ] && is_error; then pass "oversize body"; else fail "oversize body" "status $got"; fi

check "health 200" [ "$(code GET /health)" = 200 ]
check "completion after bad input" [ "$(code POST /v1/completions '{"prompt":"Hello","max_tokens":4,"junk":{"x":1}}')" = 200 ]
code GET /v1/models >/dev/null
check "models lists id and family" python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["data"][0]; assert m["id"]=="tiny" and m["family"] and "raw_text" in m' "$TMP/body"
code GET /v1/benchmark/manifest >/dev/null
check "manifest" python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["backend"]=="cpu" and m["rank_count"]==1 and m["manifest_version"]==1 and len(m["checkpoint"]["sha256"][0])==64' "$TMP/body"

curl -sN -H 'Content-Type: application/json' \
  -d '{"prompt":"Hello","max_tokens":5,"stream":true,"stream_options":{"include_usage":true}}' \
  "$URL/v1/completions" >"$TMP/sse"
check "stream ends in [DONE]" [ "$(tail -n 2 "$TMP/sse" | head -n 1)" = "data: [DONE]" ]
check "stream carries usage" grep -q '"usage":{"prompt_tokens"' "$TMP/sse"

for route in completions chat; do
  "$PACER" request --server "$URL" --route $route --tokens 8 >"$TMP/$route.json" 2>"$TMP/$route.err"
  check "pacer request $route ok" python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert s["status"]=="ok" and s["completion_tokens"]>0 and s["prompt_tokens"]>0 and s["server_tok_s"] is not None and len(s["token_hash"])==64' "$TMP/$route.json"
done

code GET /metrics >/dev/null
check "metrics count requests" grep -q '^pacer_requests_total [1-9]' "$TMP/body"

kill -TERM $SPID
i=0; while kill -0 $SPID 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
wait $SPID; rc=$?
check "SIGTERM stops it with status 0" [ "$rc" = 0 ]

# MODEL as pacer bench takes it: a repo id in the Hugging Face cache; the manifest attests
# the snapshot loaded, and PACER_CHECKPOINT_REVISION only stands in outside a snapshot
C=0123456789abcdef0123456789abcdef01234567
R="$TMP/hf/models--some-org--tiny"
mkdir -p "$R/blobs" "$R/snapshots/$C" "$R/refs"
cp "$TMP/m.gguf" "$R/blobs/b1"; ln -s ../../blobs/b1 "$R/snapshots/$C/tiny-q8_0.gguf"; printf '%s' "$C" > "$R/refs/main"
manifest_of() { # NAME MODEL [VAR=VALUE...]: starts pacer serve MODEL, prints the manifest's "model revision"
  name=$1; spec=$2; shift 2
  p=$(free_port)
  env "$@" "$PACER" serve "$spec" --port "$p" --threads 1 >"$TMP/$name.ready" 2>"$TMP/$name.err" &
  sp=$!
  wait_file "$TMP/$name.ready" 30
  curl -s "http://127.0.0.1:$p/v1/benchmark/manifest" >"$TMP/$name.manifest"
  kill -TERM $sp; wait $sp
  python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["model"], m.get("revision", "-"))' "$TMP/$name.manifest"
}
got=$(manifest_of repo some-org/tiny HF_HUB_CACHE="$TMP/hf")
check "serve REPO: a cached repo id is resolved, served under its name, its snapshot attested ($got)" [ "$got" = "some-org/tiny $C" ]
got=$(manifest_of env some-org/tiny HF_HUB_CACHE="$TMP/hf" PACER_CHECKPOINT_REVISION=ffff000011112222333344445555666677778888)
check "a revision variable naming another commit than the snapshot: no revision attested ($got)" [ "$got" = "some-org/tiny -" ]
check "... and it says why" grep -q "is not the snapshot loaded" "$TMP/env.err"
got=$(manifest_of same some-org/tiny HF_HUB_CACHE="$TMP/hf" PACER_CHECKPOINT_REVISION=$C)
check "the variable naming the snapshot loaded: attested ($got)" [ "$got" = "some-org/tiny $C" ]
got=$(manifest_of local "$TMP/m.gguf" PACER_CHECKPOINT_REVISION=v1.2)
check "outside a snapshot the variable stands in ($got)" [ "$got" = "m.gguf v1.2" ]
got=$(manifest_of plain "$TMP/m.gguf" PACER_CHECKPOINT_REVISION=)
check "outside a snapshot, no variable: no revision ($got)" [ "$got" = "m.gguf -" ]
HF_HUB_CACHE="$TMP/hf" "$PACER" serve some-org/not-cached --port 0 >/dev/null 2>"$TMP/nc.err"
check "serve of a repo not in the cache: exit 1, names pacer pull" sh -c "[ $? -eq 1 ] && grep -q 'pacer pull some-org/not-cached' '$TMP/nc.err'"
finish
