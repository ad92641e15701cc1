#!/bin/sh
# load.sh - 'pacer bench --concurrency / --rate' against the scripted fault server: levels in
# the receipt, every figure recomputed here from the stored delivery times, SLO goodput, a
# seeded rate schedule reproduced exactly (and regenerated here), a forced client-limited
# level, faults under load, the paced mode. Nothing here asserts speed.
. tests/lib.sh
F=tests/data/fault

# start_server NAME ARGS...: starts the fault server, sets $URL
start_server() {
  n=$1; shift
  "$TOOLS/fault_server" --port-file "$TMP/$n.port" "$@" >/dev/null 2>&1 &
  track $!
  wait_file "$TMP/$n.port" 10 || { fail "$n: fault server did not start"; return 1; }
  URL="http://127.0.0.1:$(cat "$TMP/$n.port")"
}

# recompute RECEIPT: recomputes every level's figures from the stored attempts, in Python,
# and compares them with the stored ones; prints what differs.
recompute() {
  python3 - "$1" <<'EOF'
import json, math, sys
r = json.load(open(sys.argv[1]))
sec = r["load"]
slo = sec["slo"] or {}
def q(v, p):                     # linear between closest ranks, rank = p (n - 1)
    v = sorted(v); k = p * (len(v) - 1); lo = math.floor(k); hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)
def wq(pairs, p):                # smallest value whose cumulative weight reaches p of the total
    pairs = sorted(pairs); total = sum(w for _, w in pairs); cum = 0
    for v, w in pairs:
        cum += w
        if cum >= p * total: return v
    return pairs[-1][0]
def summary(v, weighted=False):
    if not v: return None
    if weighted:
        tw = sum(w for _, w in v)
        return {"p50": wq(v, .5), "p90": wq(v, .9), "p99": wq(v, .99), "max": max(x for x, _ in v),
                "mean": sum(x * w for x, w in v) / tw, "n": len(v)}
    return {"p50": q(v, .5), "p90": q(v, .9), "p99": q(v, .99), "max": max(v), "mean": sum(v) / len(v), "n": len(v)}
def close(a, b, path):
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b): print(path, "keys differ", sorted(a), sorted(b)); return False
        return all(close(a[k], b[k], path + "." + k) for k in a)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        if abs(a - b) <= 1e-9 * max(1, abs(a), abs(b)): return True
    elif a == b: return True
    print(path, a, b); return False
ok = True
for i, lv in enumerate(r["load"]["levels"]):
    m = {k: [] for k in ("ttft_ms", "itl_ms", "itl_token_ms", "tpot_ms", "e2e_ms", "stream_tok_s")}
    wall = tokens = deliveries = good = n_ok = 0
    for a in lv["attempts"]:
        d = [int(x) for x in a["delivery_ns"].split(",")] if a["delivery_ns"] else []
        assert len(d) == a["deliveries"]
        wall = max(wall, a["start_ns"] + a["duration_ns"]); deliveries += a["deliveries"]
        if a["status"] != "ok": continue
        n_ok += 1; tokens += a["completion_tokens"]; ct = a["completion_tokens"]
        m["ttft_ms"].append(a["first_text_ns"] / 1e6); m["e2e_ms"].append(a["duration_ns"] / 1e6)
        m["stream_tok_s"].append(a["stream_tok_s"])
        if ct >= 2: m["tpot_ms"].append((a["duration_ns"] - a["first_text_ns"]) / 1e6 / (ct - 1))
        k = (ct - 1) / (len(d) - 1) if len(d) > 1 and ct >= 2 else 1.0
        for g in d[1:]:
            m["itl_ms"].append(g / 1e6); m["itl_token_ms"].append((g / 1e6 / k, k))
        gaps = d[1:] or [0]
        if (("ttft_ms" not in slo or slo["ttft_ms"] is None or a["first_text_ns"] <= slo["ttft_ms"] * 1e6) and
            ("itl_ms" not in slo or slo["itl_ms"] is None or max(gaps) <= slo["itl_ms"] * 1e6)):
            good += 1
    want = {k: summary(v, k == "itl_token_ms") for k, v in m.items()}
    s = wall / 1e9
    want["throughput"] = {"wall_ns": wall, "requests_ok": n_ok, "requests_per_s": n_ok / s,
                          "output_tok_s": tokens / s, "deliveries_per_s": deliveries / s}
    want["goodput"] = ({"ttft_ms": slo.get("ttft_ms"), "itl_ms": slo.get("itl_ms"), "good": good,
                        "requests_per_s": good / s} if slo else None)
    ok = close(want, lv["aggregates"], "level%d" % i) and ok
    print("level", i, "good", good)
