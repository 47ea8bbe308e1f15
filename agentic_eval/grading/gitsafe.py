"""Git on a sandbox the model owned, without trusting anything the model could write.

After the agent, the sandbox's `.git` is the model's: its config can name
hooks, an fsmonitor or filter commands that git would run with the caller's
environment; its history, refs, replace refs and ignore rules can be rewritten
so that a changed file looks pristine or disappears. So the harness and
gradelib never read "what changed" from it:

- right after the pristine commit (before any agent runs) the harness copies
  its objects into a *pristine store* outside the sandbox, which only the
  harness and the grader read (packs/pristine.py);
- `changed_paths` compares the work tree's files (hashed here, byte for byte,
  ignore rules of the model's making ignored) with the pristine commit's tree
  read from that store; only the ignore rules of the *pristine* commit (and a
  few tool caches) are honoured, through git's own matching (`ls-files
  --exclude-from`), never the sandbox's .gitignore files, excludes or index;
- `final_diff` builds diff.patch from the store and a throw-away index
  (`packs.pristine.ScratchIndex`), so ignored and excluded files are in it too;
- `sandbox_git` runs the few checks that are about the model's own repository
  (HEAD's message, a clean tree) against a *view*: a fresh git folder holding
  copies of the sandbox's HEAD and refs, its index's entries (no stat data,
  flags or extensions of the model's: git reads each file), its objects reached read-only,
  and a config of ours, never the sandbox's config or hooks;
- `walk_tree` lists a tree without following a link or opening a file, for the
  snapshot's manifest and to find what git must never be given (FIFOs,
  sockets, devices);
- every git process is `packs.pristine.run_git`: an allow-listed environment
  with system and global config off, replace objects off, no prompts, no pager.

Standard library only: gradelib imports this module too.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path

from agentic_eval.packs.pristine import GIT_TIMEOUT_S, GitError, ScratchIndex, run_git


def _stage(scratch: ScratchIndex, paths: list[str]) -> None:
    """Put the work tree's `paths` (new, changed or gone) into the scratch index. Give only paths that
    `_unshowable` passes: git opens a regular file it is given, and blocks on a FIFO. A path that is gone,
    or now a folder, or reached through a symlinked or replaced folder, leaves the index as deleted."""
    present: list[str] = []
    gone: list[str] = []
    folders: dict[str, bool] = {}
    for rel in paths:  # one pass: linear in the number of paths
        (present if _reachable(scratch.work_tree, rel, folders) else gone).append(rel)
    scratch.update(present, gone)


def _blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _mode(st: os.stat_result) -> str:
    """git's mode for what lstat found; 'other' for anything git does not store as a file (a folder, a FIFO,
    a socket, a device)."""
    if stat.S_ISLNK(st.st_mode):
        return "120000"
    if not stat.S_ISREG(st.st_mode):
        return "other"
    return "100755" if st.st_mode & stat.S_IXUSR else "100644"


_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def open_regular(path: Path | str) -> int:
    """A descriptor for reading `path`, which must be a regular file: opened without following a symlink and
    without blocking (a FIFO swapped in after lstat does not hang the caller), then checked. OSError else."""
    fd = os.open(path, _OPEN_FLAGS)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(f"{path}: not a regular file")
    return fd


def _differs(sandbox: Path, rel: str, mode: str, oid: str, size: int) -> bool:
    """Whether the work tree's `rel` differs from a pristine blob, byte for byte (no filter, attribute or
    line-ending conversion applies) or by mode. A file that is gone, unreadable, reached through a
    symlinked folder, or no longer a regular file or symlink (a FIFO, a socket, a device: never opened) differs."""
    path = sandbox / rel
    try:
        if "/" in rel and (os.path.realpath(path.parent)
                           != os.path.join(os.path.realpath(sandbox), os.path.dirname(rel))):
            return True
        st = path.lstat()
        if _mode(st) != mode:
            return True
        if stat.S_ISLNK(st.st_mode):
            return _blob_id(os.fsencode(os.readlink(path))) != oid
        if size >= 0 and st.st_size != size:
            return True
        h = hashlib.sha1(b"blob %d\0" % st.st_size, usedforsecurity=False)
        with os.fdopen(open_regular(path), "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        return h.hexdigest() != oid
    except OSError:
        return True


def _changed(scratch: ScratchIndex) -> list[str]:
    changed = {rel for rel, (mode, oid, size) in scratch.entries.items()
               if _differs(scratch.work_tree, rel, mode, oid, size)}
    return sorted(changed | set(scratch.untracked()))


def changed_paths(sandbox: Path, store: Path, commit: str) -> list[str]:
    """Paths that differ from the pristine commit: every pristine file whose bytes or mode changed or that
    is gone, and every new file (new nested repositories as `dir/`), whatever the sandbox's history, index
    or ignore rules say. Only the pristine commit's .gitignore rules and tool caches hide a new file."""
    with tempfile.TemporaryDirectory(prefix="ae-scratch-") as tmp:
        return _changed(ScratchIndex(store, commit, sandbox, Path(tmp)))


