"""`agentic-eval tooling` and `agentic-eval forms`: parse, run the library, print rich tables, save the run."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from agentic_eval.errors import AgenticEvalError

MAX_TOOLS = 5000


def _endpoint(args: argparse.Namespace) -> Any:
    from agentic_eval.endpoint import preflight, resolve_endpoint

    endpoint = resolve_endpoint(args.base_url, args.api_key)
    preflight(endpoint, args.model)
    return endpoint


def _progress(total: int, label: str, quiet: bool) -> Any:
    """A live bar with ETA on a terminal's stderr, plain lines in a log, nothing with --json."""
    from agentic_eval.cli.progress import ProgressDisplay

    return ProgressDisplay(label, total, quiet=quiet)


def _pct(passed: int, cases: int) -> str:
    return f"{100 * passed / cases:.1f} %" if cases else "-"


def tooling(args: argparse.Namespace) -> int:
    """Generate the battery from the seed, run it against the endpoint, print and save the scores."""
    from agentic_eval.instruments.battery import PHASES, generate_cases, run_battery, summarize
    from agentic_eval.results import save_instrument_run

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
    total = summary["total"]
    pct = round(100 * total["passed"] / total["cases"], 1)
    text = f"{total['passed']}/{total['cases']} ({pct} %)"
    run_dir = save_instrument_run(
        "tooling", model=args.model, base_url=endpoint.base_url, result=summary,
        headline={"passed": total["passed"], "cases": total["cases"], "score_pct": pct}, headline_text=text,
        settings={"seed": args.seed, "cases": args.cases or 370, "phases": args.phase or list(PHASES)},
        runs_root=Path(args.run_dir))
    if args.json:
        print(json.dumps(summary))
        return 0
    _print_battery(summary, args.model, run_dir)
    return 0


def _print_battery(summary: dict[str, Any], model: str, run_dir: Path) -> None:
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
    table.add_row("TOTAL", str(total["passed"]), str(total["cases"]), _pct(total["passed"], total["cases"]), style="bold")
    console.print(table)
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


def forms(args: argparse.Namespace) -> int:
    """The 10 API shapes with N tools exposed: print pass/fail with reasons, save the run."""
    from agentic_eval.instruments.forms import NARROWED_SIZE, SHAPES, exchanges_json, forms_json, run_forms
    from agentic_eval.results import save_instrument_run

    if not 1 <= args.tools <= MAX_TOOLS:
        raise AgenticEvalError(f"--tools must be between 1 and {MAX_TOOLS} (got {args.tools})")
    endpoint = _endpoint(args)
    progress = _progress(len(SHAPES), "form matrix", args.json)
    with progress:
        results = run_forms(endpoint, args.model, args.tools, on_result=lambda _r: progress.advance())
    output = forms_json(results, args.tools)
    passed = sum(r.passed for r in results)
    pct = round(100 * passed / len(results), 1)
    run_dir = save_instrument_run(
        "forms", model=args.model, base_url=endpoint.base_url, result=output,
        headline={"passed": passed, "cases": len(results), "score_pct": pct},
        headline_text=f"{passed}/{len(results)} shapes", settings={"tools": args.tools}, runs_root=Path(args.run_dir))
    (run_dir / "exchanges.json").write_text(json.dumps(exchanges_json(results), indent=2, default=str) + "\n",
                                            encoding="utf-8")
    if args.json:
        print(json.dumps(output))
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
    console.print(f"{passed}/{len(results)} shapes passed; saved: {run_dir}", markup=False)
    return 0


def bfcl_suite(args: argparse.Namespace) -> int:
    """`tooling --suite bfcl`: BFCL's single-turn cases through the wire, per category, failures classified."""
    from agentic_eval.instruments import bfcl
    from agentic_eval.instruments.battery import run_battery
    from agentic_eval.results import save_instrument_run

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
    total = summary["total"]
    pct = round(100 * total["passed"] / total["scored"], 1) if total["scored"] else None
    theirs = round(100 * total["bfcl_checker_passed"] / total["scored"], 1) if total["scored"] else None
    text = (f"{total['passed']}/{total['scored']} ({pct} %; BFCL's checker {theirs} %)" if total["scored"]
            else f"nothing scored ({total['cases']} endpoint errors)")
    run_dir = save_instrument_run(
        "bfcl", model=args.model, base_url=endpoint.base_url, result=summary,
        headline={"passed": total["passed"], "cases": total["scored"], "score_pct": pct, "bfcl_checker_pct": theirs},
        headline_text=text,
        settings={"categories": categories, "limit": args.limit, "bfcl_eval": summary["bfcl_eval"]},
        runs_root=Path(args.run_dir))
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
        console.print(f"{len(differ)} case(s) judged differently by BFCL's checker (why: README, BFCL through the wire), "
                      f"e.g. {shown}", markup=False)
    console.print("errors (endpoint or harness) are not scored; BFCL counts a call written as text as no call",
                  markup=False)
    console.print(f"saved: {run_dir}", markup=False)
