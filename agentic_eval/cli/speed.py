"""`agentic-eval speed`: contention-gated decode, TTFT, prefill and speculative acceptance, per workload.

Parses the arguments, runs `speed.measure_speed`, applies the bandwidth sanity check, saves the run
beside the agent runs with `speed.record` (so `agentic-eval report` shows it), and prints a table or `--json`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from agentic_eval.cli.args import (
    MAX_REPEATS,
    MAX_TOKENS,
    add_endpoint_args,
    add_run_dir_arg,
    number_above,
    repeats,
    whole_number,
)
from agentic_eval.errors import AgenticEvalError

MAX_GB_PER_TOKEN = 10_000.0
"""The most GB --bytes-per-token takes: ten terabytes, past any checkpoint there is."""
MAX_BANDWIDTH_GB_S = 100_000.0
"""The most GB/s --bandwidth takes: a hundred TB/s, past any memory there is."""

if TYPE_CHECKING:
    from agentic_eval.instruments.speed import SpeedConfig, SpeedReport
    from agentic_eval.instruments.speedstats import BandwidthCheck


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("speed", help="contention-gated decode, TTFT, prefill and speculative acceptance")
    add_endpoint_args(p)
    p.add_argument("--workload", default="code_edit,free_gen,long_ctx", metavar="W[,W]",
                   help="workloads: code_edit, free_gen, long_ctx (default all three)")
    p.add_argument("--reps", type=repeats, default=5, metavar="N",
                   help="measured requests per workload (default 5)")
    p.add_argument("--warmup", type=whole_number(0, MAX_REPEATS), default=1, metavar="N",
                   help="warm-up requests per workload (default 1)")
    p.add_argument("--max-tokens", type=whole_number(2, MAX_TOKENS), default=256, metavar="N",
                   help="output tokens per request (default 256)")
    p.add_argument("--long-ctx-tokens", type=whole_number(256, MAX_TOKENS), default=50000, metavar="N",
                   help="long_ctx prompt size in tokens (default 50000)")
    p.add_argument("--prefill-sweep", action="store_true", help="fit the prefill rate over prompt lengths")
    p.add_argument("--bytes-per-token", type=number_above(0, MAX_GB_PER_TOKEN), metavar="GB",
                   help="GB read per decoded token, for the bandwidth sanity check")
    p.add_argument("--checkpoint", metavar="DIR",
                   help="safetensors checkpoint folder (with config.json) to derive bytes per token")
    p.add_argument("--bandwidth", type=number_above(0, MAX_BANDWIDTH_GB_S), metavar="GB/s",
                   help="the hardware's memory bandwidth")
    add_run_dir_arg(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p.set_defaults(handler=handle)


def _workloads(text: str) -> tuple[str, ...]:
    from agentic_eval.instruments.speed import WORKLOADS

    names = tuple(w.strip() for w in text.split(",") if w.strip())
    bad = [w for w in names if w not in WORKLOADS]
    if bad or not names:
        raise AgenticEvalError(f"--workload {text!r}: choose from {', '.join(WORKLOADS)} (comma-separated)")
    return names


def _bytes_per_token(args: argparse.Namespace) -> tuple[float | None, str]:
    """GB streamed per decoded token and where it came from."""
    if args.bytes_per_token is not None:
        if args.bytes_per_token <= 0:
            raise AgenticEvalError("--bytes-per-token must be positive (GB read per decoded token)")
        return args.bytes_per_token, "--bytes-per-token"
    if args.checkpoint:
        from agentic_eval.instruments.speedstats import checkpoint_bytes

        folder = Path(args.checkpoint)
        if not folder.is_dir():
            raise AgenticEvalError(f"--checkpoint {folder}: not a folder; give the safetensors checkpoint folder")
        cb = checkpoint_bytes(folder)
        share = cb.per_token / cb.total if cb.total else 0.0
        moe = f", {cb.experts_per_tok}/{cb.num_experts} routed experts" if cb.routed_experts else ""
        source = (f"{folder.name}: {cb.total / 1e9:.2f} GB resident, {cb.per_token_gb:.2f} GB streamed per token "
                  f"({share:.1%}{moe})")
        return cb.per_token_gb, source
    return None, ""


def _bandwidth_checks(report: SpeedReport, gb_per_token: float | None, bandwidth: float | None
                      ) -> dict[str, BandwidthCheck]:
    if gb_per_token is None or bandwidth is None:
        return {}
    if bandwidth <= 0:
        raise AgenticEvalError("--bandwidth must be positive (the hardware's memory bandwidth in GB/s)")
    from agentic_eval.instruments.speedstats import check_bandwidth

    return {w.name: check_bandwidth(w.decode.median, gb_per_token, bandwidth, w.mean_acceptance_length)
            for w in report.workloads.values() if w.decode}


def handle(args: argparse.Namespace) -> int:
    """Run the command; exit 1 when a workload kept no sample at all."""
    import json

    from agentic_eval.endpoint import preflight, resolve_endpoint
    from agentic_eval.instruments.speed import SpeedConfig, record

    endpoint = resolve_endpoint(args.base_url, args.api_key)
    workloads = _workloads(args.workload)
    if args.reps < 1 or args.warmup < 0 or args.max_tokens < 2 or args.long_ctx_tokens < 256:
        raise AgenticEvalError("need --reps >= 1, --warmup >= 0, --max-tokens >= 2 and --long-ctx-tokens >= 256")
    gb_per_token, bpt_source = _bytes_per_token(args)
    preflight(endpoint, args.model)
    cfg = SpeedConfig(base_url=endpoint.base_url, api_key=endpoint.api_key, model=args.model, workloads=workloads,
                      reps=args.reps, warmup=args.warmup, max_tokens=args.max_tokens,
                      long_ctx_tokens=args.long_ctx_tokens, prefill_sweep=args.prefill_sweep)
    report = _run_with_progress(cfg, quiet=args.json)
    checks = _bandwidth_checks(report, gb_per_token, args.bandwidth)
    warnings = list(report.warnings)
    if (gb_per_token is None) != (args.bandwidth is None):
        warnings.append("bandwidth check skipped: give both --bandwidth and --bytes-per-token (or --checkpoint)")
    warnings += [f"{name}: {c.message}" for name, c in checks.items() if c.status != "ok"]

    details = {"warnings": warnings, "bytes_per_token_gb": gb_per_token, "bytes_per_token_source": bpt_source,
               "bandwidth_gb_s": args.bandwidth, "bandwidth": {name: vars(c) for name, c in checks.items()}}
    run_dir = record(report, Path(args.run_dir), config=cfg, details=details)
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
        for w in warnings:
            print(f"agentic-eval: warning: {w}", file=sys.stderr)
    else:
        _print_report(report, checks, bpt_source, warnings, run_dir)
    return 1 if any(w.kept == 0 for w in report.workloads.values()) else 0


def _run_with_progress(cfg: SpeedConfig, quiet: bool) -> SpeedReport:
    """Measured requests kept so far over those wanted, every workload in one bar (a prefill sweep adds its own)."""
    from agentic_eval.cli.progress import ProgressDisplay
    from agentic_eval.instruments.speed import measure_speed

    kept_by_label: dict[str, int] = {}
    with ProgressDisplay("speed", cfg.reps * len(cfg.workloads), quiet=quiet) as bar:
        def progress(label: str, kept: int, want: int) -> None:
            if label not in kept_by_label and label not in cfg.workloads:
                bar.add_total(want)
            kept_by_label[label] = kept
            bar.set(sum(kept_by_label.values()), note=f"{label} {kept}/{want}")

        return measure_speed(cfg, progress)


def _num(x: float | None, digits: int) -> str:
    return "-" if x is None else f"{x:,.{digits}f}"


def _print_report(report: SpeedReport, checks: dict[str, BandwidthCheck], bpt_source: str, warnings: list[str],
                  run_dir: Path) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = Console()
    server = report.server
    table = Table(title=f"speed: {report.model} on {report.server_kind} {server.get('version') or ''}".rstrip(),
                  title_justify="left", box=box.SIMPLE_HEAD, collapse_padding=True, pad_edge=False)
    for col in ("workload", "decode tok/s", "min–max", "TTFT s", "kept", "disc.", "accept", "tok/step", "GB/s"):
        table.add_column(col, justify="left" if col == "workload" else "right", no_wrap=col != "decode tok/s")
    for w in report.workloads.values():
        rate = "-" if w.acceptance_rate is None else f"{w.acceptance_rate:.0%}"
        check = checks.get(w.name)
        bw = "-" if check is None else f"{check.implied_gb_s:,.0f}" + ("" if check.status == "ok" else " !")
        span = f"{_num(w.decode.min, 1)}–{_num(w.decode.max, 1)}" if w.decode else "-"
        table.add_row(w.name, _num(w.decode.median if w.decode else None, 1), span,
                      _num(w.ttft.median if w.ttft else None, 3), str(w.kept), str(w.discarded), rate,
                      _num(w.mean_acceptance_length, 2), bw)
    console.print(table)
    flags = ", ".join(f"{k}={v}" for k, v in server.get("flags", {}).items())
    console.print(f"server: {report.server_kind}, gate: {server.get('gate')}" + (f", flags: {flags}" if flags else ""),
                  markup=False)
    for w in report.workloads.values():
        console.print(f"{w.name} acceptance: {w.acceptance_note}", markup=False)
        reasons: dict[str, int] = {}
        for s in w.samples:
            for r in s.reasons:
                reasons[r.split(":")[0]] = reasons.get(r.split(":")[0], 0) + 1
        if reasons:
            console.print(f"{w.name} discarded: " + "; ".join(f"{r} x{n}" for r, n in reasons.items()), markup=False)
    if report.prefill:
        tok_s, r2 = report.prefill
        n = sum(1 for p in report.prefill_points if p.kept)
        console.print(f"prefill: {tok_s:,.0f} tok/s (r² {r2:.4f}, {n} points)", markup=False)
    if bpt_source:
        console.print(f"bytes per token: {bpt_source}", markup=False)
    for text in warnings:
        console.print(f"warning: {text}", style="yellow", markup=False)
    console.print(f"saved: {run_dir}", markup=False)
