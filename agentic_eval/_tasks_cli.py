"""CLI commands for tasks: `tasks list | show | new` and `validate`. Printing only; the work is in the library."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from agentic_eval.errors import TaskLoadError
from agentic_eval.task import LoadResult, Task, load_tasks, select_tasks


def _console(stderr: bool = False):  # type: ignore[no-untyped-def]
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=False)


def _print_load_errors(errors: Sequence[TaskLoadError]) -> None:
    for err in errors:
        print(f"agentic-eval: skipped task: {err}", file=sys.stderr)


def _load(args: argparse.Namespace) -> LoadResult:
    return load_tasks(getattr(args, "tasks", None))


def tasks_list(args: argparse.Namespace) -> int:
    result = _load(args)
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
            }
            for t in result.tasks
        ]
        print(json.dumps({"tasks": rows, "errors": [str(e) for e in result.errors]}, indent=2))
        return 1 if result.errors else 0
    from rich.table import Table

    table = Table(title=None, show_lines=False)
    for col in ("id", "pack", "difficulty", "tags", "title"):
        table.add_column(col, no_wrap=col == "id")  # ids are what users copy into --task
    for t in result.tasks:
        table.add_row(t.id, t.pack, t.meta.difficulty, ", ".join(t.meta.tags), t.meta.title)
    console = _console()
    console.print(table)
    console.print(f"{len(result.tasks)} tasks" + (f", {len(result.errors)} broken" if result.errors else ""))
    _print_load_errors(result.errors)
    return 1 if result.errors else 0


def tasks_show(args: argparse.Namespace) -> int:
    import tempfile
    from pathlib import Path

    from agentic_eval.sandbox import generate_tree

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
        f"instruction (seed {args.seed}):",
        "",
        task.render_instruction(variables).rstrip(),
    ]
    print("\n".join(lines))
    return 0


def tasks_new(args: argparse.Namespace) -> int:
    from pathlib import Path

    from agentic_eval.scaffold import scaffold_task

    path = scaffold_task(Path(args.pack), args.task_id, generator=args.generator)
    print(f"created {path}")
    from agentic_eval.errors import SandboxError
    from agentic_eval.sandbox import find_generator

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
    if args.task:
        tasks = select_tasks(result.tasks, args.task)
        errors = [e for e in result.errors if any(i in e.path for i in args.task)]
    else:
        tasks, errors = result.tasks, result.errors
    return tasks, errors


def validate(args: argparse.Namespace) -> int:
    from agentic_eval.confine import resolve_backend
    from agentic_eval.validate import TaskValidation, validate_tasks

    tasks, errors = _task_list_for_validate(args)
    console = _console(stderr=True)
    backend, warning = resolve_backend(args.sandbox)
    if warning:
        console.print(warning, markup=False)
    show_progress = not args.json and console.is_terminal
    if show_progress:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        progress = Progress(
            TextColumn("validating"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console,
            transient=True,
        )
        bar = progress.add_task("validate", total=len(tasks))

        def on_done(_: TaskValidation) -> None:
            progress.advance(bar)

        with progress:
            report = validate_tasks(
                tasks, repeat=args.repeat, seed=args.seed, jobs=args.jobs, load_errors=errors, on_done=on_done,
                backend=backend,
            )
    else:
        report = validate_tasks(tasks, repeat=args.repeat, seed=args.seed, jobs=args.jobs, load_errors=errors,
                                backend=backend)

    if args.json:
        print(json.dumps(report.to_json(), indent=2))
        return 0 if report.bad == 0 else 1
    from rich.table import Table

    table = Table()
    table.add_column("task", no_wrap=True)
    table.add_column("status")
    table.add_column(f"pristine fails /{args.repeat}", justify="right")
    table.add_column(f"fixed passes /{args.repeat}", justify="right")
    table.add_column("time", justify="right")
    table.add_column("reasons")
    for t in report.tasks:
        style = "green" if t.status == "ok" else "bold red"
        table.add_row(
            t.id,
            f"[{style}]{t.status}[/]",
            str(t.pristine_fails) if t.repeat else "-",
            str(t.fixed_passes) if t.repeat else "-",
            f"{t.duration_s:.2f}s" if t.repeat else "-",
            "; ".join(t.reasons),
        )
    out = _console()
    out.print(table)
    for t in report.tasks:
        if t.reasons:
            out.print(f"bad: {t.id}: {'; '.join(t.reasons)}", markup=False)
    out.print(f"{report.ok} ok, {report.bad} bad", markup=False)
    return 0 if report.bad == 0 else 1
