#!/usr/bin/env python3
# board_fuzz.py - sends mutated receipts to a board and checks that every answer is a 4xx:
# truncated text, deep nesting, huge numbers, invalid UTF-8, duplicated keys and values of
# the wrong type, each made from a valid receipt so that it is surely invalid. Seeded; one
# keep-alive connection per worker. Prints the count per kind and exits 1 on any other
# answer or a lost connection that does not come back.
import argparse, http.client, json, random, sys, threading, urllib.parse

ap = argparse.ArgumentParser()
ap.add_argument("--url", required=True)
ap.add_argument("--token", required=True)
ap.add_argument("--receipt", required=True)
ap.add_argument("--count", type=int, default=10000)
ap.add_argument("--seed", type=int, default=16)
ap.add_argument("--workers", type=int, default=2)
a = ap.parse_args()

base = json.load(open(a.receipt))
text = json.dumps(base, separators=(",", ":"), sort_keys=True).encode()

# Paths whose type the receipt schema fixes, with the JSON types each may have.
TOP = {"schema_version": "int", "run_id": "str", "created_utc": "str", "client": "obj", "mode": "str", "suite": "obj",
       "model": "obj", "backend": "obj", "platform": "obj", "hardware": "obj", "manifest": "obj", "ranked": "bool",
       "unranked_reasons": "arr", "settings": "obj", "cells": "arr", "cancelled": "bool", "exit_status": "int"}
ATTEMPT = {"route": "str", "status": "str", "reason": "str", "http_status": "int", "finish_reason": "str",
           "has_usage": "bool", "prompt_tokens": "int", "completion_tokens": "int", "first_text_ns": "int",
           "duration_ns": "int", "delivery_span_ns": "int", "deliveries": "int", "output_bytes": "int",
           "stream_tok_s": "num", "server_prompt_ms": "num", "server_tok_s": "num", "token_hash": "str"}
NULLABLE = {"prompt_tokens", "completion_tokens", "first_text_ns", "stream_tok_s", "server_prompt_ms", "server_tok_s"}
SAMPLES = {"int": 7, "num": 1.5, "str": "x", "bool": True, "arr": [1], "obj": {"k": 1}, "null": None}
ALLOWED = {"int": {"int"}, "num": {"int", "num"}, "str": {"str"}, "bool": {"bool"}, "arr": {"arr"}, "obj": {"obj"}}

def wrong_value(kind, rnd, nullable):
    choices = [k for k in SAMPLES if k not in ALLOWED[kind] and not (k == "null" and nullable)]
    return SAMPLES[rnd.choice(choices)]

def wrong_type(rnd):
    r = json.loads(text)
    if rnd.random() < 0.4:
        k = rnd.choice(sorted(TOP))
        r[k] = wrong_value(TOP[k], rnd, False)
    else:
        cell = rnd.choice(r["cells"])
        att = rnd.choice(cell["attempts"])
        k = rnd.choice(sorted(ATTEMPT))
        att[k] = wrong_value(ATTEMPT[k], rnd, k in NULLABLE)
    return json.dumps(r).encode()

def truncated(rnd):
    return text[:rnd.randrange(0, len(text) - 1)]

def deep(rnd):
    n = rnd.choice([17, 64, 1000, 100000])
    if rnd.random() < 0.5:
        return b"[" * n + text + b"]" * n
    r = text[:-1] + b',"nest":' + b'{"a":' * n + b"1" + b"}" * n + b"}"
    return r

def huge(rnd):
    r = json.loads(text)
    num = rnd.choice([b"1e999999", b"-1e400", b"123456789012345678901234567890", b"9" * 400])
    att = rnd.choice(rnd.choice(r["cells"])["attempts"])
    k = rnd.choice(["duration_ns", "deliveries", "completion_tokens", "stream_tok_s", "http_status"])
    att[k] = "@@HUGE@@"
    return json.dumps(r).encode().replace(b'"@@HUGE@@"', num)

def bad_utf8(rnd):
    seq = rnd.choice([b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82", b"\x80"])
    i = text.index(b'"run_id":"') + len(b'"run_id":"')
    return text[:i] + seq + text[i:]

def duplicated(rnd):
    key = rnd.choice([b'"run_id":"dup",', b'"mode":"managed",', b'"exit_status":0,', b'"cells":[],'])
    if rnd.random() < 0.5:
        return b"{" + key + text[1:]
    i = text.index(b'"suite":{') + len(b'"suite":{')
    return text[:i] + b'"id":"community-v2",' + text[i:]

KINDS = [("truncated", truncated), ("deep nesting", deep), ("huge number", huge), ("invalid UTF-8", bad_utf8),
         ("duplicated key", duplicated), ("wrong type", wrong_type)]
u = urllib.parse.urlsplit(a.url)
counts = {k: 0 for k, _ in KINDS}
bad = []
lock = threading.Lock()

def worker(wid, n):
    rnd = random.Random(a.seed * 1000 + wid)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    for i in range(n):
        name, make = KINDS[(i + wid) % len(KINDS)]
        body = make(rnd)
        for attempt in range(2):
            try:
                conn.request("POST", "/api/v1/receipts", body, {"Authorization": "Bearer " + a.token,
                                                                "Content-Type": "application/json"})
                resp = conn.getresponse()
                resp.read()
                break
            except (http.client.HTTPException, OSError) as e:
                conn.close()  # the board may close a connection after an error answer; one more try
                conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
                if attempt == 1:
                    with lock: bad.append("%s: no answer (%s)" % (name, e))
                    return
        with lock:
            counts[name] += 1
            if not 400 <= resp.status < 500:
                bad.append("%s: HTTP %d" % (name, resp.status))

threads = [threading.Thread(target=worker, args=(w, a.count // a.workers + (w < a.count % a.workers)))
           for w in range(a.workers)]
for t in threads: t.start()
for t in threads: t.join()
print("sent %d mutated uploads: %s" % (sum(counts.values()), ", ".join("%s %d" % kv for kv in counts.items())))
for b in bad[:20]: print("NOT 4xx:", b)
sys.exit(1 if bad or sum(counts.values()) != a.count else 0)
