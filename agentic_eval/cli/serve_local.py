"""CLI commands `serve-local` and `probe`: argument handling and display; the work is in
local/server.py and instruments/probe.py. Run as a module, this is the server child process LocalServer starts."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from typing import Any


def serve_local(args: argparse.Namespace) -> int:
    """Start llama.cpp's server on 127.0.0.1, print where it is, serve until Ctrl-C."""
    from agentic_eval.local.server import LocalServer

    def say(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    def on_term(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # `kill PID` stops the server as cleanly as Ctrl-C

    previous = signal.signal(signal.SIGTERM, on_term)
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
    except KeyboardInterrupt:
        say("stopped")
        return 0
    finally:
        signal.signal(signal.SIGTERM, previous)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def probe(args: argparse.Namespace) -> int:
    """Probe the endpoint's tool-call behaviour in every API shape and print the table (or JSON)."""
    from rich.console import Console
    from rich.table import Table

    from agentic_eval.endpoint import resolve_endpoint
    from agentic_eval.instruments.probe import SHAPES, ShapeResult, run_probe, verdict

    endpoint = resolve_endpoint(args.base_url, args.api_key)
    err = Console(stderr=True, highlight=False)

    def progress(row: ShapeResult) -> None:
        if not args.json:
            err.print(f"  {row.shape}: {row.label} in {row.latency_s:.1f}s", markup=False)

    if not args.json:
        err.print(f"probing {args.model} at {endpoint.shown_url}: {len(SHAPES)} requests, each may take up to "
                  f"{args.timeout:.0f}s on a CPU-only server", markup=False)
    report = run_probe(endpoint, args.model, on_row=progress, timeout_s=args.timeout)
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
        return 0
    out = Console(highlight=False, width=None if sys.stdout.isatty() else 120)
    listed = ", ".join(report.models) if report.models else ("no /models route" if report.models is None else "none")
    out.print(f"models listed: {listed}", markup=False)
    table = Table(title=f"{report.model} at {report.base_url}", title_justify="left")
    for column in ("shape", "HTTP", "label", "family", "tool called", "args ok", "latency", "note"):
        table.add_column(column, justify="right" if column in ("HTTP", "latency") else "left")
    errors = []
    for row in report.shapes:
        note = ", ".join(row.flags)
        if row.error:
            errors.append(f"  {row.shape}: {row.error}")
            note = "error (below)"
        table.add_row(row.shape, _cell(row.status), row.label, _cell(row.family), _cell(row.tool),
                      _cell(row.arguments_ok), f"{row.latency_s:.1f}s", note, style="red" if row.error else None)
    out.print(table)
    for line in errors:
        out.print(line, markup=False, soft_wrap=True)
    m = report.metrics
    if m.families:
        out.print(f"metrics: {m.url} exports {len(m.families)} families"
                  + (f" ({' '.join(m.prefixes)})" if m.prefixes else ""), markup=False)
    else:
        out.print(f"metrics: none at {m.url} ({m.error})", markup=False)
    out.print(verdict(report), markup=False)
    return 0


def serve_child(argv: list[str]) -> int:
    """The child: load the model, print {"url": ...}, serve until SIGTERM/SIGINT or the parent is gone."""
    p = argparse.ArgumentParser(prog="agentic_eval.cli.serve_local")
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
