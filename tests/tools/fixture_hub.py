#!/usr/bin/env python3
# fixture_hub.py - a small Hugging Face hub on 127.0.0.1 for the pull tests: the revision API,
# resolve (large files redirect to a second path, /storage/SHA256), Range requests, and
# switches to drop a connection mid-file, corrupt a byte, or require a bearer token; for the
# board's checkpoint lookups, private repos (401 as the real hub answers without a token) and
# an outage switch (503 to everything while a file exists).
import argparse, hashlib, http.server, json, os, sys, threading, urllib.parse

ap = argparse.ArgumentParser()
ap.add_argument("--root", required=True, help="ROOT/ORG/NAME/... are the repos' files")
ap.add_argument("--commit", required=True, help="the commit every repo's main (and --tag) resolves to")
ap.add_argument("--tag", action="append", default=[])
ap.add_argument("--port-file", required=True)
ap.add_argument("--log", required=True, help="one line per request: METHOD PATH range=R auth=yes|no")
ap.add_argument("--drop-after", type=int, default=-1, help="cut large-file bodies after N bytes")
ap.add_argument("--refuse-range", action="store_true", help="answer 503 to Range requests")
ap.add_argument("--corrupt", action="store_true", help="flip one byte of every large file served")
ap.add_argument("--lfs-min", type=int, default=1024, help="files this big or bigger are 'LFS' files")
ap.add_argument("--private", action="append", default=[], help="ORG/NAME: a private repo (401 without its token)")
ap.add_argument("--down-file", help="while this file exists, every request gets 503")
a = ap.parse_args()
token = os.environ.get("FIXTURE_TOKEN", "")
lock = threading.Lock()

def files_of(repo):
    base = os.path.join(a.root, repo)
    out = []
    for d, _, names in os.walk(base):
        for n in sorted(names):
            p = os.path.join(d, n)
            out.append((os.path.relpath(p, base), p))
    return sorted(out)

def meta(path):
    data = open(path, "rb").read()
    if len(data) >= a.lfs_min:
        return {"lfs": True, "etag": hashlib.sha256(data).hexdigest(), "size": len(data)}
    return {"lfs": False, "etag": hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest(), "size": len(data)}

class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args): pass

    def note(self):
        auth = self.headers.get("Authorization", "")
        with lock, open(a.log, "a") as f:
            f.write("%s %s range=%s auth=%s\n" % (self.command, self.path, self.headers.get("Range", "-"),
                                                  "yes" if auth else "no"))

    def answer(self, code, body=b"", headers=()):
        self.send_response(code)
        for k, v in headers: self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD": self.wfile.write(body)

    def fail(self, code, err):
        self.answer(code, json.dumps({"error": err}).encode(), [("X-Error-Code", err), ("Content-Type", "application/json")])

    def authorized(self):
        return not token or self.headers.get("Authorization", "") == "Bearer " + token

    def send_file(self, path, extra):
        data = bytearray(open(path, "rb").read())
        if a.corrupt and len(data) >= a.lfs_min: data[len(data) // 2] ^= 0x55
        start, code = 0, 200
        r = self.headers.get("Range")
        hdrs = list(extra)
        if r and a.refuse_range:
            return self.answer(503, b"busy")
        if r and r.startswith("bytes=") and r.endswith("-"):
            start = int(r[6:-1])
            if start >= len(data):
                return self.answer(416, b"", [("Content-Range", "bytes */%d" % len(data))])
            code = 206
            hdrs.append(("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data))))
        body = bytes(data[start:])
        self.send_response(code)
        for k, v in hdrs: self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        if a.drop_after >= 0 and len(data) >= a.lfs_min and start < a.drop_after:
            self.wfile.write(body[:a.drop_after - start])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)

    def do_GET(self):
        self.note()
        u = urllib.parse.urlsplit(self.path)
        parts = [urllib.parse.unquote(p) for p in u.path.split("/")[1:]]
        if a.down_file and os.path.exists(a.down_file):
            return self.answer(503, b"hub down for maintenance")
        if not self.authorized():
            return self.fail(401, "GatedRepo")
        repo_of = parts[2] + "/" + parts[3] if parts[:2] == ["api", "models"] and len(parts) >= 4 else "/".join(parts[:2])
        if repo_of in a.private:
            return self.fail(401, "RepoNotFound")
        if parts[:2] == ["api", "models"] and len(parts) >= 6 and parts[4] == "revision":
            repo, rev = parts[2] + "/" + parts[3], "/".join(parts[5:])
            if not os.path.isdir(os.path.join(a.root, repo)): return self.fail(404, "RepoNotFound")
            if rev not in ["main", a.commit] + a.tag: return self.fail(404, "RevisionNotFound")
            sib = []
            for rel, p in files_of(repo):
                m = meta(p)
                s = {"rfilename": rel, "size": m["size"]}
                if m["lfs"]:
                    s["blobId"] = "0" * 40
                    s["lfs"] = {"sha256": m["etag"], "size": m["size"], "pointerSize": 130}
                else:
                    s["blobId"] = m["etag"]
                sib.append(s)
            body = json.dumps({"id": repo, "sha": a.commit, "private": False, "gated": False, "siblings": sib}).encode()
            return self.answer(200, body, [("Content-Type", "application/json")])
        if parts[:1] == ["storage"] and len(parts) == 2:
            for d, _, names in os.walk(a.root):
                for n in names:
                    p = os.path.join(d, n)
                    m = meta(p)
                    if m["lfs"] and m["etag"] == parts[1]:
                        return self.send_file(p, [("ETag", '"%s"' % m["etag"])])
            return self.fail(404, "EntryNotFound")
        if len(parts) >= 5 and parts[2] == "resolve":
            repo, rev, rel = parts[0] + "/" + parts[1], parts[3], "/".join(parts[4:])
            if not os.path.isdir(os.path.join(a.root, repo)): return self.fail(404, "RepoNotFound")
            if rev not in ["main", a.commit] + a.tag: return self.fail(404, "RevisionNotFound")
            p = os.path.join(a.root, repo, rel)
            if ".." in rel.split("/") or not os.path.isfile(p): return self.fail(404, "EntryNotFound")
            m = meta(p)
            hdrs = [("X-Repo-Commit", a.commit)]
            if m["lfs"]:
                return self.answer(302, b"", hdrs + [("Location", "/storage/" + m["etag"]),
                                                     ("X-Linked-Etag", '"%s"' % m["etag"]),
                                                     ("X-Linked-Size", str(m["size"])),
                                                     ("ETag", '"%s"' % ("0" * 40))])
            return self.send_file(p, hdrs + [("ETag", '"%s"' % m["etag"])])
        return self.fail(404, "RepoNotFound")

srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(a.port_file + ".tmp", "w") as f: f.write(str(srv.server_address[1]))
os.rename(a.port_file + ".tmp", a.port_file)
srv.serve_forever()
