"""`report` counts the trial lines it cannot read and says so beside the totals (issue 26): a run of three
trials whose last line is torn reads "2/3 (3 trials, 1 unreadable line)", not "2/2", in the terminal table,
Markdown, JSON and HTML; after resume reruns the trial, "3/3 (3 trials, 1 unreadable line)"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from agentic_eval.report.summary import summarize_run
from tests.helpers import make_pack, run_cli


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentic_eval.cli", *args], capture_output=True, text=True,
                          timeout=300, check=False, env={**os.environ, "COLUMNS": "200"})


def _torn_run(mini_pack: Path, tmp_path: Path, keep: int) -> tuple[Path, Path, bytes]:
    """A three-task oracle run whose last record keeps only its first `keep` bytes."""
    pack = make_pack(mini_pack, 3)
    runs = tmp_path / "runs"
    code, summary = run_cli("run", "--model", "m", "--agent", "oracle", "--tasks", str(pack), "--run-dir", str(runs),
                            "--json")
    assert code == 0 and summary["passed"] == 3
    run_dir = runs / summary["run_id"]
    trials = run_dir / "trials.jsonl"
    lines = trials.read_bytes().splitlines(keepends=True)
    trials.write_bytes(b"".join(lines[:-1]) + lines[-1][:keep])
    return run_dir, pack, lines[-1]


def test_a_torn_last_line_is_counted_beside_the_totals(mini_pack: Path, tmp_path: Path) -> None:
    run_dir, pack, last = _torn_run(mini_pack, tmp_path, keep=150)  # the tear comes after trial_id and task_id
    torn_task = json.loads(last)["task_id"]

    summary = json.loads(_cli("report", str(run_dir), "--json").stdout)
    assert (summary["tasks"], summary["passed"], summary["trial_count"], summary["unreadable_lines"]) == (3, 2, 3, 1)
    assert len(summary["trials"]) == 2 and len(summary["warnings"]) == 1

    table = _cli("report", str(run_dir))
    assert table.returncode == 0, table.stderr
    assert "2/3 (3 trials, 1 unreadable line)" in table.stdout and "unreadable trial record skipped" in table.stdout
    assert any(torn_task in line and "unreadable" in line for line in table.stdout.splitlines())  # its matrix cell

    markdown = _cli("report", str(run_dir), "--format", "md").stdout
    assert "2/3 (3 trials, 1 unreadable line)" in markdown

    page = tmp_path / "report.html"
    assert _cli("report", str(run_dir), "--html", str(page)).returncode == 0
    assert "3 trials, 1 unreadable line" in page.read_text(encoding="utf-8")

    resumed = _cli("run", "--resume", str(run_dir), "--tasks", str(pack), "--json")
    assert resumed.returncode == 0, resumed.stderr
    again = json.loads(_cli("report", str(run_dir), "--json").stdout)
    assert (again["tasks"], again["passed"], again["trial_count"], again["unreadable_lines"]) == (3, 3, 3, 1)
    assert "3/3 (3 trials, 1 unreadable line)" in _cli("report", str(run_dir)).stdout


def test_a_line_torn_before_it_names_its_trial_still_counts(mini_pack: Path, tmp_path: Path) -> None:
    run_dir, _, _ = _torn_run(mini_pack, tmp_path, keep=12)
    summary = summarize_run(run_dir)
    assert (len(summary.task_ids), summary.passed, summary.trial_count) == (2, 2, 3)
    assert summary.unreadable_note == "3 trials, 1 unreadable line"
    assert summary.to_json()["unreadable_lines"] == 1


def test_a_whole_log_reads_as_before(mini_pack: Path, tmp_path: Path) -> None:
    run_dir, _, last = _torn_run(mini_pack, tmp_path, keep=10**6)  # nothing torn
    summary = summarize_run(run_dir)
    assert (summary.trial_count, summary.unreadable_note, summary.unreadable) == (3, "", [])
    assert "unreadable" not in _cli("report", str(run_dir)).stdout
