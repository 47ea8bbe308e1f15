"""A model that fills the disk its sandbox shares with the machine (local and bwrap backends) gets its scored fail;
the run goes on and records it (confine/shared_disk.py). Before, the harness could not write the trial's record and
the whole run ended with "No space left on device". A model that leaves the disk just above the "full" line, with a
tree grading cannot copy, gets its scored fail too (before: grader_error, unscored); a disk another program filled
while grading stays the machine's fault."""

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
from agentic_eval.confine.shared_disk import LOW_FREE, SharedDisk
from agentic_eval.grading.grader import CodeHostStats, GradeResult, ScriptResult, Verdict
from agentic_eval.grading.phase import GradePart, rule_out_of_room
from agentic_eval.grading.remains import take_remains
from agentic_eval.packs.sandbox import Sandbox
from agentic_eval.testing import FakeEndpoint, ScriptedReply, chat_body, tool_call
from tests.helpers import small_tmpfs

DISK_MB = 300


@pytest.fixture
def small_disk(short_tmp: Path) -> Iterator[Path]:
    """A 300 MiB file system of its own (a tmpfs: root only), removed after the test."""
    with small_tmpfs(short_tmp / "disk", f"size={DISK_MB}m") as disk:
        yield disk


@pytest.fixture
def small_ext4(short_tmp: Path) -> Iterator[Path]:
    """A 300 MiB ext4 file system in a sparse file, loop-mounted (root only), removed after the test. On ext4, unlike
    tmpfs, a folder takes a block: a full disk stops the grader's code host from making its folders."""
    if os.geteuid() != 0 or not all(shutil.which(p) for p in ("mount", "mkfs.ext4", "losetup")):
        pytest.skip("mounting a loop file system needs root, mkfs.ext4 and losetup")
    image, disk = short_tmp / "disk.img", short_tmp / "disk"
    disk.mkdir()
    with open(image, "wb") as out:
        out.truncate(DISK_MB << 20)
    made = subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], capture_output=True, text=True)
    if made.returncode == 0:
        made = subprocess.run(["mount", "-o", "loop", str(image), str(disk)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a loop ext4 here: {made.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "--lazy", "--detach-loop", str(disk)], capture_output=True)


def _run_trials(disk: Path, commands: list[str], attempts: int = 1) -> tuple[subprocess.CompletedProcess[str],
                                                                            list[dict[str, object]]]:
    """`run` of core fix-failing-test on `disk` (TMPDIR and the run folder there) by a model that runs `commands`."""
    calls = [tool_call("bash", {"command": command}) for command in commands]
    replies = [ScriptedReply(body=chat_body(None, tool_calls=[call])) for call in calls]
    replies.append(ScriptedReply(body=chat_body("done")))
    runs = disk / "runs"
    with FakeEndpoint(replies * attempts) as fake:  # trials one after another: the second starts once the first ends
        proc = subprocess.run(
            [sys.executable, "-m", "agentic_eval.cli", "run", "--base-url", fake.base_url, "--model", fake.model,
             "--tasks", "core", "--task", "fix-failing-test", "--attempts", str(attempts), "--run-dir", str(runs)],
            env={**os.environ, "TMPDIR": str(disk)}, capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    (log,) = runs.glob("*/trials.jsonl")
    return proc, [json.loads(line) for line in log.read_text().splitlines()]


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
    _, records = _run_trials(small_disk, [fill, "ls"], attempts=2)
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


def test_a_disk_left_just_above_the_full_line_with_a_tree_too_big_to_grade_is_the_models_fail(small_ext4: Path
                                                                                              ) -> None:
    """The dodge: the model leaves a little more than LOW_FREE, so the agent-phase rule says nothing, and the grader's
    work copy of its tree runs out of room (on ext4 the code host cannot make its folders: grader_error before)."""
    if bwrap_problem():
        pytest.skip(bwrap_problem())
    leave = (LOW_FREE >> 20) + 4
    fill = f"avail=$(df -B1 --output=avail . | tail -1); head -c $((avail - {leave} * 1048576)) /dev/zero > junk; ls"
    _, (record,) = _run_trials(small_ext4, [fill])
    assert (record["outcome"], record["fault"]) == ("fail", "model"), record["detail"]
    assert "grading ran out of room" in record["detail"] and "the sandbox was emptied" in record["detail"]
    assert shutil.disk_usage(small_ext4).free > (DISK_MB - 60) << 20  # the sandbox and the grader's copy are gone


def test_running_out_of_room_while_grading_is_the_machines_unless_the_models_tree_took_it(small_disk: Path) -> None:
    backend = SharedDisk()
    sandbox, elsewhere = small_disk / "sandbox", small_disk / "other"
    sandbox.mkdir(), elsewhere.mkdir()
    backend.trial_start(sandbox)
    _fill(elsewhere)  # another program filled the disk while the trial was graded
    host = CodeHostStats(3, 1.0, out_of_room="the grader's file x could not be placed: [Errno 28]", room_used=1 << 20)
    graded = GradePart(GradeResult(Verdict.FAIL, ScriptResult(1, "FAIL", 1.0)), 0.0, {})
    ruled = rule_out_of_room(graded, host, backend, Sandbox(sandbox, 0, {}, "0" * 40))
    assert (ruled.grade.verdict, ruled.side) == (Verdict.ERROR, "machine")
    assert "not by the model's doing" in ruled.grade.reason and sandbox.is_dir()

    host = CodeHostStats(3, 1.0, out_of_room=host.out_of_room, room_used=(DISK_MB // 2) << 20)  # its code wrote it
    ruled = rule_out_of_room(graded, host, backend, Sandbox(sandbox, 0, {}, "0" * 40))
    assert (ruled.grade.verdict, ruled.side) == (Verdict.FAIL, "") and "grading ran out of room" in ruled.grade.note
    assert not sandbox.exists()  # emptied at once, so that the record can be written


def test_a_snapshot_that_runs_out_of_room_the_models_tree_took_is_its_fail(short_tmp: Path) -> None:
    """Recording the agent's tree (tree.json, diff.patch in the trial folder on the same disk) runs out of room."""
    # under 2 x LOW_FREE: the "nearly full" rule never speaks here
    with small_tmpfs(short_tmp / "tiny", "size=16m") as disk:
        backend = SharedDisk()
        sandbox, trial_dir = disk / "sandbox", disk / "trial"
        sandbox.mkdir(), trial_dir.mkdir()
        backend.trial_start(sandbox)
        for n in range(200):
            (sandbox / f"f{n}.txt").write_text(f"{n}\n")  # entries for tree.json
        _fill(sandbox)
        assert backend.disk_full(sandbox) == ""
        left = take_remains(Sandbox(sandbox, 0, {}, "0" * 40), backend, trial_dir, None)
        assert "recording it ran out of room" in left.broken and "No space left on device" in left.broken
        assert not sandbox.exists()  # emptied at once: the record has room
