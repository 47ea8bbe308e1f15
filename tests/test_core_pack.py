"""The built-in core pack, whole: every grader validated, and `run` with the oracle passes every
task of the default packs (core, node, ops) while `nop` passes none (the campaign's own "N ok, 0 bad" check,
through the real runner), in a venv holding only the runtime dependencies."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.packs.builtin import core_pack_dir
from agentic_eval.packs.task import load_tasks
from tests.helpers import NO_REDTEAM

CORE = core_pack_dir()


def test_core_pack_has_at_least_14_tasks_over_the_required_skills() -> None:
    loaded = load_tasks([str(CORE)])
    assert not loaded.errors
    assert len(loaded.tasks) >= 14
    tags = {tag for task in loaded.tasks for tag in task.meta.tags}
    assert {"config", "git", "tests", "refactor", "docs"} <= tags, tags


@pytest.mark.timeout(600)
def test_validate_the_whole_core_pack() -> None:
    proc = subprocess.run([sys.executable, "-m", "agentic_eval.cli", "validate", "--tasks", str(CORE), "--json",
                           "--seed", "3", "--seeds", "1", "--repeat", "1", *NO_REDTEAM],  # one run: the CI's budget
                          capture_output=True, text=True, timeout=600, check=False)
    result = json.loads(proc.stdout)
    bad = [t for t in result["tasks"] if t["status"] != "ok"]
    assert proc.returncode == 0 and not bad, bad
    assert result["ok"] >= 14 and result["bad"] == 0


def _runtime_only_cli(folder: Path) -> tuple[list[str], str]:
    """A venv holding agentic-eval and its runtime dependencies only (no extras), as `pip install agentic-eval`
    makes: its `agentic-eval` command and "", or this interpreter's and why it stands in (no package index for the
    venv's install)."""
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                              str(Path(__file__).parents[1])], capture_output=True, text=True, timeout=600, check=False)
    if install.returncode != 0 and "No matching distribution" in install.stderr + install.stdout:
        return [sys.executable, "-m", "agentic_eval.cli"], "the package index is not reachable for the venv's install"
    assert install.returncode == 0, install.stderr[-2000:]
    extras = subprocess.run([str(python), "-c", "import importlib.util as u; print(u.find_spec('pytest_timeout'))"],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert extras == "None"  # really only the runtime dependencies
    return [str(venv / "bin" / "agentic-eval")], ""


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_oracle_passes_every_default_task_and_nop_none_with_only_the_runtime_dependencies(tmp_path: Path) -> None:
    """`run` with the oracle passes every task of the default packs (core, node, ops) and `nop` passes none, in a
    venv holding only the runtime dependencies, so no grader leans on a test extra either. (Once for all three
    packs: the same runs in this interpreter would check nothing more.)"""
    cli, stand_in = _runtime_only_cli(tmp_path)
    runs = tmp_path / "runs"
    packs = {task.id: task.pack_dir.name for task in load_tasks().tasks}
    counts = {name: list(packs.values()).count(name) for name in set(packs.values())}
    assert counts.keys() == {"core", "node", "ops"} and counts["core"] >= 16, counts
    assert counts["node"] >= 9 and counts["ops"] >= 9, counts
    said: dict[str, Any] = {}
    for agent in ("oracle", "nop"):
        proc = subprocess.run([*cli, "run", "--agent", agent, "--model", "m", "--run-dir", str(runs), "--json",
                               "-j", "2"], capture_output=True, text=True, timeout=900, check=False, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-2000:]
        said[agent] = json.loads(proc.stdout)
    oracle, nop = said["oracle"], said["nop"]
    ran = [sorted(t["task_id"] for t in said[agent]["trials"]) for agent in ("oracle", "nop")]
    assert ran == [sorted(packs)] * 2
    failed = [(t["task_id"], t["outcome"], t["detail"]) for t in oracle["trials"] if t["outcome"] != "pass"]
    # what the grader said, so that a failure seen only on a CI machine can be read from its log
    graders = [f"{g.parent.name}:\n{g.read_text(errors='replace')[-3000:]}"
               for task_id, _, _ in failed for g in runs.glob(f"*/trials/{task_id}.a*/grader.txt")]
    assert not failed and oracle["passed"] == oracle["tasks"] == len(packs), (failed, graders)
    passed = [(t["task_id"], t["outcome"]) for t in nop["trials"] if t["outcome"] != "fail"]
    assert not passed and nop["outcomes"]["fail"] == nop["tasks"] == len(packs), passed
    if stand_in:
        pytest.skip(f"oracle and nop checked in this interpreter; the runtime-only venv was not: {stand_in}")
