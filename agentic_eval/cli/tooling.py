"""CLI command `tooling`: the synthetic tool-calling battery, or BFCL's cases through the wire
(`--suite bfcl`); parse, run the library, print rich tables (instruments/battery.py and bfcl.py record the run)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentic_eval.cli.args import add_endpoint_args, add_run_dir_arg, jobs_number, seed_number, whole_number
from agentic_eval.errors import AgenticEvalError

if TYPE_CHECKING:
    from agentic_eval.cli.progress import ProgressDisplay
    from agentic_eval.endpoint import Endpoint

MAX_CASES = 100_000
"""The most cases --cases (the battery's default is 370) or --limit (per BFCL category) asks for."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("tooling", help="the deterministic synthetic tool-calling battery (370 cases by default), "
                       "or BFCL's cases through the wire (--suite bfcl)")
    add_endpoint_args(p)
    p.add_argument("--seed", type=seed_number, default=45739, metavar="S", help="case generation seed (default 45739)")
    p.add_argument("--cases", type=whole_number(1, MAX_CASES), default=None, metavar="N",
                   help="total cases, every phase scaled in proportion (default 370)")
    p.add_argument("--phase", action="append", metavar="P",
                   help="only this phase (decisions, functional, structured, freeform, chains, negative)")
    p.add_argument("-j", "--jobs", type=jobs_number, default=4, metavar="N", help="requests in parallel (default 4)")
    add_run_dir_arg(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    # BFCL through the wire (issue 21)
    p.add_argument("--suite", choices=("battery", "bfcl"), default="battery",
                   help="battery: the synthetic battery (default); bfcl: BFCL v4's single-turn cases from the "
                   "bfcl-eval package (pip install --no-deps bfcl-eval), each failure classified, BFCL's own "
                   "checker's score beside ours. Multi-turn, web-search, memory and Java/JavaScript come later")
    p.add_argument("--category", default="all", metavar="C[,C]",
                   help="with --suite bfcl: simple_python, multiple, parallel, parallel_multiple, irrelevance, "
                   "live_simple, live_multiple, live_parallel, live_parallel_multiple, live_irrelevance, "
                   "live_relevance; globs like live_* (default all)")
    p.add_argument("--limit", type=whole_number(1, MAX_CASES), default=None, metavar="N",
                   help="with --suite bfcl: at most N cases per category, evenly spread (default every case)")
    p.set_defaults(handler=handle)


def _endpoint(args: argparse.Namespace) -> Endpoint:
    from agentic_eval.endpoint import preflight, resolve_endpoint

    endpoint = resolve_endpoint(args.base_url, args.api_key)
    preflight(endpoint, args.model)
    return endpoint


def _progress(total: int, label: str, quiet: bool) -> ProgressDisplay:
    """A live bar with ETA on a terminal's stderr, plain lines in a log, nothing with --json."""
    from agentic_eval.cli.progress import ProgressDisplay

    return ProgressDisplay(label, total, quiet=quiet)


def _pct(passed: int, cases: int) -> str:
    return f"{100 * passed / cases:.1f} %" if cases else "-"


def handle(args: argparse.Namespace) -> int:
    """Generate the battery from the seed, run it against the endpoint, print and save the scores."""
    import json

    from agentic_eval.instruments.battery import PHASES, generate_cases, record, run_battery, summarize

    if getattr(args, "suite", "battery") == "bfcl":
        return bfcl_suite(args)
    if args.cases is not None and args.cases < 1:
        raise AgenticEvalError(f"--cases must be at least 1 (got {args.cases}); the default is the campaign's 370")
    if args.jobs < 1:
        raise AgenticEvalError(f"-j/--jobs must be at least 1 (got {args.jobs})")
    unknown = sorted(set(args.phase or ()) - set(PHASES))
    if unknown:
        raise AgenticEvalError(f"unknown phase {', '.join(unknown)}: choose from {', '.join(PHASES)}")
    cases = generate_cases(args.seed, args.cases, args.phase)
    if not cases:
        raise AgenticEvalError(f"--cases {args.cases} leaves no case in phase(s) {', '.join(args.phase or ())}; "
                               "ask for more cases")
    endpoint = _endpoint(args)
    progress = _progress(len(cases), "tool-call battery", args.json)
    with progress:
        results = run_battery(cases, endpoint, args.model, jobs=args.jobs, on_result=lambda _r: progress.advance())
    summary = summarize(results, args.seed)
    run_dir = record(summary, Path(args.run_dir), base_url=endpoint.base_url, model=args.model, total=args.cases,
                     phases=args.phase)
    if args.json:
        print(json.dumps(summary))
        return 0
    _print_battery(summary, args.model, run_dir)
    return 0


def _print_battery(summary: dict[str, Any], model: str, run_dir: Path) -> None:
    from collections import Counter

    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False)
    title = f"tool-call battery · {model} · seed {summary['seed']}"
    table = Table(title=title, title_justify="left", min_width=len(title) + 2)
    for name, justify in (("phase", "left"), ("passed", "right"), ("cases", "right"), ("score", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for phase, row in summary["phases"].items():
        table.add_row(phase, str(row["passed"]), str(row["cases"]), _pct(row["passed"], row["cases"]))
    total = summary["total"]
    table.add_row("TOTAL", str(total["passed"]), str(total["cases"]), _pct(total["passed"], total["cases"]),
                  style="bold")
    console.print(table)
    if total.get("unscored"):
        console.print(f"{total['unscored']} case(s) unscored: the endpoint or the harness failed them (a timeout, "
                      "an HTTP error), so they are left out of the score; run again to score them", markup=False)
    failed = [c for c in summary["cases"] if not c["passed"]]
    if failed:
        reasons = Counter((c["phase"], c["reason"].split(": ")[-1].split(" path=")[0]) for c in failed)
        why = Table(title="failures by reason", title_justify="left")
        for name in ("phase", "reason", "cases", "e.g."):
            why.add_column(name)
        for (phase, reason), count in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])):
            example = next(c for c in failed if c["phase"] == phase and reason in c["reason"])
            why.add_row(phase, reason, str(count), f"{example['id']}: {example['detail'][:70]}")
        console.print(why)
    families = Counter(t["classification"]["family"] for c in summary["cases"] for t in c["turns"]
                       if (t.get("classification") or {}).get("label") == "text_tool_call")
    if families:
        console.print("tool calls written as text: " + ", ".join(f"{k} {v}" for k, v in families.most_common()),
                      markup=False)
    console.print("gaps under ~1.5 points between runs of one model are within run-to-run noise", markup=False)
    console.print(f"saved: {run_dir}", markup=False)


