"""CLI command `report`: agent runs and instrument results side by side (tables, Markdown, JSON, HTML,
`--compare`); the work is in report/."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentic_eval.cli.args import add_run_dir_arg, check_run_files
from agentic_eval.errors import AgenticEvalError

if TYPE_CHECKING:
    from rich.console import Console


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "report", help="agent runs and instrument results side by side: headline table, per-task matrix, by model"
    )
    p.add_argument("runs", nargs="*", metavar="RUN",
                   help="run folder, or run id under --run-dir (default: every run there)")
    add_run_dir_arg(p)
    p.add_argument("--json", action="store_true", help="one JSON object per run")
    p.add_argument("--format", choices=["table", "md"], default="table", help="table (default) or md")
    p.add_argument("--compare", action="store_true",
                   help="two agent runs A B on the same tasks: which tasks flipped, and an exact test of "
                   "whether the difference could be noise")
    p.add_argument("--html", metavar="FILE",
                   help="also write one self-contained HTML page (charts, per-trial details; no network to view)")
    p.set_defaults(handler=handle)


def _stdout_console() -> Console:
    """Rich on stdout: the terminal's width, or piped, the tables' natural width (agentic_eval.report.tables)."""
    from agentic_eval.report.tables import stdout_console

    return stdout_console()


def handle(args: argparse.Namespace) -> int:
    """The report of the runs named (or every run under --run-dir)."""
    import json

    from agentic_eval.instruments.registry import kinds
    from agentic_eval.report.summary import print_report, render_markdown, summarize_run
    from agentic_eval.results.instrument_runs import is_instrument_run, read_instrument_run
    from agentic_eval.results.run_folder import holds_runs, is_run, not_a_runs_folder, resolve_run_dir

    runs_root = Path(args.run_dir)
    if runs_root.exists() and not runs_root.is_dir():
        raise AgenticEvalError(not_a_runs_folder(runs_root))
    if args.html:
        from agentic_eval.inputs import check_output_file

        check_output_file(args.html, what=f"--html {args.html}")
    campaign = _campaign_asked(args.runs, runs_root, args.compare)
    if campaign is not None:
        from agentic_eval.cli.campaign import show_report

        show_report(campaign, args, _report_command(campaign))
        return 0
    if args.runs:
        for given in args.runs:  # a folder above campaigns only (runs/ after `campaign`): neither a run nor runs
            if (campaigns := _campaign_folders(Path(given))) and not (is_run(Path(given)) or holds_runs(Path(given))):
                raise AgenticEvalError(f"{given} holds campaign folders ({', '.join(c.name for c in campaigns)}), "
                                       f"not runs: report one with: {_report_command(campaigns[0])}")
        dirs = [resolve_run_dir(r, runs_root) for r in args.runs]
    else:
        dirs = sorted(c for c in runs_root.iterdir() if c.is_dir() and is_run(c)) if runs_root.is_dir() else []
        campaigns = _campaign_folders(runs_root)
        if campaigns:
            say = "holds no runs of its own but campaign folders" if not dirs else "also holds campaign folders"
            line = (f"{runs_root}/ {say} ({', '.join(c.name for c in campaigns)}): report one with: "
                    f"{_report_command(campaigns[0])}")
            if not dirs:
                raise AgenticEvalError(line)
            print(line, file=sys.stderr)
        if not dirs:
            raise AgenticEvalError(f"no runs in {runs_root}/ (start one with: agentic-eval run --model NAME)")
    instruments, summaries = [], []
    for d in dirs:
        try:
            check_run_files(d)
            if is_instrument_run(d):
                instruments.append(read_instrument_run(d, kinds()))
            else:
                summaries.append(summarize_run(d))
        except AgenticEvalError as exc:
            if args.runs:  # a run asked for by name: its problem is the answer
                raise
            print(f"skipped {d}: {exc}", file=sys.stderr)
    if not instruments and not summaries:
        raise AgenticEvalError(f"no readable runs in {runs_root}/")
    if args.json or args.format == "md" or args.compare:  # stdout stays machine-readable (the table prints them)
        for s in summaries:
            for w in s.warnings:
                print(f"warning: {w}", file=sys.stderr)
    if args.compare:
        return _compare(summaries, runs_root, args, dirs)
    if args.html:
        _write_html(summaries, instruments, args.html, dirs)
    if args.json:
        from agentic_eval.report.run_stats import run_statistics, spreads

        spread_of = spreads(summaries)
        for s in summaries:
            print(json.dumps({**s.to_json(), "stats": run_statistics(s, spread_of[s.config.run_id])}))
        for i in instruments:
            print(json.dumps(i.model_dump(mode="json")))
    elif args.format == "md":
        sys.stdout.write(render_markdown(summaries, instruments))
    else:
        print_report(summaries, _stdout_console(), instruments)
    return 0


def _is_campaign(folder: Path) -> bool:
    from agentic_eval.campaign.execute import CAMPAIGN_FILE

    return (folder / CAMPAIGN_FILE).is_file()


def _campaign_folders(root: Path) -> list[Path]:
    """The campaign folders directly under `root` (each holds its runs deeper, one folder per model)."""
    return sorted(p for p in root.iterdir() if p.is_dir() and _is_campaign(p)) if root.is_dir() else []


def _report_command(folder: Path) -> str:
    import shlex

    return f"agentic-eval report {shlex.quote(str(folder))}"


def _campaign_asked(runs: list[str], runs_root: Path, compare: bool) -> Path | None:
    """The campaign folder the command names (a RUN, or --run-dir when no RUN is given), else None: its report
    is the campaign's (`campaign FILE --report`); a campaign folder beside other runs is one line."""
    given = [Path(r) if _is_campaign(Path(r)) else runs_root / r for r in runs] or [runs_root]
    found = [folder for folder in given if _is_campaign(folder)]
    if not found:
        return None
    if len(given) > 1 or compare:
        raise AgenticEvalError(f"{found[0]} is a campaign's folder, reported on its own (its verdicts and headline "
                               f"table): {_report_command(found[0])}; to compare two of its runs, give their folders")
    return found[0]


