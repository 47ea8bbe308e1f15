"""Task packs: the task model, the sandbox repos generated for it, grading, and checking graders.

    task      Task, TaskMeta and pack loading: task.toml, discovery through entry points, selection.
    sandbox   A task's sandbox: a deterministic git repo built by a generator from a seed.
    twinspec  One spec, two forms: a generated repo's visible test and its twin, which the grader judges.
    environment  Tasks that bring their own environment ([environment]), and Harbor task folders read as they are.
    gitsafe   Git on a repo the model owned, never trusting its config (standard library only; gradelib imports it).
    gitshim   The `git` first on a grader's PATH: plain git on the sandbox through gitsafe's view.
    gitwrite  The pristine commit of a generated tree written without a git process (standard library only).
    snapshot  The agent's final tree recorded before grading: diff.patch and tree.json (standard library only).
    grader    Running a grader or reference fix in a sandbox and turning its exit into a verdict.
    sealed    Where the model's code runs while a grader grades: apart from it, on a work copy.
    impossible  What the model did on an impossible task, named from the diff: edited the tests, special-cased...
    leaks     The leak scan: nothing of the answer, the grader or the fix visible in a sandbox.
    validate  `validate`: graders fail on the pristine repo, pass on the reference fix, and fail the red team.
    redteam   The red team: generic forgeries and dodges every grader must answer with a scored fail.
    fixsize   How big a task's reference fix is (files and lines).
    scaffold  `tasks new`: a task folder with placeholder grader and fix.
    builtin   Where the built-in packs, generators and gradelib live (repo root or wheel).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval._lazy import lazy_face

if TYPE_CHECKING:
    from .builtin import builtin_packs as builtin_packs
    from .builtin import core_pack_dir as core_pack_dir
    from .grader import GradeResult as GradeResult
    from .grader import ScriptRunner as ScriptRunner
    from .grader import Verdict as Verdict
    from .grader import grade_sandbox as grade_sandbox
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
    from .validate import ValidationReport as ValidationReport
    from .validate import validate_tasks as validate_tasks

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
    "Verdict": ".grader",
    "GradeResult": ".grader",
    "ScriptRunner": ".grader",
    "grade_sandbox": ".grader",
    "ValidationReport": ".validate",
    "validate_tasks": ".validate",
    "scaffold_task": ".scaffold",
    "core_pack_dir": ".builtin",
    "builtin_packs": ".builtin",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)
