"""Adversarial review (issue 40, grading/gitshim.py): a grader's plain `git diff PRISTINE` / `git status` reads the
sandbox through the shim's view, which copies the model's index. An index entry flagged assume-unchanged (or
skip-worktree) makes git take the index's blob for the file without looking at it: the model edits a test,
flags it, and the grader's `git diff --quiet $AGENTIC_EVAL_PRISTINE -- tests/` says nothing changed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agentic_eval.grading import gitshim
from agentic_eval.packs import pristine


def _git(repo: Path, *args: str) -> str:
    env = pristine.git_env({"GIT_AUTHOR_NAME": "h", "GIT_AUTHOR_EMAIL": "h@h", "GIT_COMMITTER_NAME": "h",
                           "GIT_COMMITTER_EMAIL": "h@h"})
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
def test_an_index_flag_of_the_models_does_not_hide_an_edited_test(tmp_path: Path, flag: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    sandbox = tmp_path / "sandbox"
    (sandbox / "tests").mkdir(parents=True)
    (sandbox / "tests" / "test_add.py").write_text("def test_add():\n    assert add(1, 1) == 2\n")
    _git(sandbox, "init", "-q", "-b", "main")
    _git(sandbox, "add", "-A")
    _git(sandbox, "commit", "-qm", "pristine")
    commit = _git(sandbox, "rev-parse", "HEAD").strip()
    store = tmp_path / "store"
    pristine.save_pristine(sandbox, store)
    # the model: flag the test in its index, then gut it
    _git(sandbox, "update-index", flag, "tests/test_add.py")
    (sandbox / "tests" / "test_add.py").write_text("def test_add():\n    pass\n")

    shim = gitshim.install(tmp_path / "shim", Path(gitshim.__file__).resolve().parents[2])
    monkeypatch.setenv("AGENTIC_EVAL_SANDBOX", str(sandbox))
    monkeypatch.setenv(pristine.STORE_ENV, str(store))
    monkeypatch.setenv(pristine.COMMIT_ENV, commit)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir(sandbox)
    # a grader written before sealed grading: "the tests are untouched" by git's own word
    code = gitshim.run(["diff", "--quiet", commit, "--", "tests/"], shim.resolve())
    assert code == 1, "git diff says the gutted test is the pristine one"
    status = subprocess.run(["git", "status", "--porcelain"], cwd=sandbox, capture_output=True, text=True,
                            env={**os.environ}, check=False)
    assert "test_add.py" in status.stdout


def test_a_git_dir_in_the_environment_aimed_at_the_sandbox_reads_the_view(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """`GIT_DIR=$AGENTIC_EVAL_SANDBOX/.git git diff` (a grader naming the repository by the environment): the shim
    let it through to the real git on the model's .git, whose config runs a filter of the model's."""
    sandbox = tmp_path / "sandbox"
    sandbox.mkdir()
    (sandbox / "a.txt").write_text("one\n")
    _git(sandbox, "init", "-q", "-b", "main")
    _git(sandbox, "add", "-A")
    _git(sandbox, "commit", "-qm", "pristine")
    marker = tmp_path / "PWNED"
    with open(sandbox / ".git" / "config", "a") as config:
        config.write(f'[filter "evil"]\n\tclean = "touch {marker}; cat"\n')
    (sandbox / ".gitattributes").write_text("*.txt filter=evil\n")
    (sandbox / "a.txt").write_text("two\n")
    shim = gitshim.install(tmp_path / "shim", Path(gitshim.__file__).resolve().parents[2])
    monkeypatch.setenv("AGENTIC_EVAL_SANDBOX", str(sandbox))
    monkeypatch.setenv("GIT_DIR", str(sandbox / ".git"))
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir(sandbox)
    for args in (["status", "--porcelain"], ["diff", "--stat"], ["add", "-n", "a.txt"]):
        gitshim.run(args, shim.resolve())
    assert not marker.exists(), "the model's filter ran in the grader"
