"""The docker backend's disk caps: a sandbox moved onto a size-capped tmpfs at its own path (as root), the room
grading adds, and the tree handed back (or copied out for `--keep-sandboxes`) when the trial ends."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentic_eval.confine.docker_engine import (
    KEEP_COPY_S,
    DockerLimits,
    _Phase,
)
from agentic_eval.confine.docker_image import (
    RUN_UID,
)
from agentic_eval.errors import AgenticEvalError
from agentic_eval.trees import chown_tree, copy_tree, remove_tree

GRADING_ROOM = 256 << 20
"""Room the model never had: added to a capped work dir before grading, and to the cap of the grading folder
(where the model's code runs on a copy of the tree while it is graded)."""


def _mount_tmpfs(path: Path, size: str, extra: int, source: str) -> str:
    """Mount a tmpfs of `size` (a tmpfs size: 1g, 512m) plus `extra` bytes at `path`, an empty folder, with one
    file per 4 KiB of it (or using up the inodes would be a way out of the cap); '' when done, else why not."""
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755,nosuid,nodev", source, str(path)],
                          capture_output=True, text=True, check=False)
    if proc.returncode == 0:
        st = os.statvfs(path)
        total = st.f_blocks * st.f_frsize + extra
        proc = subprocess.run(["mount", "-o", f"remount,size={total},nr_inodes={max(total // 4096, 1024)}", str(path)],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            subprocess.run(["umount", str(path)], capture_output=True, check=False)
    return "" if proc.returncode == 0 else (proc.stderr.strip()[-200:] or f"mount exited {proc.returncode}")


class DiskCaps:
    """DockerBackend's disk caps (a mixin: its state lives on the backend)."""

    limits: DockerLimits
    _lock: threading.Lock
    _capped: set[str]
    _ending: dict[str, Future[None]]
    _envs: dict[str, Any]
    _grader_reads: dict[str, list[Path]]
    _grading: dict[str, Path]
    _graded_room: dict[str, int]
    _trials: dict[str, int]
    _warm: dict[str, Future[_Phase]]
    if TYPE_CHECKING:  # the backend's own (confine/docker.py)
        def _claim(self, warm: Future[_Phase] | None) -> _Phase | None: ...
        def _remove(self, phase: _Phase) -> None: ...
        def _end_grading_folder(self, folder: Path) -> None: ...
        def _work_size(self, sandbox: Path) -> str: ...

    def cap_disk(self, path: Path, size: str | None = None) -> None:
        """Move the sandbox onto a tmpfs of `size` (default `limits.work_size`) mounted at its own path (as root;
        else the sandbox stays uncapped)."""
        path = path.resolve()
        if os.geteuid() != 0 or not path.is_dir() or os.path.ismount(path) or shutil.which("mount") is None:
            return
        staging = path.with_name(path.name + ".uncapped")
        os.rename(path, staging)
        path.mkdir()
        why = _mount_tmpfs(path, size or self.limits.work_size, 0, "agentic-eval-work")
        if why:
            path.rmdir()
            os.rename(staging, path)
            cap = size or self.limits.work_size
            raise AgenticEvalError(f"cannot mount the size-capped work dir ({cap}) at {path}: {why}")
        with self._lock:
            self._capped.add(str(path))
        shutil.copytree(staging, path, symlinks=True, dirs_exist_ok=True)
        shutil.rmtree(staging)

    def disk_full(self, path: Path) -> str:
        """Why the sandbox counts as full (under 16 MiB left of its cap; an environment task's container's own
        filesystem over its cap), or an empty string."""
        path = path.resolve()
        env = self._envs.get(str(path))
        return "; ".join(filter(None, [self._work_dir_full(path), env.layer_full() if env is not None else ""]))

    def _work_dir_full(self, path: Path) -> str:
        if str(path) not in self._capped:
            return ""
        st = os.statvfs(path)
        if st.f_files and st.f_favail < 1024:
            return f"the work dir used up its files ({st.f_files} inodes): no room left to grade in"
        if st.f_bavail * st.f_frsize >= 16 << 20:
            return ""
        return f"the work dir filled its size cap ({self._work_size(path)}): no space left to grade in"

    def make_room(self, path: Path) -> None:
        """Before grading: grow the capped work dir by GRADING_ROOM (and its files in proportion), so a model
        that left it nearly full cannot make the grader crash for want of space (an unscored grader_error
        instead of its fail). The sealed grader writes nothing there (the model's code it has run writes in
        the grading folder, capped with its own room): this is room for the harness alone."""
        path = path.resolve()
        if str(path) not in self._capped:
            return
        st = os.statvfs(path)
        self._remount(path, f"size={st.f_blocks * st.f_frsize + GRADING_ROOM}",
                      f"nr_inodes={st.f_files + GRADING_ROOM // 4096}")

    @staticmethod
    def _remount(path: Path, *options: str) -> None:
        proc = subprocess.run(["mount", "-o", ",".join(["remount", *options]), str(path)], capture_output=True,
                              text=True, check=False)
        if proc.returncode != 0:
            raise AgenticEvalError(f"cannot remount the work dir at {path} ({', '.join(options)}): "
                                   f"{proc.stderr.strip()[-200:]}")

    def release(self, path: Path, keep: bool = False) -> None:
        """Unmount the sandbox's capped volume (its tree copied back to a plain folder first when `keep`).
        Never raises."""
        path = path.resolve()
        with self._lock:
            self._trials.pop(str(path), None)
            self._grader_reads.pop(str(path), None)
            warm = self._warm.pop(str(path), None)
            grading = self._grading.pop(str(path), None)
            self._graded_room.pop(str(path), None)
            self._ending.pop(str(path), None)  # no phase follows: its grader's container goes on ending alone
            capped = str(path) in self._capped
            self._capped.discard(str(path))
        ready = self._claim(warm)
        if ready is not None:
            self._remove(ready)
        if grading is not None:
            self._end_grading_folder(grading)
        if not capped:
            return
        kept = path.with_name(path.name + ".kept")
        try:
            if keep:  # iterative, links kept as links, special files left out: whatever the model's tree holds
                copy_tree(path, kept, deadline=time.monotonic() + KEEP_COPY_S)
        except Exception:  # noqa: BLE001 - the tree is lost with the mount, not the trial's record nor the run
            remove_tree(kept)
            keep = False
        subprocess.run(["umount", "--lazy", str(path)], capture_output=True, check=False)
        try:
            path.rmdir()
            if keep:
                os.rename(kept, path)
        except OSError:
            pass

    def _chown(self, path: Path) -> None:
        if os.geteuid() != 0 or not path.is_dir() or path.stat().st_uid == RUN_UID:
            return
        chown_tree(path, RUN_UID, RUN_UID)
