"""A sparse file the model leaves (a size, no data: no room taken) costs the copy of its tree for grading no room
and no time (agentic_eval/trees.py). Before, the copy wrote every byte of nothing: five files of 2 GiB made
core/fix-failing-test's grader run past its 60 s and the red team's `sparse-files` attempt an unscored grader error
(`validate --task fix-failing-test --redteam sparse-files`, bwrap), and 40 of them would fill the machine's disk."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest

from agentic_eval import trees
from agentic_eval.trees import TreeTimeout, copy_tree
from agentic_eval.validation.redteam import SPARSE_FILES, registered_attempts
from agentic_eval.validation.redteam_tree import SPARSE_FILE_BYTES, SPARSE_FILES_COUNT


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def test_sparse_files_are_copied_as_holes_and_data_as_data(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    SPARSE_FILES.apply(source)  # the red team's attempt itself: 40 files of 2 GiB, no data
    blobs = sorted((source / ".cache" / "blobs").iterdir())
    assert len(blobs) == SPARSE_FILES_COUNT and blobs[0].stat().st_size == SPARSE_FILE_BYTES
    if blobs[0].stat().st_blocks:
        pytest.skip("this file system does not keep holes")
    mixed = source / "mixed.bin"  # data between holes, and at the very end
    with mixed.open("wb") as f:
        f.truncate(8 << 20)
        f.seek(3 << 20)
        f.write(os.urandom(100_000))
        f.seek((8 << 20) - 4)
        f.write(b"tail")
    (source / "plain.txt").write_bytes(b"hello\n" * 1000)
    os.chmod(source / "plain.txt", 0o444)
    target = tmp_path / "dst"
    assert copy_tree(source, target, deadline=time.monotonic() + 600) == []
    for blob in blobs:
        copied = target / ".cache" / "blobs" / blob.name
        assert copied.stat().st_size == SPARSE_FILE_BYTES and copied.stat().st_blocks == 0
    for name in ("mixed.bin", "plain.txt"):
        assert _digest(target / name) == _digest(source / name)
    assert (target / "mixed.bin").stat().st_blocks * 512 < 1 << 20
    assert oct((target / "plain.txt").stat().st_mode & 0o777) == "0o444"


def test_the_deadline_stops_a_large_file_midway(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trees, "_CHUNK", 1 << 20)  # looked at the clock every MiB: a 4 MiB file stands in for 2 GiB
    source = tmp_path / "src"
    source.mkdir()
    (source / "big.bin").write_bytes(os.urandom(4 << 20))
    with pytest.raises(TreeTimeout):  # one file, far fewer entries than the walk's own look at the clock needs
        copy_tree(source, tmp_path / "dst", deadline=time.monotonic() - 1)


def test_the_attempt_is_registered() -> None:
    assert registered_attempts()["sparse-files"] is SPARSE_FILES


def test_hard_links_are_copied_once_and_the_graders_file_does_not_write_through_one(tmp_path: Path) -> None:
    """One file of the model's linked many times takes room once in its sandbox (the disk rule sees little); copied
    link by link, a 2 GiB file linked 1,000 times would have been 2 TB written by the grading copy."""
    from agentic_eval.grading.sealed import _write_beneath

    source = tmp_path / "src"
    (source / "links").mkdir(parents=True)
    (source / "data.bin").write_bytes(os.urandom(1 << 16))
    for n in range(50):
        os.link(source / "data.bin", source / "links" / f"l{n}.bin")
    target = tmp_path / "dst"
    assert copy_tree(source, target) == []
    first = (target / "data.bin").stat()
    assert first.st_nlink == 51 and all((target / "links" / f"l{n}.bin").stat().st_ino == first.st_ino
                                        for n in range(50))
    _write_beneath(target, "links/l7.bin", b"the grader's\n", None)  # placed at one path: the others keep theirs
    assert (target / "links" / "l7.bin").read_bytes() == b"the grader's\n"
    assert (target / "data.bin").read_bytes() == (source / "data.bin").read_bytes()


def test_a_copy_is_never_setuid(tmp_path: Path) -> None:
    """The harness copies as root (grading's work copy, a kept sandbox): a model's file marked setuid must not become
    a setuid-root program on the host."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "tool").write_bytes(b"#!/bin/sh\nid\n")
    os.chmod(source / "tool", 0o6755)
    copy_tree(source, tmp_path / "dst")
    assert (tmp_path / "dst" / "tool").stat().st_mode & 0o7777 == 0o755
