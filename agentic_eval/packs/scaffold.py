"""`agentic-eval tasks new`: scaffold a task folder whose grader and fix are placeholders.

The placeholders make `validate` report the task bad (the grader errors, the
fix fails) until they are written, so an unfinished task cannot slip into a
campaign.
"""

from __future__ import annotations

import re
from pathlib import Path

from agentic_eval.errors import AgenticEvalError

_ID_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")

TASK_TOML = """\
id = "{id}"
title = "TODO: a one-line title"
tags = ["todo"]
difficulty = "medium"
# Strings that must never appear in the pristine sandbox (e.g. a name the fix introduces).
answers = []

[sandbox]
generator = "{generator}"
params = {{}}

[limits]
agent_timeout_s = 600
grader_timeout_s = 60
max_turns = 40
"""

INSTRUCTION = """\
TODO: the instruction, exactly as the agent is told it. Use {{{{seed}}}}, or any
variable the generator returns, in double braces.
"""

GRADER = '''\
"""Grader for {id}: exit 0 = pass, 1 = fail. Runs with the sandbox as working directory."""

import sys

from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
# TODO: replace with real checks, e.g.
#   g.file_contains("answer.txt", str(v["port"]))
#   g.pytest_passes(["tests/"])
print("TODO: this grader is a placeholder; write its checks", file=sys.stderr)
sys.exit(3)  # a grader error until written, so validate reports the task bad
'''

SOLUTION = """\
#!/usr/bin/env bash
# Reference fix for {id}: runs with the sandbox as working directory.
# Variables: the JSON file at $AGENTIC_EVAL_VARS.
set -euo pipefail
echo "TODO: this reference fix is a placeholder; write it" >&2
exit 1
"""


def scaffold_task(pack_dir: Path, task_id: str, generator: str = "pyservice") -> Path:
    """Create `pack_dir/task_id/` with placeholder files; refuses to overwrite."""
    if not _ID_RE.match(task_id):
        raise AgenticEvalError(f"task id {task_id!r}: use lowercase letters, digits, '-', '_' or '.'")
    task_dir = pack_dir / task_id
    if task_dir.exists():
        raise AgenticEvalError(f"{task_dir} already exists; pick another id or remove it")
    task_dir.mkdir(parents=True)
    (task_dir / "task.toml").write_text(TASK_TOML.format(id=task_id, generator=generator), encoding="utf-8")
    (task_dir / "instruction.md").write_text(INSTRUCTION.format(), encoding="utf-8")
    (task_dir / "grade.py").write_text(GRADER.format(id=task_id), encoding="utf-8")
    solve = task_dir / "solve.sh"
    solve.write_text(SOLUTION.format(id=task_id), encoding="utf-8")
    solve.chmod(0o755)
    (task_dir / "grade.py").chmod(0o755)
    return task_dir
