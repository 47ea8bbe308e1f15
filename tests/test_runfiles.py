"""A run folder someone handed over is a stranger's input (agentic_eval.runfiles): the files its records name
are read only if they are the run's own (inside the folder, not a link, a regular file), and the ids files are
named by are one safe name. Checked for `report --html`, `export --format inspect`, `run --atif`'s writer and
an --out whose run folder is a link elsewhere; tests/test_review_export_hostile.py covers `export --format atif`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.cli import main
from agentic_eval.errors import AgenticEvalError
from agentic_eval.results.trial_log import read_trials
from agentic_eval.runfiles import read_run_text, run_file, safe_name

SECRET = "TOP-SECRET-host-file"


def _hostile_run(base: Path, task_id: str = "t", run_id: str = "r1") -> Path:
    """A run whose record names a host file (../), a link to it, and a FIFO as its wire log."""
    secret = base / "secret.txt"
    secret.write_text(SECRET + "\n")
    run = base / "runs" / "r1"
    trial = run / "trials" / "t.a1"
    trial.mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"run_id": run_id, "created_at": "2026-01-01T00:00:00Z", "model": "m",
                                              "agent": "builtin", "base_url": "http://127.0.0.1:1/v1"}))
    record: dict[str, Any] = {
        "trial_id": "t", "run_id": run_id, "task_id": task_id, "task_digest": "d", "agent": "builtin", "model": "m",
        "seed": 0, "attempt": 1, "outcome": "fail", "started_at": "2026-01-01T00:00:00Z",
        "ended_at": "2026-01-01T00:00:01Z", "duration_s": 1.0,
        "files": {"wire": "trials/t.a1/wire.jsonl", "grader": "../../secret.txt", "diff": "trials/t.a1/diff.patch",
                  "transcript": str(secret)}}
    (run / "trials.jsonl").write_text(json.dumps(record) + "\n")
    os.mkfifo(trial / "wire.jsonl")
    (trial / "diff.patch").symlink_to(secret)
    return run


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from agentic_eval.cli import main; sys.exit(main(sys.argv[1:]))"
    try:
        return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60,
                              check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{args[0]} waited on a FIFO named by a run's record")


def test_safe_names() -> None:
    assert safe_name("fix-bug_2.v1") == ("fix-bug_2.v1", False)
    assert safe_name("20260101-120000-Qwen3-8B-builtin") == ("20260101-120000-Qwen3-8B-builtin", False)
    for hostile in ("..", ".", "../../x", "/etc/x", "a/b", "a\\b", "", "-rf", "x\x1b[31m", "x" * 300):
        name, changed = safe_name(hostile)
        assert changed and "/" not in name and "\\" not in name and not name.startswith((".", "-"))
        assert len(name) < 100 and name.isprintable()
    assert safe_name("a/b")[0] != safe_name("a_b")[0]  # a digest: two ids never share a name


def test_a_records_file_is_read_only_if_it_is_the_runs_own(tmp_path: Path) -> None:
    run = _hostile_run(tmp_path)
    (run / "trials" / "t.a1" / "grader.txt").write_text("ok\n")
    (run / "trials" / "t.a1" / "inner").symlink_to("grader.txt")  # a link, even to the run's own file
    assert read_run_text(run, "trials/t.a1/grader.txt", what="g") == ("ok\n", False)
    assert read_run_text(run, "trials/t.a1/grader.txt", what="g", limit=1) == ("o", True)
    for rel, why in (("../../secret.txt", "leads outside"), (str(tmp_path / "secret.txt"), "not a path inside"),
                     ("trials/t.a1/diff.patch", "leads outside"), ("trials/t.a1/inner", "symbolic link"),
                     ("trials/t.a1/wire.jsonl", "FIFO")):
        with pytest.raises(AgenticEvalError, match=why):
            read_run_text(run, rel, what=rel)
    assert run_file(run, "trials/t.a1/grader.txt", what="g") == run / "trials/t.a1/grader.txt"


def test_report_html_shows_no_host_file_and_never_waits(tmp_path: Path) -> None:
    run = _hostile_run(tmp_path)
    page = tmp_path / "report.html"
    done = _cli("report", str(run), "--html", str(page))
    assert done.returncode == 0, done.stderr
    html = page.read_text()
    assert SECRET not in html
    assert "leads outside the run folder" in html and "FIFO" in html  # said, in the trial's details


def test_export_inspect_reads_and_writes_only_its_own(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai.log")
    from inspect_ai.log import read_eval_log

    run = _hostile_run(tmp_path, task_id="../../escaped-task", run_id="../../escaped-run")
    out = tmp_path / "deep" / "out"
    done = _cli("export", str(run), "--format", "inspect", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "files.grader ../../secret.txt: leads outside the run folder" in done.stderr
    assert "the trial is exported without it" in done.stderr
    (log,) = out.glob("*.eval")
    assert log.name == f"{safe_name('../../escaped-run')[0]}.eval"
    assert not list(tmp_path.glob("escaped*")) and not list((tmp_path / "deep").glob("escaped*"))
    (sample,) = read_eval_log(str(log)).samples or []
    assert sample.id == safe_name("../../escaped-task")[0]
    assert sample.metadata["record"]["task_id"] == "../../escaped-task"  # the real id, inside the file
    assert SECRET not in log.read_bytes().decode("latin-1")


def test_a_link_in_out_is_not_followed(tmp_path: Path) -> None:
    run = _hostile_run(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "r1").symlink_to(elsewhere)
    main(["export", str(run), "--format", "atif", "--out", str(out)])
    assert list(elsewhere.iterdir()) == []


def test_run_atif_writer_stays_in_the_trial_folder(tmp_path: Path) -> None:
    """`run --atif` writes as trials end: through a link named trajectory.json it would write a host file."""
    from agentic_eval.export import write_trial_trajectory

    run = _hostile_run(tmp_path)
    (record,) = read_trials(run)[0]
    target = tmp_path / "victim.txt"
    target.write_text("keep\n")
    (run / "trials" / "t.a1" / "trajectory.json").symlink_to(target)
    written = write_trial_trajectory(run, record)
    assert written == run / "trials" / "t.a1" / "trajectory.json" and not written.is_symlink()
    assert target.read_text() == "keep\n"
    assert SECRET not in written.read_text()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "wire.jsonl").write_text("")
    record.files["wire"] = "../../elsewhere/wire.jsonl"  # a wire log outside the run: not read, not written beside
    assert write_trial_trajectory(run, record) == written
    assert [p.name for p in elsewhere.iterdir()] == ["wire.jsonl"]
