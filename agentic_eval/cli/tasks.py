"""CLI command `tasks list | show | new`. Printing only; the work is in packs/."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agentic_eval.cli.args import add_tasks_arg, needs_action, print_help_of, seed_number, whole_number
from agentic_eval.plural import counted

if TYPE_CHECKING:
    from rich.console import Console

    from agentic_eval.errors import TaskLoadError
    from agentic_eval.packs.task import LoadResult, Task


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    p_synth = actions.add_parser(
        "synth", help="a realpy pack from a real project on the package index: bugs planted, caught by its own tests")
    p_synth.add_argument("spec", metavar="NAME==VERSION", help="a pure-Python project whose sdist ships its tests")
    p_synth.add_argument("--out", metavar="DIR", default=None, help="pack folder to write (default ./realpy-NAME)")
    p_synth.add_argument("--budget", type=whole_number(1, 10_000), default=40, metavar="N",
                         help="mutations to validate at most (default 40)")
    p_fetch = actions.add_parser(
        "fetch", help="install step for realpy packs: download their projects' pinned sdists into the cache (once) "
        "and run each pristine suite once; generating a task never downloads")
    add_tasks_arg(p_fetch)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """`tasks ACTION`; `tasks` alone prints its help."""
    actions = {"list": tasks_list, "show": tasks_show, "new": tasks_new, "synth": tasks_synth,
               "fetch": tasks_fetch}
    action = actions.get(args.tasks_command or "")
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
    from agentic_eval.validation.fixsize import reference_fix_size

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
                "generator": t.meta.sandbox.generator if t.meta.sandbox else None,
                "environment": t.meta.environment.dockerfile if t.meta.environment else None,
                "format": t.format,
                "metadata": t.meta.metadata,
                "path": str(t.dir),
                **({"fix_size": vars(sizes[t.id])} if sizes else {}),
            }
            for t in result.tasks
        ]
        print(json.dumps({"tasks": rows, "errors": [str(e) for e in result.errors]}, indent=2))
        return 1 if result.errors else 0
    from agentic_eval.report.tables import fits, stdout_console

    header = ["id", "pack", "difficulty", *(["reference fix"] if sizes else []), "tags", "title"]
    table_rows = [[t.id, t.pack, t.meta.difficulty, *([sizes[t.id].label()] if sizes else []),  # type: ignore[attr-defined]
                   ", ".join(t.meta.tags), t.meta.title] for t in result.tasks]
    console = stdout_console()
    if table_rows and fits(console, header, table_rows):  # none (every task broken): no empty table
        from rich.table import Table

        table = Table(title=None, show_lines=False)
        for col in header:
            table.add_column(col, no_wrap=True)
        for row in table_rows:
            table.add_row(*row)
        console.print(table)
    elif table_rows:  # too narrow for every column whole: one block per task, nothing squeezed to a few characters
        _print_compact(console, table_rows)
    console.print(f"{len(result.tasks)} tasks" + (f", {len(result.errors)} broken" if result.errors else ""))
    _print_load_errors(result.errors)
    return 1 if result.errors else 0


def _print_compact(console: Console, rows: Sequence[Sequence[str]]) -> None:
    """`tasks list` on a narrow terminal: the id (what --task takes, never broken) and the title on the first
    line, wrapped under an indent; then, in parentheses, the pack, difficulty, fix size and tags."""
    import textwrap

    from rich.text import Text

    width = max(40, console.width)
    indent = "    "
    for row in rows:
        task_id, title = row[0], row[-1]
        details = "(" + " · ".join(cell for cell in row[1:-1] if cell) + ")"
        if len(task_id) + 2 + 20 <= width:  # room for a fair share of the title beside the id
            lines = textwrap.wrap(title, width=width, initial_indent=" " * (len(task_id) + 2),
                                  subsequent_indent=indent, break_on_hyphens=False)
            first = Text(task_id, style="bold")
            first.append(lines[0][len(task_id):] if lines else "")
            rest = lines[1:]
        else:
            first = Text(task_id, style="bold")
            rest = textwrap.wrap(title, width=width, initial_indent=indent, subsequent_indent=indent)
        console.print(first, overflow="fold")
        for line in rest:
            console.print(line, markup=False, overflow="fold")
        for line in textwrap.wrap(details, width=width, initial_indent=indent, subsequent_indent=indent + " "):
            console.print(Text(line, style="dim"), overflow="fold")


def tasks_show(args: argparse.Namespace) -> int:
    import json
    import tempfile

    from agentic_eval.packs.sandbox import generate_tree
    from agentic_eval.packs.task import select_tasks

    result = _load(args)
    _print_load_errors(result.errors)
    (task,) = select_tasks(result.tasks, [args.task_id], result.errors)
    m = task.meta
    if m.sandbox is None:  # an environment task: its tree is in an image only the docker backend builds
        print("\n".join(_environment_lines(task)))
        return 0
    with tempfile.TemporaryDirectory(prefix="ae-show-") as tmp:
        variables = generate_tree(task, args.seed, Path(tmp) / "sandbox")
        files, left_out = _generated_files(Path(tmp) / "sandbox")
    left_out_text = [f"{name}/ with {counted(n, 'file')}" for name, n in left_out.items()]
    lines = [
        f"id:          {m.id}",
        f"title:       {m.title}",
        f"pack:        {task.pack}  ({task.dir})",
        f"difficulty:  {m.difficulty}",
        f"tags:        {', '.join(m.tags)}",
        *([f"metadata:    {json.dumps(m.metadata, sort_keys=True, default=str)}"] if m.metadata else []),
        *(line for line in (_environment_lines(task) if m.environment else []) if line.startswith("environment:")),
        f"sandbox:     {m.sandbox.generator} {json.dumps(m.sandbox.params)}  "
        f"(seed {args.seed}, {counted(len(files), 'file')})",
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
        *([f"  (left out: {', '.join(left_out_text)})"] if left_out_text else []),
        "",
        f"instruction (seed {args.seed}):",
        "",
        task.render_instruction(variables).rstrip(),
    ]
    print("\n".join(lines))
    return 0


LEFT_OUT_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache",
                           "node_modules", ".venv", ".tox"})
"""Folders `tasks show` does not list file by file: version control and caches (a generator with its own git
history would otherwise list every object)."""


def _generated_files(root: Path) -> tuple[list[str], dict[str, int]]:
    """The generated files, relative to `root`, outside LEFT_OUT_DIRS; and how many files each left-out folder
    held (by folder name)."""
    import os

    files: list[str] = []
    left_out: dict[str, int] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [d for d in dirnames if d in LEFT_OUT_DIRS]:
            left_out[name] = left_out.get(name, 0) + sum(len(f) for _, _, f in os.walk(os.path.join(dirpath, name)))
        dirnames[:] = sorted(d for d in dirnames if d not in LEFT_OUT_DIRS)
        rel = Path(dirpath).relative_to(root)
        files.extend((rel / name).as_posix() for name in filenames if os.path.isfile(os.path.join(dirpath, name)))
    return sorted(files), dict(sorted(left_out.items()))


def tasks_new(args: argparse.Namespace) -> int:
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
    from agentic_eval.cli.args import DEFAULT_REPEAT, DEFAULT_SEEDS

    # each command on a line of its own (a comment beside it wrapped at 80 columns), as it is to be copied
    print("next: write instruction.md, grade.py and solve.sh; see the grader's output with")
    print(f"  agentic-eval validate --tasks {path.parent} --show {args.task_id}")
    print(f"then check it ({DEFAULT_SEEDS} seeds x {DEFAULT_REPEAT} runs of each check, and the red team) with")
    print(f"  agentic-eval validate --tasks {path.parent} --task {args.task_id}")
    return 0


def _environment_lines(task: Task) -> list[str]:
    """`tasks show` for a task that brings its own environment."""
    import json

    m, env = task.meta, task.meta.environment
    if env is None:  # callers ask only for a task with an environment
        return []
    services = ", ".join(s.name for s in env.services) or "none"
    user = env.user or "the image's own"
    return [
        f"id:          {m.id}",
        f"title:       {m.title}",
        f"pack:        {task.pack}  ({task.dir}; {task.format} format)",
        f"difficulty:  {m.difficulty}",
        f"tags:        {', '.join(m.tags)}",
        f"metadata:    {json.dumps(m.metadata, sort_keys=True, default=str)}",
        f"environment: {env.dockerfile}, workdir {env.workdir}, user {user}, {env.cpus:g} CPUs, "
        f"{env.memory_mb} MB memory, {env.storage_mb} MB storage, internet {'yes' if env.allow_internet else 'no'}, "
        f"services: {services}",
        f"verifier:    {task.grader_path.relative_to(task.dir)} "
        f"({'its reward file' if task.verifier == 'reward' else 'its exit status'})",
        *([f"unsupported: {u}" for u in task.unsupported]),
        f"limits:      agent {m.limits.agent_timeout_s:g}s, grader {m.limits.grader_timeout_s:g}s, "
        f"{m.limits.max_turns} turns",
        f"solution:    {task.solution_path.relative_to(task.dir)}",
        f"digest:      {task.digest()}",
        "",
        "instruction:",
        "",
        task.render_instruction({}).rstrip(),
    ]


def tasks_synth(args: argparse.Namespace) -> int:
    """`tasks synth NAME==VERSION`: validate mutations of a real project and write a realpy pack."""
    from agentic_eval.realpy.project import ProjectError
    from agentic_eval.realpy.synth import synth

    out = Path(args.out or f"realpy-{args.spec.partition('==')[0].lower()}")
    try:
        synth(args.spec, out, budget=max(1, args.budget))
    except ProjectError as exc:
        print(f"agentic-eval: error: {exc}", file=sys.stderr)
        return 2
    return 0


def tasks_fetch(args: argparse.Namespace) -> int:
    """`tasks fetch [--tasks PACK]` (default the realpy pack): the install step of realpy tasks' projects."""
    from agentic_eval.realpy.plant import prepare
    from agentic_eval.realpy.project import ProjectError, project_of

    result = load_tasks_or_realpy(args)
    for error in result.errors:
        print(f"agentic-eval: error: {error}", file=sys.stderr)
    if result.errors:
        return 2
    params = [t.meta.sandbox.params for t in result.tasks if t.meta.sandbox and t.meta.sandbox.generator == "realpy"]
    failed = 0
    done: set[object] = set()
    for param in params:
        try:
            project = project_of(dict(param))
            if project in done:
                continue
            done.add(project)
            print(prepare(project), flush=True)
        except ProjectError as exc:
            print(f"agentic-eval: error: {exc}", file=sys.stderr)
            failed += 1
    if not params:
        print("agentic-eval: error: no realpy tasks in the packs given; name one with --tasks (e.g. --tasks realpy)",
              file=sys.stderr)
        return 2
    return 2 if failed else 0


def load_tasks_or_realpy(args: argparse.Namespace) -> LoadResult:
    from agentic_eval.packs.task import load_tasks

    return load_tasks(getattr(args, "tasks", None) or ["realpy"])
