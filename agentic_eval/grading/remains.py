"""What the agent left, recorded once every process of its has ended and before any grader or code of the model's
runs again: its files in the trial folder, its final tree (diff.patch, tree.json) within a time bound, and whether
a repository is left to grade at all (its folder or .git gone, the pristine commit unreadable, the disk filled).

The runner's agent phase makes one call here (`take_remains`); the grade phase is `grading.phase`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from agentic_eval.confine.backend import SandboxBackend
from agentic_eval.confine.shared_disk import out_of_room
from agentic_eval.grading import gitsafe
from agentic_eval.grading.snapshot import take_snapshot
from agentic_eval.packs.sandbox import Sandbox
from agentic_eval.trees import remove_tree

SNAPSHOT_TIMEOUT_S = 300.0
"""At most this long to record the agent's final tree (diff.patch, tree.json): a tree that takes longer is the
model's doing (a scored fail that says so), never a trial without an end."""


@dataclass(frozen=True)
class Remains:
    """What the agent left: its files by key (wire, transcript, diff, tree, whatever else it wrote in the trial
    folder) and why nothing is left that a grader could judge ('' when the repository is whole)."""

    files: dict[str, Path]
    broken: str


def take_remains(sandbox: Sandbox, backend: SandboxBackend, trial_dir: Path, transcript: Path | None) -> Remains:
    """The agent's files listed, its final tree recorded, the repository and the disk checked (in that order: a tree
    not recorded in time is said first, then a broken repository, then a full disk; but a full disk of the
    machine's own, which the model filled, first of all: nothing is recorded; and a snapshot that runs out of room
    on a disk the model's tree took is its doing too). In both of the model's out-of-room cases the sandbox is
    emptied, once, here at the end: nothing in it is recorded or graded any more, and the record needs the room."""
    files = trial_files(trial_dir, transcript)  # listed before the snapshot's own files are written there
    full = backend.disk_full(sandbox.path)
    if full and not backend.disk_cap:  # the machine's own disk, filled by the model: room first, to record the trial
        broken, emptied = full, True
    else:
        broken, emptied = _recorded(sandbox, backend, trial_dir, files, full)
    if emptied:
        remove_tree(sandbox.path)
    return Remains(files, broken)


def _recorded(sandbox: Sandbox, backend: SandboxBackend, trial_dir: Path, files: dict[str, Path], full: str
              ) -> tuple[str, bool]:
    """The final tree recorded (its files added to `files`) and the repository checked: why nothing is left that a
    grader could judge ('' when all is whole), and whether the sandbox is to be emptied (the snapshot ran out of
    room on a disk the model's tree took: `backend.room_taken`, confine/shared_disk.py)."""
    try:
        taken: dict[str, Path] | str | OSError = bounded_snapshot(
            sandbox.path, sandbox.pristine_store, sandbox.pristine_commit, trial_dir)
    except OSError as exc:
        if out_of_room(exc) is None:
            raise
        taken = exc
    if isinstance(taken, dict):
        files.update(taken)
        return repository_damage(sandbox.path, sandbox.pristine_commit) or full or "", False
    if isinstance(taken, str):
        return taken, False
    why = backend.room_taken(sandbox.path, 0)  # out of room: the model's doing when its tree took the room
    if not why:
        raise taken
    return f"{why}: recording it ran out of room ({taken}); the sandbox was emptied", True


def room_taken_emptied(backend: SandboxBackend, sandbox_path: Path, elsewhere: int = 0) -> str:
    """The backend's `room_taken` ruling on a grading step that ran out of room (grading/phase.py); when it is the
    model's doing, its sandbox emptied at once (nothing in it is graded any more, and the record needs the room)."""
    taken = backend.room_taken(sandbox_path, elsewhere)
    if taken:
        remove_tree(sandbox_path)
    return taken


def trial_files(trial_dir: Path, transcript: Path | None) -> dict[str, Path]:
    """The agent's files in the trial folder: the wire log, its transcript, whatever else it wrote there."""
    files: dict[str, Path] = {}
    if (trial_dir / "wire.jsonl").exists():
        files["wire"] = trial_dir / "wire.jsonl"
    if transcript is not None and transcript.exists():
        files["transcript"] = transcript
    known = {path.name for path in files.values()}
    for path in sorted(trial_dir.iterdir()):
        if path.is_file() and path.name not in known:
            files.setdefault(path.stem, path)
    return files


def repository_damage(sandbox_path: Path, pristine: str) -> str | None:
    """Why the agent left no repository to grade (its folder or its .git deleted or corrupted, the
    pristine commit gone), or None when it is whole. Read through gitsafe: never with the sandbox's own
    config or hooks."""
    if sandbox_path.is_symlink() or not sandbox_path.is_dir():
        return "the agent deleted/corrupted the repository: its folder is gone"
    git_dir = sandbox_path / ".git"
    if git_dir.is_symlink() or not git_dir.is_dir():
        return "the agent deleted/corrupted the repository: its .git folder is gone or replaced"
    try:  # one read of the index against the pristine commit: both must be whole
        gitsafe.sandbox_git(sandbox_path, ["diff-index", "--cached", "--name-only", f"{pristine}^{{commit}}", "--"])
    except gitsafe.GitError as exc:
        return f"the agent deleted/corrupted the repository: {str(exc)[:200]}"
    return None


def bounded_snapshot(sandbox: Path, store: Path | None, commit: str, folder: Path,
                     timeout_s: float = SNAPSHOT_TIMEOUT_S) -> dict[str, Path] | str:
    """take_snapshot's files, or why there are none: the tree could not be recorded within `timeout_s` (the
    snapshot goes on in the background, on a tree no one grades, until its own bounds end it)."""
    done: dict[str, dict[str, Path] | BaseException] = {}

    def take() -> None:
        try:
            done["files"] = take_snapshot(sandbox, store, commit, folder)
        except BaseException as exc:  # noqa: BLE001 - handed to the trial's thread
            done["files"] = exc

    worker = threading.Thread(target=take, name="snapshot", daemon=True)
    worker.start()
    worker.join(timeout_s)
    found = done.get("files")
    if found is None:
        return (f"the agent's final tree could not be recorded in {timeout_s:g}s (the model left a tree too large "
                "to snapshot): nothing left that a grader could judge")
    if isinstance(found, BaseException):
        raise found
    return found
