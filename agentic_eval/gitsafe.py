"""Git on a sandbox the model owned, without trusting anything the model could write.

After the agent, the sandbox's `.git` is the model's: its config can name
hooks, an fsmonitor or filter commands that git would run with the caller's
environment; its history, refs, replace refs and ignore rules can be rewritten
so that a changed file looks pristine or disappears. So the harness and
gradelib never read "what changed" from it:

- right after the pristine commit (before any agent runs) `save_pristine`
  copies its objects into a *pristine store* outside the sandbox, which only
  the harness and the grader read;
- `changed_paths` compares the work tree's files (hashed here, byte for byte,
  ignore rules of the model's making ignored) with the pristine commit's tree
  read from that store; only the ignore rules of the *pristine* commit (and a
  few tool caches) are honoured;
- `final_diff` builds diff.patch from the store and a throw-away index, so
  ignored and excluded files are in it too;
- `sandbox_git` runs the few checks that are about the model's own repository
  (HEAD's message, a clean tree) against a *view*: a fresh git folder holding
  copies of the sandbox's HEAD, refs and index, its objects reached read-only,
  and a config of ours, never the sandbox's config or hooks;
- every git process gets `git_env()`: an allow-listed environment with system
  and global config off, replace objects off, no prompts, no pager.

Standard library only: gradelib imports this module too.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

GIT_TIMEOUT_S = 60.0
STORE_ENV = "AGENTIC_EVAL_PRISTINE_GIT"
"""The environment variable that hands graders the pristine store's path."""
COMMIT_ENV = "AGENTIC_EVAL_PRISTINE"
"""The environment variable that hands graders the pristine commit id."""

TOOL_CACHES = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis"})
"""Folders that running the code or its tests creates: never a change, never searched."""

# Config that overrides whatever a repository's own config says (command-line config wins over it).
SAFE_CONFIG: tuple[str, ...] = (
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.fsmonitor=false",
    "-c", "core.untrackedCache=false",
    "-c", "core.excludesFile=/dev/null",
    "-c", "core.attributesFile=/dev/null",
    "-c", "core.autocrlf=false",
    "-c", "core.safecrlf=false",
    "-c", "core.quotePath=false",
    "-c", "core.pager=cat",
    "-c", "diff.external=",
    "-c", "safe.directory=*",
    "-c", "protocol.allow=never",
    "-c", "advice.detachedHead=false",
)

_ENV_ALLOWED = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "SYSTEMROOT")


class GitError(Exception):
    """A git command on a sandbox failed (a broken, missing or tampered repository)."""


def git_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """An allow-listed environment for git: nothing of the caller's secrets, no user or system config."""
    env = {k: os.environ[k] for k in _ENV_ALLOWED if k in os.environ}
    env.update(
        HOME=os.devnull,  # no ~/.gitconfig, no ~/.config/git
        XDG_CONFIG_HOME=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_ATTR_NOSYSTEM="1",
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        GIT_PAGER="cat",
        GIT_ASKPASS="",
        GIT_EDITOR=":",
        LC_ALL="C",
    )
    env.update(extra or {})
    return env


