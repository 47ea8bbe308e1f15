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
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

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


def _filled_by_sandbox(free_at_start: int | None, free_now: int, total: int, floor: int,
                       count: Callable[[], int]) -> int | None:
    """The rule of `disk_full` and `_inodes_full`, on bytes or on inodes: the disk is nearly full now (less than
    `floor` free, or 0.5 % of `total`, the larger), and the sandbox holds at least half of what was free when the
    trial began: what it holds (`count()`, counted only then), else None."""
    low = max(floor, total // 200)
    if free_at_start is None or free_at_start < 2 * low or free_now >= low:
        return None
    made = count()
    return made if made >= free_at_start // 2 else None


def _size(n: int) -> str:
    return f"{n / (1 << 30):.1f} GiB" if n >= 1 << 30 else f"{n / (1 << 20):.0f} MiB"


class _Start(NamedTuple):
    """What the sandbox's disk had free when its trial began."""

    bytes: int
    inodes: int | None
    """None: a file system without an inode count (btrfs)."""


class SharedDisk:
    """The local and bwrap backends' `trial_start`, `disk_full`, `room_taken` and `trial_end` (a mixin)."""

    _free_lock = threading.Lock()
    _free_at_start: dict[str, _Start]

    def _marks(self) -> dict[str, _Start]:
        with self._free_lock:
            if "_free_at_start" not in self.__dict__:
                self._free_at_start = {}
            return self._free_at_start

    def trial_start(self, sandbox: Path) -> None:
        try:
            st = os.statvfs(sandbox)
        except OSError:
            return
        self._marks()[os.path.abspath(sandbox)] = _Start(st.f_bavail * st.f_frsize, st.f_favail if st.f_files else None)

    def disk_full(self, sandbox: Path) -> str:
        """Why the model counts as having filled the machine's disk (see the module), or ""."""
        start = self._marks().get(os.path.abspath(sandbox))
        if start is None:
            return ""
        if inodes := _inodes_full(start.inodes, sandbox):
            return inodes
        try:
            usage = shutil.disk_usage(sandbox)
        except OSError:
            return ""
        grown = _filled_by_sandbox(start.bytes, usage.free, usage.total, LOW_FREE,
                                   lambda: tree_bytes(sandbox, time.monotonic() + SIZE_SCAN_S))
        if grown is None:
            return ""
        return (f"the model's commands filled the disk its sandbox shares with this machine ({_size(grown)} in the "
                f"sandbox; {_size(start.bytes)} was free when the trial began): nothing left to grade, the "
                "sandbox was emptied at once")

    def room_taken(self, sandbox: Path, elsewhere: int = 0) -> str:
        """Why a step of recording or grading that ran out of room was the model's doing (see the module): its
        sandbox, with `elsewhere` bytes of the grader's copies of it, takes at least half of what was free when the
        trial began (or its entries half of the free inodes: `_inodes_taken`); or "" (the machine's fault)."""
        start = self._marks().get(os.path.abspath(sandbox))
        if start is None or start.bytes <= 0:
            return ""
        grown = tree_bytes(sandbox, time.monotonic() + SIZE_SCAN_S) + elsewhere
        if grown < start.bytes // 2:
            return _inodes_taken(start.inodes, sandbox)
        return (f"the model's tree left too little room on the disk its sandbox shares with this machine to be "
                f"recorded and graded ({_size(grown)} in the sandbox and the grader's copies of it; "
                f"{_size(start.bytes)} was free when the trial began)")

    def trial_end(self, sandbox: Path, keep: bool = False) -> None:
        self._marks().pop(os.path.abspath(sandbox), None)


# A disk runs out of files too (its inodes): empty files take no room, so the rule on free space above never sees
# a model that makes millions of them, and the harness could then write no file at all (the record, the run's
# trials.jsonl: the whole run ended with "No space left on device"). The same rule, on free inodes.
LOW_INODES = 4096
"""A disk with fewer free inodes than this (or than 0.5 % of them, the larger) counts as full."""


def tree_entries(root: Path, deadline: float) -> int:
    """The entries of a tree (files, folders, links: each an inode or a link to one), counted until `deadline`."""
    total = 0
    for _folder, dirs, others in walk(root):
        total += len(dirs) + len(others)
        if time.monotonic() > deadline:
            break
    return total


def _inodes_full(free_at_start: int | None, sandbox: Path) -> str:
    """Why the model counts as having used up the files the machine's disk can hold (little left, and the sandbox
    holds at least half of the `free_at_start` inodes free when its trial began), or ""."""
    try:
        st = os.statvfs(sandbox)
    except OSError:
        return ""
    made = _filled_by_sandbox(free_at_start, st.f_favail, st.f_files, LOW_INODES,
                              lambda: tree_entries(sandbox, time.monotonic() + SIZE_SCAN_S))
    if made is None:
        return ""
    return (f"the model's commands used up the files the disk its sandbox shares with this machine can hold ({made} "
            f"entries in the sandbox; {free_at_start} more could be made when the trial began): nothing left to "
            "grade, the sandbox was emptied at once")



def _inodes_taken(free_at_start: int | None, sandbox: Path) -> str:
    """`room_taken` on inodes: a step of recording or grading ran out of room (ENOSPC is also what running out of
    inodes says) where the sandbox's entries, with one copy of them for grading, are at least half of the inodes
    free when the trial began (`free_at_start`; empty files: a tree that takes no room, left just above
    `_inodes_full`'s line); or ""."""
    if not free_at_start:
        return ""
    made = tree_entries(sandbox, time.monotonic() + SIZE_SCAN_S)
    if 2 * made < free_at_start // 2:
        return ""
    return (f"the model's tree left too few files on the disk its sandbox shares with this machine to be recorded and "
            f"graded ({made} entries in the sandbox, and as many again in the grader's copy of it; {free_at_start} "
            "more could be made when the trial began)")