def tree_files(sandbox: Path, store: Path, commit: str) -> list[str]:
    """The work tree's regular files: the pristine ones still there and every new one the pristine rules do
    not ignore (rules the agent added hide nothing)."""
    with tempfile.TemporaryDirectory(prefix="ae-scratch-") as tmp:
        scratch = ScratchIndex(store, commit, sandbox, Path(tmp))
        found = {*scratch.entries, *scratch.untracked()}
    return sorted(p for p in found if _is_regular(sandbox, p))


def _is_regular(sandbox: Path, rel: str) -> bool:
    """Whether `rel` is a regular file of the work tree (lstat only: nothing is opened, no symlink followed)."""
    try:
        return _reachable(sandbox, rel) and stat.S_ISREG((sandbox / rel).lstat().st_mode)
    except OSError:
        return False


# --------------------------------------------------------------------------- what git must not be given

SPECIAL_KINDS: dict[int, str] = {stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a character device",
                                 stat.S_IFBLK: "a block device"}
"""Files that are not files: opening one can block forever (a FIFO) or never end (a device). Named, never read."""
WALK_LIMIT = 200_000
"""At most this many entries of a work tree are looked at to find its special files."""


def special_kind(st: os.stat_result) -> str | None:
    """'a FIFO', 'a socket', 'a character device', 'a block device', or None for a file, folder or symlink."""
    return SPECIAL_KINDS.get(stat.S_IFMT(st.st_mode))


