"""Task packs: what a task is and how its repo is made (grading is in grading/, checking graders in validation/).

    task      Task, TaskMeta and pack loading: task.toml, discovery through entry points, selection.
    sandbox   A task's repo: a deterministic git repo built by a generator from a seed.
    twinspec  One spec, two forms: a generated repo's visible test and its twin, which the grader judges.
    environment  Tasks that bring their own environment ([environment]), and Harbor task folders read as they are.
    gitwrite  The pristine commit of a generated tree written without a git process (standard library only).
    pristine  The pristine store (a fresh sandbox's commit kept out of the model's reach), and git run with no
              one's config (standard library only).
    scaffold  `tasks new`: a task folder with placeholder grader and fix.
    builtin   Where the built-in packs, generators and gradelib live (repo root or wheel).
    redteam   An alias of the red team's old address (now validation/redteam.py), for plugins.

A task pack of a plugin's is an entry point in `agentic_eval.packs` and task folders; a built-in one is a
folder under tasks/, a `*_pack_dir` in builtin.py and its entry point. A repo generator is a module under
sandboxes/ (or an `agentic_eval.generators` entry point).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval._lazy import lazy_face

if TYPE_CHECKING:
    from .builtin import builtin_packs as builtin_packs
    from .builtin import core_pack_dir as core_pack_dir
    from .sandbox import Sandbox as Sandbox
    from .sandbox import materialize_sandbox as materialize_sandbox
    from .scaffold import scaffold_task as scaffold_task
    from .task import LoadResult as LoadResult
    from .task import Task as Task
    from .task import TaskMeta as TaskMeta
    from .task import load_pack as load_pack
    from .task import load_task as load_task
    from .task import load_tasks as load_tasks
    from .task import select_tasks as select_tasks

_EXPORTS = {
    "Task": ".task",
    "TaskMeta": ".task",
    "LoadResult": ".task",
    "load_task": ".task",
    "load_pack": ".task",
    "load_tasks": ".task",
    "select_tasks": ".task",
    "Sandbox": ".sandbox",
    "materialize_sandbox": ".sandbox",
    "scaffold_task": ".scaffold",
    "core_pack_dir": ".builtin",
    "builtin_packs": ".builtin",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)
