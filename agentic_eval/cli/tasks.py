"""CLI commands for tasks: `tasks list | show | new` and `validate`. Printing only; the work is in the library."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agentic_eval.errors import TaskLoadError
from agentic_eval.packs.task import LoadResult, Task, load_tasks, select_tasks

if TYPE_CHECKING:
    from agentic_eval.packs.validate import TaskValidation


def _console(stderr: bool = False):  # type: ignore[no-untyped-def]
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=False)


def _print_load_errors(errors: Sequence[TaskLoadError]) -> None:
    for err in errors:
        print(f"agentic-eval: skipped task: {err}", file=sys.stderr)


def _load(args: argparse.Namespace) -> LoadResult:
    return load_tasks(getattr(args, "tasks", None))


def _fix_sizes(tasks: Sequence[Task], wanted: bool) -> dict[str, object]:
    """task id -> FixSize of its reference fix (seed 0), when `--fix-size` asked for them."""
    if not wanted:
        return {}
    from agentic_eval.packs.fixsize import reference_fix_size

    return {t.id: reference_fix_size(t) for t in tasks}


def tasks_list(args: argparse.Namespace) -> int:
    result = _load(args)
    sizes = _fix_sizes(result.tasks, getattr(args, "fix_size", False))
    if args.json:
        rows = [
            {
                "id": t.id,
                "pack": t.pack,
                "title": t.meta.title,
                "tags": t.meta.tags,
                "difficulty": t.meta.difficulty,
                "generator": t.meta.sandbox.generator,
                "path": str(t.dir),
                **({"fix_size": vars(sizes[t.id])} if sizes else {}),
            }
            for t in result.tasks
        ]
        print(json.dumps({"tasks": rows, "errors": [str(e) for e in result.errors]}, indent=2))
        return 1 if result.errors else 0
    from rich.table import Table

    table = Table(title=None, show_lines=False)
    for col in ("id", "pack", "difficulty", *(["reference fix"] if sizes else []), "tags", "title"):
        table.add_column(col, no_wrap=col in ("id", "reference fix"))  # ids are what users copy into --task
    for t in result.tasks:
        size = [sizes[t.id].label()] if sizes else []  # type: ignore[attr-defined]
        table.add_row(t.id, t.pack, t.meta.difficulty, *size, ", ".join(t.meta.tags), t.meta.title)
    console = _console()
    console.print(table)
    console.print(f"{len(result.tasks)} tasks" + (f", {len(result.errors)} broken" if result.errors else ""))
    _print_load_errors(result.errors)
    return 1 if result.errors else 0


def tasks_show(args: argparse.Namespace) -> int:
    import tempfile
    from pathlib import Path

    from agentic_eval.packs.sandbox import generate_tree

    result = _load(args)
    _print_load_errors(result.errors)
    (task,) = select_tasks(result.tasks, [args.task_id])
    with tempfile.TemporaryDirectory(prefix="ae-show-") as tmp:
        variables = generate_tree(task, args.seed, Path(tmp) / "sandbox")
        files = sorted(
            p.relative_to(Path(tmp) / "sandbox").as_posix() for p in (Path(tmp) / "sandbox").rglob("*") if p.is_file()
        )
    m = task.meta
    lines = [
        f"id:          {m.id}",
        f"title:       {m.title}",
        f"pack:        {task.pack}  ({task.dir})",
        f"difficulty:  {m.difficulty}",
        f"tags:        {', '.join(m.tags)}",
        f"sandbox:     {m.sandbox.generator} {json.dumps(m.sandbox.params)}  (seed {args.seed}, {len(files)} files)",
        f"limits:      agent {m.limits.agent_timeout_s:g}s, grader {m.limits.grader_timeout_s:g}s, "
        f"{m.limits.max_turns} turns",
        f"grader:      {task.grader_path.name}",
        f"solution:    {task.solution_path.name}",
        f"digest:      {task.digest()}",
        "",
        f"template variables (seed {args.seed}; use as {{{{name}}}} in instruction.md and answers):",
        *(f"  {name} = {json.dumps(value)}" for name, value in sorted({**variables, "seed": args.seed}.items())),
        "",
        f"generated files (seed {args.seed}, committed as the pristine repo):",
        *(f"  {name}" for name in files),
        "",
        f"instruction (seed {args.seed}):",
        "",
        task.render_instruction(variables).rstrip(),
    ]
    print("\n".join(lines))
    return 0


def tasks_new(args: argparse.Namespace) -> int:
    from pathlib import Path

    from agentic_eval.packs.scaffold import scaffold_task

    path = scaffold_task(Path(args.pack), args.task_id, generator=args.generator)
    print(f"created {path}")
    from agentic_eval.errors import SandboxError
    from agentic_eval.packs.sandbox import find_generator

    try:
        find_generator(args.generator, path.parent)
    except SandboxError as exc:  # the author may be about to write it: say so, do not refuse
        print(f"warning: {exc}; write {path.parent / 'sandboxes' / (args.generator + '.py')} with a "
              "generate(root, seed, params) function, or pass --generator pyservice", file=sys.stderr)
    print("next: write instruction.md, grade.py and solve.sh, then run:")
    print(f"  agentic-eval validate --tasks {path.parent} --task {args.task_id} --repeat 3")
    return 0


def _task_list_for_validate(args: argparse.Namespace) -> tuple[list[Task], list[TaskLoadError]]:
    result = _load(args)
    wanted = [args.show] if getattr(args, "show", None) else args.task
    if wanted:
        tasks = select_tasks(result.tasks, wanted)
        errors = [e for e in result.errors if any(i in e.path for i in wanted)]
    else:
        tasks, errors = result.tasks, result.errors
    return tasks, errors


def validate(args: argparse.Namespace) -> int:
    from agentic_eval.confine.backend import resolve_backend
    from agentic_eval.packs.validate import validate_tasks

    tasks, errors = _task_list_for_validate(args)
    console = _console(stderr=True)
    backend, warning = resolve_backend(args.sandbox, docker_hosts=args.docker_host or (), image=args.image)
    if warning:
        console.print(warning, markup=False)
    run: dict[str, Any] = {"repeat": args.repeat, "seed": args.seed, "seeds": args.seeds, "jobs": args.jobs,
                           "load_errors": errors, "keep_output": bool(args.show), "backend": backend}
    from agentic_eval.cli.progress import ProgressDisplay

    with ProgressDisplay("validating", len(tasks), quiet=args.json, console=console) as progress:
        def on_done(t: TaskValidation) -> None:
            progress.advance(note=f"{t.id} {t.status}")

        report = validate_tasks(tasks, on_done=on_done, **run)

    if args.json:
        print(json.dumps(report.to_json(), indent=2))
        return 0 if report.bad == 0 else 1
    from agentic_eval.report.tables import print_table, stdout_console

    out = stdout_console()
    if args.show:
        _print_check_outputs(report.tasks, out)
    runs = args.repeat * args.seeds
    header = ["task", "status", f"pristine fails /{runs}", f"fixed passes /{runs}", "time"]
    rows = [[t.id, t.status, str(t.pristine_fails) if t.repeat else "-", str(t.fixed_passes) if t.repeat else "-",
             f"{t.duration_s:.2f}s" if t.repeat else "-"] for t in report.tasks]
    print_table(out, None, header, rows, right=(2, 3, 4), styles={1: "bold"})
    for t in report.tasks:
        if t.reasons:
            out.print(f"bad: {t.id}: {'; '.join(t.reasons)}", markup=False, overflow="fold")
    seeds = f"seed {args.seed}" if args.seeds == 1 else f"seeds {args.seed}-{args.seed + args.seeds - 1}"
    out.print(f"{report.ok} ok, {report.bad} bad ({seeds}, {args.repeat} run{'s' if args.repeat != 1 else ''} of "
              f"each check per seed, {report.duration_s:.1f}s)", markup=False)
    return 0 if report.bad == 0 else 1


def _print_check_outputs(results: Sequence[TaskValidation], out: Any) -> None:
    """`validate --show`: every check run's verdict, then the fix's and the grader's own output."""
    for t in results:
        for c in t.checks:
            what = "pristine repo" if c.phase == "pristine" else "after the reference fix"
            verdict = "reference fix failed" if c.verdict == "fix_failed" else f"grader {c.verdict}"
            head = f"== {t.id}: {what}, seed {c.seed}, run {c.run}: {verdict}" + (f" ({c.problem})" if c.problem else "")
            out.print(head + f", {c.duration_s:.2f}s ==", markup=False)
            if c.phase == "fixed":
                out.print("-- reference fix output:", markup=False)
                out.print(c.fix_output.rstrip() or "(none)", markup=False)
                if c.verdict == "fix_failed":
                    continue
                out.print("-- grader output:", markup=False)
            out.print(c.output.rstrip() or "(none)", markup=False)
