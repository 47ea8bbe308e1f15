"""CLI command `campaign`: a whole campaign from one TOML file, resumable; parse, call agentic_eval.campaign, print."""

from __future__ import annotations

import argparse
import glob
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from agentic_eval.cli.args import add_run_dir_arg
from agentic_eval.errors import AgenticEvalError

if TYPE_CHECKING:
    from agentic_eval.campaign.spec import CampaignSpec
    from agentic_eval.results.records import TrialResult


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "campaign",
        help="several models x agents x paddings and the instruments, from one TOML file; run again to resume",
        description="Run a whole campaign from one TOML file (see examples/campaign.toml): every model x agent x "
        "padding as an agent run and every instrument per model, all under one folder, then the headline table "
        "and a verdict per model. Running the same command again resumes: only what is missing or unscored runs, "
        "and a changed file adds only what the change needs.",
    )
    p.add_argument("file", metavar="FILE.toml", help="the campaign file")
    add_run_dir_arg(p)
    p.add_argument("--folder", metavar="DIR", help="the campaign's folder (default: RUN_DIR/<the file's name>)")
    p.add_argument("--report", action="store_true", help="only print the report of what is recorded; run nothing")
    p.add_argument("--format", choices=["table", "md"], default="table", help="table (default) or md")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--html", metavar="FILE", help="also write the report as one self-contained HTML page")
    p.set_defaults(handler=handle)


def _command(args: argparse.Namespace) -> str:
    """The command that resumes this campaign: the same one."""
    line = f"agentic-eval campaign {shlex.quote(args.file)}"
    if args.run_dir != "runs":
        line += f" --run-dir {shlex.quote(args.run_dir)}"
    if args.folder:
        line += f" --folder {shlex.quote(args.folder)}"
    return line


def instruments_note(spec: CampaignSpec) -> str | None:
    """What a file that leaves `instruments` out runs besides its agents (every instrument: a surprise to a file
    written for tasks), or None when it names them."""
    if "instruments" in spec.model_fields_set or not spec.instruments:
        return None
    return (f"no instruments key, so every instrument runs for each model ({', '.join(spec.instruments)}); "
            "instruments = [] runs the agents only")


def handle(args: argparse.Namespace) -> int:
    from rich.console import Console

    from agentic_eval.campaign import default_folder, plan_campaign, run_campaign
    from agentic_eval.campaign.execute import CAMPAIGN_FILE

    err = Console(stderr=True, highlight=False, soft_wrap=True)

    def log(text: str) -> None:
        err.print(text, markup=False)

    folder = Path(args.folder) if args.folder else default_folder(args.file, args.run_dir)
    if args.html:
        from agentic_eval.inputs import check_output_file

        check_output_file(args.html, what=f"--html {args.html}")
    code = 0
    if not args.report:
        plan = plan_campaign(args.file, folder)
        for note in plan.spec.notes:
            log(f"note: {args.file}: {note}")
        left = {m: w for m, w in plan.work.items() if w}
        if left and (all_of_them := instruments_note(plan.spec)):
            log(f"note: {args.file}: {all_of_them}")
        log(f"campaign {args.file}: {len(plan.models)} model(s), {len(plan.task_ids)} task(s), folder {folder}; "
            + ("to run: " + "; ".join(f"{m}: {', '.join(w)}" for m, w in left.items()) if left
               else "everything is recorded"))

        run_dirs: dict[str, Path] = {}

        from agentic_eval.cli.run import trial_words

        def on_result(label: str, result: TrialResult) -> None:
            if result.run_id not in run_dirs:  # where its grader's words are: <folder>/<model>/runs/<slot>/<run>
                run_dirs[result.run_id] = next(folder.glob(f"*/runs/*/{glob.escape(result.run_id)}"), folder)
            log(f"{label}: {result.task_id} a{result.attempt}: {trial_words(result, run_dirs[result.run_id])} in "
                f"{result.duration_s:.1f}s")

        outcome = run_campaign(args.file, folder, log=log, on_result=on_result, plan=plan)
        if outcome.interrupted:
            log(f"interrupted: finished trials and instrument runs are kept in {folder}; resume with: "
                f"{_command(args)}")
            return 130
        for problem in outcome.problems:
            log(f"not finished: {problem}")
        for model, parts in outcome.left.items():
            log(f"left for {model}: {'; '.join(parts)}")
        if outcome.problems or outcome.left:
            log(f"fix the cause above, then run the same command again to finish: {_command(args)}")
            code = 1
    elif not (folder / CAMPAIGN_FILE).is_file():
        raise AgenticEvalError(f"{folder}: nothing is recorded for {args.file} yet; run it first: {_command(args)}")
    show_report(folder, args, f"{_command(args)} --report")
    return code


def show_report(folder: Path, args: argparse.Namespace, again: str) -> None:
    """A campaign folder's report as `args` ask (`--json`, `--format md`, `--html`), the table ending with the
    command that prints it `again`."""
    import json

    from agentic_eval.campaign import campaign_report

    report = campaign_report(folder)
    if args.html:
        from agentic_eval.campaign import write_campaign_html

        print(f"wrote {write_campaign_html(report, Path(args.html))}", file=sys.stderr)
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    elif args.format == "md":
        from agentic_eval.campaign import render_campaign_markdown

        sys.stdout.write(render_campaign_markdown(report))
    else:
        from agentic_eval.campaign import print_campaign
        from agentic_eval.report.tables import stdout_console

        print_campaign(report, stdout_console())
        print(f"report again with: {again}")
