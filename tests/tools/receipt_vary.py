#!/usr/bin/env python3
"""receipt_vary.py - makes valid variants of a real receipt for the board's tests: another
model, GPU, backend or platform, and timings scaled to a chosen greedy-chat speed and
first-text latency. Every attempt's figures are rewritten consistently (delivery span,
stream_tok_s, first text, duration) and every cell's aggregates are recomputed the way
pacer does (order statistics with linear interpolation, successful warm-ups excluded), so
the board's intake accepts the variant as it would a run.

  receipt_vary.py BASE OUT --run-id ID [--model ID] [--gpu NAME] [--cpu NAME] [--backend NAME]
                  [--platform NAME] [--tok-s X] [--first-ms Y] [--seed N]
     (--gpu "": no GPU, a CPU run)
"""
import argparse
import copy
import json
import random

CELL_FACTOR = {("code", "sampled"): 1.04, ("code", "greedy"): 1.07, ("chat", "sampled"): 0.97, ("chat", "greedy"): 1.0}


def quantile(sorted_values, p):
    rank = p * (len(sorted_values) - 1)
    lo = int(rank // 1)
    hi = lo + 1 if lo + 1 < len(sorted_values) else lo
    frac = rank - lo
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * frac


def summary(values):
    v = sorted(values)
    return {"median": quantile(v, 0.5), "min": v[0], "max": v[-1], "p10": quantile(v, 0.1),
            "p90": quantile(v, 0.9), "n": len(v)}


def aggregates(attempts, reps):
    measured = [a for a in attempts if not a["warmup"]]
    if len(measured) != reps or any(a["status"] != "ok" for a in measured):
        return None
    out = {}
    getters = {
        "stream_tok_s": lambda a: a["stream_tok_s"],
        "first_text_ms": lambda a: None if a["first_text_ns"] is None else a["first_text_ns"] / 1e6,
        "duration_ms": lambda a: a["duration_ns"] / 1e6,
        "server_tok_s": lambda a: a["server_tok_s"],
    }
    for name, get in getters.items():
        vals = [get(a) for a in measured]
        out[name] = None if any(x is None for x in vals) else summary(vals)
    return out


def vary(base, run_id, model=None, gpu=None, backend=None, platform=None, tok_s=None, first_ms=None, seed=1,
         cpu=None):
    """A variant of `base`; gpu "" leaves the run without a GPU (a CPU run)."""
    r = copy.deepcopy(base)
    rng = random.Random(seed)
    r["run_id"] = run_id
    if model:
        r["model"]["id"] = model
    if gpu == "":
        r["hardware"]["gpus"] = []
        r["hardware"]["gpu_count"] = 0
    elif gpu:
        for g in r["hardware"].get("gpus") or []:
            g["name"] = gpu
    if cpu:
        r["hardware"]["cpu"]["model"] = cpu
    if backend:
        r["backend"]["name"] = backend
    if platform:
        r["platform"]["name"] = platform
    reps = r["settings"]["repetitions"]
    for c in r["cells"]:
        factor = CELL_FACTOR.get((c["workload"], c["setting"]), 1.0)
        for a in c["attempts"]:
            if a["status"] != "ok" or not a.get("completion_tokens"):
                continue
            if tok_s:
                target = tok_s * factor * rng.uniform(0.95, 1.05)
                a["delivery_span_ns"] = int(round((a["completion_tokens"] - 1) / target * 1e9))
                a["stream_tok_s"] = (a["completion_tokens"] - 1) / (a["delivery_span_ns"] / 1e9)
            if first_ms:
                a["first_text_ns"] = int(round(first_ms * rng.uniform(0.9, 1.1) * 1e6))
            if tok_s or first_ms:
                a["duration_ns"] = a["first_text_ns"] + a["delivery_span_ns"] + 200000
        c["aggregates"] = aggregates(c["attempts"], reps)
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base")
    ap.add_argument("out")
    ap.add_argument("--run-id")
    ap.add_argument("--model")
    ap.add_argument("--gpu")
    ap.add_argument("--cpu")
    ap.add_argument("--backend")
    ap.add_argument("--platform")
    ap.add_argument("--tok-s", type=float)
    ap.add_argument("--first-ms", type=float)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    base = json.load(open(args.base))
    r = vary(base, args.run_id or base["run_id"], args.model, args.gpu, args.backend, args.platform, args.tok_s,
             args.first_ms, args.seed, args.cpu)
    json.dump(r, open(args.out, "w"))


if __name__ == "__main__":
    main()