def run_git(args: Iterable[str], *, git_dir: Path, work_tree: Path | None = None,
            extra_env: dict[str, str] | None = None, stdin: bytes | None = None,
            timeout: float = GIT_TIMEOUT_S) -> bytes:
    """Run git with an explicit git folder (never one found from the working directory); stdout, or GitError."""
    env = {"GIT_DIR": str(git_dir), **(extra_env or {})}
    if work_tree is not None:
        env["GIT_WORK_TREE"] = str(work_tree)
    argv = ["git", *SAFE_CONFIG, *args]
    try:
        proc = subprocess.run(argv, cwd=work_tree or git_dir, env=git_env(env), input=stdin, capture_output=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise GitError(f"git {' '.join(args)}: timed out after {timeout:g}s") from None
    except OSError as exc:
        raise GitError(f"git {' '.join(args)}: {exc}") from None
    if proc.returncode != 0:
        why = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
        raise GitError(f"git {' '.join(args)}: {why[0][:300]}")
    return proc.stdout


# --------------------------------------------------------------------------- the pristine store


def save_pristine(sandbox: Path, store: Path) -> None:
    """Copy the freshly committed sandbox's objects into `store`, a bare git folder outside the sandbox.

    Called before any agent runs, so what is copied is the harness's own commit.
    """
    source = sandbox / ".git" / "objects"
    shutil.copytree(source, store / "objects", symlinks=True)
    (store / "refs" / "heads").mkdir(parents=True)
    (store / "refs" / "tags").mkdir()
    (store / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    (store / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = true\n", encoding="utf-8")


def pristine_entries(store: Path, commit: str) -> dict[str, tuple[str, str, int]]:
    """{path: (mode, blob id, size)} of every file of the pristine commit."""
    out = run_git(["ls-tree", "-r", "-z", "-l", "--full-tree", commit], git_dir=store)
    entries: dict[str, tuple[str, str, int]] = {}
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, kind, oid, size = meta.split()
        if kind != b"blob":
            continue
        entries[path.decode("utf-8", "surrogateescape")] = (
            mode.decode(), oid.decode(), int(size) if size.isdigit() else -1)
    return entries


def pristine_blob(store: Path, commit: str, path: str) -> bytes:
    """The bytes of `path` in the pristine commit (GitError if it has no such file)."""
    return run_git(["cat-file", "blob", f"{commit}:{path}"], git_dir=store)


class PristineIgnores:
    """The pristine commit's .gitignore rules (and the tool caches): what the task's author declared
    as not part of the project. Rules the model adds or edits later are not read."""

    def __init__(self, store: Path, commit: str, entries: dict[str, tuple[str, str, int]]) -> None:
        import pathspec

        self._specs: list[tuple[str, pathspec.GitIgnoreSpec]] = []
        for path in sorted(p for p in entries if p == ".gitignore" or p.endswith("/.gitignore")):
            text = pristine_blob(store, commit, path).decode("utf-8", "replace")
            base = path[: -len(".gitignore")]
            self._specs.append((base, pathspec.GitIgnoreSpec.from_lines(text.splitlines())))

    def ignored(self, rel: str, is_dir: bool = False) -> bool:
        parts = rel.split("/")
        if any(p in TOOL_CACHES for p in parts) or rel.endswith(".pyc"):
            return True
        for base, spec in self._specs:
            if base and not rel.startswith(base):
                continue
            sub = rel[len(base):] + ("/" if is_dir else "")
            if spec.match_file(sub):
                return True
        return False


def _blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _mode(st: os.stat_result) -> str:
    if stat.S_ISLNK(st.st_mode):
        return "120000"
    return "100755" if st.st_mode & stat.S_IXUSR else "100644"


def walk_files(sandbox: Path, ignores: PristineIgnores | None = None) -> Iterator[tuple[str, Path, os.stat_result]]:
    """(repo-relative path, path, lstat) of every file and symlink in the work tree, the top .git folder and
    ignored folders left out. Symlinks are never followed."""
    stack = [sandbox]
    while stack:
        folder = stack.pop()
        try:
            children = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in children:
            path = Path(entry.path)
            rel = path.relative_to(sandbox).as_posix()
            if folder == sandbox and entry.name == ".git":
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            is_dir = stat.S_ISDIR(st.st_mode)
            if not (is_dir or stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
                continue  # fifos, sockets, devices: nothing a repository holds
            if ignores is not None and ignores.ignored(rel, is_dir=is_dir):
                continue
            if is_dir:
                stack.append(path)
            else:
                yield rel, path, st


def _work_blob(path: Path, st: os.stat_result) -> str:
    if stat.S_ISLNK(st.st_mode):
        return _blob_id(os.fsencode(os.readlink(path)))
    h = hashlib.sha1(b"blob %d\0" % st.st_size, usedforsecurity=False)
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@functools.lru_cache(maxsize=16)
def _pristine(store: Path, commit: str) -> tuple[dict[str, tuple[str, str, int]], PristineIgnores]:
    """The pristine commit's files and ignore rules: read once per process (the store never changes)."""
    entries = pristine_entries(store, commit)
    return entries, PristineIgnores(store, commit, entries)


def changed_paths(sandbox: Path, store: Path, commit: str) -> list[str]:
    """Paths that differ from the pristine commit, byte for byte and by mode: modified, deleted, added
    (ignored by the model's own rules or not). Only the pristine .gitignore rules and tool caches count."""
    entries, ignores = _pristine(store, commit)
    changed: set[str] = set()
    seen: set[str] = set()
    for rel, path, st in walk_files(sandbox, ignores):
        seen.add(rel)
        before = entries.get(rel)
        if before is None:
            changed.add(rel)
            continue
        mode, oid, size = before
        if mode != _mode(st) or (not stat.S_ISLNK(st.st_mode) and size >= 0 and size != st.st_size):
            changed.add(rel)
            continue
        try:
            if _work_blob(path, st) != oid:
                changed.add(rel)
        except OSError:
            changed.add(rel)
    changed.update(p for p in entries if p not in seen and not ignores.ignored(p))
    return sorted(changed)


def tree_files(sandbox: Path, store: Path, commit: str) -> list[str]:
    """Every file of the work tree (not symlinks), tracked or not, except what the pristine rules ignore."""
    _, ignores = _pristine(store, commit)
    return sorted(rel for rel, _, st in walk_files(sandbox, ignores) if stat.S_ISREG(st.st_mode))


# --------------------------------------------------------------------------- diff.patch

DIFF_FILE_LIMIT = 1 << 20
"""Files larger than this are named in diff.patch, not shown."""
DIFF_TOTAL_LIMIT = 16 << 20
"""diff.patch is cut at this size, with a note."""


def final_diff(sandbox: Path, store: Path, commit: str) -> bytes:
    """A git patch of everything the work tree holds that differs from the pristine commit (ignored and
    excluded files included; files over DIFF_FILE_LIMIT listed in a note instead of shown)."""
    changed = changed_paths(sandbox, store, commit)
    big: list[str] = []
    shown: list[str] = []
    nested: list[str] = []
    for rel in changed:
        if ".git" in rel.split("/"):
            nested.append(rel)  # git refuses such paths in an index: named, not shown
            continue
        path = sandbox / rel
        try:
            st = path.lstat()
        except OSError:
            shown.append(rel)  # deleted
            continue
        (big if stat.S_ISREG(st.st_mode) and st.st_size > DIFF_FILE_LIMIT else shown).append(rel)
    notes = [f"# not shown, larger than {DIFF_FILE_LIMIT} bytes: {rel} ({(sandbox / rel).stat().st_size} bytes)"
             for rel in big]
    notes += [f"# not shown, inside a nested .git folder: {rel}" for rel in nested]
    patch = b""
    if shown:
        with tempfile.TemporaryDirectory(prefix="ae-diff-") as tmp:
            extra = {
                "GIT_INDEX_FILE": str(Path(tmp) / "index"),
                "GIT_OBJECT_DIRECTORY": str(Path(tmp) / "objects"),
                "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(store / "objects"),
            }
            (Path(tmp) / "objects").mkdir()
            run_git(["read-tree", commit], git_dir=store, work_tree=sandbox, extra_env=extra)
            listing = b"".join(os.fsencode(rel) + b"\0" for rel in shown)
            run_git(["update-index", "--add", "--remove", "-z", "--stdin"], git_dir=store, work_tree=sandbox,
                    extra_env=extra, stdin=listing)
            patch = run_git(["diff", "--cached", "--binary", "--no-ext-diff", "--no-textconv", "--no-renames",
                             commit, "--"], git_dir=store, work_tree=sandbox, extra_env=extra)
    if len(patch) > DIFF_TOTAL_LIMIT:
        notes.append(f"# cut: the patch is {len(patch)} bytes, the first {DIFF_TOTAL_LIMIT} are shown")
        patch = patch[:DIFF_TOTAL_LIMIT]
    header = ("\n".join(notes) + "\n").encode() if notes else b""
    return header + patch


# --------------------------------------------------------------------------- the model's own repository

_VIEW_LIMITS = {"HEAD": 4096, "packed-refs": 16 << 20, "index": 64 << 20}


def _copy_regular(source: Path, target: Path, limit: int) -> None:
    st = source.lstat()
    if not stat.S_ISREG(st.st_mode):
        raise GitError(f"the repository's {source.name} is not a regular file")
    if st.st_size > limit:
        raise GitError(f"the repository's {source.name} is {st.st_size} bytes, over {limit}")
    shutil.copyfile(source, target, follow_symlinks=False)


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
        copied = 0
        for folder, dirs, files in os.walk(refs):
            rel = Path(folder).relative_to(refs)
            if rel.parts[:1] == ("replace",):
                dirs[:] = []
                continue
            dirs[:] = [d for d in dirs if not (Path(folder) / d).is_symlink()]
            (view / "refs" / rel).mkdir(parents=True, exist_ok=True)
            for name in files:
                copied += 1
                if copied > 10_000:
                    raise GitError("the repository has more than 10,000 refs")
                source = Path(folder) / name
                if source.is_symlink() or not source.is_file():
                    continue
                _copy_regular(source, view / "refs" / rel / name, 4096)
    return view


def sandbox_git(sandbox: Path, args: Iterable[str], timeout: float = GIT_TIMEOUT_S) -> str:
    """Run a read-only git command on the model's own repository, through a view (see `make_view`)."""
    with tempfile.TemporaryDirectory(prefix="ae-view-") as tmp:
        view = make_view(sandbox, Path(tmp) / "view.git")
        out = run_git(list(args), git_dir=view, work_tree=sandbox, timeout=timeout)
    return out.decode("utf-8", "replace")
