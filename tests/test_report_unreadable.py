"""`report` counts the trial lines it cannot read and says so beside the totals (issue 26): a run of three
trials whose last line is torn reads "2/3 (3 trials, 1 unreadable line)", not "2/2", in the terminal table,
Markdown, JSON and HTML; after resume reruns the trial, "3/3 (3 trials, 1 unreadable line)"."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from agentic_eval.cli import main
from agentic_eval.report.summary import summarize_run
from tests.helpers import MINI_TASK, make_pack, run_cli


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentic_eval.cli", *args], capture_output=True, text=True,
                          timeout=300, check=False, env={**os.environ, "COLUMNS": "200"})


def _report(*args: str) -> tuple[int, str]:
    """`report` in this process (it only reads the run's files, as in a process of its own), 200 columns wide."""
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out):
        patch.setenv("COLUMNS", "200")
        code = main(["report", *args])
    return code, out.getvalue()


@pytest.fixture(scope="module")
def _whole_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A three-task oracle run and its pack, made once for the file (each test tears a copy of its own)."""
    made = tmp_path_factory.mktemp("torn")
    pack = make_pack(shutil.copytree(MINI_TASK.parent, made / "mini"), 3)
    runs = made / "runs"
    with pytest.MonkeyPatch.context() as patch:  # as the autouse _isolated_home does for a test's own runs
        patch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
        patch.setenv("GIT_CONFIG_NOSYSTEM", "1")
        code, summary = run_cli("run", "--model", "m", "--agent", "oracle", "--tasks", str(pack), "--run-dir",
                                str(runs), "--json")
    assert code == 0 and summary["passed"] == 3
    return runs / summary["run_id"], pack


@pytest.fixture
def torn_run(_whole_run: tuple[Path, Path], tmp_path: Path) -> Callable[[int], tuple[Path, Path, bytes]]:
    def tear(keep: int) -> tuple[Path, Path, bytes]:
        """A copy of the run whose last record keeps only its first `keep` bytes."""
        whole, pack = _whole_run
        run_dir = shutil.copytree(whole, tmp_path / "runs" / whole.name, symlinks=True)
        trials = run_dir / "trials.jsonl"
        lines = trials.read_bytes().splitlines(keepends=True)
        trials.write_bytes(b"".join(lines[:-1]) + lines[-1][:keep])
        return run_dir, pack, lines[-1]

    return tear


def test_a_torn_last_line_is_counted_beside_the_totals(torn_run: Callable[[int], tuple[Path, Path, bytes]],
                                                       tmp_path: Path) -> None:
    run_dir, pack, last = torn_run(150)  # the tear comes after trial_id and task_id
    torn_task = json.loads(last)["task_id"]

    code, said = _report(str(run_dir), "--json")
    summary = json.loads(said)
    assert code == 0 and (summary["tasks"], summary["passed"], summary["trial_count"],
                          summary["unreadable_lines"]) == (3, 2, 3, 1)
    assert len(summary["trials"]) == 2 and len(summary["warnings"]) == 1

    code, table = _report(str(run_dir))
    assert code == 0, table
    assert "2/3 (3 trials, 1 unreadable line)" in table and "unreadable trial record skipped" in table
    assert any(torn_task in line and "unreadable" in line for line in table.splitlines())  # its matrix cell

    assert "2/3 (3 trials, 1 unreadable line)" in _report(str(run_dir), "--format", "md")[1]

    page = tmp_path / "report.html"
    assert _report(str(run_dir), "--html", str(page))[0] == 0
    assert "3 trials, 1 unreadable line" in page.read_text(encoding="utf-8")

    resumed = _cli("run", "--resume", str(run_dir), "--tasks", str(pack), "--json")  # a run: a process of its own
    assert resumed.returncode == 0, resumed.stderr
    again = json.loads(_report(str(run_dir), "--json")[1])
    assert (again["tasks"], again["passed"], again["trial_count"], again["unreadable_lines"]) == (3, 3, 3, 1)
    assert "3/3 (3 trials, 1 unreadable line)" in _report(str(run_dir))[1]

def test_a_line_torn_before_it_names_its_trial_still_counts(
        torn_run: Callable[[int], tuple[Path, Path, bytes]]) -> None:
    run_dir, _, _ = torn_run(12)
    summary = summarize_run(run_dir)
    assert (len(summary.task_ids), summary.passed, summary.trial_count) == (2, 2, 3)
    assert summary.unreadable_note == "3 trials, 1 unreadable line"
    assert summary.to_json()["unreadable_lines"] == 1


def test_a_whole_log_reads_as_before(torn_run: Callable[[int], tuple[Path, Path, bytes]]) -> None:
    run_dir, _, last = torn_run(10**6)  # nothing torn
    summary = summarize_run(run_dir)
    assert (summary.trial_count, summary.unreadable_note, summary.unreadable) == (3, "", [])
    code, table = _report(str(run_dir))
    assert code == 0 and "unreadable" not in table
