"""A chain of empty folders a thousand deep (git sees nothing of it: it tracks no empty folder) is the model's doing,
never an unscored outcome. Before: under `.git/refs`, the harness's view of the repository (grading/gitsafe.py's
make_view, os.walk) raised RecursionError and any trial ended `agent_error` (harness fault); under `test/`, a Node
grader's selection of the folder (graders/gradelib.py, Path.rglob) raised it and a reference fix's pass became a
grader error (node/fix-failing-test)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from agentic_eval.grading.gitsafe import GitError, make_view
from agentic_eval.trees import make_deep_tree, remove_tree
from agentic_eval.validation.redteam_tree import DEEP_LEVELS, deep_empty_folders


def test_refs_nested_a_thousand_deep_are_a_broken_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    make_deep_tree(repo / ".git" / "refs" / "heads", DEEP_LEVELS)
    try:
        with pytest.raises(GitError, match="nested more than"):
            make_view(repo, tmp_path / "view")
    finally:
        remove_tree(tmp_path)  # pytest's own clean-up recurses once per level


@pytest.mark.slow
def test_a_node_graders_test_folder_a_thousand_deep_still_grades(short_tmp: Path) -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    from agentic_eval.grading.grader import ScriptRunner, Verdict
    from agentic_eval.packs.sandbox import materialize_sandbox
    from agentic_eval.packs.task import load_tasks

    task = next(t for t in load_tasks(["node"]).tasks if t.id.endswith("fix-failing-test"))
    sandbox = materialize_sandbox(task, 0, short_tmp / "sandbox")
    try:
        with ScriptRunner(task, sandbox) as runner:
            assert runner.apply_fix().exit_code == 0
            deep_empty_folders(sandbox.path)
            graded = runner.grade()
        assert graded.verdict is Verdict.PASS, graded.script.output[-1500:]
    finally:
        remove_tree(sandbox.path)  # the fixture's shutil.rmtree recurses once per level
