"""Leftovers of dead runs: trial temp folders (sandboxes) and the processes still running in them.

A run killed with `kill -9` (or a machine that lost power mid-run) cannot clean up after itself:
its trials' temp folders stay in the system temp folder and the model's commands may run on.
Each trial's temp folder is marked with its owner (`mark_trial_folder`: the runner's pid and that
process's start time, so a reused pid is not mistaken for the owner). `clean_dead_runs`, called
when a run or a resume starts, removes the folders whose owner is gone, after killing the
processes whose working folder is inside them. A folder of a live run, or one without a mark
(made by an older version, or being made right now), is never touched.

Processes are found through /proc (Linux); elsewhere only the folders are removed. Without /proc a unix
socket at a long path is bound and reached through a link in a folder under /tmp (confine/relay.py's
`at_unix_path`) that lives for one call: `clean_socket_links` removes one that a killed run left.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

TRIAL_FOLDER_PREFIX = "ae-trial-"
"""Name prefix of a trial's temp folder (`tempfile.mkdtemp(prefix=...)` in the runner)."""
OWNER_FILE = "owner.json"
_PROC = Path("/proc")


def process_start_token(pid: int) -> str | None:
    """What tells this process apart from a later one with the same pid: its start time in clock
    ticks since boot (Linux), None where that cannot be read."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()  # the command name, in parentheses, may hold spaces
    return fields[19] if len(fields) > 19 else None


def mark_trial_folder(folder: Path) -> bool:
    """Write the owner mark of a trial's temp folder: this process's pid and start token. False
    when it cannot be written (the folder is then never cleaned by another run: the safe side)."""
    mark = {"pid": os.getpid(), "start": process_start_token(os.getpid()), "created": time.time()}
    partial = folder / (OWNER_FILE + ".partial")
    try:
        partial.write_text(json.dumps(mark), encoding="utf-8")
        partial.replace(folder / OWNER_FILE)  # whole or absent, never half a mark
    except OSError:
        return False
    return True


def _remove(folder: Path) -> None:
    """Remove a folder the model may have made hard to remove (read-only or unreadable folders)."""
    shutil.rmtree(folder, ignore_errors=True)
    if folder.exists():
        subprocess.run(["chmod", "-R", "u+rwx", str(folder)], capture_output=True, timeout=60, check=False)
        shutil.rmtree(folder, ignore_errors=True)


def owner_is_alive(mark: dict[str, object]) -> bool:
    """True while the process that wrote `mark` still runs (or when that cannot be ruled out)."""
    pid = mark.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return True  # a mark we cannot read: not ours to judge
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: alive
    start = mark.get("start")
    current = process_start_token(pid)
    return start is None or current is None or current == start


def _processes_inside(folder: Path) -> list[int]:
    """Pids of this user's processes whose working folder is inside `folder` (none off Linux)."""
    found: list[int] = []
    try:
        entries = list(_PROC.iterdir())
    except OSError:
        return found
    resolved = folder.resolve()
    for entry in entries:
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cwd = Path(os.readlink(entry / "cwd"))
        except OSError:
            continue  # gone, or not ours
        if cwd == resolved or resolved in cwd.parents:
            found.append(int(entry.name))
    return found


@dataclass
class Cleanup:
    """What `clean_dead_runs` removed."""

    folders: list[Path] = field(default_factory=list)
    killed: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def describe(self) -> str:
        """One line for the run's output, or "" when there was nothing to clean."""
        if not self.folders and not self.killed and not self.errors:
            return ""
        parts = [f"removed {len(self.folders)} trial temp folder(s) of dead runs"
                 + (f" ({', '.join(path.name for path in self.folders[:5])}{', ...' if len(self.folders) > 5 else ''})"
                    if self.folders else "")]
        if self.killed:
            parts.append(f"killed {len(self.killed)} leftover process(es) ({', '.join(map(str, self.killed[:10]))})")
        if self.errors:
            parts.append(f"could not clean: {'; '.join(self.errors[:3])}")
        return "; ".join(parts)


def clean_socket_links(root: Path = Path("/tmp"), min_age_s: float = 60.0) -> list[Path]:
    """Remove the link folders confine/relay.py's `at_unix_path` makes where there is no /proc (each lives for
    one bind or connect: one older than `min_age_s` was left by a killed run); the links are not followed."""
    from agentic_eval.confine.relay import LINK_FOLDER_PREFIX

    removed: list[Path] = []
    try:
        candidates = [path for path in root.iterdir() if path.name.startswith(LINK_FOLDER_PREFIX)]
    except OSError:
        return removed
    for folder in candidates:
        try:
            info = folder.lstat()
            if not folder.is_dir() or folder.is_symlink() or info.st_uid != os.getuid():
                continue
            if time.time() - info.st_mtime < min_age_s:
                continue  # in use right now
            for entry in folder.iterdir():
                entry.unlink()  # a link (never followed)
            folder.rmdir()
            removed.append(folder)
        except OSError:
            continue
    return removed


def clean_dead_runs(temp_root: Path | None = None, *, rounds: int = 5) -> Cleanup:
    """Find trial temp folders whose owning run process is dead, kill the processes still working
    inside them, and remove them. Never touches a folder of a live run or one without a mark.
    The system temp folder's own run (no `temp_root`) also removes stale socket link folders."""
    root = Path(temp_root or tempfile.gettempdir())
    cleanup = Cleanup()
    if temp_root is None:
        clean_socket_links()
    try:
        candidates = sorted(path for path in root.iterdir() if path.name.startswith(TRIAL_FOLDER_PREFIX))
    except OSError as exc:
        cleanup.errors.append(f"cannot list {root}: {exc.strerror or exc}")
        return cleanup
    for folder in candidates:
        try:
            if folder.is_symlink() or not folder.is_dir() or folder.stat().st_uid != os.getuid():
                continue  # another user's run is theirs to clean
            mark = json.loads((folder / OWNER_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # no mark (an older version's, or one being made now): not ours to judge
        if not isinstance(mark, dict) or owner_is_alive(mark):
            continue
        for _ in range(rounds):  # a killed process's children may still be inside: a few rounds
            pids = _processes_inside(folder)
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                    cleanup.killed.append(pid)
                except OSError:
                    pass
            time.sleep(0.1)
        _remove(folder)
        if folder.exists():
            cleanup.errors.append(f"{folder} could not be removed")
        else:
            cleanup.folders.append(folder)
    cleanup.killed = list(dict.fromkeys(cleanup.killed))
    return cleanup
