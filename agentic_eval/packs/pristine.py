"""The pristine store, and git run with no one's config: what a fresh sandbox's commit holds, kept out of reach.

Right after the harness commits a generated tree (packs/sandbox.py, packs/gitwrite.py), and before any agent
runs, `save_pristine` copies the commit's objects into a *pristine store*: a bare git folder beside the
sandbox, outside it, which only the harness and the grader read. What the pristine commit holds (its files
and its ignore rules) is read from there (`read_pristine`, cached per commit; `remember_pristine` when the
harness wrote the commit itself), never from the sandbox's `.git`, which the model owns after the agent. A
`ScratchIndex` is the pristine tree as a throw-away index over a work tree, beside the read-only store: git
comparing the work tree with the pristine commit by its rules only (grading/gitsafe.py decides which of the work
tree's paths git may be given).

Every git process gets `git_env()`: an allow-listed environment with system and global config off, replace
objects off, no prompts, no pager; `run_git` names its git folder explicitly. The harness's own commit must
not take the user's hooks, signing or templates, and a read of a repo the model owned must not take the
model's (grading/gitsafe.py reads that repo through this).

Standard library only: gradelib imports this module too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections import OrderedDict
from collections.abc import Iterable
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


PRISTINE_INDEX = "pristine-index"
"""The pristine commit's index, kept in the store (`save_pristine(with_index=True)`): a scratch index starts
as a copy of it instead of a `git read-tree`."""


def save_pristine(sandbox: Path, store: Path, with_index: bool = False) -> None:
    """Copy the freshly committed sandbox's objects into `store`, a bare git folder outside the sandbox, and
    with `with_index` its index (the caller's word that the index is the pristine commit's, as right after
    `git add --all` and `git commit` of the whole tree).

    Called before any agent runs, so what is copied is the harness's own commit.
    """
    source = sandbox / ".git" / "objects"
    if not (store / "objects").is_dir():  # else written there already, with the sandbox's (packs/gitwrite.py)
        shutil.copytree(source, store / "objects", symlinks=True)
    if with_index:
        shutil.copyfile(sandbox / ".git" / "index", store / PRISTINE_INDEX, follow_symlinks=False)
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


def _translate_ignore(base: str, line: str) -> str | None:
    """A line of the pristine `BASE/.gitignore` as a pattern relative to the root (git's rules: a pattern
    without a slash but a trailing one matches at any depth below its folder; one with a slash is anchored
    there). None for blank lines and comments."""
    text = line.rstrip("\n")
    if not text.strip() or text.startswith("#"):
        return None
    negate = text.startswith("!")
    if negate:
        text = text[1:]
    if base:
        anchored = "/" in text.rstrip("/")
        text = f"{base}{text.lstrip('/')}" if anchored else f"{base}**/{text}"
    return ("!" if negate else "") + text


_PRISTINE_CACHE: OrderedDict[str, tuple[dict[str, tuple[str, str, int]], str]] = OrderedDict()
_PRISTINE_CACHE_SIZE = 64
_pristine_lock = threading.Lock()


def _ignore_rules(gitignores: dict[str, str]) -> str:
    """The exclude file of the pristine ignore rules: the tool caches, then every .gitignore's lines as
    root-relative patterns."""
    patterns = [f"{name}/" for name in sorted(TOOL_CACHES)] + ["*.pyc"]
    for path in sorted(gitignores):
        base = path[: -len(".gitignore")]
        patterns += [t for line in gitignores[path].splitlines() if (t := _translate_ignore(base, line)) is not None]
    return "\n".join(patterns) + "\n"


def _remember(commit: str, value: tuple[dict[str, tuple[str, str, int]], str]) -> None:
    with _pristine_lock:
        _PRISTINE_CACHE[commit] = value
        _PRISTINE_CACHE.move_to_end(commit)
        while len(_PRISTINE_CACHE) > _PRISTINE_CACHE_SIZE:
            _PRISTINE_CACHE.popitem(last=False)


def remember_pristine(commit: str, entries: dict[str, tuple[str, str, int]], gitignores: dict[str, bytes]) -> None:
    """What the harness committed as `commit` ({path: (mode, blob id, size)} and each .gitignore's bytes),
    known when it wrote the commit: `read_pristine` then reads none of it from a store."""
    _remember(commit, (dict(entries), _ignore_rules({p: b.decode("utf-8", "replace") for p, b in gitignores.items()})))


def read_pristine(store: Path, commit: str) -> tuple[dict[str, tuple[str, str, int]], str]:
    """The pristine commit's files, and its ignore rules (every .gitignore of the commit, as root-relative
    patterns, plus the tool caches): read once per process and commit. Keyed by the commit id alone: it names
    its tree, whichever store holds it."""
    with _pristine_lock:
        known = _PRISTINE_CACHE.get(commit)
    if known is not None:
        return known
    entries = pristine_entries(store, commit)
    gitignores = {p: pristine_blob(store, commit, p).decode("utf-8", "replace")
                  for p in entries if p == ".gitignore" or p.endswith("/.gitignore")}
    value = (entries, _ignore_rules(gitignores))
    _remember(commit, value)
    return value


class ScratchIndex:
    """A throw-away index of the pristine commit's tree over the work tree `work_tree`, made in the empty folder
    `tmp` (its objects go there too, beside the read-only store), with the commit's files and ignore rules: git
    looking at the work tree with the pristine rules only, never the work tree's own .gitignore files, excludes
    or index. The index starts as a copy of the store's (`PRISTINE_INDEX`), else as `git read-tree`."""

    def __init__(self, store: Path, commit: str, work_tree: Path, tmp: Path) -> None:
        self.store, self.commit, self.work_tree = store, commit, work_tree
        self.entries, rules = read_pristine(store, commit)
        """{path: (mode, blob id, size)} of the commit's files."""
        self.excludes = tmp / "excludes"
        self.excludes.write_text(rules, encoding="utf-8")
        (tmp / "objects").mkdir()
        self.env = {"GIT_INDEX_FILE": str(tmp / "index"), "GIT_OBJECT_DIRECTORY": str(tmp / "objects"),
                    "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(store / "objects")}
        index = store / PRISTINE_INDEX
        if index.is_file():  # the harness's copy of the pristine index: no `git read-tree` needed
            shutil.copyfile(index, tmp / "index", follow_symlinks=False)
        else:
            self.git(["read-tree", commit])

    def git(self, args: list[str], stdin: bytes | None = None) -> bytes:
        return run_git(args, git_dir=self.store, work_tree=self.work_tree, extra_env=self.env, stdin=stdin)

    def untracked(self) -> list[str]:
        """Files (and nested repositories, as `dir/`) not in the pristine tree and not ignored by its rules."""
        out = self.git(["ls-files", "--others", "-z", f"--exclude-from={self.excludes}"])
        return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]

    def update(self, present: list[str], gone: list[str]) -> None:
        """The work tree's `present` files put into the index as they are now, and `gone` taken out of it. The
        caller vouches that each of `present` is a readable file or symlink: git opens a file it is given."""
        for args, listing in ((["--force-remove"], gone), (["--add", "--remove"], present)):
            if listing:
                data = b"".join(os.fsencode(rel) + b"\0" for rel in listing)
                self.git(["update-index", *args, "-z", "--stdin"], stdin=data)

    def diff(self, options: list[str]) -> bytes:
        """`git diff --cached` of the index against the pristine commit, no renames."""
        return self.git(["diff", "--cached", *options, "--no-renames", self.commit, "--"])
