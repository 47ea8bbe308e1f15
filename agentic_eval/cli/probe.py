"""CLI command `probe`: what this server and model do with tools, one small tool-call request in each
API shape; the work is in instruments/probe.py."""

from __future__ import annotations

import argparse
import sys

from agentic_eval.cli.args import add_endpoint_args, seconds


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "probe", help="what this server and model do with tools: one small tool-call request in each API shape"
    )
    add_endpoint_args(p)
    p.add_argument("--timeout", type=seconds, default=180, metavar="S",
                   help="give up on one request after S seconds (default 180, for a CPU-only server)")
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p.set_defaults(handler=handle)


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def handle(args: argparse.Namespace) -> int:
    """Probe the endpoint's tool-call behaviour in every API shape and print the table (or JSON)."""
    import json

    from rich.console import Console
    from rich.table import Table

    from agentic_eval.endpoint import resolve_endpoint
    from agentic_eval.instruments.probe import SHAPES, ShapeResult, run_probe, verdict

    endpoint = resolve_endpoint(args.base_url, args.api_key)
    err = Console(stderr=True, highlight=False)

    def progress(row: ShapeResult) -> None:
        if not args.json:
            err.print(f"  {row.shape}: {row.label} in {row.latency_s:.1f}s", markup=False)

    def started() -> None:  # once the endpoint has answered: an endpoint that is down is the error alone
        if not args.json:
            err.print(f"probing {args.model} at {endpoint.shown_url}: {len(SHAPES)} requests, each may take up "
                      f"to {args.timeout:.0f}s on a CPU-only server", markup=False)

    report = run_probe(endpoint, args.model, on_row=progress, on_start=started, timeout_s=args.timeout)
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
        if row.label == "unsupported":
            table.add_row(row.shape, _cell(row.status), "not supported", "-", "-", "-", f"{row.latency_s:.1f}s",
                          "no /v1/messages")
            continue
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
    from agentic_eval.instruments.probe import probe_diagnosis

    found = probe_diagnosis(report)
    if found is not None:
        out.print(f"diagnosis: {found.text}", markup=False, soft_wrap=True)
        for line in found.enable if found.kind != "model" else []:
            out.print(f"  {line}", markup=False, soft_wrap=True)
        out.print("  rests on: " + "; ".join(found.rests_on), markup=False, soft_wrap=True)
    return 0