def _reachable(sandbox: Path, rel: str, folders: dict[str, bool] | None = None) -> bool:
    """Whether `rel` exists in the work tree as itself: every folder on its way a real folder (not a symlink
    or a file standing in for one), and something at its place that is not a folder. `folders`: what is known
    of folders already (filled in here), so that a tree's paths cost one lstat each, not one per level."""
    known = folders if folders is not None else {}
    root = os.fspath(sandbox)
    parts = rel.split("/")
    try:
        folder = ""
        for part in parts[:-1]:
            folder = f"{folder}/{part}" if folder else part
            real = known.get(folder)
            if real is None:
                try:
                    real = known[folder] = stat.S_ISDIR(os.lstat(os.path.join(root, folder)).st_mode)
                except (FileNotFoundError, NotADirectoryError):
                    real = known[folder] = False
            if not real:
                return False
        return not stat.S_ISDIR(os.lstat(os.path.join(root, rel)).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return False


def _unshowable(sandbox: Path, rel: str, folders: dict[str, bool] | None = None) -> str | None:
    """Why `rel` of the work tree must not be handed to git (a FIFO, a socket or a device, which git refuses or
    blocks on; a file or folder the harness cannot read), or None: a readable regular file, a symlink, a folder
    or nothing (then the path is a deletion). Looked at with lstat, and a regular file opened without blocking."""
    path = sandbox / rel
    try:
        if not _reachable(sandbox, rel, folders):
            return None
        st = path.lstat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        return f"the harness cannot read it ({exc.strerror or exc})"
    if kind := special_kind(st):
        return kind
    if stat.S_ISREG(st.st_mode):
        try:
            os.close(open_regular(path))
        except OSError as exc:
            return f"the harness cannot read it ({exc.strerror or exc})"
    return None


def walk_tree(root: Path, limit: int = WALK_LIMIT, skip: Collection[str] = ()
              ) -> Iterator[tuple[str, os.stat_result | OSError]]:
    """Every entry under `root` (files, folders, symlinks, special files; `.git` included), in a stable order,
    with what lstat says of it; a folder that cannot be listed is yielded again with the OSError. Never follows
    a symlink or opens a file. Stops after `limit` entries (the caller learns it from the count). The folders
    named in `skip` (relative paths) are yielded, not walked."""
    stack: list[str] = [""]
    seen = 0
    while stack:
        rel_dir = stack.pop()
        try:
            with os.scandir(root / rel_dir if rel_dir else root) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            if rel_dir:
                yield rel_dir, exc
            continue
        below: list[str] = []
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            seen += 1
            if seen > limit:
                return
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                yield rel, exc
                continue
            yield rel, st
            if stat.S_ISDIR(st.st_mode) and rel not in skip:
                below.append(rel)
        stack.extend(reversed(below))


def _special_notes(sandbox: Path) -> dict[str, str]:
    """{path: note} for every special file and every folder the harness cannot list in the work tree."""
    return special_notes(walk_tree(sandbox, WALK_LIMIT + 1))


def special_notes(walked: Iterable[tuple[str, os.stat_result | OSError]]) -> dict[str, str]:
    """`_special_notes` of a walk already made (`walk_tree(sandbox, WALK_LIMIT + 1)`: the snapshot walks the
    tree once for its manifest and its diff)."""
    notes: dict[str, str] = {}
    count = 0
    for rel, found in walked:
        count += 1
        if count > WALK_LIMIT:
            notes[""] = (f"# the tree has more than {WALK_LIMIT} entries: special files past the first "
                         f"{WALK_LIMIT} are not named")
            break
        if isinstance(found, OSError):
            notes[rel] = f"# not shown, a folder the harness cannot read: {rel}/ ({found.strerror or found})"
        elif kind := special_kind(found):
            notes[rel] = f"# not shown, {kind}: {rel}"
    return notes


# --------------------------------------------------------------------------- diff.patch

DIFF_FILE_LIMIT = 1 << 20
"""Files larger than this are named in diff.patch, not shown."""
DIFF_TOTAL_LIMIT = 16 << 20
"""diff.patch is cut at this size, with a note."""
DIFF_COUNT_LIMIT = 3000
"""At most this many changed files are shown in diff.patch (the pristine files changed or gone first, then new
ones in path order); the rest are counted in a note: a tree of 100,000 new files costs seconds, not minutes."""
DIFF_STAGE_LIMIT = 2 * DIFF_TOTAL_LIMIT
"""And no more files are staged for the patch once their sizes add up to this (the patch is cut at
DIFF_TOTAL_LIMIT anyway)."""


def _showable(scratch: ScratchIndex, special: dict[str, str] | None = None
              ) -> tuple[list[str], dict[str, str]]:
    """The changed paths git can be given (at most DIFF_COUNT_LIMIT of them, and DIFF_STAGE_LIMIT bytes: the
    pristine files changed or gone first, then new ones in path order; the rest counted in a note), and {path:
    note} for those it cannot: nested repositories, special files, files the harness cannot read (each named,
    never opened); new special files found by a walk of the tree, since git does not list them."""
    notes = dict(special) if special is not None else _special_notes(scratch.work_tree)
    changed = _changed(scratch)
    changed.sort(key=lambda rel: (rel not in scratch.entries, rel))
    shown: list[str] = []
    folders: dict[str, bool] = {}
    budget = DIFF_STAGE_LIMIT
    for at, rel in enumerate(changed):
        if len(shown) >= DIFF_COUNT_LIMIT or budget <= 0:
            left = changed[at:]
            notes["\uffff"] = (f"# not shown, {len(left)} more changed paths past the first {at} (e.g. "
                                f"{left[0]}, {left[-1]})")
            break
        if rel.endswith("/") or ".git" in rel.split("/"):
            notes[rel] = f"# not shown, a nested git repository: {rel}"
        elif why := _unshowable(scratch.work_tree, rel, folders):
            notes.setdefault(rel, f"# not shown, {why}: {rel}")
        else:
            shown.append(rel)
            try:
                st = os.lstat(os.path.join(scratch.work_tree, rel))
                budget -= min(st.st_size, DIFF_FILE_LIMIT) if stat.S_ISREG(st.st_mode) else 0
            except OSError:
                pass
    return shown, notes


def _scratch_parent() -> str | None:
    """Where a diff's scratch objects go: a memory file system when there is one with room (a disk on a busy
    machine takes milliseconds per file to write and remove), else the temp dir."""
    try:
        st = os.statvfs("/dev/shm")
        if os.access("/dev/shm", os.W_OK) and st.f_bavail * st.f_frsize >= 4 * DIFF_STAGE_LIMIT:
            return "/dev/shm"
    except OSError:
        pass
    return None


def final_diff(sandbox: Path, store: Path, commit: str, special: dict[str, str] | None = None) -> bytes:
    """A git patch of everything in the work tree that differs from the pristine commit (files the sandbox's
    own rules ignore included). Named in notes at the top, never read: files over DIFF_FILE_LIMIT, nested
    repositories, FIFOs, sockets and devices anywhere in the tree, files and folders the harness cannot read;
    none of them keeps the other changes out of the patch. `special`: `special_notes` of a walk the caller made."""
    with tempfile.TemporaryDirectory(prefix="ae-diff-", dir=_scratch_parent()) as tmp:
        scratch = ScratchIndex(store, commit, sandbox, Path(tmp))
        candidates, by_path = _showable(scratch, special)
        shown: list[str] = []
        for rel in candidates:
            path = sandbox / rel
            try:
                st = path.lstat()
                size = st.st_size if stat.S_ISREG(st.st_mode) else 0
            except OSError:
                size = 0
            if size > DIFF_FILE_LIMIT:
                by_path[rel] = f"# not shown, larger than {DIFF_FILE_LIMIT} bytes: {rel} ({size} bytes)"
            else:
                shown.append(rel)
        patch = b""
        if shown:
            _stage(scratch, shown)
            patch = scratch.diff(["--binary", "--no-ext-diff", "--no-textconv"])
    notes = [by_path[rel] for rel in sorted(by_path)]
    if len(patch) > DIFF_TOTAL_LIMIT:
        notes.append(f"# cut: the patch is {len(patch)} bytes, the first {DIFF_TOTAL_LIMIT} are shown")
        patch = patch[:DIFF_TOTAL_LIMIT]
    header = "".join(note + "\n" for note in notes).encode("utf-8", "surrogateescape") if notes else b""
    return header + patch


def diff_numstat(sandbox: Path, store: Path, commit: str) -> str:
    """`git diff --numstat -z` of the work tree against the pristine commit (new files included; nested
    repositories, special files and files the harness cannot read left out), from the pristine store: the
    size of a change."""
    with tempfile.TemporaryDirectory(prefix="ae-diff-") as tmp:
        scratch = ScratchIndex(store, commit, sandbox, Path(tmp))
        changed = [p for p in _changed(scratch)
                   if not p.endswith("/") and ".git" not in p.split("/") and _unshowable(sandbox, p) is None]
        if not changed:
            return ""
        _stage(scratch, changed)
        return scratch.diff(["--numstat", "-z"]).decode(
            "utf-8", "surrogateescape")


# --------------------------------------------------------------------------- the model's own repository

_VIEW_LIMITS = {"HEAD": 4096, "packed-refs": 16 << 20, "index": 64 << 20}


def _copy_regular(source: Path, target: Path, limit: int) -> None:
    st = source.lstat()
    if not stat.S_ISREG(st.st_mode):
        raise GitError(f"the repository's {source.name} is not a regular file")
    if st.st_size > limit:
        raise GitError(f"the repository's {source.name} is {st.st_size} bytes, over {limit}")
    shutil.copyfile(source, target, follow_symlinks=False)


def _entries_only(view: Path) -> None:
    """The view's copy of the model's index rebuilt from its entries alone (mode, blob, stage, path): no stat
    data, no assume-unchanged or skip-worktree flag, no cache tree or other extension of the model's making.
    With them git takes the index's blob for a file without reading it, so a test the model edited and flagged
    (or gave a forged stat or cache tree) would read as the pristine one in `git diff PRISTINE` or `status`."""
    model = view / "index.model"
    (view / "index").rename(model)
    listed = run_git(["ls-files", "--stage", "-z"], git_dir=view, extra_env={"GIT_INDEX_FILE": str(model)})
    run_git(["update-index", "-z", "--index-info"], git_dir=view, stdin=listed)
    model.unlink()


REFS_DEPTH = 64
"""Folders deep a ref may be (refs/heads/a/b/...): no repository's go near it."""


def _copy_refs(refs: Path, target: Path) -> None:
    """The regular files of the repository's `refs` folder copied to `target` (folders made as met; replace refs,
    links and anything else left out); walked with `walk_tree`, which never recurses or follows a link."""
    copied = 0
    for rel, found in walk_tree(refs, sys.maxsize, skip=("replace",)):
        if isinstance(found, OSError):
            continue  # a folder that cannot be listed, or an entry that cannot be looked at: passed over
        if stat.S_ISDIR(found.st_mode):
            if rel == "replace":  # the replace refs: never in a view
                continue
            if rel.count("/") + 1 > REFS_DEPTH:  # a chain of empty folders 1,200 deep raised RecursionError
                raise GitError(f"the repository's refs are nested more than {REFS_DEPTH} folders deep")
            (target / rel).mkdir(parents=True, exist_ok=True)
            continue
        copied += 1
        if copied > 10_000:
            raise GitError("the repository has more than 10,000 refs")
        if stat.S_ISREG(found.st_mode):
            _copy_regular(refs / rel, target / rel, 4096)


def make_view(sandbox: Path, view: Path) -> Path:
    """A git folder at `view` showing the sandbox repository's HEAD, refs, index and objects (read through
    an alternate), with none of its config, hooks, info/ or replace refs. GitError if there is no repository."""
    dot_git = sandbox / ".git"
    try:
        st = dot_git.lstat()
    except OSError:
        raise GitError("the sandbox has no .git folder: the repository was deleted") from None
    if not stat.S_ISDIR(st.st_mode):
        raise GitError("the sandbox's .git is not a folder")
    objects = dot_git / "objects"
    if not objects.is_dir() or objects.is_symlink():
        raise GitError("the repository has no objects folder")
    view.mkdir(parents=True)
    (view / "objects" / "info").mkdir(parents=True)
    (view / "objects" / "info" / "alternates").write_text(str(objects.resolve()) + "\n", encoding="utf-8")
    (view / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = false\n", encoding="utf-8")
    for name, limit in _VIEW_LIMITS.items():
        if (dot_git / name).exists() or (dot_git / name).is_symlink():
            _copy_regular(dot_git / name, view / name, limit)
    if not (view / "HEAD").exists():
        raise GitError("the repository has no HEAD")
    refs = dot_git / "refs"
    (view / "refs").mkdir()
    if refs.is_dir() and not refs.is_symlink():
        _copy_refs(refs, view / "refs")
    if (view / "index").exists():
        _entries_only(view)
    return view


def sandbox_git(sandbox: Path, args: Iterable[str], timeout: float = GIT_TIMEOUT_S) -> str:
    """Run a read-only git command on the model's own repository, through a view (see `make_view`). A FIFO,
    socket or device anywhere in the tree (its .git included) is a GitError before git runs: git would
    open it, and wait, when it hashes the work tree (`status`) or reads a loose object (anything in .git).
    Commands that read no work tree (`log`, `rev-parse`, `diff-index --cached`) mind only .git's."""
    args = list(args)
    if args and args[0] == "status":
        found_in = walk_tree(sandbox, WALK_LIMIT)
    else:  # only .git's entries matter: the work tree is not walked
        try:
            top = (sandbox / ".git").lstat()
        except OSError:
            top = None
        if top is not None and (kind := special_kind(top)):
            raise GitError(f"the repository holds {kind}: .git")
        found_in = ((f".git/{rel}", st) for rel, st in walk_tree(sandbox / ".git", WALK_LIMIT)) if (
            top is not None and stat.S_ISDIR(top.st_mode)) else iter(())
    for rel, found in found_in:
        if not isinstance(found, OSError) and (kind := special_kind(found)):
            raise GitError(f"the repository holds {kind}: {rel}")
    with tempfile.TemporaryDirectory(prefix="ae-view-") as tmp:
        view = make_view(sandbox, Path(tmp) / "view.git")
        out = run_git(list(args), git_dir=view, work_tree=sandbox, timeout=timeout)
    return out.decode("utf-8", "replace")
