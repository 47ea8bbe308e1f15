"""CLI command `forms`: the form matrix, one request in 15 API shapes (chat completions, Responses, Anthropic
Messages) with N tools exposed; the work, and how a run is recorded, is in instruments/forms.py."""

from __future__ import annotations

import argparse
from pathlib import Path

from agentic_eval.cli.args import add_endpoint_args, add_run_dir_arg, seconds, whole_number
from agentic_eval.cli.tooling import _endpoint, _progress
from agentic_eval.errors import AgenticEvalError

MAX_TOOLS = 5000


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("forms", help="the form matrix: one request in 15 API shapes (chat completions, Responses, "
                       "Anthropic Messages) with N tools exposed")
    add_endpoint_args(p)
    p.add_argument("--tools", type=whole_number(1, MAX_TOOLS), default=500, metavar="N",
                   help="tool schemas exposed (default 500)")
    p.add_argument("--max-tokens", type=whole_number(16, 1_000_000), default=4096, metavar="N",
                   help="output cap per shape (default 4096); lower it on a CPU-served model")
    p.add_argument("--timeout", type=seconds, default=600.0, metavar="S",
                   help="time limit per shape in seconds (default 600; 15 shapes run one after another)")
    add_run_dir_arg(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """The API shapes with N tools exposed: print pass/fail with reasons, save the run."""
    import json

    from agentic_eval.instruments.forms import NARROWED_SIZE, SHAPES, forms_json, record, run_forms

    if not 1 <= args.tools <= MAX_TOOLS:
        raise AgenticEvalError(f"--tools must be between 1 and {MAX_TOOLS} (got {args.tools})")
    endpoint = _endpoint(args)
    progress = _progress(len(SHAPES), "form matrix", args.json)
    with progress:
        results = run_forms(endpoint, args.model, args.tools, timeout_s=args.timeout, max_tokens=args.max_tokens,
                            on_result=lambda _r: progress.advance())
    run_dir = record(results, Path(args.run_dir), base_url=endpoint.base_url, model=args.model, tools=args.tools)
    if args.json:
        print(json.dumps(forms_json(results, args.tools)))
        return 0
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False)
    table = Table(title=f"form matrix · {args.model} · {args.tools} tools exposed (narrowed: "
                  f"{min(NARROWED_SIZE, args.tools)})", title_justify="left")
    for name in ("shape", "result", "reason", "s"):
        table.add_column(name, justify="right" if name == "s" else "left")
    for r in results:
        reason = r.reason if r.passed and not r.detail else f"{r.reason}: {r.detail}"[:100]
        table.add_row(r.name, "[green]pass[/]" if r.passed else "[red]FAIL[/]", reason, f"{r.elapsed_s:.1f}")
    console.print(table)
    passed = sum(r.passed for r in results)
    console.print(f"{passed}/{len(results)} shapes passed; saved: {run_dir}", markup=False)
    return 0
