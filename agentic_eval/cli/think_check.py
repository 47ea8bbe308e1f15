"""CLI command `think-check`: does turning reasoning off make answers wrong? Arguments, progress and
tables; the work, and how a run is recorded, is in instruments/think_check.py."""

from __future__ import annotations

import argparse
from pathlib import Path

from agentic_eval.cli.args import add_endpoint_args, add_run_dir_arg, seed_number, whole_number
from agentic_eval.errors import AgenticEvalError

MAX_PROBLEMS = 10_000


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("think-check", help="does turning reasoning off make answers wrong? (arithmetic problems)")
    add_endpoint_args(p)
    p.add_argument("--problems", type=whole_number(1, MAX_PROBLEMS), default=20, metavar="N",
                   help="problems (default 20)")
    p.add_argument("--seed", type=seed_number, default=0, metavar="S", help="problem generation seed (default 0)")
    add_run_dir_arg(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p.set_defaults(handler=handle)


def _fmt(value: object, suffix: str = "") -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.1f}{suffix}"
    return f"{value}{suffix}"


def handle(args: argparse.Namespace) -> int:
    """Ask the generated problems with reasoning on and off; print the per-mode table and the verdict."""
    import json

    from rich.console import Console

    from agentic_eval.endpoint import preflight, resolve_endpoint
    from agentic_eval.instruments.think_check import Attempt, ThinkCheckConfig, record, run_think_check, verdict

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
    line = verdict(result)[0]
    run_dir = record(result, Path(args.run_dir), base_url=endpoint.base_url)
    if args.json:
        print(json.dumps({**result.model_dump(mode="json"), "run_dir": str(run_dir)}, indent=2))
        return 0
    from agentic_eval.report.tables import print_table, stdout_console

    header = ["thinking", "accuracy", "inconsistent answers", "false statements / checked", "reasoning seen",
              "reasoning tokens (mean)", "decode tok/s (median)", "errors"]
    rows = [[mode.mode, f"{mode.correct}/{mode.answered} ({_fmt(mode.accuracy_pct, ' %')})",
             f"{mode.inconsistent}/{mode.answered}", f"{mode.false_claims}/{mode.claims_checked}",
             f"{mode.reasoning_seen}/{mode.answered}", _fmt(mode.reasoning_tokens_mean),
             _fmt(mode.decode_tok_s_median), str(mode.errors)] for mode in (result.on, result.off)]
    console = stdout_console()
    # too narrow for the eight columns whole (80): a block per mode, not headers cut to "thinki…"
    print_table(console, f"think-check: {args.model} ({result.server_kind}; switch: {result.switch}, "
                f"{result.switch_status})", header, rows, right=range(1, 8))
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
