"""Grading: what decides a trial's verdict, once the agent is done (the task and its repo are in packs/).

    grader      Running a grader or reference fix in a repo and turning its exit into a verdict.
    sealed      Where the model's code runs while a grader grades: apart from it, on a work copy.
    forkrun     A fork server for gradelib's pytest runs in lanes (root harness, bwrap): pytest loaded once, a child
                per run in namespaces of its own.
    forkserve   The fork server's own program (standard library only): a run's namespaces, uid and pytest.main.
    gitsafe     Git on a repo the model owned, never trusting its config: what changed, diff.patch, a view of its
                repository, a walk of its tree (standard library only; gradelib reads through it too).
    gitshim     The `git` first on a grader's PATH: plain git on the repo through gitsafe's view.
    snapshot    The agent's final tree recorded before grading: diff.patch and tree.json (standard library only).
    impossible  What the model did on an impossible task, named from the diff: edited the tests, special-cased...
    remains     What the agent left, recorded before grading: its files, its final tree in bounded time, whether a
                repository is left to grade (the runner's agent phase calls it once).
    phase       A trial's grade phase as one job: grade script or reward verifier, the grader's output, what the
                model did on an impossible task; the record's GradePart.
    bytecode    The bytecode of what every grader imports, compiled once by the harness, not by each grader.

A grader check that every task can use goes in graders/gradelib.py (beside the packs, on every grader's
import path); one a single pack needs, in that pack's graders/ folder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval._lazy import lazy_face

if TYPE_CHECKING:
    from .grader import GradeResult as GradeResult
    from .grader import ScriptRunner as ScriptRunner
    from .grader import Verdict as Verdict
    from .grader import grade_sandbox as grade_sandbox

_EXPORTS = {
    "Verdict": ".grader",
    "GradeResult": ".grader",
    "ScriptRunner": ".grader",
    "grade_sandbox": ".grader",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)
