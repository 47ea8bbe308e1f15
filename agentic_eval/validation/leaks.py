"""The leak scan: nothing of the answer, the grader or the fix may be visible in a sandbox.

Agents read answers out of git history in a fifth of tasks in one public
audit, so the scan covers the working tree and all of `.git`: every object the
object database holds (loose or packed, reachable or dangling), the reflog,
refs, and every other file in `.git`.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from agentic_eval.packs.task import Task

MIN_SCRIPT_CHARS = 40
"""Grader and fix contents shorter than this are too generic to scan for."""


@dataclass(frozen=True)
class Needle:
    """A byte string that must not appear, and what it is (for the report)."""

    what: str
    data: bytes


@dataclass(frozen=True)
class Leak:
    needle: str
    where: str

    def __str__(self) -> str:
        return f"leak: {self.needle} in {self.where}"


def task_needles(task: Task, answers: Iterable[str]) -> list[Needle]:
    """The answer strings, and the grader's and fix's contents and file names."""
    needles = [Needle(f"answer string {a!r}", a.encode()) for a in answers if a]
    for label, path in (("grader", task.grader_path), ("reference fix", task.solution_path)):
        content = path.read_bytes().strip()
        if len(content) >= MIN_SCRIPT_CHARS:
            needles.append(Needle(f"{label} contents", content))
    return needles


def _tree_files(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0] == ".git":
            continue
        if path.is_file() and not path.is_symlink():
            yield path


def _git_files(root: Path) -> Iterator[Path]:
    """Every file under .git except the compressed object store (read through git instead)."""
    git_dir = root / ".git"
    for path in sorted(git_dir.rglob("*")):
        rel = path.relative_to(git_dir)
        if rel.parts[0] == "objects" and len(rel.parts) > 1 and rel.parts[1] not in ("info",):
            continue
        if path.is_file():
            yield path


def _describe_git_file(rel: Path) -> str:
    name = rel.as_posix()
    if name.startswith("logs/"):
        return f".git/{name} (reflog)"
    if name.startswith("refs/") or name == "packed-refs":
        return f".git/{name} (refs)"
    return f".git/{name}"


def _all_objects(root: Path) -> bytes:
    """The contents of every object in the repository's object store, dangling ones included."""
    proc = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch", "--unordered"],
        cwd=root,
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"git cat-file failed in {root}: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout


def scan_sandbox(root: Path, needles: list[Needle], forbidden_names: Iterable[str] = ()) -> list[Leak]:
    """Every needle found in the working tree, .git objects, reflog, refs or other .git files.

    `forbidden_names` are file names (e.g. the grader's) that must not exist in the working tree.
    Each needle is reported once per place kind, so a report stays short.
    """
    leaks: list[Leak] = []
    found: set[tuple[str, str]] = set()

    def check(data: bytes, where: str, kind: str) -> None:
        for needle in needles:
            if (needle.what, kind) in found:
                continue
            if needle.data in data:
                found.add((needle.what, kind))
                leaks.append(Leak(needle.what, where))

    names = set(forbidden_names)
    for path in _tree_files(root):
        rel = path.relative_to(root).as_posix()
        if path.name in names:
            leaks.append(Leak(f"file named {path.name!r}", f"working tree ({rel})"))
        check(rel.encode() + b"\n" + path.read_bytes(), f"working tree ({rel})", "tree")
    if (root / ".git").is_dir():
        check(_all_objects(root), ".git objects", "objects")
        for path in _git_files(root):
            git_rel = path.relative_to(root / ".git")
            # The path too: a ref's name is its file name.
            check(git_rel.as_posix().encode() + b"\n" + path.read_bytes(), _describe_git_file(git_rel),
                  f"git:{git_rel.parts[0]}")
    return leaks