sys.exit(0 if ok else 1)
EOF
}

# a concurrency sweep with SLOs: two levels, eight attempts each
start_server sweep --script $F/manifest-404.script --script $F/load-64.script
$PACER bench org/model --server "$URL" --model-id m --concurrency 1,4 --requests 8 --tokens 64 \
  --slo ttft=1000,itl=1000 --calibration-ms 50 --output "$TMP/sweep.json" >"$TMP/sweep.out" 2>"$TMP/sweep.err"
check "concurrency sweep exits 0" [ $? -eq 0 ]
check "the summary has one row per level" sh -c "grep -q '^1 .* complete' '$TMP/sweep.out' && grep -q '^4 .* complete' '$TMP/sweep.out'"
check "levels in the receipt" python3 -c "
import json,sys; r=json.load(open('$TMP/sweep.json')); l=r['load']
sys.exit(not ([x['concurrency'] for x in l['levels']]==[1,4] and l['kind']=='concurrency' and
  all(len(x['attempts'])==8 and x['status']=='complete' for x in l['levels']) and r['cells']==[] and
  not r['suite']['standard'] and r['exit_status']==0 and len(r['client']['calibration']['levels'])==2))"
recompute "$TMP/sweep.json" >"$TMP/sweep.recompute" 2>&1
check "every figure recomputed from the stored delivery times equals the stored one" [ $? -eq 0 ]
check "goodput equals the attempts within both SLOs (all 8 here)" grep -q "level 1 good 8" "$TMP/sweep.recompute"
$PACER bench inspect "$TMP/sweep.json" >"$TMP/sweep.txt" 2>&1
check "inspect accepts the receipt and shows the levels" sh -c "grep -q 'load sweep by concurrency' '$TMP/sweep.txt' && grep -q 'calibration' '$TMP/sweep.txt'"

# a tight ITL SLO: goodput counts only attempts whose every gap is within it
start_server slo --script $F/manifest-404.script --script $F/load-64.script --script $F/load-stall.script --script $F/load-64.script
$PACER bench org/model --server "$URL" --model-id m --concurrency 3 --requests 3 --tokens 64 \
  --slo itl=1000 --calibration-ms 20 --output "$TMP/slo.json" >/dev/null 2>&1
check "an SLO run exits 0" [ $? -eq 0 ]
recompute "$TMP/slo.json" >"$TMP/slo.recompute" 2>&1
check "SLO run: recomputed figures equal the stored ones" [ $? -eq 0 ]
check "SLO run: the stalled attempt is not good (2 of 3)" grep -q "level 0 good 2" "$TMP/slo.recompute"

# tampering: a delivery time or a figure changed is refused by name
python3 -c "
import json; r=json.load(open('$TMP/sweep.json'))
a=r['load']['levels'][1]['attempts'][3]; d=a['delivery_ns'].split(','); d[0]=str(int(d[0])+1000000)
a['first_text_ns']+=1000000; a['delivery_ns']=','.join(d); json.dump(r,open('$TMP/t1.json','w'))
r=json.load(open('$TMP/sweep.json')); r['load']['levels'][0]['aggregates']['itl_ms']['p99']*=0.5; json.dump(r,open('$TMP/t2.json','w'))
r=json.load(open('$TMP/sweep.json')); r['load']['levels'][0]['client_limited']=True; json.dump(r,open('$TMP/t3.json','w'))"
$PACER bench inspect "$TMP/t1.json" >/dev/null 2>"$TMP/t1.err"
check "a moved delivery time is refused (aggregate check)" grep -q "aggregate check failed" "$TMP/t1.err"
$PACER bench inspect "$TMP/t2.json" >/dev/null 2>"$TMP/t2.err"
check "a forged percentile is refused" grep -q "aggregate check failed" "$TMP/t2.err"
$PACER bench inspect "$TMP/t3.json" >/dev/null 2>"$TMP/t3.err"
check "a forged client-limited flag is refused" grep -q "client_limited does not follow" "$TMP/t3.err"

