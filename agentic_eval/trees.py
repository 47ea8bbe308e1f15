"""Copying and removing a tree the model made, whatever it holds: iterative, linear, never following a link.

The standard library's `shutil.copytree`, `shutil.rmtree` (before Python 3.13) and `os.walk` (before 3.12)
recurse once per folder level: a folder nested a thousand deep raises RecursionError, which a caller would
take for the harness's own fault. These walk with an explicit stack instead, so any depth costs only memory,
and a path the kernel refuses (longer than PATH_MAX) is left out and named, never raised. Nothing is followed
(a symlink is copied as a link) and nothing but a regular file is opened (a FIFO, a socket or a device is
named, never read). A file's holes stay holes (a sparse file of 2 GiB that takes no room costs its copy none).
`deadline` (monotonic) bounds the work, looked at inside a large file too: past it `TreeTimeout` says how far it
got.

Standard library only: the grader's code host (grading/sealed.py) and the docker backend use it.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import time
from collections.abc import Iterator
from pathlib import Path

_READ = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_WRITE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_CHECK_EVERY = 256
"""Entries between two looks at the clock."""


class TreeTimeout(Exception):
    """The tree was not copied before its deadline: what was copied, and how many entries."""

    def __init__(self, entries: int, seconds: float) -> None:
        super().__init__(f"not done after {seconds:.0f}s ({entries} entries copied)")
        self.entries = entries


_CHUNK = 64 << 20
"""Bytes copied between two looks at the clock (a file of 2 GiB is copied in many steps, never in one)."""


def _copy_file(src: str, dst: str, st: os.stat_result, deadline: float | None = None,
               started: float = 0.0, done: int = 0) -> None:
    """Copy a regular file's data, its holes kept as holes: only the extents the file really holds are read and
    written (lseek SEEK_DATA/SEEK_HOLE), so a sparse file the model made (2 GiB of nothing, taking no room) costs
    the copy no room and no time either; TreeTimeout once `deadline` has passed, looked at every _CHUNK bytes."""
    fd = os.open(src, _READ)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{src}: not a regular file")
        mode = stat.S_IMODE(st.st_mode) & ~(stat.S_ISUID | stat.S_ISGID)  # a copy made as root is never setuid
        out = os.open(dst, _WRITE, mode | 0o200)
        try:
            for start, end in _extents(fd, st.st_size):
                os.lseek(out, start, os.SEEK_SET)
                at = start
                while at < end:
                    if deadline is not None and time.monotonic() > deadline:
                        raise TreeTimeout(done, time.monotonic() - started)
                    step = min(end - at, _CHUNK)
                    try:
                        sent = os.sendfile(out, fd, at, step)  # from `at`; written at out's own offset
                    except OSError as exc:
                        if exc.errno not in (errno.EINVAL, errno.ENOSYS):
                            raise
                        sent = os.write(out, os.pread(fd, min(step, 1 << 20), at))
                    if sent <= 0:  # the file shrank meanwhile
                        break
                    at += sent
            os.ftruncate(out, st.st_size)  # a hole at the end, and the size the file had
            os.chmod(out, mode)  # what the umask (or the owner's write bit) changed
            os.utime(out, ns=(st.st_atime_ns, st.st_mtime_ns))
        finally:
            os.close(out)
    finally:
        os.close(fd)


def _extents(fd: int, size: int) -> Iterator[tuple[int, int]]:
    """(start, end) of the parts of an open file that hold data, in order (the whole file where the file system
    cannot tell holes apart)."""
    at = 0
    while at < size:
        try:
            start = os.lseek(fd, at, os.SEEK_DATA)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # only a hole from here on
                return
            yield at, size
            return
        try:
            end = min(os.lseek(fd, start, os.SEEK_HOLE), size)
        except OSError:
            end = size
        if end <= start:
            return
        yield start, end
        at = end


def _why(exc: OSError) -> str:
    return (exc.strerror or str(exc)).lower()


def copy_tree(source: Path, target: Path, skip_top: tuple[str, ...] = (), deadline: float | None = None) -> list[str]:
    """Copy the tree at `source` into `target` (made when missing; what it holds already may be replaced):
    regular files with their mode and times, hard links as hard links (one file linked a thousand times is copied
    once, as it takes room once), symlinks as links, folders with their mode (set once filled).
    Returns what was left out, as `rel` for a FIFO, socket or device and `rel (why)` for an entry the harness
    could not read or write (a path too long, a folder it may not list). `skip_top`: names at the top not copied.
    TreeTimeout once `deadline` (monotonic) has passed."""
    started = time.monotonic()
    skipped: list[str] = []
    folders: list[tuple[str, int]] = []  # (target folder, mode), set when everything below is copied
    linked: dict[tuple[int, int], str] = {}  # a file with hard links: its first copy, which the others link to
    target.mkdir(parents=True, exist_ok=True)
    stack = [""]
    done = 0
    while stack:
        rel_dir = stack.pop()
        src_dir = os.path.join(source, rel_dir) if rel_dir else str(source)
        dst_dir = os.path.join(target, rel_dir) if rel_dir else str(target)
        try:
            with os.scandir(src_dir) as it:
                entries = list(it)
        except OSError as exc:
            skipped.append(f"{short(rel_dir)}/ ({_why(exc)})")
            continue
        for entry in entries:
            if not rel_dir and entry.name in skip_top:
                continue
            done += 1
            if deadline is not None and done % _CHECK_EVERY == 0 and time.monotonic() > deadline:
                raise TreeTimeout(done, time.monotonic() - started)
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            dst = os.path.join(dst_dir, entry.name)
            try:
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode):
                    try:
                        os.mkdir(dst, 0o700)
                    except FileExistsError:
                        if os.path.islink(dst) or not os.path.isdir(dst):
                            remove_tree(Path(dst))
                            os.mkdir(dst, 0o700)
                    folders.append((dst, stat.S_IMODE(st.st_mode)))
                    stack.append(rel)
                elif stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
                    same = linked.get((st.st_dev, st.st_ino)) if st.st_nlink > 1 and stat.S_ISREG(st.st_mode) else None
                    for attempt in (0, 1):  # an entry in the way (a fresh target has none) is replaced
                        try:
                            if stat.S_ISLNK(st.st_mode):
                                os.symlink(os.readlink(entry.path), dst)
                            elif same is not None:  # a hard link of a file copied already: linked, not copied
                                os.link(same, dst, follow_symlinks=False)
                            else:
                                _copy_file(entry.path, dst, st, deadline, started, done)
                                if st.st_nlink > 1:
                                    linked[(st.st_dev, st.st_ino)] = dst
                            break
                        except FileExistsError:
                            if attempt:
                                raise
                            remove_tree(Path(dst))
                else:
                    skipped.append(short(rel))
            except OSError as exc:
                skipped.append(f"{short(rel)} ({_why(exc)})")
    for folder, mode in reversed(folders):
        try:
            # the owner (the harness, or the uid it hands the tree to) keeps access; a folder made as root is never
            # setgid either (files the next user makes in a kept sandbox would take root's group)
            os.chmod(folder, (mode & ~(stat.S_ISUID | stat.S_ISGID)) | 0o700)
        except OSError:
            pass
    return skipped


def walk(top: Path) -> Iterator[tuple[str, list[str], list[str]]]:
    """`os.walk(top)` without recursion (Python 3.11's recurses once per level) and without following links:
    (folder, its sub-folders, its other entries), top down; a folder that cannot be listed is passed over."""
    stack = [str(top)]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:
            continue
        dirs: list[str] = []
        others: list[str] = []
        for entry in entries:
            try:
                (dirs if entry.is_dir(follow_symlinks=False) else others).append(entry.name)
            except OSError:
                others.append(entry.name)
        yield folder, dirs, others
        stack.extend(os.path.join(folder, d) for d in reversed(dirs))


def chown_tree(path: Path, uid: int, gid: int) -> None:
    """chown a tree to uid:gid, its top and every entry below it, never following a link, without recursion (a
    tree of any depth); an entry the kernel refuses (a path longer than it takes: the model's) is left as it is."""
    os.chown(path, uid, gid, follow_symlinks=False)
    if not path.is_dir():
        return
    for dirpath, dirnames, filenames in walk(path):
        for name in (*dirnames, *filenames):
            try:
                os.chown(os.path.join(dirpath, name), uid, gid, follow_symlinks=False)
            except OSError:
                pass


def short(rel: str, keep: int = 160) -> str:
    """A path of the model's for a note: at most `keep` characters (a chain a thousand folders deep is named by
    its start and its depth)."""
    if len(rel) <= keep:
        return rel
    return f"{rel[:keep]}... ({rel.count('/') + 1} levels)"


def remove_tree(path: Path) -> None:
    """Remove `path` (a folder, file or link) and everything under it without following a link, at any depth:
    `shutil.rmtree` first (the common tree), then, for what it left (nested past its recursion, read-only
    folders), an iterative pass that also moves up a folder whose path is too long for the kernel. What cannot
    be removed stays, silently (a leftover, never an error)."""
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            os.unlink(path)
            return
    except OSError:
        return
    try:  # the common tree: the standard library's way, as fast as ever
        shutil.rmtree(path, ignore_errors=True)
    except RecursionError:  # nested deeper than its recursion goes (fds are closed as it unwinds)
        pass
    if not os.path.lexists(path):
        return
    stack: list[tuple[str, bool]] = [(str(path), False)]
    while stack:
        folder, listed = stack.pop()
        if listed:
            try:
                os.rmdir(folder)
            except OSError:
                pass
            continue
        stack.append((folder, True))
        try:
            os.chmod(folder, 0o700)  # a folder the model made read-only still empties (when it is ours)
        except OSError:
            pass
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError as exc:
            if exc.errno == errno.ENAMETOOLONG and (hoisted := _hoist(Path(path), folder)) is not None:
                stack.append((hoisted, False))  # emptied from its new place; its old place then is empty
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append((entry.path, False))
                else:
                    os.unlink(entry.path)
            except OSError:
                pass


def _hoist(root: Path, folder: str) -> str | None:
    """Move `folder` (under `root`, its path too long for the kernel) to the top of `root` under a new name,
    reaching its parent one folder at a time (one descriptor open at once): its new path, or None."""
    parts = os.path.relpath(folder, root).split(os.sep)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for part in parts[:-1]:
            inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = inner
        for n in range(1000):
            name = f".ae-hoisted-{os.getpid()}-{n}"
            if not os.path.lexists(os.path.join(root, name)):
                os.rename(parts[-1], os.path.join(root, name), src_dir_fd=fd)
                return os.path.join(root, name)
    except OSError:
        return None
    finally:
        os.close(fd)
    return None


def make_deep_tree(root: Path, depth: int, name: str = "d", leaf: str = "f.txt") -> None:
    """A chain of `depth` folders named `name` under `root`, with a file `leaf` at its bottom, made through
    folder descriptors (so deeper than PATH_MAX too): how tests and benchmarks build the attack."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            try:
                os.mkdir(name, dir_fd=fd)
            except FileExistsError:
                pass
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = inner
        out = os.open(leaf, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, dir_fd=fd)
        os.write(out, b"deep\n")
        os.close(out)
    finally:
        os.close(fd)
