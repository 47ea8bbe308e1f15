"""A grader that runs plain `git` itself (a pack written against the docs before sealed grading: `git
check-ignore`, `git ls-tree`, `git show PRISTINE:path`) reads the agent's repository through the same safe view
gradelib's checks use (agentic_eval/grading/gitshim.py): it validates and grades right, and nothing the agent
writes into its .git (config, fsmonitor, hooks, filters, an alias, replace refs, forged objects) changes its
answers or runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentic_eval.confine.host import bwrap_problem
from agentic_eval.grading.grader import Verdict
from tests.helpers import fixed_gitignore, grade_edited, hostile_git, oldgit_task, run_cli

PACK = Path(__file__).resolve().parent / "packs" / "oldgit"
needs_bwrap = pytest.mark.skipif(bwrap_problem() is not None, reason=f"bwrap: {bwrap_problem()}")

@needs_bwrap
def test_a_pack_whose_grader_runs_git_validates() -> None:
    code, data = run_cli("validate", "--tasks", str(PACK), "--seeds", "1", "--repeat", "1", "--json")
    [task] = data["tasks"]
    assert code == 0 and task["status"] == "ok", json.dumps(task)[:3000]


@needs_bwrap
@pytest.mark.parametrize(("edit", "verdict", "answers"), [
    (fixed_gitignore, Verdict.PASS, "ignored=True untouched=True"),
    (lambda sandbox: None, Verdict.FAIL, "ignored=False untouched=True"),
    (lambda sandbox: hostile_git(sandbox, forge=False), Verdict.PASS, "ignored=True untouched=True"),
    (lambda sandbox: hostile_git(sandbox, forge=True), Verdict.FAIL, "ignored=True untouched=False"),
], ids=["fixed", "untouched", "hostile-git-config", "forged-pristine-objects"])
def test_plain_git_in_a_grader_reads_the_agents_repository_safely(tmp_path: Path, edit: object, verdict: Verdict,
                                                                  answers: str) -> None:
    got, output = grade_edited(oldgit_task(), tmp_path, edit)
    assert got is verdict, output
    assert answers in output and "listed=['README.md', 'config/settings.ini']" in output, output
    assert "PWNED" not in output and "dubious ownership" not in output, output
