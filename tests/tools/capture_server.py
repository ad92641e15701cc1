#!/usr/bin/env python3
# capture_server.py - a listener on 127.0.0.1 that records every request it gets (method,
# path, whether an Authorization header came, the header's value never), for the client's
# credential tests: a board at another URL, a redirect target, or a proxy that must stay
# unused. It answers like a board (capabilities from a file, 201 to uploads), or with a
# redirect to everything.
import argparse, http.server, json, os, threading

ap = argparse.ArgumentParser()
ap.add_argument("--port-file", required=True)
ap.add_argument("--log", required=True, help="one line per request: METHOD PATH auth=yes|no")
ap.add_argument("--caps", help="a file whose JSON answers GET /api/v1/capabilities")
ap.add_argument("--redirect", help="answer 302 with this Location to every request")
ap.add_argument("--redirect-post", help="answer 302 with this Location to POST requests only")
a = ap.parse_args()
lock = threading.Lock()

class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args): pass

    def handle_any(self):
        n = int(self.headers.get("Content-Length", "0") or 0)
        if n: self.rfile.read(n)
        with lock, open(a.log, "a") as f:
            f.write("%s %s auth=%s\n" % (self.command, self.path, "yes" if self.headers.get("Authorization") else "no"))
        where = a.redirect or (a.redirect_post if self.command == "POST" else None)
        if where:
            self.send_response(302)
            self.send_header("Location", where)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path == "/api/v1/capabilities" and a.caps:
            body = open(a.caps, "rb").read()
            code = 200
        else:
            body = json.dumps({"id": "s-0000000000000000", "state": "public", "url": "/r/s-0"}).encode()
            code = 201
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_CONNECT = handle_any

srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(a.port_file + ".tmp", "w") as f: f.write(str(srv.server_address[1]))
os.rename(a.port_file + ".tmp", a.port_file)
srv.serve_forever()
