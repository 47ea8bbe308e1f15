"""Sandboxes: deterministic git repos built by a generator from a seed.

`materialize_sandbox(task, seed, dest)` runs the task's generator into an
empty folder, makes it a git repository and commits everything as the
pristine state with a fixed author, committer and date, so the same seed gives
the same tree and the same commit id.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import Any

from agentic_eval.errors import SandboxError
from agentic_eval.packs import pristine
from agentic_eval.packs.gitwrite import Pristine, write_pristine
from agentic_eval.packs.task import Task
from agentic_eval.plugins import GENERATORS_GROUP

GENERATOR_ENTRY_POINT_GROUP = GENERATORS_GROUP  # the group is named in agentic_eval.plugins (its old name too)
PRISTINE_MESSAGE = "Initial commit"
PRISTINE_BRANCH = "main"
# Fixed identity and date: the pristine commit id depends only on the tree.
PRISTINE_AUTHOR = ("Sandbox Author", "author@sandbox.invalid")
PRISTINE_DATE = "2024-01-02T03:04:05+0000"
# Identity for commits made inside the sandbox (by an agent or a fix).
AGENT_IDENTITY = ("Coding Agent", "agent@sandbox.invalid")

HIDDEN_PATHS = "hidden_paths"
"""A generator's variable: absolute paths of this machine that every confined command of the trial sees empty."""

Generator = Callable[[Path, int, dict[str, Any]], dict[str, Any]]

_module_cache: dict[Path, ModuleType] = {}
_module_lock = threading.Lock()


@dataclass(frozen=True)
class Sandbox:
    """A materialised sandbox: the repo folder, the seed's variables and the pristine commit."""

    path: Path
    seed: int
    variables: dict[str, Any]
    """The generator's variables for this seed, plus `seed`."""
    pristine_commit: str
    pristine_store: Path | None = None
    """The harness's copy of the pristine objects, outside the sandbox: what graders compare against."""

    @property
    def hidden(self) -> tuple[Path, ...]:
        """Paths of this machine the generator asks to hide from every confined command of the trial (its
        `hidden_paths` variable: absolute paths, e.g. copies of a realpy project that would give the fix away)."""
        paths = self.variables.get(HIDDEN_PATHS)
        if not isinstance(paths, list):
            return ()
        return tuple(Path(p) for p in paths if isinstance(p, str) and os.path.isabs(p))


def _load_module(path: Path) -> ModuleType:
    path = path.resolve()
    with _module_lock:
        module = _module_cache.get(path)
        if module is not None:
            return module
        spec = importlib.util.spec_from_file_location(f"agentic_eval_sandbox_{path.stem}_{len(_module_cache)}", path)
        if spec is None or spec.loader is None:
            raise SandboxError(f"{path}: cannot be imported as a sandbox generator")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses and pickling look their module up there
        try:
            spec.loader.exec_module(module)
        except Exception as exc:  # a broken generator file is the pack author's to fix
            sys.modules.pop(spec.name, None)
            raise SandboxError(f"{path}: generator failed to import: {type(exc).__name__}: {exc}") from exc
        _module_cache[path] = module
        return module


def find_generator(name: str, pack_dir: Path | None = None) -> Generator:
    """Find generator `name`: the pack's `sandboxes/NAME.py`, a built-in, or an entry point."""
    from agentic_eval.packs.builtin import sandboxes_dir

    searched: list[str] = []
    for folder in ([pack_dir / "sandboxes"] if pack_dir else []) + [sandboxes_dir()]:
        candidate = folder / f"{name}.py"
        searched.append(str(folder))
        if candidate.is_file():
            module = _load_module(candidate)
            generate = getattr(module, "generate", None)
            if not callable(generate):
                raise SandboxError(f"{candidate}: has no generate(root, seed, params) function")
            return generate  # type: ignore[no-any-return]
    from agentic_eval.plugins import sandbox_generator

    registered = sandbox_generator(name)
    if registered is not None:
        return registered
    raise SandboxError(
        f"unknown sandbox generator {name!r} (looked in {', '.join(searched)} and the "
        f"'{GENERATOR_ENTRY_POINT_GROUP}' entry points)"
    )


_OWN_CONFIG = (
    "[core]\n\tautocrlf = false\n"
    f"[user]\n\tname = {AGENT_IDENTITY[0]}\n\temail = {AGENT_IDENTITY[1]}\n"
    "[commit]\n\tgpgsign = false\n"
    # No `git maintenance run --auto` (a process) after each commit made in the sandbox: nothing to pack here.
    "[maintenance]\n\tauto = false\n[gc]\n\tauto = 0\n"
)
"""What the harness sets in the sandbox repository's config: the agent's identity, no signing, no maintenance."""
_CONFIG = ("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n"
           + _OWN_CONFIG)
"""The sandbox repository's .git/config when the harness makes the repository: git init's, then `_OWN_CONFIG`."""


