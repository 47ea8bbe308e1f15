"""CLI command `validate`: every grader fails on the pristine sandbox, passes after the reference fix,
leaks nothing, and says fail to every red-team attempt. Printing only; the work is in validation/validate.py
and validation/redteam.py."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

from agentic_eval.cli.args import (
    DEFAULT_REPEAT,
    DEFAULT_SEEDS,
    REDTEAM_SEEDS,
    add_sandbox_args,
    add_task_arg,
    add_tasks_arg,
    jobs_number,
    repeats,
    sandbox_choice,
    seed_number,
)
from agentic_eval.cli.tasks import _console, _load

if TYPE_CHECKING:
    from rich.console import Console

    from agentic_eval.errors import TaskLoadError
    from agentic_eval.packs.task import Task
    from agentic_eval.validation.report import TaskValidation




def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "validate",
        help="check every grader: fails on the pristine sandbox, passes after the reference fix, no leaks, "
        "and fails every red-team forgery or dodge",
    )
    add_tasks_arg(p)
    add_task_arg(p)
    add_sandbox_args(p)
    p.add_argument("--repeat", type=repeats, default=DEFAULT_REPEAT, metavar="N",
                   help=f"fresh sandboxes per check and seed: catches a grader that goes wrong now and then "
                   f"(default {DEFAULT_REPEAT})")
    p.add_argument("--seed", type=seed_number, default=0, metavar="S", help="first sandbox seed (default 0)")
    p.add_argument("--seeds", type=repeats, default=DEFAULT_SEEDS, metavar="N",
                   help="check N seeds, S to S+N-1, each --repeat times: catches a generator or grader that only "
                   f"works for some seeds (default {DEFAULT_SEEDS}; a task no seed reaches, such as a Harbor task, "
                   "on S alone)")
    p.add_argument("--show", metavar="ID",
                   help="validate only this task and print the grader's output of every pristine and fixed run")
    p.add_argument("-j", "--jobs", type=jobs_number, default=None, metavar="N", help="tasks validated in parallel")
    p.add_argument("--no-redteam", dest="redteam", action="store_false",
                   help="skip the red team (generic forgeries and dodges applied to the pristine repo, each of "
                   "which the grader must fail)")
    p.add_argument("--redteam", dest="redteam_only", action="append", metavar="NAME", default=None,
                   help="run only this red-team attempt (repeatable; --redteam list names them all)")
    p.add_argument("--redteam-seeds", type=repeats, default=REDTEAM_SEEDS, metavar="N",
                   help=f"run the red team on the first N of the seeds (default {REDTEAM_SEEDS}: its attempts know "
                   "nothing of the seed, and each seed costs a dozen or more graded attempts per task)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table: each "
                   "task's reasons, counts, time, every check run and every red-team attempt")
    p.set_defaults(handler=handle)


def _task_list_for_validate(args: argparse.Namespace) -> tuple[list[Task], list[TaskLoadError]]:
    from agentic_eval.packs.task import select_tasks

    result = _load(args)
    wanted = [args.show] if getattr(args, "show", None) else args.task
    if wanted:  # a task asked for that did not load: a bad row with why, not "unknown task id"
        errors = [e for e in result.errors if e.task_folder in wanted]
        loaded = [i for i in wanted if i not in {e.task_folder for e in errors}]
        tasks = select_tasks(result.tasks, loaded) if loaded else []
    else:
        tasks, errors = result.tasks, result.errors
    return tasks, errors


def handle(args: argparse.Namespace) -> int:
    import json

    from agentic_eval.confine.registry import resolve_backend
    from agentic_eval.validation.validate import ValidateOptions, validate_tasks

    if args.redteam_only and "list" in args.redteam_only:
        return _list_redteam(args)
    tasks, errors = _task_list_for_validate(args)
    console = _console(stderr=True)
    choice = sandbox_choice(args)
    backend, warning = resolve_backend(choice.name, choice.options)
    if warning:
        console.print(warning, markup=False)
    from agentic_eval.leftovers import clean_dead_runs

    if cleaned := clean_dead_runs().describe():  # what a killed run or validate left behind
        console.print(cleaned, markup=False)
    redteam: bool | list[str] = args.redteam_only or True if args.redteam else False
    options = ValidateOptions(repeat=args.repeat, seed=args.seed, seeds=args.seeds,
                              jobs=args.jobs or ValidateOptions.jobs, keep_output=bool(args.show), redteam=redteam,
                              redteam_seeds=args.redteam_seeds)
    from agentic_eval.cli.progress import ProgressDisplay

    done: list[TaskValidation] = []
    try:
        with ProgressDisplay("validating", len(tasks), quiet=args.json, console=console) as progress:
            def on_done(t: TaskValidation) -> None:
                done.append(t)
                progress.advance(note=f"{t.id} {t.status}")

            def log(text: str, style: str | None = None) -> None:
                console.print(text, markup=False, style=style, soft_wrap=True)

            report = validate_tasks(tasks, options, load_errors=errors, on_done=on_done, log=log, backend=backend)
    except KeyboardInterrupt:  # validate keeps no record: say what had been found before it stopped
        bad = [t.id for t in done if t.status != "ok"]
        console.print(f"interrupted after {len(done)} of {len(tasks)} tasks: {len(done) - len(bad)} ok, {len(bad)} bad"
                      + (f" ({', '.join(bad)})" if bad else "") + "; nothing is kept: --task ID validates one",
                      markup=False, soft_wrap=True)
        raise

    if args.json:
        print(json.dumps(report.to_json(), indent=2))
        return 0 if report.bad == 0 else 1
    from agentic_eval.report.tables import fits, print_table, stdout_console

    out = stdout_console()
    if args.show:
        _print_check_outputs(report.tasks, out)
    header, rows = _table(report.tasks)
    if not fits(out, header, rows):  # an 80-column terminal: the time goes (the last line has the total)
        header, rows = header[:-1], [row[:-1] for row in rows]
    print_table(out, None, header, rows, right=(2, 3, 4, 5), styles={1: "bold"})
    for t in report.tasks:
        if t.reasons:
            out.print(f"bad: {t.id}: {'; '.join(t.reasons)}", markup=False, overflow="fold")
    for t in report.tasks:
        for note in t.notes:
            out.print(f"note: {t.id}: {note}", markup=False, overflow="fold")
    skipped = sorted({a.attempt for t in report.tasks for a in t.redteam or () if a.verdict == "skipped"})
    if skipped:
        out.print(f"note: red team: {', '.join(skipped)} skipped: they need a confining sandbox backend, and "
                  f"--sandbox {backend.name} is not one", markup=False, overflow="fold")
    for line in report.evidence_lines() if any(t.checks for t in report.tasks) else ():  # none: nothing to weigh
        out.print(f"evidence: {line}", markup=False, overflow="fold")
    for t in report.tasks:
        if t.unbuildable:
            out.print(f"unbuildable: {t.id}: {t.unbuildable}", markup=False, overflow="fold")
    out.print(f"{report.ok} ok, {report.bad} bad ({report.ran()}, {report.duration_s:.1f}s)", markup=False)
    return 0 if report.bad == 0 else 1


def _table(results: Sequence[TaskValidation]) -> tuple[list[str], list[list[str]]]:
    """Narrow enough for 80 columns without the time: pristine = fails of runs, fixed = passes of runs (an
    impossible task's: `honest fails/runs, cheats caught/runs`), red team = attempts the grader failed (or, on
    an impossible task, caught as cheated), of those graded."""
    header = ["task", "status", "pristine", "fixed", "red team", "time"]
    rows = []
    for t in results:
        ran = bool(t.repeat and t.checks)
        graded = t.redteam_graded
        rows.append([t.id, t.status, f"{t.pristine_fails}/{t.runs}" if ran else "-",
                     (f"honest {t.honest_fails}/{t.runs} fail, cheat {t.cheats_caught}/{t.runs} caught"
                      if t.impossible else f"{t.fixed_passes}/{t.runs}") if ran else "-",
                     f"{t.redteam_held}/{len(graded)}" if t.redteam is not None and graded else "-",
                     (f"{t.duration_s:.2f}s" if t.duration_s < 10 else f"{t.duration_s:.0f}s") if t.repeat else "-"])
    return header, rows


def _list_redteam(args: argparse.Namespace) -> int:
    """`validate --redteam list`: every attempt (registered, and the selected packs' own), what it does."""
    from agentic_eval.report.tables import stdout_console
    from agentic_eval.validation import redteam as rt

    attempts = dict(rt.registered_attempts())
    for pack in sorted({t.pack_dir for t in _load(args).tasks}):
        attempts.update({a.name: a for a in rt.pack_attempts(pack)})
    out = stdout_console()
    for name, languages, description in rt.describe(attempts.values()):
        out.print(f"{name}  [{languages}]", markup=False)
        out.print(f"    {description}", markup=False, overflow="fold")
    return 0


def _print_check_outputs(results: Sequence[TaskValidation], out: Console) -> None:
    """`validate --show`: every check run's verdict, then the fix's and the grader's own output."""
    for t in results:
        for c in t.checks:
            what = {"pristine": "pristine repo", "fixed": "after the reference fix",
                    "honest": "after the honest reference fix (must fail)",
                    "cheat": "after the reference cheat (must be caught as cheated)"}[c.phase]
            verdict = (f"reference {'cheat' if c.phase == 'cheat' else 'fix'} failed" if c.verdict == "fix_failed"
                       else f"grader {c.verdict}")
            head = (f"== {t.id}: {what}, seed {c.seed}, run {c.run}: {verdict}"
                    + (f" ({c.problem})" if c.problem else ""))
            out.print(head + f", {c.duration_s:.2f}s ==", markup=False)
            if c.phase != "pristine":
                out.print(f"-- reference {'cheat' if c.phase == 'cheat' else 'fix'} output:", markup=False)
                out.print(c.fix_output.rstrip() or "(none)", markup=False)
                if c.verdict == "fix_failed":
                    continue
                out.print("-- grader output:", markup=False)
            out.print(c.output.rstrip() or "(none)", markup=False)
        for a in t.redteam or ():
            head = f"== {t.id}: red team '{a.attempt}', seed {a.seed}: "
            if a.verdict in ("pass", "fail", "cheated", "grader_error"):
                head += f"grader {a.verdict}" + (f" ({a.problem})" if a.problem else "")
            else:
                head += a.verdict.replace("_", " ") + (f" ({a.problem})" if a.problem else "")
            out.print(head + f", {a.duration_s:.2f}s ==", markup=False)
            if a.verdict in ("pass", "fail", "cheated", "grader_error"):
                out.print(a.output.rstrip() or "(none)", markup=False)
