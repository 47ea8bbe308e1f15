"""Leftovers of dead runs: the temp folders a run makes (sandboxes, grading folders, sockets) and the processes
still running in them.

A run killed with `kill -9` (or a machine that lost power mid-run) cannot clean up after itself:
its temp folders stay in the system temp folder and the model's commands may run on. Every temp folder
a run keeps for longer than a moment is marked with its owner (`mark_trial_folder`: the runner's pid and
that process's start time, so a reused pid is not mistaken for the owner) and named with one of
`TEMP_FOLDER_PREFIXES`: a trial's folder (`ae-trial-*`, its sandbox inside), the grader's code host's
folder (`ae-grading-*`, its work copy of the model's code; as root a size-capped tmpfs mount), a confined
CLI's wire socket folder (`ae-wire-*`), the built-in agent's HOME under `--sandbox local` (`ae-home-*`),
the docker backend's stand-in /root (`ae-root-*`), a root harness's passwd and group files for bwrap
(`ae-identity-*`, one per run process), a grader's variables file (`ae-vars-*`: the task's expected answers),
`validate`'s folder per task (`ae-validate-*`) and a reward verifier's (`ae-verify-*`, its /logs/verifier a capped
tmpfs as root). `MarkedTempDir` makes one. A folder bound into a sandbox whole,
or used as HOME, is handed out as a folder inside the marked one, so the mark stays out of the model's
sight. `clean_dead_runs`, called when a run or a resume starts, removes the folders whose owner is gone,
after killing the processes whose working folder is inside them and, as root, unmounting the mounts
inside them (a capped sandbox or grading folder). A folder of a live run, or one without a mark (made by
an older version, or being made right now), is never touched.

Folders that live within one short call (git's scratch copies `ae-scratch-`, `ae-diff-`, `ae-view-`; a
generator's `ae-env-gen-`; the one-off commands' `ae-show-`, `ae-fixsize-`) are not
marked: a kill is unlikely to fall inside one, and what it leaves holds nothing of the model's.

A run's docker containers are marked with the same owner and this machine (`owner_mark`: an engine may be shared
by several machines, whose pids mean nothing here); the docker backend removes those whose owner is dead
(`owner_is_dead_here`) when it first uses an engine (confine/docker.py's `remove_dead_runs`).

Processes and mounts are found through /proc (Linux); elsewhere only the folders are removed. Without /proc a
unix socket at a long path is bound and reached through a link in a folder under /tmp (confine/relay.py's
`at_unix_path`) that lives for one call: `clean_socket_links` removes one that a killed run left.

Standard library only, and no import of the package's own: the sandbox backends (confine) and agents that
make these folders import it.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

TRIAL_FOLDER_PREFIX = "ae-trial-"
"""Name prefix of a trial's temp folder (`tempfile.mkdtemp(prefix=...)` in the runner)."""
TEMP_FOLDER_PREFIXES = (TRIAL_FOLDER_PREFIX, "ae-grading-", "ae-wire-", "ae-home-", "ae-root-", "ae-identity-",
                        "ae-vars-", "ae-validate-", "ae-verify-")
"""Name prefixes of the marked temp folders that `clean_dead_runs` removes once their run is dead (see above)."""
LINK_FOLDER_PREFIX = "ae-sock-"
"""confine/relay.py's LINK_FOLDER_PREFIX: that module runs in the sandbox on the standard library alone, so it
cannot import this one, and this one is imported by confine (tests/test_long_tmpdir.py checks they agree)."""
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
    """Write the owner mark of a run's temp folder (a trial's, or one of `TEMP_FOLDER_PREFIXES`): this process's
    pid and start token. False when it cannot be written (the folder is then never cleaned by another run:
    the safe side)."""
    mark = {"pid": os.getpid(), "start": process_start_token(os.getpid()), "created": time.time()}
    partial = folder / (OWNER_FILE + ".partial")
    try:
        partial.write_text(json.dumps(mark), encoding="utf-8")
        partial.replace(folder / OWNER_FILE)  # whole or absent, never half a mark
    except OSError:
        return False
    return True


def _remove(folder: Path) -> None:
    """Remove a folder the model may have made hard to remove (read-only or unreadable folders, nested any deep:
    without recursion)."""
    from agentic_eval.trees import remove_tree

    remove_tree(folder)
    if folder.exists():
        subprocess.run(["chmod", "-R", "u+rwx", str(folder)], capture_output=True, timeout=60, check=False)
        remove_tree(folder)


