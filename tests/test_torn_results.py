"""Results survive a torn write: a line cut short (even inside a multi-byte character) costs that
line only; report and resume skip it with a warning and keep it aside; resume reruns its trial."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from agentic_eval.results.trial_log import UNREADABLE_FILE, read_trials
from tests.helpers import make_pack, run_cli


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentic_eval.cli", *args], capture_output=True, text=True,
                          timeout=300, check=False)


def _two_task_run(mini_pack: Path, tmp_path: Path) -> tuple[Path, Path]:
    pack = make_pack(mini_pack, 2)
    runs = tmp_path / "runs"
    code, summary = run_cli("run", "--model", "m", "--agent", "oracle", "--tasks", str(pack), "--run-dir", str(runs),
                            "--json")
    assert code == 0 and summary["passed"] == 2
    return runs / summary["run_id"], pack


def test_torn_last_line_then_resume_appends_and_loses_nothing(mini_pack: Path, tmp_path: Path) -> None:
    run_dir, pack = _two_task_run(mini_pack, tmp_path)
    trials = run_dir / "trials.jsonl"
    first, second = trials.read_bytes().splitlines(keepends=True)
    trials.write_bytes(first + second[: len(second) // 2])  # the second record torn, no newline

    report = _cli("report", str(run_dir), "--json")
    assert report.returncode == 0, report.stderr
    summary = json.loads(report.stdout)
    # the torn half still names its task: counted, with no result (tests/test_report_unreadable.py)
    assert (summary["tasks"], summary["passed"], summary["trial_count"], summary["unreadable_lines"]) == (2, 1, 2, 1)
    assert "unreadable trial record skipped" in report.stderr and len(summary["warnings"]) == 1
    assert (run_dir / UNREADABLE_FILE).read_bytes() == second[: len(second) // 2] + b"\n"

    resumed = _cli("run", "--resume", str(run_dir), "--tasks", str(pack), "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert "warning:" in resumed.stderr and "unreadable trial record skipped" in resumed.stderr
    summary = json.loads(resumed.stdout)
    assert (summary["tasks"], summary["passed"]) == (2, 2)  # the rerun trial's record was not swallowed
    records, warnings = read_trials(run_dir)
    assert len(records) == 2 and len(warnings) == 1
    assert trials.read_bytes().count(b"\n") == 3  # record, torn line (now ended), rerun record
    # Seen twice, kept once.
    assert (run_dir / UNREADABLE_FILE).read_bytes().count(b"\n") == 1


def test_tear_inside_a_multibyte_character_costs_that_line_only(mini_pack: Path, tmp_path: Path) -> None:
    run_dir, pack = _two_task_run(mini_pack, tmp_path)
    trials = run_dir / "trials.jsonl"
    first, second = trials.read_bytes().splitlines(keepends=True)
    record = json.loads(first)
    record["detail"] = "café ✓ " * 5
    raw = json.dumps(record, ensure_ascii=False).encode()
    cut = raw.index("✓".encode()) + 1  # inside the 3-byte character
    trials.write_bytes(raw[:cut] + second)  # a torn line, then a good record glued on by an old writer
    records, warnings = read_trials(run_dir)
    assert [r.task_id for r in records] == [json.loads(second)["task_id"]]
    assert len(warnings) == 1 and "torn write" in warnings[0]

    report = _cli("report", str(run_dir))
    assert report.returncode == 0, report.stderr
    assert "warning:" in report.stdout and "torn write" in report.stdout and "t1" in report.stdout

    resumed = _cli("run", "--resume", str(run_dir), "--tasks", str(pack), "--json")
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    assert (summary["tasks"], summary["passed"], summary["unscored"]) == (2, 2, 0)


def test_records_are_ascii_so_no_tear_splits_a_character(mini_pack: Path, tmp_path: Path) -> None:
    run_dir, _ = _two_task_run(mini_pack, tmp_path)
    data = (run_dir / "trials.jsonl").read_bytes()
    assert data.isascii() and data.endswith(b"\n")
