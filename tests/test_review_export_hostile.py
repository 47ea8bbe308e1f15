"""Adversarial review (issue 44): `export` of a run folder someone handed over (a shared or copied run) must
write only under --out, read only the run's own files, and never wait on a special file. The run folder's
run.json and trials.jsonl name the paths export writes (run id, task id) and reads (a trial's files)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agentic_eval.export")

from agentic_eval.cli import main


def _run(base: Path, run_id: str = "r1", task_id: str = "t", files: dict[str, str] | None = None) -> Path:
    run = base / "runs" / "r1"
    (run / "trials" / "t.a1").mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"run_id": run_id, "created_at": "2026-01-01T00:00:00Z", "model": "m",
                                              "agent": "builtin", "base_url": "http://127.0.0.1:1/v1"}))
    record: dict[str, Any] = {
        "trial_id": "t", "run_id": "r1", "task_id": task_id, "task_digest": "d", "agent": "builtin", "model": "m",
        "seed": 0, "attempt": 1, "outcome": "fail", "started_at": "2026-01-01T00:00:00Z",
        "ended_at": "2026-01-01T00:00:01Z", "duration_s": 1.0,
        "files": files if files is not None else {"wire": "trials/t.a1/wire.jsonl"}}
    (run / "trials.jsonl").write_text(json.dumps(record) + "\n")
    (run / "trials" / "t.a1" / "wire.jsonl").write_text("")
    return run


def _written(base: Path, out: Path) -> list[Path]:
    return [p for p in base.rglob("*") if p.is_file() and out not in p.parents and "runs" not in p.parts]


@pytest.mark.parametrize("run_id,task_id", [("../../escaped-run", "t"), ("r1", "../../escaped-task"),
                                            ("r1", "ABSOLUTE")])
def test_export_writes_only_under_out(tmp_path: Path, run_id: str, task_id: str) -> None:
    base = tmp_path / "a" / "b" / "c"
    if task_id == "ABSOLUTE":  # an absolute task id: where it points, under tmp_path
        task_id = str(tmp_path / "abs-escaped-task")
    run = _run(base, run_id, task_id)
    out = base / "out"
    try:
        main(["export", str(run), "--format", "atif", "--out", str(out)])
    except SystemExit:
        pass  # a refusal is fine; writing elsewhere is not
    assert _written(tmp_path, out) == []


def test_export_reads_no_file_outside_the_run(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-host-file\n")
    run = _run(tmp_path, files={"wire": "trials/t.a1/wire.jsonl", "grader": "../../secret.txt"})
    (run / "trials" / "t.a1" / "diff.patch").symlink_to(secret)
    with open(run / "trials.jsonl") as handle:
        record = json.loads(handle.read())
    record["files"]["diff"] = "trials/t.a1/diff.patch"
    (run / "trials.jsonl").write_text(json.dumps(record) + "\n")
    out = tmp_path / "out"
    try:
        main(["export", str(run), "--format", "atif", "--out", str(out)])
    except SystemExit:
        pass
    assert all("TOP-SECRET" not in p.read_text() for p in out.rglob("*") if p.is_file())


def test_export_never_waits_on_a_fifo_in_a_trial_folder(tmp_path: Path) -> None:
    run = _run(tmp_path)
    os.unlink(run / "trials" / "t.a1" / "wire.jsonl")
    os.mkfifo(run / "trials" / "t.a1" / "wire.jsonl")
    code = "import sys; from agentic_eval.cli import main; main(sys.argv[1:])"
    try:
        subprocess.run([sys.executable, "-c", code, "export", str(run), "--format", "atif", "--out",
                        str(tmp_path / "out")], capture_output=True, timeout=30, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail("export waited on a FIFO named wire.jsonl (it never ends)")
