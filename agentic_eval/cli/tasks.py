"""CLI command `tasks list | show | new`. Printing only; the work is in packs/."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agentic_eval.cli.args import add_tasks_arg, needs_action, print_help_of, seed_number

if TYPE_CHECKING:
    from agentic_eval.errors import TaskLoadError
    from agentic_eval.packs.task import LoadResult, Task


def register(sub: Any) -> None:
    p = sub.add_parser("tasks", help="list, show or scaffold tasks")
    actions = needs_action(p, "tasks_command")
    p_list = actions.add_parser("list", help="list the tasks of every pack found")
    add_tasks_arg(p_list)
    p_list.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p_list.add_argument(
        "--fix-size", action="store_true",
        help="also show what each reference fix changes (files, lines added/removed; seed 0): "
        "applies every fix once, then cached",
    )
    p_show = actions.add_parser("show", help="show one task: metadata, instruction, files")
    add_tasks_arg(p_show)
    p_show.add_argument("task_id", metavar="ID")
    p_show.add_argument("--seed", type=seed_number, default=0, help="seed used to render the instruction (default 0)")
    p_new = actions.add_parser("new", help="scaffold a new task folder (its grader and fix are placeholders)")
    p_new.add_argument("task_id", metavar="ID")
    p_new.add_argument(
        "--pack", metavar="DIR", default=".", help="pack folder to create the task in (default: current folder)"
    )
    p_new.add_argument("--generator", default="pyservice", help="sandbox generator to use (default pyservice)")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """`tasks ACTION`; `tasks` alone prints its help."""
    action = {"list": tasks_list, "show": tasks_show, "new": tasks_new}.get(args.tasks_command or "")
    return action(args) if action else print_help_of(args)


def _console(stderr: bool = False):  # type: ignore[no-untyped-def]
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=False)


def _print_load_errors(errors: Sequence[TaskLoadError]) -> None:
    for err in errors:
        print(f"agentic-eval: skipped task: {err}", file=sys.stderr)


def _load(args: argparse.Namespace) -> LoadResult:
    from agentic_eval.packs.task import load_tasks

    return load_tasks(getattr(args, "tasks", None))


def _fix_sizes(tasks: Sequence[Task], wanted: bool) -> dict[str, object]:
    """task id -> FixSize of its reference fix (seed 0), when `--fix-size` asked for them."""
    if not wanted:
        return {}
    from agentic_eval.packs.fixsize import reference_fix_size

    return {t.id: reference_fix_size(t) for t in tasks}


def tasks_list(args: argparse.Namespace) -> int:
    import json

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
    import json
    import tempfile
    from pathlib import Path

    from agentic_eval.packs.sandbox import generate_tree
    from agentic_eval.packs.task import select_tasks

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
