"""A model that uses up the inodes of the disk its sandbox shares with the machine (millions of empty files: no room
taken, so the rule on free space never saw it) gets its scored fail, and the run goes on (confine/shared_disk.py's
`_inodes_full`). Before, the harness could write no file: the run ended with "No space left on device
(.../trials.jsonl)", exit 2, no record, the second trial never run (bwrap, shown on a tmpfs of 20,000 inodes)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentic_eval.confine.host import bwrap_problem
from agentic_eval.confine.shared_disk import SharedDisk
from agentic_eval.testing import FakeEndpoint, ScriptedReply, chat_body, tool_call
from tests.helpers import small_tmpfs

INODES = 20_000


@pytest.fixture
def few_inodes(short_tmp: Path) -> Iterator[Path]:
    """A file system of its own that holds 20,000 files (a tmpfs: root only), removed after the test."""
    with small_tmpfs(short_tmp / "disk", f"size=300m,nr_inodes={INODES}") as disk:
        yield disk


def _fill(folder: Path) -> int:
    made = 0
    try:
        while made < 2 * INODES:
            (folder / f"f{made}").touch()
            made += 1
    except OSError:
        pass
    return made


def test_inodes_the_sandbox_used_up_are_the_models_and_used_up_otherwise_are_not(few_inodes: Path) -> None:
    backend = SharedDisk()
    sandbox, elsewhere = few_inodes / "sandbox", few_inodes / "other"
    sandbox.mkdir(), elsewhere.mkdir()
    backend.trial_start(sandbox)
    assert backend.disk_full(sandbox) == ""
    _fill(sandbox)
    assert "used up the files the disk its sandbox shares with this machine can hold" in backend.disk_full(sandbox)
    shutil.rmtree(sandbox)
    sandbox.mkdir()
    backend.trial_start(sandbox)
    _fill(elsewhere)  # another program used them up: the machine's fault, not the model's
    assert backend.disk_full(sandbox) == ""
    backend.trial_end(sandbox)


def test_running_out_of_inodes_while_grading_is_the_models_when_its_tree_holds_them(few_inodes: Path) -> None:
    """The dodge one step short of `inodes_full`: the model leaves a few thousand more inodes than the "full" line,
    so the agent-phase rule says nothing, and grading's copy of its tree then runs out of them (ENOSPC)."""
    backend = SharedDisk()
    sandbox, elsewhere = few_inodes / "sandbox", few_inodes / "other"
    sandbox.mkdir(), elsewhere.mkdir()
    backend.trial_start(sandbox)
    for n in range(INODES - 6000):
        (sandbox / f"f{n}").touch()
    assert backend.disk_full(sandbox) == ""  # above the line: the agent-phase rule is silent
    assert "left too few files on the disk" in backend.room_taken(sandbox, 0)
    shutil.rmtree(sandbox)
    sandbox.mkdir()
    backend.trial_start(sandbox)
    (sandbox / "one").touch()
    _fill(elsewhere)  # another program used them up while the trial was graded: the machine's fault
    assert backend.room_taken(sandbox, 0) == ""
    backend.trial_end(sandbox)


def test_a_run_whose_model_uses_up_the_inodes_records_a_scored_fail_and_goes_on(few_inodes: Path) -> None:
    if bwrap_problem():
        pytest.skip(bwrap_problem())
    fill = ("python3 -c \"\nimport os\nos.mkdir('many')\nn = 0\ntry:\n    while n < 100000:\n"
            "        open('many/f%d' % n, 'w').close()\n        n += 1\nexcept OSError as e:\n    print(n, e)\n\"")
    replies = [ScriptedReply(body=chat_body(None, tool_calls=[tool_call("bash", {"command": fill})])),
               ScriptedReply(body=chat_body("done"))]
    runs = few_inodes / "runs"
    with FakeEndpoint(replies * 2) as fake:  # two trials: the second starts once the first's sandbox is gone
        proc = subprocess.run(
            [sys.executable, "-m", "agentic_eval.cli", "run", "--base-url", fake.base_url, "--model", fake.model,
             "--tasks", "core", "--task", "fix-failing-test", "--attempts", "2", "--run-dir", str(runs)],
            env={**os.environ, "TMPDIR": str(few_inodes)}, capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    (log,) = runs.glob("*/trials.jsonl")
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(records) == 2
    for record in records:
        assert (record["outcome"], record["fault"]) == ("fail", "model"), record["detail"]
        assert "used up the files the disk its sandbox shares" in record["detail"]
