"""CLI command `cold-start`: time from starting a server command (or loading a running Ollama's model)
to its first token. Arguments and tables; the work, and how a run is recorded, is in instruments/cold_start.py."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from agentic_eval.cli.args import add_endpoint_args, add_run_dir_arg, repeats, seconds
from agentic_eval.cli.think_check import _fmt
from agentic_eval.errors import AgenticEvalError

OLLAMA_DEFAULT_URL = "http://localhost:11434/v1"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("cold-start", help="time from starting a server command to its first token")
    p.add_argument("--cmd", metavar="COMMAND", help="the server command to start (run through the shell)")
    add_endpoint_args(p, model_required=False)
    p.add_argument("--repeat", type=repeats, default=1, metavar="N", help="starts to measure (default 1)")
    p.add_argument("--timeout", type=seconds, default=1800, metavar="S",
                   help="give up on a start after S seconds (default 1800)")
    p.add_argument("--ollama-unload", action="store_true",
                   help="for a running Ollama: unload the model first and report load_duration "
                   "(--base-url defaults to http://localhost:11434/v1 here)")
    add_run_dir_arg(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Start a server command N times (or unload a running Ollama's model) and time it to its first token."""
    import json

    from rich.console import Console
    from rich.table import Table

    from agentic_eval.endpoint import preflight, resolve_endpoint
    from agentic_eval.instruments.cold_start import ColdStartConfig, measure_cold_start, measure_ollama_unload, record

    if args.repeat < 1:
        raise AgenticEvalError("--repeat must be at least 1")
    if bool(args.cmd) == bool(args.ollama_unload):
        raise AgenticEvalError('give either --cmd "COMMAND" (start a server) or --ollama-unload (a running Ollama)')
    err = Console(stderr=True, highlight=False)

    def on_phase(index: int, name: str, seconds: float) -> None:
        if not args.json and err.is_terminal:
            err.print(f"start {index + 1}/{args.repeat}: {name.removesuffix('_s')} at {seconds:.2f} s", markup=False)

    if args.ollama_unload:
        if not args.model:
            raise AgenticEvalError("--ollama-unload needs --model (the Ollama model to unload and time)")
        endpoint = resolve_endpoint(args.base_url or _ollama_url(), args.api_key)
        preflight(endpoint, args.model)  # down, or not serving the model: one line, before anything is unloaded
        result = measure_ollama_unload(endpoint, args.model, args.repeat, args.timeout, on_phase)
    else:
        endpoint = resolve_endpoint(args.base_url, args.api_key)
        if not args.json:
            err.print(f"cold-start: {args.repeat} start(s) of {args.cmd!r}, waiting on {endpoint.shown_url}",
                      markup=False)
        result = measure_cold_start(
            endpoint, ColdStartConfig(cmd=args.cmd, model=args.model, repeat=args.repeat, timeout_s=args.timeout),
            on_phase)
    first = result.phases.get("first_token_s") or result.phases.get("load_s")
    model = result.model or "unknown-model"
    run_dir = record(result, Path(args.run_dir), base_url=endpoint.base_url)
    if args.json:
        print(json.dumps({**result.model_dump(mode="json"), "run_dir": str(run_dir)}, indent=2))
        return 0 if first else 1
    table = Table(title=f"cold-start: {model}", title_justify="left")
    names = list(result.phases) or [n for r in result.runs for n in r.phases]
    table.add_column("start")
    for name in dict.fromkeys(names):
        table.add_column(name.removesuffix("_s") + " (s)")
    table.add_column("error")
    for run in result.runs:
        table.add_row(str(run.index + 1), *[_fmt(run.phases.get(n)) if run.phases.get(n) is None
                                            else f"{run.phases[n]:.2f}" for n in dict.fromkeys(names)],
                      run.error or "")
    if len(result.runs) > 1:
        for label, key in (("median", "median"), ("spread", "spread")):
            table.add_row(label, *[f"{getattr(result.phases[n], key):.2f}" if n in result.phases else "-"
                                   for n in dict.fromkeys(names)], "")
    console = Console(highlight=False)
    console.print(table)
    for run in result.runs:
        if run.log_tail:
            console.print(f"start {run.index + 1} server output (end):\n{run.log_tail}", markup=False)
    console.print(result.verdict, markup=False)
    err.print(f"saved to {run_dir}", markup=False)
    return 0 if first else 1


def _ollama_url() -> str | None:
    """OPENAI_BASE_URL if set (resolve_endpoint reads it), else Ollama's usual local address."""
    return None if os.environ.get("OPENAI_BASE_URL") else OLLAMA_DEFAULT_URL