class MarkedTempDir:
    """Like `tempfile.TemporaryDirectory` (`name`, `cleanup()`, a context manager giving `name`), made in the
    system temp folder with this process's owner mark, so that the next run removes it if this process dies
    without removing it. `prefix` starts with one of `TEMP_FOLDER_PREFIXES`. `inner`: the name of a folder
    inside to hand out as `name` instead of the top (for a folder bound into a sandbox whole, or used as HOME:
    the mark stays out of sight). `cleanup` never raises."""

    def __init__(self, prefix: str, inner: str = "") -> None:
        if not prefix.startswith(TEMP_FOLDER_PREFIXES):
            raise ValueError(f"{prefix!r}: a marked temp folder's prefix starts with one of {TEMP_FOLDER_PREFIXES}")
        self.top = Path(tempfile.mkdtemp(prefix=prefix))
        mark_trial_folder(self.top)
        path = self.top / inner if inner else self.top
        if inner:
            path.mkdir(mode=0o700)
        self.name = str(path)

    def cleanup(self) -> None:
        _remove(self.top)

    def __enter__(self) -> str:
        return self.name

    def __exit__(self, *exc: object) -> None:
        self.cleanup()


def _mounts_inside(folder: Path) -> list[str]:
    """The mount points at or under `folder` (Linux: /proc/self/mountinfo), deepest first."""
    try:
        table = (_PROC / "self" / "mountinfo").read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return []
    top = str(folder.resolve())
    found = set()
    for line in table.splitlines():
        fields = line.split(" ")
        if len(fields) > 4:  # the mount point, with space, tab, newline and backslash as octal escapes
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
            if point == top or point.startswith(top + "/"):
                found.add(point)
    return sorted(found, key=lambda point: point.count("/"), reverse=True)


def _unmount_inside(folder: Path) -> list[str]:
    """As root, detach every mount at or under `folder` (a capped sandbox or grading folder: a tmpfs), deepest
    first; what could not be detached. A container that binds part of one keeps its own reference."""
    left: list[str] = []
    if os.geteuid() != 0:
        return left
    for point in _mounts_inside(folder):
        done = subprocess.run(["umount", "--lazy", point], capture_output=True, timeout=60, check=False)
        if done.returncode != 0:
            left.append(point)
    return left


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


@cache
def this_machine() -> str | None:
    """What tells this machine's pids apart from another's, for what outlives a run outside this machine's temp
    folder (a Docker engine's containers, the engine perhaps shared by several machines): the kernel's boot id
    and this process's pid namespace (a pid names a process of one namespace of one boot). None where either
    cannot be read (off Linux): nothing is then marked as this machine's."""
    try:
        boot = (_PROC / "sys" / "kernel" / "random" / "boot_id").read_text(encoding="ascii").strip()
        namespace = os.readlink(_PROC / "self" / "ns" / "pid")
    except (OSError, UnicodeDecodeError):
        return None
    return f"{boot}/{namespace}" if boot and namespace else None


def owner_mark() -> dict[str, str]:
    """This process's mark for what it leaves outside its temp folders: its pid, start token and machine
    (`this_machine`), as strings (a container's labels); {} where the start token or the machine is unknown."""
    start, machine = process_start_token(os.getpid()), this_machine()
    if start is None or machine is None:
        return {}
    return {"pid": str(os.getpid()), "start": start, "machine": machine}


OWNER_LABEL = "agentic-eval."
"""The prefix of a docker container's or network's owner labels: `agentic-eval.pid`, `.start`, `.machine`."""


def owner_labels() -> dict[str, str]:
    """The owner labels of a docker container or network this process makes: its pid, and where known its start
    token and machine (`owner_mark`; without them nothing is ever judged dead)."""
    return {f"{OWNER_LABEL}pid": str(os.getpid()), **{OWNER_LABEL + key: value for key, value in owner_mark().items()}}


def owner_is_dead_here(mark: Mapping[str, object]) -> bool:
    """True only when `mark` (an `owner_mark`) is whole, names this machine, and its process is gone. A mark of
    another machine (or pid namespace, or boot), an incomplete one (an older version's) or a live owner's: False."""
    machine, pid, start = this_machine(), str(mark.get("pid", "")), mark.get("start")
    if machine is None or mark.get("machine") != machine or not pid.isdigit() or not isinstance(start, str):
        return False
    if not start:
        return False
    return not owner_is_alive({"pid": int(pid), "start": start})


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
        parts = [f"removed {len(self.folders)} temp folder(s) of dead runs"
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
    """Find the temp folders (`TEMP_FOLDER_PREFIXES`) whose owning run process is dead, kill the processes still
    working inside them, unmount what is mounted inside them (as root), and remove them. Never touches a folder
    of a live run or one without a mark. The system temp folder's own run (no `temp_root`) also removes stale
    socket link folders."""
    root = Path(temp_root or tempfile.gettempdir())
    cleanup = Cleanup()
    if temp_root is None:
        clean_socket_links()
    try:
        candidates = sorted(path for path in root.iterdir() if path.name.startswith(TEMP_FOLDER_PREFIXES))
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
        mounted = _unmount_inside(folder)
        if mounted:
            cleanup.errors.append(f"{mounted[0]} could not be unmounted")
            continue  # removing the folder would empty the mount, not remove it
        _remove(folder)
        if folder.exists():
            cleanup.errors.append(f"{folder} could not be removed")
        else:
            cleanup.folders.append(folder)
    cleanup.killed = list(dict.fromkeys(cleanup.killed))
    return cleanup