# a seeded rate run: the same seed gives the same arrival schedule, the one regenerated here
start_server rate --script $F/manifest-404.script --script $F/load-64.script
for k in 1 2; do
  $PACER bench org/model --server "$URL" --model-id m --rate 40,80 --requests 12 --seed 7 --tokens 64 \
    --calibration-ms 20 --output "$TMP/rate$k.json" >/dev/null 2>&1
  check "rate run $k exits 0" [ $? -eq 0 ]
done
check "a seeded rate run reproduces its arrival schedule exactly" python3 -c "
import json, math, sys
M = (1 << 64) - 1
def arrivals(seed, rate, n):
    x, t, out = seed, 0, []
    while len(out) < n:
        out.append(t)
        x = (x + 0x9E3779B97F4A7C15) & M; z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M; z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M; z ^= z >> 31
        u = (z >> 11) * 2.0 ** -53
        t += math.floor(-math.log1p(-u) / rate * 1e9 + 0.5)
    return out
a, b = (json.load(open('$TMP/rate%d.json' % k))['load'] for k in (1, 2))
ok = a['seed'] == 7 and a['kind'] == 'rate'
for la, lb in zip(a['levels'], b['levels']):
    sa = [x['scheduled_ns'] for x in la['attempts']]; sb = [x['scheduled_ns'] for x in lb['attempts']]
    ok = ok and sa == sb == arrivals(7, la['rate'], 12) and all(x['start_ns'] >= x['scheduled_ns'] for x in la['attempts'])
sys.exit(not ok)"
recompute "$TMP/rate1.json" >/dev/null 2>&1
check "rate run: recomputed figures equal the stored ones" [ $? -eq 0 ]
python3 -c "
import json; r=json.load(open('$TMP/rate1.json')); r['load']['levels'][0]['attempts'][2]['scheduled_ns']+=1
json.dump(r,open('$TMP/t4.json','w'))"
$PACER bench inspect "$TMP/t4.json" >/dev/null 2>"$TMP/t4.err"
check "a moved arrival is refused (schedule check)" grep -q "schedule check failed" "$TMP/t4.err"

# a tiny calibration budget: the client measures (almost) nothing, so every level is client-limited
start_server limited --script $F/manifest-404.script --script $F/load-64.script
$PACER bench org/model --server "$URL" --model-id m --concurrency 2 --requests 2 --tokens 64 \
  --calibration-ms 0.001 --output "$TMP/limited.json" >"$TMP/limited.out" 2>&1
check "a client-limited run still exits 0" [ $? -eq 0 ]
check "the level is flagged client-limited in the receipt" python3 -c "
import json,sys; r=json.load(open('$TMP/limited.json')); sys.exit(not r['load']['levels'][0]['client_limited'])"
check "and in the summary" grep -q "client-limited" "$TMP/limited.out"

# faults under load: 64 streams, 6 cut mid-stream, one 2 s stall, one reset
set -- --script $F/manifest-404.script
for i in 1 2 3 4 5 6; do set -- "$@" --script $F/chunked-cut.script; done
set -- "$@" --script $F/load-stall.script --script $F/dropped.script --script $F/load-64.script
start_server faults "$@"
$PACER bench org/model --server "$URL" --model-id m --concurrency 64 --requests 64 --tokens 64 \
  --slo itl=1000 --calibration-ms 20 --output "$TMP/faults.json" >"$TMP/faults.out" 2>&1
check "faults under load exit 2" [ $? -eq 2 ]
check "every attempt recorded, each failure with its reason" python3 -c "
import json,sys; r=json.load(open('$TMP/faults.json')); a=r['load']['levels'][0]['attempts']
failed=[x for x in a if x['status']=='failed']; ok=[x for x in a if x['status']=='ok']
stalled=[x for x in ok if max(int(g) for g in x['delivery_ns'].split(',')[1:]) >= 1.5e9]
sys.exit(not (len(a)==64 and len(failed)==7 and len(ok)==57 and len(stalled)==1 and
  all('connection broken' in x['reason'] for x in failed) and r['exit_status']==2 and
  r['load']['levels'][0]['status']=='incomplete' and r['load']['levels'][0]['aggregates']['goodput']['good']==56))"
