"""The agent's final tree, recorded before anything else runs on it: `diff.patch` and `tree.json`.

The runner takes the snapshot once the agent's phase has ended (every process it left is gone) and before
a grader, a reference fix or any other code touches the sandbox, so nothing run later (the model's own code,
run by the grader) can change or erase what the record says the agent left:

- `diff.patch`: everything that differs from the pristine commit (`gitsafe.final_diff`: computed from the
  harness's pristine store, never the sandbox's git; special files and unreadable paths named in notes);
- `tree.json`: a manifest of the whole tree, `.git` included: per entry its path, type and permission bits;
  a regular file's size and sha256; a symlink's target (never followed); a FIFO, socket or device named and
  never opened; a folder that cannot be listed marked so. `.git/objects` is summed up (its files are named
  by their own hashes). Bounded: at most `gitsafe.WALK_LIMIT` entries and `HASH_TOTAL_LIMIT` bytes hashed.

Standard library only.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agentic_eval.grading import gitsafe

DIFF_FILE = "diff.patch"
MANIFEST_FILE = "tree.json"
MANIFEST_VERSION = 1
HASH_FILE_LIMIT = 256 << 20
"""A regular file larger than this is listed with its size, not hashed."""
HASH_TOTAL_LIMIT = 2 << 30
"""At most this many bytes are hashed for one tree; files past it are listed with their size only."""
_KINDS = {stat.S_IFIFO: "fifo", stat.S_IFSOCK: "socket", stat.S_IFCHR: "char_device", stat.S_IFBLK: "block_device"}
_SUMMED = ".git/objects"


def _sha256(path: str | Path, size: int) -> str:
    fd = gitsafe.open_regular(path)  # no symlink followed, no FIFO waited on
    try:
        if size <= 1 << 20:  # most files: one read, no buffered reader made
            data = os.read(fd, size + 1)
            h = hashlib.sha256(data)
            if len(data) > size:  # it grew since lstat: read on to its end
                while block := os.read(fd, 1 << 20):
                    h.update(block)
            return h.hexdigest()
        h = hashlib.sha256()
        while block := os.read(fd, 1 << 20):
            h.update(block)
        return h.hexdigest()
    finally:
        os.close(fd)


def _entry(root: Path, rel: str, st: os.stat_result, budget: list[int]) -> dict[str, Any]:
    fmt = stat.S_IFMT(st.st_mode)
    entry: dict[str, Any] = {"path": rel, "mode": f"{stat.S_IMODE(st.st_mode):04o}"}
    if fmt == stat.S_IFDIR:
        entry["type"] = "dir"
    elif fmt == stat.S_IFLNK:
        entry["type"] = "symlink"
        try:
            entry["target"] = os.fsdecode(os.readlink(root / rel))
        except OSError as exc:
            entry["note"] = f"cannot read the link: {exc.strerror or exc}"
    elif fmt == stat.S_IFREG:
        entry.update(type="file", size=st.st_size)
        if st.st_size > HASH_FILE_LIMIT:
            entry["note"] = f"not hashed: larger than {HASH_FILE_LIMIT} bytes"
        elif st.st_size > budget[0]:
            entry["note"] = f"not hashed: the tree's {HASH_TOTAL_LIMIT} bytes to hash are spent"
        else:
            budget[0] -= st.st_size
            try:
                entry["sha256"] = _sha256(f"{root}/{rel}", st.st_size)
            except OSError as exc:
                entry["note"] = f"the harness cannot read it: {exc.strerror or exc}"
    else:
        entry.update(type=_KINDS.get(fmt, "other"), note="not a file: never opened")
    return entry


def tree_manifest(root: Path, walked: Iterable[tuple[str, os.stat_result | OSError]] | None = None) -> dict[str, Any]:
    """The manifest of the tree at `root` (see the module's docstring); never follows a symlink, never opens
    anything but regular files, never raises for what it finds. `walked`: `gitsafe.walk_tree(root,
    gitsafe.WALK_LIMIT + 1)` made already."""
    entries: list[dict[str, Any]] = []
    notes: list[str] = []
    if root.is_symlink() or not root.is_dir():
        return {"format_version": MANIFEST_VERSION, "entries": entries, "notes": [f"no tree: {root} is not a folder"]}
    budget = [HASH_TOTAL_LIMIT]
    summed = {"files": 0, "bytes": 0}
    count = 0
    for rel, found in walked if walked is not None else gitsafe.walk_tree(root, gitsafe.WALK_LIMIT + 1):
        count += 1
        if count > gitsafe.WALK_LIMIT:
            notes.append(f"the tree has more than {gitsafe.WALK_LIMIT} entries: only the first are listed")
            break
        if rel.startswith(_SUMMED + "/"):
            if not isinstance(found, OSError) and stat.S_ISREG(found.st_mode):
                summed["files"] += 1
                summed["bytes"] += found.st_size
            continue
        if isinstance(found, OSError):
            entries.append({"path": rel, "type": "unreadable", "note": f"cannot list it: {found.strerror or found}"})
            continue
        entries.append(_entry(root, rel, found, budget))
        if rel == _SUMMED:
            entries[-1]["summed"] = summed  # filled in as the walk goes on
    return {"format_version": MANIFEST_VERSION, "entries": entries, "notes": notes}


_LINE = json.JSONEncoder(ensure_ascii=True, separators=(",", ":")).encode
"""One encoder for every line (json.dumps with options makes a new one per call)."""


def write_manifest(root: Path, dest: Path, walked: Iterable[tuple[str, os.stat_result | OSError]] | None = None
                   ) -> None:
    """`tree.json` at `dest`: one entry per line, so that it reads and diffs line by line."""
    manifest = tree_manifest(root, walked)
    head = json.dumps({k: v for k, v in manifest.items() if k != "entries"}, ensure_ascii=True)[:-1]
    lines = [_LINE(e) for e in manifest["entries"]]
    dest.write_text(head + ',"entries":[\n' + ",\n".join(lines) + "\n]}\n", encoding="ascii")


def write_diff(sandbox: Path, store: Path | None, commit: str, dest: Path, special: dict[str, str] | None = None
               ) -> None:
    """diff.patch at `dest`, or one line saying why there is none (no pristine store, no tree)."""
    try:
        if store is None:
            raise gitsafe.GitError("no pristine store")
        dest.write_bytes(gitsafe.final_diff(sandbox, store, commit, special))
    except (OSError, gitsafe.GitError) as exc:
        dest.write_text(f"could not compute the diff: {exc}\n", encoding="utf-8")


def take_snapshot(sandbox: Path, store: Path | None, commit: str, folder: Path) -> dict[str, Path]:
    """Write diff.patch and tree.json of the tree `sandbox` into `folder`; {'diff': path, 'tree': path}."""
    import threading

    diff, tree = folder / DIFF_FILE, folder / MANIFEST_FILE
    # One walk of the tree for both (a tree of 120,000 files costs seconds of lstat per walk); then side by
    # side: the diff waits on git most of its time, the manifest on reading files.
    walked = list(gitsafe.walk_tree(sandbox, gitsafe.WALK_LIMIT + 1)) if sandbox.is_dir() else []
    failed: list[OSError] = []

    def diff_beside() -> None:
        try:
            write_diff(sandbox, store, commit, diff, gitsafe.special_notes(walked))
        except OSError as exc:  # not even its one line could be written (a full disk): the caller's to rule
            failed.append(exc)

    beside = threading.Thread(target=diff_beside, name="snapshot-diff", daemon=True)
    beside.start()
    try:
        write_manifest(sandbox, tree, walked)
    finally:
        beside.join()
    if failed:
        raise failed[0]
    return {"diff": diff, "tree": tree}
