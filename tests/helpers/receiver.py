"""A webhook receiver for the outbox tests and ``benchmarks/serve.py
--webhook``: a real HTTP server process that records every request it got
and, at random, fails it.

    python tests/helpers/receiver.py OUT.jsonl [--fail P] [--hang P] [--drop P]
        [--hang-seconds S] [--port N]

Prints ``listening PORT`` once it listens.  Each request is one JSON line of
OUT (written and flushed *before* the answer, so a line with ``"status":
200`` is written before the sender can see the 200): ``{"id", "kind",
"table", "data", "status", "signed", "t"}`` — ``status`` the answer it
chose: 200, 500 (``--fail``), ``"hang"`` (no answer for ``--hang-seconds``,
then the connection closed: ``--hang``) or ``"drop"`` (half a status line,
then the connection closed: ``--drop``); ``signed``: the
``X-Qipai-Signature`` verifies with ``QIPAI_WEBHOOK_SECRET`` and names the
body's id in ``X-Qipai-Event-Id``; ``t``: ``time.time()`` when it was read.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import random
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def verify(secret: bytes, header: str, body: bytes) -> bool:
    """The receiver's check of ``X-Qipai-Signature`` (docs: the recipe)."""
    try:
        parts = dict(p.split("=", 1) for p in header.split(","))
        mac = hmac.new(secret, parts["t"].encode() + b"." + body, hashlib.sha256).hexdigest()
        return hmac.compare_digest(mac, parts["v1"])
    except (ValueError, KeyError):
        return False


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--fail", type=float, default=0.0)
    ap.add_argument("--hang", type=float, default=0.0)
    ap.add_argument("--drop", type=float, default=0.0)
    ap.add_argument("--hang-seconds", type=float, default=2.0)
    # the first N requests answer 500 whatever the dice say: a test that
    # asserts a retry happened does not rest on chance
    ap.add_argument("--fail-first", type=int, default=0)
    a = ap.parse_args()
    secret = os.environ["QIPAI_WEBHOOK_SECRET"].encode()
    out = open(a.out, "a", encoding="utf-8")
    lock = threading.Lock()
    rng = random.Random()
    seen = [0]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            t = time.time()
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            ev = json.loads(body)
            signed = (verify(secret, self.headers.get("x-qipai-signature", ""), body)
                      and self.headers.get("x-qipai-event-id") == str(ev["id"]))
            with lock:
                r = rng.random()
                seen[0] += 1
                first = seen[0] <= a.fail_first
            status: object = 200
            if first or r < a.fail:
                status = 500
            elif r < a.fail + a.hang:
                status = "hang"
            elif r < a.fail + a.hang + a.drop:
                status = "drop"
            line = json.dumps({"id": ev["id"], "kind": ev["kind"], "table": ev["table"],
                               "data": ev["data"], "created": ev["created"],
                               "status": status, "signed": signed, "t": t})
            with lock:
                out.write(line + "\n")
                out.flush()
            if status == "hang":
                time.sleep(a.hang_seconds)
                self.close_connection = True
                return
            if status == "drop":
                self.wfile.write(b"HTTP/1.1 2")
                self.wfile.flush()
                self.close_connection = True
                return
            answer = b'{"ok":true}' if status == 200 else b'{"ok":false}'
            self.send_response(int(status))  # type: ignore[call-overload]
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

    class Server(ThreadingHTTPServer):
        def handle_error(self, request: object, client_address: object) -> None:
            pass   # a connection the sender closed (a timeout, its shutdown): nothing to say

    httpd = Server(("127.0.0.1", a.port), Handler)
    httpd.daemon_threads = True
    print(f"listening {httpd.server_address[1]}", flush=True)
    sys.stdout.flush()
    httpd.serve_forever()


if __name__ == "__main__":
    main()
