# logprobs.sh - log-probabilities of 'pacer serve' over HTTP on the reference checkpoint:
# teacher-forced echo against llama.cpp's numbers (tests/tools/check_logprobs.py, which runs
# against any server URL), the same numbers with drafting on and off, the prompt cache on and
# off and inside a batch, and one chat stream entry per generated token.
. tests/lib.sh

MODEL="$SHARED/models/rand-gpt2vocab-f16.gguf"
GOLDEN="$SHARED/golden/greedy-gpt2vocab-f16.jsonl"
if [ -z "$SHARED" ] || [ ! -r "$MODEL" ] || [ ! -r "$GOLDEN" ]; then
  for t in "golden log-probabilities over HTTP" "drafting, cache and batch agree" "chat stream entries"; do
    skip_absent "$t" "../shared"
  done
  finish; exit $?
fi

# start NAME ARGS...: a server on a free port; sets URL_<NAME>
start() {
  name=$1; shift
  "$PACER" serve "$MODEL" --port 0 --threads 2 "$@" >"$TMP/$name.ready" 2>"$TMP/$name.err" &
  track $!
  wait_file "$TMP/$name.ready" 30 || { fail "serve $name prints a ready line" "$(cat "$TMP/$name.err")"; finish; exit 1; }
  eval "URL_$name=\$(sed -n 's/.*ready on \(http:[^ ]*\).*/\1/p' \"\$TMP/$name.ready\")"
}
start draft                              # lookup drafting and the prompt cache, the defaults
start serial --serial --no-prompt-cache

if python3 tests/tools/check_logprobs.py "$URL_draft" "$GOLDEN" >"$TMP/golden.out" 2>&1; then
  pass "golden log-probabilities over HTTP: $(tail -n 1 "$TMP/golden.out")"
else
  fail "golden log-probabilities over HTTP" "$(cat "$TMP/golden.out")"
fi

# One greedy request three ways: drafted with a reused prefix, serial without the cache, and
# second in a batch. Token ids and every log-probability must be the same.
python3 - "$URL_draft" "$URL_serial" >"$TMP/agree.out" 2>&1 <<'PY'
import json, sys, urllib.request
def post(url, body):
    req = urllib.request.Request(url + "/v1/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    return json.loads(urllib.request.urlopen(req, timeout=300).read())
drafted, serial = sys.argv[1:3]
prompt = "The cat sat on the mat. The cat sat on the mat. The cat sat on the"
body = {"prompt": prompt, "max_tokens": 32, "temperature": 0, "logprobs": 5}
post(drafted, {"prompt": "The cat sat on the mat. The dog", "max_tokens": 1})  # leaves a prefix to reuse
a = post(drafted, body)
b = post(serial, body)
c = post(drafted, dict(body, prompt=["Hello", prompt]))
assert a["timings"]["prompt_n"] < a["usage"]["prompt_tokens"], "the prefix was not reused"
manifest = json.loads(urllib.request.urlopen(drafted + "/v1/benchmark/manifest", timeout=30).read())
if manifest.get("drafting", "serial") != "serial":
    assert a["timings"]["draft_n"] > 0, "nothing was drafted"
assert b["timings"]["draft_n"] == 0
worst = 0.0
for name, other in (("serial, no cache", b["choices"][0]), ("in a batch", c["choices"][1])):
    x, y = a["choices"][0]["logprobs"], other["logprobs"]
    assert x["top_logprob_ids"] and [p[0][0] for p in x["top_logprob_ids"]] == [p[0][0] for p in y["top_logprob_ids"]], name
    assert x["tokens"] == y["tokens"], name
    for p, q in zip(x["token_logprobs"], y["token_logprobs"]):
        worst = max(worst, abs(p - q))
    for p, q in zip(x["top_logprob_ids"], y["top_logprob_ids"]):
        assert [i for i, _ in p] == [j for j, _ in q], name
        worst = max([worst] + [abs(v - w) for (_, v), (_, w) in zip(p, q)])
print(f"drafted {a['timings']['draft_n']} ({a['timings']['draft_n_accepted']} accepted), largest difference {worst:.3g}")
assert worst <= 1e-6, worst
PY
if [ $? -eq 0 ]; then pass "drafting, cache and batch agree: $(tail -n 1 "$TMP/agree.out")"
else fail "drafting, cache and batch agree" "$(cat "$TMP/agree.out")"; fi

curl -sN -H 'Content-Type: application/json' "$URL_draft/v1/chat/completions" \
  -d '{"messages":[{"role":"user","content":"hi hi hi"}],"max_tokens":12,"temperature":0,"logprobs":true,"top_logprobs":3,"stream":true,"stream_options":{"include_usage":true}}' \
  >"$TMP/chat.sse"
check "chat stream entries: one per generated token" python3 -c '
import json, sys
entries, tokens = 0, -1
for line in open(sys.argv[1]):
    if not line.startswith("data: {"): continue
    v = json.loads(line[6:])
    for c in v["choices"]:
        lp = c.get("logprobs")
        if lp:
            entries += len(lp["content"])
            assert all(len(e["top_logprobs"]) == 3 and isinstance(e["bytes"], list) for e in lp["content"])
    if v.get("usage"): tokens = v["usage"]["completion_tokens"]
assert tokens > 0 and entries == tokens, (entries, tokens)
' "$TMP/chat.sse"
finish
