"""Red-team attempts through what the model's tree holds (probe2): dodges aimed at the harness's copy of the tree
for grading, not at a task's checks.

A model that has read our source knows that grading copies its final tree (grading/sealed.py's work copy) and
that a grader that runs out of time is an unscored grader error. Files that take no room in the sandbox but whose
copy would (sparse files: a size, no data) turned a fail into that: the copy wrote every byte of nothing, 2 GiB a
file at 7 s a GiB here, past the grader's time and onto the machine's disk. A grader must answer with a scored
fail.

The edits are here; their `Attempt`s are constants in redteam.py (`SPARSE_FILES`), registered like the others.
"""

from __future__ import annotations

import os
from pathlib import Path

SPARSE_FILES_COUNT = 40
"""Sparse files made: 40 × (2 GiB - 1), 80 GiB that take no room; copied byte by byte, more than a machine's free
disk and many minutes."""
SPARSE_FILE_BYTES = (2 << 30) - 1
"""Just under the 2 GiB a confined process may write to one file (confine/backend.py's RLIMIT_FSIZE)."""


def sparse_files(sandbox: Path) -> None:
    """A cache folder of sparse files: each a size and no data (ftruncate), as a model's command can make them."""
    folder = sandbox / ".cache" / "blobs"
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(SPARSE_FILES_COUNT):
        fd = os.open(folder / f"blob-{n:02d}.bin", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.ftruncate(fd, SPARSE_FILE_BYTES)
        finally:
            os.close(fd)
