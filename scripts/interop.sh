#!/bin/sh
# make interop: pacer against a real llama.cpp server (the source node-llama-cpp bundles,
# built by scripts/peers.sh). On a synthetic text-only checkpoint: a managed community-v2
# run (--engine llama.cpp) and an attached one (pacer bench --server against a llama-server
# started here); then the teacher-forced log-probability check (tests/tools/check_logprobs.py)
# of llama-server on ../shared's reference checkpoint. Prints the time each step took; exits
# non-zero on the first failure. Receipts and logs stay in $PEERS_DIR/interop/.
set -u
cd "$(dirname "$0")/.."
PEERS_DIR=${PEERS_DIR:-build-peers}
BUILD=${BUILD:-build}
PACER="$PWD/$BUILD/pacer"
t0=$(date +%s)
BUILD=$BUILD ./scripts/peers.sh || exit 1
t_build=$(( $(date +%s) - t0 ))
SERVER="$PWD/$PEERS_DIR/bin/llama-server"
W="$PWD/$PEERS_DIR/interop"
rm -rf "$W"; mkdir -p "$W/home"
export HOME="$W/home"
THREADS=${INTEROP_THREADS:-2}
pids=""
cleanup() { for p in $pids; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; }
trap cleanup EXIT INT TERM
step() { echo "interop: $*" >&2; }
fail() { echo "interop: FAILED: $*" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
complete() { python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
bad = [(c["workload"], c["setting"], c["reasons"][:1]) for c in r["cells"] if c["status"] != "complete"]
print(f"{len(r['cells'])} cells, {sum(len(c['attempts']) for c in r['cells'])} attempts, backend {r['backend']}, "
      f"tok/s medians {[round(c['aggregates']['stream_tok_s']['median'], 1) for c in r['cells'] if c['aggregates']]}")
sys.exit(1 if bad or r["exit_status"] != 0 or len(r["cells"]) != 4 else 0)
PY
}

# a text-only checkpoint: no reply can stop inside a UTF-8 character (llama-server's output
# parser refuses such text) or end before its budget
"$PACER" model synth -o "$W/interop.gguf" --dim 256 --layers 4 --heads 4 --kv-heads 2 --ffn 768 --type q8_0 \
  --seed 7 --name pacer-interop --text-only >/dev/null || fail "model synth"

t1=$(date +%s)
step "managed community-v2 run: pacer bench --engine llama.cpp --engine-bin $SERVER"
"$PACER" bench "$W/interop.gguf" --engine llama.cpp --engine-bin "$SERVER" --threads "$THREADS" \
  --output "$W/managed.json" >"$W/managed.out" 2>&1
rc=$?
cat "$W/managed.out" >&2
[ $rc -eq 0 ] && complete "$W/managed.json" || fail "managed run (exit $rc); receipt $W/managed.json"
t_managed=$(( $(date +%s) - t1 ))

t1=$(date +%s)
port=$(free_port)
"$SERVER" --model "$W/interop.gguf" --host 127.0.0.1 --port "$port" --alias interop --threads "$THREADS" \
  --parallel 1 >"$W/attached-server.log" 2>&1 &
pids="$pids $!"
i=0; until curl -sf "http://127.0.0.1:$port/health" >/dev/null; do i=$((i+1)); [ $i -gt 600 ] && fail "llama-server not ready"; sleep 0.2; done
step "attached community-v2 run: pacer bench --server http://127.0.0.1:$port"
"$PACER" bench synthetic/pacer-interop --server "http://127.0.0.1:$port" --model-id interop \
  --output "$W/attached.json" >"$W/attached.out" 2>&1
rc=$?
cat "$W/attached.out" >&2
[ $rc -eq 0 ] && complete "$W/attached.json" || fail "attached run (exit $rc); receipt $W/attached.json"
t_attached=$(( $(date +%s) - t1 ))

t1=$(date +%s)
REF=../shared/models/rand-gpt2vocab-f16.gguf
GOLDEN=../shared/golden/greedy-gpt2vocab-f16.jsonl
[ -r "$REF" ] && [ -r "$GOLDEN" ] || fail "../shared (the reference checkpoint and its golden log-probabilities) is absent"
port=$(free_port)
"$SERVER" --model "$REF" --host 127.0.0.1 --port "$port" --threads "$THREADS" --parallel 1 >"$W/logprob-server.log" 2>&1 &
pids="$pids $!"
i=0; until curl -sf "http://127.0.0.1:$port/health" >/dev/null; do i=$((i+1)); [ $i -gt 600 ] && fail "llama-server not ready"; sleep 0.2; done
step "teacher-forced log-probabilities of llama-server against $GOLDEN"
python3 tests/tools/check_logprobs.py "http://127.0.0.1:$port" "$GOLDEN" || fail "log-probability check"
t_logprobs=$(( $(date +%s) - t1 ))
echo "interop: passed in $(( $(date +%s) - t0 )) s (peer build ${t_build} s, managed ${t_managed} s, attached ${t_attached} s, log-probabilities ${t_logprobs} s); receipts in $W"
