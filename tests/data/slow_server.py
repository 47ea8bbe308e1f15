"""A stand-in for a slow-starting model server, for the cold-start tests (standard library only).

    python slow_server.py --port P --listen-delay 0.6 --models-delay 0.5 --token-delay 0.3 [--child-pid-file F]

Sleeps `listen-delay` seconds before binding 127.0.0.1:P; after that GET /v1/models answers 503 until
`models-delay` more seconds have passed, then 200; POST /v1/chat/completions streams its first token
after `token-delay` seconds. With --child-pid-file it first starts a long `sleep` child (in the server's
process group) and writes that child's pid, so a test can check the whole group was stopped.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--listen-delay", type=float, default=0.0)
    p.add_argument("--models-delay", type=float, default=0.0)
    p.add_argument("--token-delay", type=float, default=0.0)
    p.add_argument("--child-pid-file")
    args = p.parse_args()
    if args.child_pid_file:
        child = subprocess.Popen(["sleep", "300"])
        with open(args.child_pid_file, "w") as f:
            f.write(str(child.pid))
    time.sleep(args.listen_delay)
    ready_at = time.monotonic() + args.models_delay

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a: object) -> None:
            pass

        def _json(self, status: int, body: object) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path != "/v1/models":
                self._json(404, {"error": "not found"})
            elif time.monotonic() < ready_at:
                self._json(503, {"error": "loading model"})
            else:
                self._json(200, {"object": "list", "data": [{"id": "slow-model", "object": "model"}]})

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            time.sleep(args.token_delay)
            for delta in ({"role": "assistant"}, {"content": "ready"}):
                self.wfile.write(f"data: {json.dumps({'choices': [{'index': 0, 'delta': delta}]})}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.close_connection = True

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    server.serve_forever(poll_interval=0.05)


if __name__ == "__main__":
    main()
