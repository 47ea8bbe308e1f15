"""The docker backend's grading folders (grading/sealed.py's CodeHost: its socket, the work copy of the tree and a
scratch folder), made ahead for the grader's warm container, capped like the sandbox, and the processes a
code host's commands left ended between them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from agentic_eval.confine.backend import GRADING_SOCKET_FOLDER
from agentic_eval.confine.docker_disk import GRADING_ROOM, _mount_tmpfs
from agentic_eval.confine.docker_engine import (
    _EXEC_HELPER,
    DockerLimits,
    _Phase,
)
from agentic_eval.confine.docker_image import (
    IMAGE_PATH,
    IMAGE_PYTHON,
    RUN_UID,
)
from agentic_eval.errors import AgenticEvalError
from agentic_eval.trees import remove_tree


def _capacity(path: Path) -> int:
    st = os.statvfs(path)
    return st.f_blocks * st.f_frsize


class GradingFolders:
    """DockerBackend's grading folders (a mixin: its state lives on the backend)."""

    limits: DockerLimits
    _lock: threading.Lock
    _capped: set[str]
    _grading: dict[str, Path]
    _graded_room: dict[str, int]
    _hosts: set[str]
    _phases: dict[str, _Phase]
    _removals: ThreadPoolExecutor
    _warm: dict[str, Future[_Phase]]
    if TYPE_CHECKING:  # the backend's own (confine/docker.py)
        def _claim(self, warm: Future[_Phase] | None) -> _Phase | None: ...
        def _remove(self, phase: _Phase) -> None: ...
        def close(self, sandbox: Path) -> None: ...

    # the grading folder (grading/sealed.py's CodeHost: its socket, the work copy, a scratch folder)

    @contextmanager
    def grading_folder(self, sandbox: Path) -> Iterator[Path]:
        """Where grading `sandbox` keeps the grader's socket, the work copy of the tree and the scratch folder
        (grading/sealed.py's CodeHost, which empties and refills the last two, never replaces them), removed
        afterwards: the one made when the trial's first phase started (its socket folder is bound into the
        grader's warm container, its work and scratch folders into the model's code's), else a new one. On a
        tmpfs of the work dir's cap plus GRADING_ROOM when the sandbox is capped: the model's code run while
        grading cannot fill this machine's disk either (it fills its own copy: its tests fail, a scored fail)."""
        key = str(sandbox.resolve())
        with self._lock:
            warm = self._warm.get(key)
        if warm is not None:  # the grader's container, still starting, may bind this trial's grading folder
            self._claim(warm)
        with self._lock:
            folder = self._grading.pop(key, None)
        if folder is None:
            folder = self._new_grading_folder(key)
        with self._lock:
            self._hosts.add(str(folder / "work"))
        try:
            yield folder
        finally:
            room = _capacity(folder) if os.path.ismount(folder) else None
            with self._lock:
                self._hosts.discard(str(folder / "work"))
                if room is not None:  # for room_taken: the folder was capped, so only the model filled it
                    self._graded_room[key] = room
            self._end_grading_folder(folder)

    def room_taken(self, sandbox: Path, elsewhere: int = 0) -> str:
        """A step of grading ran out of room (the code host noted it: `elsewhere` > 0, grading/phase.py): the
        model's doing when the sandbox is capped. Its grading folder was then a tmpfs of the work dir's cap plus
        GRADING_ROOM that only the model's tree (at most the cap), what its code wrote and the grader's few files
        take, so a full one is the model's code's (a scored fail, as its own test run failing for want of room
        would be). "" for a step outside it (recording, or the harness's own files on this machine's disk:
        `elsewhere` 0), an uncapped sandbox (its folder on this machine's disk), or a folder too small for every
        tree the model could have left (an environment task's work dir capped larger: the harness's fault)."""
        key = str(sandbox.resolve())
        with self._lock:
            room = self._graded_room.get(key)  # forgotten when the trial's sandbox is released
            capped = key in self._capped
        if room is None or not capped or elsewhere <= 0:
            return ""
        try:
            cap = _capacity(Path(key))  # the work dir's cap, grown by GRADING_ROOM before grading (make_room)
        except OSError:
            return ""
        if room < cap - GRADING_ROOM // 2:
            return ""
        return (f"the model's code filled its grading folder (its room or its files), a copy of its tree capped at "
                f"{room >> 20} MiB and a file per 4 KiB (its work dir's cap and {GRADING_ROOM >> 20} MiB it never "
                "had), which nothing else fills")

    def _new_grading_folder(self, sandbox: str) -> Path:
        """A grading folder, marked with its owner (the next run unmounts and removes it if this one is killed):
        beneath the tmpfs, for after a reboot, and on it, which hides the first."""
        from agentic_eval.leftovers import MarkedTempDir, mark_trial_folder

        folder = MarkedTempDir("ae-grading-").top
        with self._lock:
            capped = sandbox in self._capped
        if capped:
            why = _mount_tmpfs(folder, self.limits.work_size, GRADING_ROOM, "agentic-eval-grading")
            if why:
                shutil.rmtree(folder, ignore_errors=True)
                raise AgenticEvalError(f"cannot mount the size-capped grading folder ({self.limits.work_size} + "
                                       f"{GRADING_ROOM >> 20} MiB) at {folder}: {why}")
            mark_trial_folder(folder)
        os.chmod(folder, 0o755)
        for sub in (GRADING_SOCKET_FOLDER, "work", "scratch"):
            (folder / sub).mkdir(mode=0o755)
        return folder

    def _end_grading_folder(self, folder: Path) -> None:
        """The model's code's container goes (killed now if a command ran in it; one never used is removed in
        the background, with the folder after it), and the folder with it."""
        work = str(folder / "work")
        with self._lock:
            phase = self._phases.pop(work, None)
            warm = self._warm.pop(work, None)
        if phase is not None:
            self._remove(phase)
        if warm is None:
            self._drop_grading_folder(folder)
            return

        def unused() -> None:
            self._remove_unused(warm)
            self._drop_grading_folder(folder)

        try:
            self._removals.submit(unused)
        except RuntimeError:  # at interpreter exit
            unused()

    def _remove_unused(self, warm: Future[_Phase]) -> None:
        ready = self._claim(warm)
        if ready is not None:
            self._remove(ready)

    @staticmethod
    def _drop_grading_folder(folder: Path) -> None:
        """Unmount (a container that binds part of it keeps its own reference) and remove a grading folder."""
        if os.path.ismount(folder):
            subprocess.run(["umount", "--lazy", str(folder)], capture_output=True, check=False)
        remove_tree(folder)  # iterative: the model's work copy may be nested any deep

    _END_ALL = """\
import os, signal, time
me, uid = os.getpid(), str(os.getuid())
def left():
    found = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/status") as status:
                mine = any(line.split()[1:2] == [uid] for line in status if line.startswith("Uid:"))
            found += mine and int(pid) != me
        except OSError:
            pass
    return found
for _ in range(1000):
    os.kill(-1, signal.SIGKILL)
    if not left():
        break
    time.sleep(0.005)
else:
    raise SystemExit(1)
"""
    """Run as the commands' user: kills every process of theirs in the container (kill(-1) spares the caller and
    the container's own, KEEPER_UID's) until none is left (the container's init reaps them)."""

    def end_processes(self, path: Path) -> None:
        """End every process the commands of `path`'s phase left but keep its container (and its mounts) for the
        next: what a fresh work copy needs, without the cost of a new container. Removes the container instead
        when that fails."""
        with self._lock:
            phase = self._phases.get(str(path))
        if phase is None:
            return
        argv = [sys.executable, "-I", "-S", str(_EXEC_HELPER), phase.engine.name, phase.container.id, "/",
                str(RUN_UID), IMAGE_PATH, IMAGE_PYTHON, "--", IMAGE_PYTHON, "-I", "-S", "-c", self._END_ALL]
        try:
            ended = subprocess.run(argv, capture_output=True, timeout=30, env={}, check=False).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            ended = False
        if not ended:
            self.close(path)
