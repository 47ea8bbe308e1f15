"""The llama.cpp server's child process that `LocalServer` (local/server.py) starts as
`python -m agentic_eval.local.child`: load the model, print {"url": ...}, serve until told to stop."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading


def serve_child(argv: list[str]) -> int:
    """The child: load the model, print {"url": ...}, serve until SIGTERM/SIGINT or the parent is gone."""
    p = argparse.ArgumentParser(prog="agentic_eval.local.child")
    p.add_argument("--gguf", required=True)
    p.add_argument("--alias", required=True)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--ctx", type=int, default=16384)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--parent", type=int, default=0)
    args = p.parse_args(argv)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.gguf
    params.model_alias = {args.alias}
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.n_ctx = args.ctx
    params.n_parallel = 1
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.use_jinja = True
    params.endpoint_metrics = True
    server = xllamacpp.Server(params)  # returns once the model is loaded and the port is bound
    print(json.dumps({"url": server.listening_address}), flush=True)
    while not stop.wait(1.0):
        if args.parent and os.getppid() != args.parent:
            break
    del server
    return 0


if __name__ == "__main__":  # the child process LocalServer starts
    sys.exit(serve_child(sys.argv[1:]))
