"""The built-in core pack, whole: every grader validated, and `run` with the oracle passes every
task while `nop` passes none (the campaign's own "N ok, 0 bad" check, through the real runner)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentic_eval.packs.builtin import core_pack_dir
from agentic_eval.packs.task import load_tasks
from tests.helpers import NO_REDTEAM, run_cli

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


@pytest.mark.timeout(600)
def test_oracle_passes_every_core_task_and_nop_none(tmp_path: Path) -> None:
    runs = str(tmp_path / "runs")
    code, oracle = run_cli("run", "--model", "m", "--agent", "oracle", "--tasks", str(CORE), "--run-dir", runs,
                           "-j", "2", "--json")
    assert code == 0
    failed = [(t["task_id"], t["outcome"], t["detail"]) for t in oracle["trials"] if t["outcome"] != "pass"]
    assert not failed and oracle["passed"] == oracle["tasks"] >= 14
    code, nop = run_cli("run", "--model", "m", "--agent", "nop", "--tasks", str(CORE), "--run-dir", runs,
                        "-j", "2", "--json")
    passed = [t["task_id"] for t in nop["trials"] if t["outcome"] != "fail"]
    assert code == 0 and not passed and nop["outcomes"]["fail"] == nop["tasks"]
