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
and texts collide).

Servers that do not echo (llama-server: "Only no echo is supported"; its logprobs are
{"content": [{"id", "logprob", "top_logprobs": [{"id", "logprob"}, ...]}]} for generated
tokens only) are teacher-forced one step at a time: prompt_ids + output_ids[:s] with
max_tokens 1, temperature 0 and logprobs N, and step s compared by id (the chosen token's
and every listed pair's log-probability) and by rank, as above. --mode picks one (default:
echo, else stepwise). Prints the largest difference; exits 1 on a mismatch, 2 on a bad
reply. Standard library only."""
import argparse
import json
import sys
import urllib.error
import urllib.request


def post(url, body, timeout):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:  # the server's error body says why (e.g. no echo)
        raise RuntimeError(f"HTTP {e.code}: {e.read()[:300].decode(errors='replace')}") from None


def echo_positions(url, a, prompt, out):
    """Teacher forcing in one request (echo): per position, (token logprob, {id: logprob} or
    None, [values])."""
    body = {"prompt": prompt + out, "echo": True, "max_tokens": 0, "logprobs": a.logprobs, "temperature": 0}
    if a.model:
        body["model"] = a.model
    lp = post(url, body, a.timeout)["choices"][0]["logprobs"]
    token_lps, top_lps, top_ids = lp["token_logprobs"], lp["top_logprobs"], lp.get("top_logprob_ids")
    if len(token_lps) != len(prompt) + len(out):
        raise RuntimeError(f"{len(token_lps)} positions echoed, want {len(prompt) + len(out)}")
    res = []
    for s in range(len(out)):
        pos = len(prompt) + s
        pairs = {int(i): v for i, v in top_ids[pos]} if top_ids is not None else None
        vals = sorted(pairs.values() if pairs is not None else top_lps[pos].values(), reverse=True)
        res.append((token_lps[pos], pairs, vals))
    return res


def stepwise_positions(url, a, prompt, out):
    """Teacher forcing one step at a time, for servers that list the log-probabilities of the
    tokens they generate only (llama-server's {"content": [...]} form)."""
    res = []
    for s in range(len(out)):
        body = {"prompt": prompt + out[:s], "max_tokens": 1, "logprobs": a.logprobs, "temperature": 0}
        if a.model:
            body["model"] = a.model
        lp = post(url, body, a.timeout)["choices"][0]["logprobs"]
        entry = lp["content"][0]
        pairs = {int(t["id"]): t["logprob"] for t in entry["top_logprobs"]}
        pairs.setdefault(int(entry["id"]), entry["logprob"])
        res.append((pairs.get(out[s]), pairs, sorted((t["logprob"] for t in entry["top_logprobs"]), reverse=True)))
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("url", help="server base URL, e.g. http://127.0.0.1:8080")
    ap.add_argument("golden", help="reference jsonl (prompt_ids, output_ids, steps[].logprob/top)")
    ap.add_argument("--model", default=None, help="model name to send (some servers require it)")
    ap.add_argument("--tol", type=float, default=1e-3, help="absolute tolerance (default 1e-3)")
    ap.add_argument("--logprobs", type=int, default=5, help="alternatives asked per position (default 5)")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--mode", choices=("auto", "echo", "stepwise"), default="auto",
                    help="teacher forcing by echo (one request a prompt) or one step at a time")
    a = ap.parse_args()
    url = a.url.rstrip("/") + "/v1/completions"
    mode = a.mode

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
        try:
            if mode in ("auto", "echo"):
                try:
                    got = echo_positions(url, a, prompt, out)
                    mode = "echo"
                except Exception as e:
                    if mode == "echo":
                        raise
                    print(f"no echo ({e}); teacher forcing one step at a time")
                    mode = "stepwise"
            if mode == "stepwise":
                got = stepwise_positions(url, a, prompt, out)
        except Exception as e:  # a reply without the fields is a broken server, not a mismatch
            print(f"line {li}: no usable reply: {e}")
            return 2
        for s, step in enumerate(ref["steps"]):
            if s >= len(got):
                break
            where = f"line {li} step {s}"
            chosen, pairs, got_vals = got[s]
            if chosen is None:
                print(f"{where}: the reference token {step['id']} is not among the server's top {a.logprobs}")
                bad += 1
                continue
            compare(where + " chosen", chosen, step["logprob"])
            ref_top = step["top"]
            if pairs is not None:
                for rid, rv in ref_top:
                    if rid in pairs:
                        compare(f"{where} id {rid}", pairs[rid], rv)
            ref_vals = sorted((v for _, v in ref_top), reverse=True)
            for k in range(min(len(got_vals), len(ref_vals))):
                compare(f"{where} rank {k}", got_vals[k], ref_vals[k])
    print(f"{len(lines)} prompts ({mode}), {checked} log-probabilities compared, largest difference {worst:.3g}"
          + (f" ({worst_at})" if worst_at else "") + f", tolerance {a.tol:g}, {bad} over")
    if checked == 0:
        return 2
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
