"""A sandbox on the machine's own disk (the local and bwrap backends): when the model's commands fill it, the
trial is the model's scored fail and the run goes on.

A host backend's sandbox has no size cap of its own (docker's has: confine/docker_disk.py), so a model that
writes until the disk is full would otherwise make the harness fail to write its snapshot and record: an
unscored "the machine ran out of room" that `--resume` retries, or the end of the whole run. `SharedDisk` notes
the disk's free space when a trial starts; at the end of the agent's phase `disk_full` says the model filled it
when little is left and the sandbox itself grew by at least half of what was free, and the runner then empties
the sandbox at once (there is nothing left to grade) so that the record can be written. A disk that filled up
for another reason (other programs, the results folder) stays the machine's fault.

A model could leave the disk just above that line, so that `disk_full` says nothing, with a tree the grading
cannot copy (the sealed grader's work copy needs as much room again). So a step of recording or grading that runs
out of room (ENOSPC, EDQUOT) asks `room_taken`, the same test without the "nearly full now": did the sandbox, with
what the model's code wrote in the grader's copies of it, take at least half of what was free when the trial
began? Then it is the model's scored fail (the sandbox emptied before the record is written); else the machine's.
"""

from __future__ import annotations

import errno
import os
import shutil
import threading
import time
from pathlib import Path

from agentic_eval.trees import walk

LOW_FREE = 64 << 20
"""A disk with less free than this (or than 0.5 % of its size, the larger) counts as full."""
SIZE_SCAN_S = 30.0
"""At most this long to add up the sandbox's size (a tree of millions of files: what was counted by then)."""


def tree_bytes(root: Path, deadline: float) -> int:
    """The space a tree's files take on disk (blocks, links not followed), counted until `deadline`."""
    total = 0
    for folder, dirs, others in walk(root):
        for name in (*dirs, *others):
            try:
                total += os.lstat(os.path.join(folder, name)).st_blocks * 512
            except OSError:
                pass
        if time.monotonic() > deadline:
            break
    return total


DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
"""An OSError with one of these ran out of room on a disk."""


def out_of_room(exc: BaseException | None) -> OSError | None:
    """The error of `exc`'s chain (causes and contexts, ten at most) that says a disk ran out of room, or None."""
    for _ in range(10):
        if exc is None:
            return None
        if isinstance(exc, OSError) and exc.errno in DISK_ERRNOS:
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def _size(n: int) -> str:
    return f"{n / (1 << 30):.1f} GiB" if n >= 1 << 30 else f"{n / (1 << 20):.0f} MiB"


class SharedDisk:
    """The local and bwrap backends' `trial_start` and `disk_full` (a mixin)."""

    _free_lock = threading.Lock()
    _free_at_start: dict[str, int]

    def _marks(self) -> dict[str, int]:
        with self._free_lock:
            if "_free_at_start" not in self.__dict__:
                self._free_at_start = {}
            return self._free_at_start

    def trial_start(self, sandbox: Path) -> None:
        try:
            self._marks()[os.path.abspath(sandbox)] = shutil.disk_usage(sandbox).free
        except OSError:
            pass

    def disk_full(self, sandbox: Path) -> str:
        """Why the model counts as having filled the machine's disk (see the module), or ""."""
        free_at_start = self._marks().get(os.path.abspath(sandbox))
        try:
            usage = shutil.disk_usage(sandbox)
        except OSError:
            return ""
        low = max(LOW_FREE, usage.total // 200)
        if free_at_start is None or free_at_start < 2 * low or usage.free >= low:
            return ""
        grown = tree_bytes(sandbox, time.monotonic() + SIZE_SCAN_S)
        if grown < free_at_start // 2:
            return ""
        return (f"the model's commands filled the disk its sandbox shares with this machine ({_size(grown)} in the "
                f"sandbox; {_size(free_at_start)} was free when the trial began): nothing left to grade, the "
                "sandbox was emptied at once")

    def room_taken(self, sandbox: Path, elsewhere: int = 0) -> str:
        """Why a step of recording or grading that ran out of room was the model's doing (see the module): its
        sandbox, with `elsewhere` bytes of the grader's copies of it, takes at least half of what was free when the
        trial began; or "" (the machine's fault)."""
        free_at_start = self._marks().get(os.path.abspath(sandbox))
        if free_at_start is None or free_at_start <= 0:
            return ""
        grown = tree_bytes(sandbox, time.monotonic() + SIZE_SCAN_S) + elsewhere
        if grown < free_at_start // 2:
            return ""
        return (f"the model's tree left too little room on the disk its sandbox shares with this machine to be "
                f"recorded and graded ({_size(grown)} in the sandbox and the grader's copies of it; "
                f"{_size(free_at_start)} was free when the trial began)")

    def trial_end(self, sandbox: Path, keep: bool = False) -> None:
        self._marks().pop(os.path.abspath(sandbox), None)