def _write_html(summaries: list[Any], instruments: list[Any], path: str, dirs: list[Path]) -> None:
    from agentic_eval.report.html import write_html_report

    out = write_html_report(summaries, instruments, Path(path), dirs)
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB, self-contained)", file=sys.stderr)


def _compare(summaries: list[Any], runs_root: Path, args: argparse.Namespace, dirs: list[Path]) -> int:
    """`report A B --compare`: the paired comparison; repeats of either configuration under --run-dir give
    the run-to-run spread the gap is held against."""
    import json

    from agentic_eval.report.run_stats import compare_json, compare_runs, compare_text, config_key
    from agentic_eval.report.summary import summarize_run

    if len(summaries) != 2:
        raise AgenticEvalError(f"--compare takes exactly two agent runs, A and B (got {len(summaries)}): "
                               "agentic-eval report RUN_A RUN_B --compare")
    a, b = summaries
    if bool(a.config.emulate_parser) != bool(b.config.emulate_parser):
        emulated, plain = (a, b) if a.config.emulate_parser else (b, a)
        raise AgenticEvalError(f"--compare: {emulated.config.run_id} ran with --emulate-parser "
                               f"{emulated.config.emulate_parser} and {plain.config.run_id} did not: a what-if run "
                               "is not compared with a plain one (report both without --compare to see them side "
                               "by side)")
    keys = {config_key(a), config_key(b)}
    ids = {a.config.run_id, b.config.run_id}
    repeats = []
    for run_json in sorted(runs_root.glob("*/run.json")) if runs_root.is_dir() else []:
        if run_json.parent.name in ids:
            continue
        try:
            check_run_files(run_json.parent)
            other = summarize_run(run_json.parent)
        except AgenticEvalError:
            continue
        if config_key(other) in keys:
            repeats.append(other)
    cmp = compare_runs(a, b, repeats)
    if args.json:
        print(json.dumps(compare_json(a, b, cmp)))
    elif args.format == "md":
        sys.stdout.write("## Comparison\n\n" + "".join(f"- {line}\n" for line in compare_text(a, b, cmp)))
    else:
        for line in compare_text(a, b, cmp):
            print(line)
    if args.html:
        _write_html(summaries, [], args.html, dirs)
    return 0
