"""CLI commands `think-check` and `cold-start`: arguments, progress, tables, saving.
The work is in thinkcheck.py and coldstart.py."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from agentic_eval.errors import AgenticEvalError

OLLAMA_DEFAULT_URL = "http://localhost:11434/v1"


def _fmt(value: Any, suffix: str = "") -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.1f}{suffix}"
    return f"{value}{suffix}"


def think_check(args: argparse.Namespace) -> int:
    """Ask the generated problems with reasoning on and off; print the per-mode table and the verdict."""
    from rich.console import Console
    from rich.table import Table

    from agentic_eval.endpoint import preflight, resolve_endpoint
    from agentic_eval.results import save_instrument_run
    from agentic_eval.instruments.thinkcheck import Attempt, ThinkCheckConfig, run_think_check, verdict

    if args.problems < 1:
        raise AgenticEvalError("--problems must be at least 1")
    endpoint = resolve_endpoint(args.base_url, args.api_key)
    preflight(endpoint, args.model)
    err = Console(stderr=True, highlight=False)
    config = ThinkCheckConfig(model=args.model, problems=args.problems, seed=args.seed)

    from agentic_eval.cli.progress import ProgressDisplay

    bar = ProgressDisplay("think-check", 2 * args.problems, quiet=args.json, console=err)

    def progress(done: int, total: int, attempt: Attempt) -> None:
        mark = "error" if attempt.error else ("right" if attempt.correct else "wrong")
        slips = f", {len(attempt.false_claims)} false statement(s)" if attempt.false_claims else ""
        if bar.live:  # each answer above the bar; a log gets the bar's plain lines only
            bar.print(f"[{done}/{total}] {attempt.problem_id} thinking {attempt.mode}: {mark} "
                      f"(answer {attempt.answer or '-'}, expected {attempt.expected}{slips})")
        bar.set(done, note=f"{attempt.problem_id} {attempt.mode}: {mark}")

    if not args.json:
        err.print(f"think-check: {args.problems} problems (seed {args.seed}) x thinking on/off, model {args.model} "
                  f"at {endpoint.shown_url}", markup=False)
    with bar:
        result = run_think_check(endpoint, config, progress)
    line, headline_text = verdict(result)
    out = result.model_dump(mode="json")
    run_dir = save_instrument_run(
        "think_check", model=args.model, base_url=endpoint.base_url, result=out,
        headline={"on_accuracy_pct": result.on.accuracy_pct, "off_accuracy_pct": result.off.accuracy_pct,
                  "value": None if result.on.accuracy_pct is None or result.off.accuracy_pct is None
                  else round(result.off.accuracy_pct - result.on.accuracy_pct, 1),
                  "unit": "pts accuracy, thinking off vs on", "off_inconsistent": result.off.inconsistent,
                  "on_inconsistent": result.on.inconsistent, "switch_status": result.switch_status},
        headline_text=headline_text, settings={"problems": args.problems, "seed": args.seed},
        runs_root=Path(args.run_dir),
    )
    if args.json:
        print(json.dumps({**out, "run_dir": str(run_dir)}, indent=2))
        return 0
    table = Table(title=f"think-check: {args.model} ({result.server_kind}; switch: {result.switch}, "
                  f"{result.switch_status})", title_justify="left")
    for column in ("thinking", "accuracy", "inconsistent answers", "false statements / checked",
                   "reasoning seen", "reasoning tokens (mean)", "decode tok/s (median)", "errors"):
        table.add_column(column)
    for mode in (result.on, result.off):
        table.add_row(mode.mode, f"{mode.correct}/{mode.answered} ({_fmt(mode.accuracy_pct, ' %')})",
                      f"{mode.inconsistent}/{mode.answered}", f"{mode.false_claims}/{mode.claims_checked}",
                      f"{mode.reasoning_seen}/{mode.answered}", _fmt(mode.reasoning_tokens_mean),
                      _fmt(mode.decode_tok_s_median), str(mode.errors))
    console = Console(highlight=False)
    console.print(table)
    for attempt in result.attempts:
        for claim in attempt.false_claims[:3]:
            console.print(f"  {attempt.problem_id} thinking {attempt.mode}: {claim}", markup=False)
    errors = [a for a in result.attempts if a.error]
    if errors:
        console.print(f"  {len(errors)} request(s) failed, e.g. {errors[0].problem_id} thinking {errors[0].mode}: "
                      f"{errors[0].error}", markup=False)
    console.print(line, markup=False)
    err.print(f"saved to {run_dir}", markup=False)
    return 0


def cold_start(args: argparse.Namespace) -> int:
    """Start a server command N times (or unload a running Ollama's model) and time it to its first token."""
    from rich.console import Console
    from rich.table import Table

    from agentic_eval.instruments.coldstart import ColdStartConfig, measure_cold_start, measure_ollama_unload
    from agentic_eval.endpoint import preflight, resolve_endpoint
    from agentic_eval.results import save_instrument_run

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
    out = result.model_dump(mode="json")
    first = result.phases.get("first_token_s") or result.phases.get("load_s")
    model = result.model or args.model or "unknown-model"
    run_dir = save_instrument_run(
        "cold_start", model=model, base_url=endpoint.base_url, result=out,
        headline={"value": first.median if first else None, "unit": "s to first token" if result.mode == "command"
                  else "s load_duration", "spread_s": first.spread if first else None, "starts": len(result.runs),
                  "failed": sum(1 for r in result.runs if r.error)},
        headline_text=(f"{first.median:.1f} s {'to first token' if result.mode == 'command' else 'load'}"
                       + (f" (spread {first.spread:.1f} s)" if first.n > 1 else "")) if first else "failed",
        settings={"mode": result.mode, "cmd": args.cmd or "", "repeat": args.repeat}, runs_root=Path(args.run_dir),
    )
    if args.json:
        print(json.dumps({**out, "run_dir": str(run_dir)}, indent=2))
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