recompute "$TMP/faults.json" >/dev/null 2>&1
check "faults: recomputed figures equal the stored ones" [ $? -eq 0 ]
$PACER bench inspect "$TMP/faults.json" >"$TMP/faults.txt" 2>&1
check "faults: inspect accepts the receipt and lists the failures" grep -q "attempt .*: failed: connection broken" "$TMP/faults.txt"

# the paced mode: every stream gets N events, and the send log says when each went out
start_server paced --paced 12 --interval-us 3000 --send-log "$TMP/send.log"
$PACER bench org/model --server "$URL" --model-id m --concurrency 4 --requests 4 --tokens 12 \
  --calibration-ms 20 --output "$TMP/paced.json" >/dev/null 2>&1
check "paced run exits 0" [ $? -eq 0 ]
check "paced: one send-log line per stream, by seed, 12 times each" python3 -c "
import json,sys; r=json.load(open('$TMP/paced.json')); a=r['load']['levels'][0]['attempts']
log={int(l.split()[0]): [int(x) for x in l.split()[1:]] for l in open('$TMP/send.log')}
sys.exit(not (sorted(log)==sorted(x['seed'] for x in a) and all(len(v)==12 for v in log.values()) and
  all(x['deliveries']==12 for x in a)))"

# staggered phases: the first 4 streams wait for each other, then get their 12 events each on
# a grid a quarter interval apart; a fifth request after them still gets its stream
start_server phased --paced 12 --interval-us 4000 --phases 4 --spin-us 20 --send-log "$TMP/phased.log"
$PACER bench org/model --server "$URL" --model-id m --concurrency 4 --requests 5 --tokens 12 \
  --calibration-ms 20 --output "$TMP/phased.json" >/dev/null 2>&1
check "phased run exits 0" [ $? -eq 0 ]
check "phased: five streams of 12 events, logged by seed" python3 -c "
import json,sys; r=json.load(open('$TMP/phased.json')); a=r['load']['levels'][0]['attempts']
log={int(l.split()[0]): [int(x) for x in l.split()[1:]] for l in open('$TMP/phased.log')}
sys.exit(not (len(a)==5 and sorted(log)==sorted(x['seed'] for x in a) and all(len(v)==12 for v in log.values())
  and all(x['deliveries']==12 for x in a)))"

# busy-polling: the client's thread never sleeps during a level; the receipt records it per
# level and is as valid as any; the paced server spinning keeps its send log the same way
start_server spin --paced 12 --interval-us 4000 --phases 2 --spin 1 --send-log "$TMP/spin.log"
$PACER bench org/model --server "$URL" --model-id m --concurrency 2,4 --requests 4 --tokens 12 --busy-poll \
  --calibration-ms 20 --output "$TMP/busy.json" >"$TMP/busy.out" 2>&1
check "busy-poll sweep exits 0" [ $? -eq 0 ]
check "busy-poll: both levels record their scheduling, every attempt has its 12 deliveries" python3 -c "
import json,sys; r=json.load(open('$TMP/busy.json')); l=r['load']['levels']
sys.exit(not ([x['client_scheduling'] for x in l]==['busy-poll']*2 and [x['concurrency'] for x in l]==[2,4] and
  all(a['status']=='ok' and a['deliveries']==12 for x in l for a in x['attempts'])))"
check "busy-poll: recomputed figures equal the stored ones" recompute "$TMP/busy.json"
check "busy-poll: inspect accepts it and says how the client ran" grep -q "complete, client busy-poll" "$TMP/busy.out"
check "spinning server: one send-log line per stream, 12 increasing times each" python3 -c "
import json,sys; r=json.load(open('$TMP/busy.json'))
seeds=sorted(a['seed'] for x in r['load']['levels'] for a in x['attempts'])
log=[[int(x) for x in l.split()] for l in open('$TMP/spin.log')]
sys.exit(not (sorted(v[0] for v in log)==seeds and all(len(v)==13 and v[1:]==sorted(v[1:]) for v in log)))"
$PACER bench org/model --server "$URL" --model-id m --concurrency 2 --requests 2 --tokens 12 --busy-poll --realtime \
  --calibration-ms 20 --output "$TMP/busyrt.json" >/dev/null 2>&1
check "busy-poll with --realtime: recorded together (real-time priority may be refused here)" python3 -c "
import json,sys; r=json.load(open('$TMP/busyrt.json'))
sys.exit(r['load']['levels'][0]['client_scheduling'] not in ('realtime+busy-poll', 'realtime-refused+busy-poll'))"