def bfcl_suite(args: argparse.Namespace) -> int:
    """`tooling --suite bfcl`: BFCL's single-turn cases through the wire, per category, failures classified."""
    import json

    from agentic_eval.instruments import bfcl
    from agentic_eval.instruments.battery import run_battery

    if args.phase or args.cases is not None:
        raise AgenticEvalError("--phase and --cases are for the synthetic battery; with --suite bfcl use "
                               "--category and --limit")
    if args.limit is not None and args.limit < 1:
        raise AgenticEvalError(f"--limit must be at least 1 (got {args.limit}); leave it out for every case")
    if args.jobs < 1:
        raise AgenticEvalError(f"-j/--jobs must be at least 1 (got {args.jobs})")
    categories = bfcl.parse_categories(args.category)
    cases = bfcl.load_cases(categories, args.limit)
    endpoint = _endpoint(args)
    progress = _progress(len(cases), "BFCL", args.json)
    with progress:
        results = run_battery(cases, endpoint, args.model, jobs=args.jobs,
                              on_result=lambda _r: progress.advance())
    summary = bfcl.summarize_bfcl(bfcl.judge_bfcl(results, categories), categories, args.limit)
    run_dir = bfcl.record(summary, Path(args.run_dir), base_url=endpoint.base_url, model=args.model,
                          categories=categories)
    if args.json:
        print(json.dumps(summary))
        return 0
    _print_bfcl(summary, args.model, run_dir)
    return 0


FAILURE_LABELS = {"text_tool_call": "as text", "no_call": "no call", "wrong_tool": "wrong tool",
                  "wrong_args": "wrong args", "wrong_count": "wrong count",
                  "called_when_none_needed": "called (none needed)", "errors": "errors (unscored)"}


def _failures(row: dict[str, Any]) -> str:
    """The non-zero failure kinds of one category, e.g. `as text 3, wrong args 2; written as text: hermes 3`."""
    text = ", ".join(f"{label} {row[key]}" for key, label in FAILURE_LABELS.items() if row.get(key)) or "-"
    if row.get("families"):
        text += "; written as text: " + ", ".join(f"{k} {v}" for k, v in row["families"].items())
    return text


def _print_bfcl(summary: dict[str, Any], model: str, run_dir: Path) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False)
    title = f"BFCL v4 (bfcl-eval {summary['bfcl_eval']}) through the wire · {model}"
    table = Table(title=title, title_justify="left", min_width=len(title) + 2)
    for name in ("category", "passed", "score", "BFCL's checker", "failures"):
        table.add_column(name, justify="right" if name in ("passed", "score", "BFCL's checker") else "left")
    for name, row in [*summary["categories"].items(), ("TOTAL", summary["total"])]:
        table.add_row(name, f"{row['passed']}/{row['scored']}", _pct(row["passed"], row["scored"]),
                      _pct(row["bfcl_checker_passed"], row["scored"]), _failures(row),
                      style="bold" if name == "TOTAL" else None)
    console.print(table)
    differ = [c for c in summary["cases"] if c["kind"] != "error" and bool(c.get("bfcl_passed")) != c["passed"]]
    if differ:
        shown = ", ".join(f"{c['id']} (ours: {c['reason'].split(' ', 1)[0]}, BFCL: {c.get('bfcl_error') or 'ok'})"
                          for c in differ[:5])
        console.print(f"{len(differ)} case(s) judged differently by BFCL's checker "
                      "(why: README, BFCL through the wire), "
                      f"e.g. {shown}", markup=False)
    console.print("errors (endpoint or harness) are not scored; BFCL counts a call written as text as no call",
                  markup=False)
    console.print(f"saved: {run_dir}", markup=False)
