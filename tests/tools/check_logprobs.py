#!/usr/bin/env python3
"""check_logprobs.py - teacher-forced log-probabilities through any OpenAI-compatible server
(pacer serve, llama-server, vLLM) against reference data such as
../shared/golden/greedy-gpt2vocab-f16.jsonl.

For each reference line it posts /v1/completions with prompt = prompt_ids + output_ids (token
ids), echo true, max_tokens 0 and logprobs N, so the reply scores every given token. Step s of
the reference is the distribution after prompt + output[:s], which predicts output[s]: it
sits at position len(prompt_ids) + s of the echoed list. Compared there, within --tol:
  - the chosen token's log-probability (token_logprobs) with the step's `logprob`;
  - each listed `top` pair whose id the server also lists (top_logprob_ids, pacer's
    extension) with the server's value for that id;
  - the k-th largest value of the server's list with the k-th of the reference, which holds
    even where near-equal ids trade places (random weights make ties within 1e-4 common).
Servers without top_logprob_ids are compared on values only (top_logprobs is keyed by text,
and texts collide). Prints the largest difference; exits 1 on a mismatch, 2 on a bad reply.
Standard library only."""
import argparse
import json
import sys
import urllib.request


def post(url, body, timeout):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("url", help="server base URL, e.g. http://127.0.0.1:8080")
    ap.add_argument("golden", help="reference jsonl (prompt_ids, output_ids, steps[].logprob/top)")
    ap.add_argument("--model", default=None, help="model name to send (some servers require it)")
    ap.add_argument("--tol", type=float, default=1e-3, help="absolute tolerance (default 1e-3)")
    ap.add_argument("--logprobs", type=int, default=5, help="alternatives asked per position (default 5)")
    ap.add_argument("--timeout", type=float, default=120)
    a = ap.parse_args()

    worst, worst_at, checked, bad = 0.0, "", 0, 0

    def compare(where, got, ref):
        nonlocal worst, worst_at, checked, bad
        d = abs(got - ref)
        checked += 1
        if d > worst:
            worst, worst_at = d, where
        if d > a.tol:
            bad += 1
            if bad <= 10:
                print(f"mismatch {where}: got {got:.6f}, reference {ref:.6f} (diff {d:.3g})")

    with open(a.golden) as f:
        lines = [json.loads(l) for l in f if l.strip()]
    for li, ref in enumerate(lines):
        prompt, out = ref["prompt_ids"], ref["output_ids"]
        body = {"prompt": prompt + out, "echo": True, "max_tokens": 0, "logprobs": a.logprobs, "temperature": 0}
        if a.model:
            body["model"] = a.model
        try:
            reply = post(a.url.rstrip("/") + "/v1/completions", body, a.timeout)
            lp = reply["choices"][0]["logprobs"]
            token_lps, top_lps = lp["token_logprobs"], lp["top_logprobs"]
            top_ids = lp.get("top_logprob_ids")
        except Exception as e:  # a reply without the fields is a broken server, not a mismatch
            print(f"line {li}: no usable reply: {e}")
            return 2
        if len(token_lps) != len(prompt) + len(out):
            print(f"line {li}: {len(token_lps)} positions echoed, want {len(prompt) + len(out)}")
            return 2
        for s, step in enumerate(ref["steps"]):
            pos = len(prompt) + s
            if pos >= len(token_lps):
                break
            where = f"line {li} step {s}"
            compare(where + " chosen", token_lps[pos], step["logprob"])
            ref_top = step["top"]
            if top_ids is not None:
                got_pairs = {int(i): v for i, v in top_ids[pos]}
                for rid, rv in ref_top:
                    if rid in got_pairs:
                        compare(f"{where} id {rid}", got_pairs[rid], rv)
                got_vals = sorted((v for _, v in top_ids[pos]), reverse=True)
            else:
                got_vals = sorted(top_lps[pos].values(), reverse=True)
            ref_vals = sorted((v for _, v in ref_top), reverse=True)
            for k in range(min(len(got_vals), len(ref_vals))):
                compare(f"{where} rank {k}", got_vals[k], ref_vals[k])
    print(f"{len(lines)} prompts, {checked} log-probabilities compared, largest difference {worst:.3g}"
          + (f" ({worst_at})" if worst_at else "") + f", tolerance {a.tol:g}, {bad} over")
    if checked == 0:
        return 2
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
