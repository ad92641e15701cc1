#!/usr/bin/env python3
# fake_engine.py - stands in for an engine executable in managed-run tests: records its
# argv (one JSON line appended to $FAKE_ENGINE_ARGV), then serves on 127.0.0.1 at the
# --port it was given: GET /health and /v1/models answer 200, the manifest 404, and any
# POST streams an OpenAI-style reply of max_tokens tokens with usage.
# $FAKE_ENGINE_MODE: "die" exits at once with a message, "hang" never becomes ready,
# "slow" streams 20 ms per token, "stubborn" too, ignores SIGTERM and starts a child process
# (same process group, also deaf to SIGTERM; its pid goes to $FAKE_ENGINE_PIDFILE.child),
# "greedy-only" refuses any request with a temperature above 0 (HTTP 400 with its reason),
# "loop" streams the same 40-word block over and over (5 ms a token) up to max_tokens,
# "memory" holds 96 MB of touched memory from its start, "die-mid" exits after 3 tokens of
# its first reply, "unplug" switches the power supply files under $FAKE_ENGINE_SYS_ROOT to
# battery when a request arrives, "touch-model" marks its model file as rewritten when a
# request arrives (as a store rebuilt under a run). $FAKE_ENGINE_STOP_AT=N ends every reply after N tokens
# with finish_reason "stop" when max_tokens is larger (an answer that reaches EOS).
# $FAKE_ENGINE_LOG_LINE is printed to its log at start-up; FAKE_ENGINE_RAW_TEXT=0 makes
# /v1/models declare that the model takes no raw text.
# `--version` alone prints "version: 1 (COMMIT)" ($FAKE_ENGINE_COMMIT, default 0123abc; set and
# empty: "version: 1") and exits.
# With --drafter/--model-draft etc. on its command line it reports draft counts in
# "timings", unless $FAKE_ENGINE_NO_DRAFTS is set. With $FAKE_ENGINE_ANSWERS=DIR, a prompt
# holding "@NAME" is answered with the text of DIR/NAME (8 bytes a token) ending with "stop";
# of DIR/NAME.V instead when the command line holds "--fake-answer V" and that file exists. $FAKE_ENGINE_PIDFILE receives its pid.
import json, os, signal, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

argv = sys.argv[:]
if argv[1:] == ["--version"]:  # as llama-server names its build: "version: N (commit)"
    commit = os.environ.get("FAKE_ENGINE_COMMIT", "0123abc")
    print("version: 1" + (" (%s)" % commit if commit else ""), file=sys.stderr)
    sys.exit(0)
if os.environ.get("FAKE_ENGINE_ARGV"):
    with open(os.environ["FAKE_ENGINE_ARGV"], "a") as f:
        f.write(json.dumps(argv[1:]) + "\n")
if os.environ.get("FAKE_ENGINE_PIDFILE"):
    with open(os.environ["FAKE_ENGINE_PIDFILE"], "w") as f:
        f.write(str(os.getpid()))
mode = os.environ.get("FAKE_ENGINE_MODE", "")
if mode == "stubborn":  # ignores SIGTERM: only SIGKILL stops it, and it has a child
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    import subprocess
    child = subprocess.Popen(["sleep", "3600"], preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_IGN))
    if os.environ.get("FAKE_ENGINE_PIDFILE"):
        with open(os.environ["FAKE_ENGINE_PIDFILE"] + ".child", "w") as f:
            f.write(str(child.pid))
print("fake engine starting:", " ".join(argv[1:]), flush=True)
if os.environ.get("FAKE_ENGINE_LOG_LINE"):  # a line of a real engine's log (llama.cpp's weight buffers)
    print(os.environ["FAKE_ENGINE_LOG_LINE"], flush=True)
if mode == "die":
    print("fatal: cannot load model (fake)", file=sys.stderr, flush=True)
    sys.exit(3)
port = int(argv[argv.index("--port") + 1])
delay = 0.02 if mode in ("slow", "stubborn") else 0.005 if mode == "loop" else 0.001
stop_at = int(os.environ.get("FAKE_ENGINE_STOP_AT", "0"))
if mode == "memory":
    ballast = bytearray(96 << 20)
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1


def unplug():
    root = os.environ["FAKE_ENGINE_SYS_ROOT"] + "/sys/class/power_supply"
    with open(root + "/AC/online", "w") as f:
        f.write("0\n")
    with open(root + "/BAT0/status", "w") as f:
        f.write("Discharging\n")
drafting = any(f in argv for f in ("--drafter", "--model-draft", "--speculative-config", "--draft-model",
                                   "--speculative-draft-model-path")) and not os.environ.get("FAKE_ENGINE_NO_DRAFTS")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        if mode == "hang":
            time.sleep(3600)
        code = 200 if self.path in ("/health", "/v1/models") else 404
        body = b'{"status":"ok"}' if code == 200 else b'{"error":{"message":"not found","type":"not_found"}}'
        if self.path == "/v1/models" and os.environ.get("FAKE_ENGINE_RAW_TEXT") == "0":  # a family without raw text
            body = b'{"object":"list","data":[{"id":"fake","object":"model","raw_text":false}]}'
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        req = json.loads(self.rfile.read(n) or b"{}")
        tokens = int(req.get("max_tokens", 16))
        chat = self.path.endswith("/chat/completions")
        if mode == "greedy-only" and float(req.get("temperature", 1.0)) > 0:
            body = b'{"error":{"message":"this engine decodes greedily only (temperature must be 0)","type":"invalid_request_error"}}'
            self.send_response(400)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def send(obj):
            data = b"data: " + (obj if isinstance(obj, bytes) else json.dumps(obj).encode()) + b"\n\n"
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        if mode == "unplug":
            unplug()
        if mode == "touch-model":
            model = argv[argv.index("serve") + 1] if "serve" in argv else argv[argv.index("--model") + 1]
            st = os.stat(model)
            os.utime(model, ns=(st.st_atime_ns, st.st_mtime_ns + 1000000000))
        finish = "length"
        if 0 < stop_at < tokens:
            tokens, finish = stop_at, "stop"
        words = None
        answers, prompt = os.environ.get("FAKE_ENGINE_ANSWERS"), json.dumps(req.get("messages", req.get("prompt", "")))
        if answers and "@" in prompt:
            name = prompt.split("@", 1)[1].split(" ")[0].split('"')[0].rstrip(".")
            path = os.path.join(answers, name)
            if "--fake-answer" in argv and os.path.exists(path + "." + argv[argv.index("--fake-answer") + 1]):
                path += "." + argv[argv.index("--fake-answer") + 1]
            text = open(path, encoding="utf-8").read()
            words = [text[k:k + 8] for k in range(0, len(text), 8)][:int(req.get("max_tokens", 16))]
            tokens, finish = len(words), "stop" if len(words) * 8 >= len(text) else "length"
        for i in range(tokens):
            time.sleep(delay)
            if mode == "die-mid" and i == 3:
                os._exit(9)
            word = words[i] if words else "w%d " % (i % 40) if mode == "loop" else "t%d " % i
            ch = {"delta": {"content": word}} if chat else {"text": word}
            ch["index"] = 0
            ch["finish_reason"] = finish if i == tokens - 1 else None
            send({"choices": [ch]})
        final = {"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": tokens, "total_tokens": tokens + 10}}
        if drafting:
            final["timings"] = {"draft_n": tokens, "draft_n_accepted": tokens // 2, "verify_rounds": tokens // 2 + 1}
        send(final)
        send(b"[DONE]")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