def _git_commit(root: Path) -> str:
    """The pristine commit through git itself (for a tree `gitwrite` leaves to git): init, add, commit."""
    name, email = PRISTINE_AUTHOR
    env = {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_AUTHOR_DATE": PRISTINE_DATE,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
        "GIT_COMMITTER_DATE": PRISTINE_DATE,
    }
    git_dir = root / ".git"
    try:  # run_git's environment: the user's hooks, signing, templates or config must not change the commit
        own_history = git_dir.is_dir()  # the generator's own repository (docs/task-format.md): its config kept
        pristine.run_git(["init", "--quiet", f"--initial-branch={PRISTINE_BRANCH}"], git_dir=git_dir, work_tree=root)
        if own_history:  # later values win: ours come last
            with open(git_dir / "config", "a", encoding="utf-8") as fh:
                fh.write("\n" + _OWN_CONFIG)
        else:
            (git_dir / "config").write_text(_CONFIG, encoding="utf-8")
        pristine.run_git(["add", "--all", "--force"], git_dir=git_dir, work_tree=root, extra_env=env)
        pristine.run_git(["commit", "--quiet", "--no-verify", "--allow-empty", "--allow-empty-message", "-m",
                         PRISTINE_MESSAGE], git_dir=git_dir, work_tree=root, extra_env=env)
        return pristine.run_git(["rev-parse", "--verify", "HEAD^{commit}"], git_dir=git_dir).decode().strip()
    except pristine.GitError as exc:
        raise SandboxError(f"{root}: the pristine commit failed: {exc}") from None


def _pristine_commit(root: Path, store: Path | None = None, allow_empty: bool = False) -> tuple[str, Pristine | None]:
    """Make `root` a git repo with its whole tree committed deterministically: (commit id, what was committed,
    when written here without git; None when git made it). `store`: a pristine store to be, whose objects
    folder the written objects go to as well. An empty tree is an error unless `allow_empty` (an environment
    task's working directory may start empty)."""
    if not allow_empty and not any(p.name != ".git" for p in root.iterdir()):
        raise SandboxError(f"{root}: the generator wrote no files")
    name, email = PRISTINE_AUTHOR
    when = datetime.strptime(PRISTINE_DATE, "%Y-%m-%dT%H:%M:%S%z")
    found = write_pristine(root, branch=PRISTINE_BRANCH, ident=f"{name} <{email}>",
                           when=f"{int(when.timestamp())} {when.strftime('%z')}", message=PRISTINE_MESSAGE,
                           config=_CONFIG, mirror=store / "objects" if store is not None else None)
    if found is not None:
        return found.commit, found
    return _git_commit(root), None


def commit_pristine(root: Path, allow_empty: bool = False) -> str:
    """Make `root` a git repo and commit its whole tree deterministically; returns the commit id."""
    return _pristine_commit(root, allow_empty=allow_empty)[0]


def generate_tree(task: Task, seed: int, dest: Path) -> dict[str, Any]:
    """Run the task's generator into the empty folder `dest`; returns its variables plus `seed`."""
    dest.mkdir(parents=True, exist_ok=True)
    if any(dest.iterdir()):
        raise SandboxError(f"{dest}: sandbox folder is not empty")
    spec = task.meta.sandbox
    if spec is None:
        raise SandboxError(f"task {task.id}: it has no [sandbox] generator (its environment is built by the docker "
                           "backend: --sandbox docker)")
    generate = find_generator(spec.generator, task.pack_dir)
    try:
        variables = generate(dest, seed, dict(spec.params))
    except Exception as exc:
        raise SandboxError(
            f"task {task.id}: generator {spec.generator!r} failed for seed {seed}: {type(exc).__name__}: {exc}"
        ) from exc
    variables = dict(variables or {})
    variables.setdefault("seed", seed)
    try:
        json.dumps(variables)
    except TypeError as exc:
        raise SandboxError(f"generator {spec.generator!r} returned variables that are not JSON: {exc}") from exc
    return variables


def pristine_store_for(dest: Path) -> Path:
    """Where the pristine store of the sandbox at `dest` lives: beside it, never inside it."""
    return dest.parent / f"{dest.name}.pristine.git"


def materialize_sandbox(task: Task, seed: int, dest: Path) -> Sandbox:
    """Build the task's sandbox for `seed` in the empty folder `dest`, committed as pristine, and keep a
    copy of the pristine objects beside it (`pristine_store_for(dest)`) for grading."""
    variables = generate_tree(task, seed, dest)
    return _committed(dest, seed, variables)


def _committed(dest: Path, seed: int, variables: dict[str, Any], allow_empty: bool = False) -> Sandbox:
    """The tree at `dest` committed as pristine, with the pristine objects kept beside it for grading."""
    store = pristine_store_for(dest)
    if store.exists():
        raise SandboxError(f"{store}: a pristine store is already there")
    commit, found = _pristine_commit(dest, store, allow_empty=allow_empty)
    pristine.save_pristine(dest, store, with_index=True)
    if found is not None:  # what `git ls-tree` of the store would say, known already
        pristine.remember_pristine(commit, found.entries, found.gitignores)
    return Sandbox(path=dest.resolve(), seed=seed, variables=variables, pristine_commit=commit,
                   pristine_store=store.resolve())


def materialize_environment(task: Task, seed: int, dest: Path) -> Sandbox:
    """An environment task's sandbox at `dest`, which the backend filled with its working directory's files copied
    out of its image (the caller's `backend.environment_start(task.environment_task(), dest)` first; its services
    started): a generator's tree laid over them when the task has both, committed as pristine, and the pristine
    objects kept beside it as for a generated sandbox."""
    import shutil
    import tempfile

    variables: dict[str, Any] = {"seed": seed}
    if task.meta.sandbox is not None:
        with tempfile.TemporaryDirectory(prefix="ae-env-gen-") as tmp:
            variables = generate_tree(task, seed, Path(tmp) / "tree")
            shutil.copytree(Path(tmp) / "tree", dest, symlinks=True, dirs_exist_ok=True)
    return _committed(dest, seed, variables, allow_empty=True)
