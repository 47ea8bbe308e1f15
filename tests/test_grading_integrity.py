"""Grades a model cannot forge or dodge: the scripted "model" sends the tool calls of each known attack
through the real runner and built-in agent, and the grade must stay `fail` with no secret reaching the
run folder.

The task: `calc.add` is broken in the pristine repo and its test fails; the grader wants the tests to
pass with only `src/` changed. Every attack leaves `add` broken and tries to make the grader say pass.
The task and the attacks are in tests/helpers.py (the Docker backend's tests run some of them too).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import ATTACKS, NO_REDTEAM, commands_then_done, integrity_pack, run_cli

CANARY = "AE_CANARY_SECRET"
CANARY_VALUE = "canary-7f3e9a1d-never-in-a-run-folder"
KEY = "sk-integrity-key-5150"

def _attack(scripted: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, commands: list[str],
            pack: Path | None = None) -> tuple[dict[str, Any], Path]:
    monkeypatch.setenv(CANARY, CANARY_VALUE)
    fake = scripted(commands_then_done(commands))
    runs = tmp_path / "runs"
    code, data = run_cli("run", "--model", "fake-model", "--base-url", fake.base_url, "--api-key", KEY,
                         "--tasks", str(pack or integrity_pack(tmp_path)), "--run-dir", str(runs), "--json",
                         "--agent-opt", "max_retries=0")
    assert code in (0, 1)
    run_dir = runs / data["run_id"]
    everything = "".join(p.read_text(errors="replace") for p in run_dir.rglob("*") if p.is_file())
    assert CANARY_VALUE not in everything
    assert KEY not in everything
    return data["trials"][0], run_dir


def test_the_task_is_fair(tmp_path: Path) -> None:
    """The honest fix passes and the pristine repo fails, so each attack below is a real forgery attempt."""
    pack = integrity_pack(tmp_path)
    code, data = run_cli("validate", "--tasks", str(pack), "--json", *NO_REDTEAM)
    assert code == 0, data
    assert data["ok"] == 1


@pytest.mark.parametrize("commands", list(ATTACKS.values()), ids=list(ATTACKS))
def test_an_attack_leaves_the_grade_fail(scripted: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         commands: list[str]) -> None:
    leaks = tmp_path / "leaks"  # where planted code writes the environment it ran with
    leaks.mkdir()
    trial, run_dir = _attack(scripted, tmp_path, monkeypatch, [c.replace("LEAKS", str(leaks)) for c in commands])
    assert trial["outcome"] == "fail", (trial, (run_dir / trial["files"]["grader"]).read_text())
    ran_in_harness = [p.name for p in leaks.iterdir() if CANARY_VALUE in p.read_text(errors="replace")]
    assert not ran_in_harness  # planted code ran only in the model's own commands, if at all


def test_ignored_and_excluded_files_are_in_the_diff(scripted: Any, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    trial, run_dir = _attack(scripted, tmp_path, monkeypatch, [
        "echo hidden1 > notes.txt && echo notes.txt >> .git/info/exclude",
        "echo 'secret/' >> .gitignore && mkdir secret && echo hidden2 > secret/plan.txt",
        "git config core.excludesFile /dev/null && head -c 3000000 /dev/zero > big.bin",
    ])
    diff = (run_dir / trial["files"]["diff"]).read_text(errors="replace")
    for text in ("notes.txt", "hidden1", "secret/plan.txt", "hidden2", ".gitignore"):
        assert text in diff
    assert "big.bin" in diff and "not shown, larger than" in diff
    grader = (run_dir / trial["files"]["grader"]).read_text()
    assert "notes.txt" in grader or "secret/plan.txt" in grader  # named among the changes outside src/


def test_deleting_the_repository_is_a_fail_not_unscored(scripted: Any, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    trial, _ = _attack(scripted, tmp_path, monkeypatch, ["rm -rf .git"])
    assert trial["outcome"] == "fail"


def test_the_honest_fix_still_passes_with_planted_git_config(scripted: Any, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The defences do not cost an honest model its pass: a fix in src/, plus tests run in the sandbox."""
    trial, run_dir = _attack(scripted, tmp_path, monkeypatch, [
        "sed -i 's/a - b/a + b/' src/calc.py",
        "cd src && python -c 'import calc; assert calc.add(2, 3) == 5'",
    ])
    assert trial["outcome"] == "pass", (run_dir / trial["files"]["grader"]).read_text()


@pytest.mark.parametrize("grader, why", [
    ("import no_such_module_for_this_grader\n", "ModuleNotFoundError"),
    ("raise RuntimeError('the grader has a bug')\n", "RuntimeError"),
    ("import sys\nsys.exit('a message, not a status')\n", ""),
], ids=["missing-module", "uncaught-exception", "exit-with-message"])
def test_a_plain_python_grader_that_crashes_is_a_grader_error(tmp_path: Path, grader: str, why: str) -> None:
    """Without gradelib, an uncaught exception exits 1 in plain Python: it must not read as a fail."""
    pack = integrity_pack(tmp_path, grader=grader)
    runs = tmp_path / "runs"
    _, data = run_cli("run", "--agent", "nop", "--model", "m", "--tasks", str(pack), "--run-dir", str(runs),
                         "--json")
    (trial,) = data["trials"]
    if why:
        assert trial["outcome"] == "grader_error", trial
        assert why in (runs / data["run_id"] / trial["files"]["grader"]).read_text()
    else:  # sys.exit("text") is Python's documented exit 1 with a message: the grader said fail
        assert trial["outcome"] == "fail"


def test_the_grader_gets_no_secret_from_the_harness(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_PAT", "ghp_canary123")
    monkeypatch.setenv("DATABASE_URL", "postgres://u:canarypw@db/x")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    pack = integrity_pack(tmp_path,
                          grader="import os, sys\nprint(sorted(os.environ))\nprint(os.environ)\nsys.exit(1)\n",
                          fix="env > env.txt\n")
    runs = tmp_path / "runs"
    for agent in ("nop", "oracle"):
        _, data = run_cli("run", "--agent", agent, "--model", "m", "--tasks", str(pack), "--run-dir",
                             str(runs), "--json")
        run_dir = runs / data["run_id"]
        everything = "".join(p.read_text(errors="replace") for p in run_dir.rglob("*") if p.is_file())
        assert "AGENTIC_EVAL_PRISTINE" in everything
        for secret in ("ghp_canary123", "canarypw", KEY):
            assert secret not in everything


def test_a_plain_install_has_what_the_shipped_graders_need() -> None:
    """pytest (and PyYAML, for YAML checks) are runtime dependencies, not test extras."""
    import tomllib

    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]
    names = {d.split(">")[0].split("=")[0].strip() for d in project["dependencies"]}
    assert {"pytest", "pyyaml"} <= names


def test_symlinked_git_files_are_not_followed(tmp_path: Path) -> None:
    """A .git/HEAD swapped for a symlink to a harness file is refused, never read into a check."""
    from agentic_eval.grading import gitsafe

    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "a").write_text("a")
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=x", "-c", "user.email=x@x", "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "i"],
                   check=True)
    secret = tmp_path / "harness-secret"
    secret.write_text("ref: refs/heads/main\n")
    (repo / ".git" / "HEAD").unlink()
    (repo / ".git" / "HEAD").symlink_to(secret)
    with pytest.raises(gitsafe.GitError, match="not a regular file"):
        gitsafe.sandbox_git(repo, ["rev-parse", "HEAD"])
    shutil.rmtree(repo / ".git")
    with pytest.raises(gitsafe.GitError, match="deleted"):
        gitsafe.sandbox_git(repo, ["rev-parse", "HEAD"])
