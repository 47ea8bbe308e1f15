"""CLI command `serve-local`: serve a small GGUF model on 127.0.0.1 until Ctrl-C; the work is in
local/server.py (its child process is local/child.py)."""

from __future__ import annotations

import argparse
import sys
import time

from agentic_eval.cli.args import check_gguf, port_number, tokens, whole_number

MAX_THREADS = 1024


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "serve-local",
        help="serve a small GGUF model on 127.0.0.1 with llama.cpp (no GPU needed; needs the [local] extra)",
    )
    p.add_argument("--gguf", metavar="PATH", help="GGUF model file (default: the registry-packaged small model)")
    p.add_argument("--port", type=port_number, default=8080, metavar="P", help="port on 127.0.0.1 (default 8080)")
    p.add_argument("--ctx", type=tokens, default=16384, metavar="N",
                   help="context size in tokens (default 16384)")
    p.add_argument("--threads", type=whole_number(1, MAX_THREADS), default=None, metavar="N",
                   help="CPU threads (default: all cores)")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Start llama.cpp's server on 127.0.0.1, print where it is, serve until Ctrl-C."""
    from agentic_eval.local.server import LocalServer

    check_gguf(args.gguf)

    def say(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    t0 = time.monotonic()
    server = LocalServer(gguf=args.gguf, port=args.port, ctx=args.ctx, threads=args.threads, log=say)
    try:
        say(f"starting llama.cpp on 127.0.0.1:{args.port} (ctx {args.ctx}, {server.threads} threads) ...")
        with server:
            print(f"base URL: {server.base_url}", flush=True)
            print(f"model:    {server.model}", flush=True)
            say(f"ready in {time.monotonic() - t0:.1f}s. Try:\n"
                f"  agentic-eval probe --base-url {server.base_url} --model {server.model}\n"
                f"  agentic-eval run --base-url {server.base_url} --model {server.model} --task json-set-port\n"
                "Ctrl-C stops the server.")
            while server.alive():
                time.sleep(0.5)
            say("the llama.cpp server exited on its own")
            return 1
    except KeyboardInterrupt:  # Ctrl-C, or `kill PID`: main() makes SIGTERM one too
        say("stopped")
        return 0
