#!/usr/bin/env python3
"""board_seed.py - a populated board for the website's benchmark and screenshots: N receipts
of K contributors, each with their own machines (one or two of a fixed list of GPUs, or a
CPU) and a few models, made from one real receipt with receipt_vary (speeds follow the
machine's memory bandwidth over the model's active size, so the figures look like a real
community's). Writes the models' config.json under HUB_ROOT (for the fixture hub's lookups
and parameter counts) and prints one line per receipt: CONTRIBUTOR FILE.

  board_seed.py BASE OUTDIR HUB_ROOT --receipts N [--seed S]
"""
import argparse
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from receipt_vary import vary  # noqa: E402

LLAMA = {"architectures": ["LlamaForCausalLM"], "num_attention_heads": 32, "num_key_value_heads": 8}
# id, config, active size in billions (for the speeds only; the board computes its own)
MODELS = [
    ("meta-llama/Llama-3.2-1B-Instruct", dict(LLAMA, hidden_size=2048, intermediate_size=8192,
     num_hidden_layers=16, vocab_size=128256, tie_word_embeddings=True), 1.24),
    ("meta-llama/Llama-3.1-8B-Instruct", dict(LLAMA, hidden_size=4096, intermediate_size=14336,
     num_hidden_layers=32, vocab_size=128256), 8.0),
    ("Qwen/Qwen3-8B", {"architectures": ["Qwen3ForCausalLM"], "hidden_size": 4096, "intermediate_size": 12288,
     "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
     "vocab_size": 151936}, 8.2),
    ("Qwen/Qwen3-30B-A3B", {"architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 2048,
     "moe_intermediate_size": 768, "intermediate_size": 6144, "num_experts": 128, "num_experts_per_tok": 8,
     "num_hidden_layers": 48, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
     "vocab_size": 151936}, 3.3),
    ("mistralai/Mistral-7B-Instruct-v0.3", dict(LLAMA, architectures=["MistralForCausalLM"], hidden_size=4096,
     intermediate_size=14336, num_hidden_layers=32, vocab_size=32768), 7.25),
    ("mistralai/Mixtral-8x7B-Instruct-v0.1", dict(LLAMA, architectures=["MixtralForCausalLM"], hidden_size=4096,
     intermediate_size=14336, num_hidden_layers=32, vocab_size=32000, num_local_experts=8,
     num_experts_per_tok=2), 12.9),
    ("example-org/mystery-model", {"architectures": ["SomethingElse"]}, 3.0),  # size unknown to the board
]
# name, backend, platform, memory bandwidth GB/s; "" GPU: a CPU run
MACHINES = [
    ("NVIDIA H200", "cuda", "linux", 4800), ("NVIDIA GeForce RTX 4090", "cuda", "linux", 1008),
    ("NVIDIA RTX A6000", "cuda", "linux", 768), ("AMD Instinct MI300X", "rocm", "linux", 5300),
    ("Apple M3 Max", "mlx", "darwin", 400), ("", "cpu", "linux", 460),
]
NAMES = ["ada", "grace", "linus", "ken", "dennis", "barbara", "margaret", "edsger", "donald", "frances",
         "radia", "sophie", "alan", "john", "leslie", "niklaus", "tony", "guido", "bjarne", "yukihiro"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("outdir")
    ap.add_argument("hub_root")
    ap.add_argument("--receipts", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    base = json.load(open(a.base))
    for mid, cfg, _ in MODELS:
        os.makedirs(os.path.join(a.hub_root, mid), exist_ok=True)
        json.dump(cfg, open(os.path.join(a.hub_root, mid, "config.json"), "w"))
    os.makedirs(a.outdir, exist_ok=True)
    made, k = 0, 0
    while made < a.receipts:
        who = NAMES[k % len(NAMES)] + ("" if k < len(NAMES) else "-%d" % (k // len(NAMES)))
        machines = rng.sample(MACHINES, rng.choice([1, 1, 2]))
        models = rng.sample(MODELS, rng.choice([1, 2, 3, 4]))
        count = min(a.receipts - made, rng.randint(3, 20))  # a day's quota at most
        for j in range(count):
            gpu, backend, platform, bw = rng.choice(machines)
            mid, _, active_b = rng.choice(models)
            tok_s = bw / (active_b * 2.2) * rng.uniform(0.55, 0.9)
            first_ms = (25 + 18 * active_b) * (4800 / bw) ** 0.5 * rng.uniform(0.8, 1.3)
            r = vary(base, "seed-%s-%03d" % (who, j), mid, gpu, backend, platform, tok_s, first_ms,
                     rng.randrange(1 << 30), cpu="AMD EPYC 9654 96-Core" if not gpu else None)
            path = os.path.join(a.outdir, "%s-%03d.json" % (who, j))
            json.dump(r, open(path, "w"))
            print(who, path)
            made += 1
        k += 1


if __name__ == "__main__":
    main()
