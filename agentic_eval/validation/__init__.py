"""Validation (`agentic-eval validate`): checking the graders before any model is graded by them.

    validate  Graders fail on the pristine repo, pass on the reference fix, and fail the red team (ValidateOptions).
    report    What validate found (ValidationReport, TaskValidation, each check's and attempt's run) and its wording.
    schedule  Which red-team attempts each task gets, and the two pools validate's units run on.
    redteam   The red team: generic forgeries and dodges every grader must answer with a scored fail.
    redteam_tree  The red team's dodges through what the tree holds (sparse files), made into attempts in redteam.
    survey    What the red team reads of a repo first: its languages, its files, which are tests.
    known_texts  What a model that read a grader knows of its mutation testing: the texts (known-mutant-texts).
    payloads/ The red team's cheats as real .py and .js files (linted as code), read by redteam.py.
    leaks     The leak scan: nothing of the answer, the grader or the fix visible in a repo.
    fixsize   How big a task's reference fix is (files and lines).

A red-team attempt of a plugin's is an entry point in the `agentic_eval.redteam` group (docs/plugins.md);
a built-in one is a constant in redteam.py and a line in pyproject.toml.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval._lazy import lazy_face

if TYPE_CHECKING:
    from .report import ValidationReport as ValidationReport
    from .validate import ValidateOptions as ValidateOptions
    from .validate import validate_tasks as validate_tasks

_EXPORTS = {
    "ValidationReport": ".report",
    "ValidateOptions": ".validate",
    "validate_tasks": ".validate",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)
