#!/usr/bin/env python3
# board_durability.py - kill -9 of the board in a loop during uploads: the board is started,
# receipts (distinct run ids) are uploaded one after another, and at random moments the
# board gets SIGKILL and is started again; an upload whose answer was lost is sent again
# (idempotency answers it). Afterwards every acknowledged upload must be stored, whole,
# with the state it was acknowledged with, and every stored row whole (its canonical hash
# recomputed). SQLite (--db: the file also passes PRAGMA integrity_check) or PostgreSQL (--pg).
import argparse, hashlib, http.client, json, os, random, signal, sqlite3, subprocess, sys, threading, time

ap = argparse.ArgumentParser()
ap.add_argument("--pacer", required=True)
ap.add_argument("--db", help="the SQLite store")
ap.add_argument("--pg", help="the PostgreSQL store (a conninfo)")
ap.add_argument("--hub", required=True)
ap.add_argument("--token", required=True)
ap.add_argument("--receipt", required=True)
ap.add_argument("--work", required=True, help="a directory for port files and logs")
ap.add_argument("--acks", type=int, default=220, help="stop after this many acknowledged uploads")
ap.add_argument("--min-kills", type=int, default=12)
ap.add_argument("--seed", type=int, default=9)
a = ap.parse_args()
rnd = random.Random(a.seed)
base = json.load(open(a.receipt))

def start_board(n):
    pf = os.path.join(a.work, "dur-%s-%d.port" % ("pg" if a.pg else "sqlite", n))
    if os.path.exists(pf): os.unlink(pf)
    log = open(os.path.join(a.work, "dur-board.log"), "a")
    store = ["--pg", a.pg] if a.pg else ["--db", a.db]
    p = subprocess.Popen([a.pacer, "board"] + store + ["--listen", "127.0.0.1:0", "--port-file", pf, "--hub", a.hub,
                          "--quota", "100000"], stdout=log, stderr=log)
    for _ in range(400):
        if os.path.exists(pf) and os.path.getsize(pf) > 0:
            return p, int(open(pf).read())
        if p.poll() is not None:
            sys.exit("board exited at start (%d)" % p.returncode)
        time.sleep(0.05)
    p.kill()
    sys.exit("board did not start")

def post(port, body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        c.request("POST", "/api/v1/receipts", body, {"Authorization": "Bearer " + a.token})
        r = c.getresponse()
        return r.status, json.loads(r.read() or b"null")
    finally:
        c.close()

acked = {}  # run id -> (submission id, state)
kills = 0
n = 0
seq = 0
proc, port = start_board(n)
pending = None
while len(acked) < a.acks or kills < a.min_kills:
    # a killer for this life of the board: SIGKILL after 20-400 ms of uploads
    delay = rnd.uniform(0.02, 0.4)
    timer = threading.Timer(delay, lambda p=proc: p.send_signal(signal.SIGKILL))
    timer.start()
    while True:
        if pending is None:
            seq += 1
            r = dict(base)
            r["run_id"] = "durability-%06d" % seq
            pending = (r["run_id"], json.dumps(r).encode())
        try:
            status, ans = post(port, pending[1])
        except (OSError, http.client.HTTPException):
            break  # killed: the answer is lost, the same receipt goes again to the next board
        if status not in (200, 201):
            timer.cancel()
            proc.kill()
            sys.exit("upload answered HTTP %d: %s" % (status, ans))
        acked[pending[0]] = (ans["id"], ans["state"])
        pending = None
    timer.cancel()
    proc.kill()  # no-op when the timer already did; else the board is stopped the same way
    proc.wait()
    kills += 1
    n += 1
    proc, port = start_board(n)

# every acknowledged upload is there, as acknowledged
missing = 0
for run_id, (sid, state) in acked.items():
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request("GET", "/api/v1/receipts/" + sid, headers={"Authorization": "Bearer " + a.token})
    r = c.getresponse()
    body = json.loads(r.read() or b"null")
    c.close()
    if r.status != 200 or body.get("state") != state or body.get("receipt", {}).get("run_id") != run_id:
        missing += 1
proc.send_signal(signal.SIGTERM)
proc.wait()

if a.pg:
    out = subprocess.run(["psql", "-X", "-q", "-At", "-F", "\t", a.pg, "-c", "SELECT canonical_hash, receipt FROM submissions"],
                         capture_output=True, text=True, check=True).stdout
    rows = [line.split("\t", 1) for line in out.splitlines() if line]
    integrity = "ok"  # PostgreSQL's own crash recovery; the rows are checked below
else:
    db = sqlite3.connect(a.db)
    integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
    rows = db.execute("SELECT canonical_hash, receipt FROM submissions").fetchall()
    db.close()
half = sum(1 for h, text in rows if hashlib.sha256(text.encode()).hexdigest() != h)
print("durability (%s): %d acknowledged uploads, %d kill -9, %d rows stored, %d missing, %d rows not whole, integrity %s"
      % ("PostgreSQL" if a.pg else "SQLite", len(acked), kills, len(rows), missing, half, integrity))
sys.exit(0 if missing == 0 and half == 0 and integrity == "ok" and len(rows) >= len(acked) else 1)
