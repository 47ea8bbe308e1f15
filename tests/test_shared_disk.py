"""A model that fills the disk its sandbox shares with the machine (local and bwrap backends) gets its scored fail;
the run goes on and records it (confine/shared_disk.py). Before, the harness could not write the trial's record and
the whole run ended with "No space left on device"."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentic_eval.confine.backend import Confinement
from agentic_eval.confine.host import TMP_BYTES, BwrapBackend, bwrap_problem
from agentic_eval.confine.shared_disk import SharedDisk
from agentic_eval.testing import FakeEndpoint, ScriptedReply, chat_body, tool_call

DISK_MB = 300


@pytest.fixture
def small_disk(short_tmp: Path) -> Iterator[Path]:
    """A 300 MiB file system of its own (a tmpfs: root only), removed after the test."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small file system needs root")
    disk = short_tmp / "disk"
    disk.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DISK_MB}m", "ae-small-disk", str(disk)],
                          capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "--lazy", str(disk)], capture_output=True)


def _fill(folder: Path) -> None:
    """Write into `folder` until the disk is full."""
    with open(folder / "junk", "wb") as out:
        try:
            for _ in range(DISK_MB + 10):
                out.write(b"\0" * (1 << 20))
                out.flush()
        except OSError:
            pass


def test_a_disk_the_sandbox_filled_is_the_models_and_one_filled_otherwise_is_not(small_disk: Path) -> None:
    backend = SharedDisk()
    sandbox, elsewhere = small_disk / "sandbox", small_disk / "other"
    sandbox.mkdir(), elsewhere.mkdir()
    backend.trial_start(sandbox)
    assert backend.disk_full(sandbox) == ""  # room left
    _fill(sandbox)
    why = backend.disk_full(sandbox)
    assert "the model's commands filled the disk" in why and "MiB in the sandbox" in why
    (sandbox / "junk").unlink()

    backend.trial_start(sandbox)
    _fill(elsewhere)  # another program (or the results folder) filled it: the machine's fault, not the model's
    assert backend.disk_full(sandbox) == ""
    backend.trial_end(sandbox)
    assert backend.disk_full(sandbox) == ""  # a trial no one started is never ruled full


def test_a_run_whose_model_fills_the_disk_records_a_scored_fail_and_goes_on(small_disk: Path) -> None:
    if bwrap_problem():
        pytest.skip(bwrap_problem())
    fill = f"for i in $(seq 1 {DISK_MB // 50 + 2}); do head -c 50M /dev/zero > junk$i; done; echo filled"
    calls = [tool_call("bash", {"command": fill}), tool_call("bash", {"command": "ls"})]
    replies = [ScriptedReply(body=chat_body(None, tool_calls=[call])) for call in calls]
    replies.append(ScriptedReply(body=chat_body("done")))
    runs = small_disk / "runs"
    with FakeEndpoint(replies * 2) as fake:  # two trials: the second starts once the first's sandbox is gone
        proc = subprocess.run(
            [sys.executable, "-m", "agentic_eval.cli", "run", "--base-url", fake.base_url, "--model", fake.model,
             "--tasks", "core", "--task", "fix-failing-test", "--attempts", "2", "--run-dir", str(runs)],
            env={**os.environ, "TMPDIR": str(small_disk)}, capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    (log,) = runs.glob("*/trials.jsonl")
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(records) == 2
    for record in records:
        assert (record["outcome"], record["fault"]) == ("fail", "model"), record["detail"]
        assert "filled the disk its sandbox shares with this machine" in record["detail"]
    assert shutil.disk_usage(small_disk).free > (DISK_MB - 20) << 20  # the sandboxes were emptied


def test_bwrap_private_tmp_is_capped(short_tmp: Path) -> None:
    if bwrap_problem():
        pytest.skip(bwrap_problem())
    backend = BwrapBackend()
    argv = backend.wrap(["df", "-B1", "--output=size", "/tmp"], cwd=short_tmp, spec=Confinement(writable=(short_tmp,)))
    out = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True).stdout.split()
    assert int(out[-1]) == TMP_BYTES
