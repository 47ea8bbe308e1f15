"""Plain `git` in a grader, through the safe view gradelib's own checks use.

Graders written before sealed grading run git themselves in the sandbox (`git check-ignore`, `git ls-tree`,
`git show $AGENTIC_EVAL_PRISTINE:path`). The sandbox's `.git` is the model's: its config can name hooks, an
fsmonitor, filters or aliases, and the grader (another uid) meets "dubious ownership" besides. So the grader's
PATH starts with a `git` of ours (`install`): a command aimed at the sandbox's repository runs the real git
on a view of it (`gitsafe.make_view`: its HEAD, refs and index copied, its objects read, a config of ours; no
config, hooks, info/ or replace refs of the model's) with the work tree the sandbox, and with the pristine
commit's objects from the harness's store first, so `PRISTINE:path` reads the commit the harness made even
where the model deleted or forged objects. A command aimed elsewhere (a repository the grader made in /tmp,
`diff --no-index`) runs the real git as given, with the same safe config. Standard library only.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from agentic_eval.grading import gitsafe
from agentic_eval.packs import pristine

SHIM_CONFIG: tuple[str, ...] = (
    *pristine.SAFE_CONFIG,
    "-c", "core.commitGraph=false",  # the model's commit-graph could name another tree for a commit
    "-c", "core.multiPackIndex=false",
    "-c", "diff.ignoreSubmodules=all",  # status would run git in a nested repository, with its config
    "-c", "submodule.recurse=false",
)
SHIM_ENV = "AGENTIC_EVAL_GIT_SHIM"
"""The folder holding the shim (first on the grader's PATH; docker's exec helper keeps it first too)."""

_OBJECTS_ONLY = frozenset({"show", "log", "ls-tree", "cat-file", "rev-parse", "rev-list", "for-each-ref",
                           "show-ref", "describe", "name-rev", "merge-base", "shortlog", "branch", "tag",
                           "count-objects", "var", "version", "help"})
"""Commands that read the repository's objects and refs, not the work tree: only `.git` is looked at for files
git would block on."""
_WITH_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--super-prefix",
                         "--config-env", "--list-cmds", "--attr-source"})


_SCRIPT = """#!/bin/sh
# git for a grader (agentic_eval/grading/gitshim.py). gitsafe's own git (an absolute GIT_DIR outside the sandbox)
# and any git run with no sandbox named go straight to the real git: no Python started per call.
real() {{
  set -f; rest=""; IFS=:
  for p in $PATH; do [ "$p" = {folder} ] || rest="${{rest:+$rest:}}$p"; done
  unset IFS; PATH=$rest; export PATH; exec git "$@"
}}
[ -n "$AGENTIC_EVAL_SANDBOX" ] || real "$@"
case "$GIT_DIR" in
  /*) case "$GIT_DIR/" in "$AGENTIC_EVAL_SANDBOX"/*) ;; *) real "$@" ;; esac ;;
esac
py=${{AGENTIC_EVAL_PYTHON:-{python}}}
[ -x "$py" ] || py=python3
exec "$py" -I -B -c {boot} {package} "$0" "$@"
"""


def install(folder: Path, package: Path, python: str = sys.executable) -> Path:
    """Write the shim as `folder/git` (run with the grader's Python, `AGENTIC_EVAL_PYTHON`, importing
    agentic-eval from `package`, a folder holding only its package) and return `folder`."""
    folder.mkdir()
    boot = "import sys; sys.path.insert(0, sys.argv.pop(1)); from agentic_eval.grading.gitshim import main; main()"
    script = folder / "git"
    text = _SCRIPT.format(folder=shlex.quote(str(folder)), python=shlex.quote(python), boot=shlex.quote(boot),
                          package=shlex.quote(str(package)))
    script.write_text(text, encoding="utf-8")
    script.chmod(0o755)
    return folder


def _split(args: list[str]) -> tuple[Path, Path | None, Path | None, str, list[str]]:
    """git's own options before the command: (the folder it runs in after `-C`, `--git-dir`, `--work-tree`,
    the command, the arguments without `--git-dir` and `--work-tree`)."""
    where, git_dir, work_tree = Path.cwd(), None, None
    kept: list[str] = []
    i = 0
    while i < len(args) and args[i].startswith("-"):
        arg = args[i]
        name, has_value, value = arg.partition("=")
        if not has_value and name in _WITH_VALUE and i + 1 < len(args):
            value, i = args[i + 1], i + 1
        if name == "-C":
            where = where / value
        elif name == "--git-dir":
            git_dir = where / value
            i += 1
            continue
        elif name == "--work-tree":
            work_tree = where / value
            i += 1
            continue
        kept += [arg] if has_value or name not in _WITH_VALUE else [name, value]
        i += 1
    command = args[i] if i < len(args) else ""
    return where, git_dir, work_tree, command, kept + args[i:]


def _inside(path: Path, top: Path) -> bool:
    real = Path(os.path.realpath(path))
    return real == top or top in real.parents


def _no_special_files(sandbox: Path, command: str) -> None:
    """GitError for a FIFO, socket or device git would open and wait on: anywhere in the work tree, or only in
    `.git` for a command that reads no work tree (as `gitsafe.sandbox_git` does)."""
    top = sandbox if command not in _OBJECTS_ONLY else sandbox / ".git"
    if not top.is_dir() or top.is_symlink():
        return
    prefix = "" if top == sandbox else ".git/"
    for rel, found in gitsafe.walk_tree(top):
        if not isinstance(found, OSError) and (kind := gitsafe.special_kind(found)):
            raise gitsafe.GitError(f"the repository holds {kind}: {prefix}{rel}")


def _pristine_first(view: Path, store: Path, commit: str) -> None:
    """The pristine commit's objects as packs of the view's own (git looks in its own packs before an
    alternate's, and in packs before loose objects): read from the harness's store, never the model's."""
    packs = view / "objects" / "pack"
    packs.mkdir(parents=True, exist_ok=True)
    objects = store / "objects"
    loose = any(len(d.name) == 2 for d in objects.iterdir()) if objects.is_dir() else False
    if not loose and (objects / "pack").is_dir():
        for item in (objects / "pack").iterdir():
            if item.suffix in (".pack", ".idx"):
                (packs / item.name).symlink_to(item)
        return
    pristine.run_git(["pack-objects", "--revs", "-q", str(packs / "pack")], git_dir=store,
                    stdin=f"{commit}\n".encode())


def _real_git(shim_dir: Path) -> tuple[str | None, str]:
    """The git the shim stands in for (the next on PATH), and PATH without the shim."""
    rest = [p for p in os.environ.get("PATH", os.defpath).split(os.pathsep)
            if p and Path(os.path.realpath(p)) != shim_dir]
    path = os.pathsep.join(rest)
    return shutil.which("git", path=path), path


def run(args: list[str], shim_dir: Path) -> int:
    """Run `git args` as the shim does (see the module's docstring); git's exit status."""
    real, path = _real_git(shim_dir)
    if real is None:
        print("git: not found on PATH", file=sys.stderr)
        return 127
    sandbox_env = os.environ.get("AGENTIC_EVAL_SANDBOX")
    sandbox = Path(os.path.realpath(sandbox_env)) if sandbox_env else None
    where, git_dir, work_tree, command, kept = _split(args)
    if git_dir is None and os.environ.get("GIT_DIR"):  # GIT_DIR=$AGENTIC_EVAL_SANDBOX/.git git ...: the same aim
        git_dir = where / os.environ["GIT_DIR"]
    if work_tree is None and os.environ.get("GIT_WORK_TREE"):
        work_tree = where / os.environ["GIT_WORK_TREE"]
    aimed = sandbox is not None and (
        _inside(git_dir, sandbox) if git_dir is not None
        else _inside(work_tree, sandbox) if work_tree is not None
        else _inside(where, sandbox))
    if sandbox is None or not aimed:
        proc = subprocess.run([real, *SHIM_CONFIG, *args], env={**os.environ, "PATH": path}, check=False)
        return proc.returncode
    with tempfile.TemporaryDirectory(prefix="ae-git-") as tmp:
        try:
            _no_special_files(sandbox, command)
            view = gitsafe.make_view(sandbox, Path(tmp) / "view.git")
            store, commit = os.environ.get(pristine.STORE_ENV), os.environ.get(pristine.COMMIT_ENV)
            if store and commit:
                _pristine_first(view, Path(store), commit)
        except (gitsafe.GitError, OSError) as exc:
            print(f"fatal: {exc} (git in a grader reads the sandbox's repository through a safe view: "
                  "see docs/task-format.md)", file=sys.stderr)
            return 128
        env = pristine.git_env({"PATH": path, "GIT_DIR": str(view), "GIT_WORK_TREE": str(sandbox)})
        proc = subprocess.run([real, *SHIM_CONFIG, *kept], env=env, check=False)
        return proc.returncode


def main() -> None:
    """The shim's entry point: `git` with argv as git takes it, after the shim's own path."""
    shim_dir = Path(os.path.realpath(sys.argv.pop(1))).parent
    sys.exit(run(sys.argv[1:], shim_dir))