# Ctrl-C mid-level: the attempts in flight are kept as cancelled, the receipt is saved, exit 130
start_server cancel --paced 400 --interval-us 10000
$PACER bench org/model --server "$URL" --model-id m --concurrency 4 --requests 8 --tokens 400 \
  --calibration-ms 20 --output "$TMP/cancel.json" >"$TMP/cancel.out" 2>&1 &
bench_pid=$!
i=0; while [ $i -lt 100 ] && ! grep -q . "$TMP/cancel.port" 2>/dev/null; do i=$((i+1)); sleep 0.05; done
sleep 1.5
kill -INT $bench_pid
wait $bench_pid
check "Ctrl-C during a level exits 130" [ $? -eq 130 ]
check "the cancelled sweep's receipt keeps every started attempt" python3 -c "
import json,sys; r=json.load(open('$TMP/cancel.json')); a=r['load']['levels'][0]['attempts']
sys.exit(not (r['cancelled'] and r['exit_status']==130 and len(a)==4 and all(x['status']=='cancelled' for x in a)))"
check "and inspect accepts it" "$PACER" bench inspect "$TMP/cancel.json"

# a managed run: pacer starts its own engine (pacer serve on a synthetic checkpoint) and sweeps it
"$PACER" model synth -o "$TMP/real.gguf" --dim 64 --layers 2 --heads 4 --ffn 128 --type q8_0 --seed 3 >/dev/null 2>&1
mkdir -p "$TMP/home"
HOME="$TMP/home" "$PACER" bench "$TMP/real.gguf" --threads 1 --concurrency 1,2 --requests 2 --tokens 8 --calibration-ms 20 \
  --output "$TMP/managed.json" >"$TMP/managed.out" 2>&1
rc=$?
check "managed sweep exits 0 or 2 (a synthetic model may stop early)" [ $rc -eq 0 -o $rc -eq 2 ]
check "managed sweep: both levels in a managed receipt" python3 -c "
import json,sys; r=json.load(open('$TMP/managed.json')); l=r['load']['levels']
sys.exit(not (r['mode']=='managed' and [x['concurrency'] for x in l]==[1,2] and all(len(x['attempts'])==2 for x in l)))"
if pgrep -f "serve $TMP/real.gguf" >/dev/null; then fail "managed sweep: the engine stopped"; else pass "managed sweep: the engine stopped"; fi
check "managed sweep: inspect accepts it" "$PACER" bench inspect "$TMP/managed.json"
# the engine decodes as many requests together as the sweep keeps in flight (2 here)
check "managed sweep: the engine had 2 sequence slots (receipt and its command line)" python3 -c "
import json,sys; r=json.load(open('$TMP/managed.json'))
log=open('$TMP/home/.pacer/runs/%s/engine.log' % r['run_id']).read()
sys.exit(not (r['settings']['sequence_slots']==2 and 'parallel 2' in log))"

# bad input is refused before anything runs
$PACER bench org/model --server "$URL" --model-id m --concurrency 0 >/dev/null 2>"$TMP/bad1.err"
check "--concurrency 0 refused" sh -c "[ $? -eq 1 ] && grep -q 'concurrency 0' '$TMP/bad1.err'"
$PACER bench org/model --server "$URL" --model-id m --concurrency 1 --rate 2 >/dev/null 2>"$TMP/bad2.err"
check "--concurrency with --rate refused" grep -q "one of --concurrency and --rate" "$TMP/bad2.err"
$PACER bench org/model --server "$URL" --model-id m --concurrency 2 --seed 5 >/dev/null 2>"$TMP/bad3.err"
check "--seed without --rate refused" grep -q "seed sets the arrival schedule" "$TMP/bad3.err"
$PACER bench org/model --server "$URL" --model-id m --slo ttft=5 >/dev/null 2>"$TMP/bad4.err"
check "--slo without a sweep refused" grep -q "belong to a load sweep" "$TMP/bad4.err"
$PACER bench org/model --server "$URL" --model-id m --rate 2 --slo tpot=3 >/dev/null 2>"$TMP/bad5.err"
check "an unknown SLO refused" grep -q "expected ttft=MS,itl=MS" "$TMP/bad5.err"
finish
