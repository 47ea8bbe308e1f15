"""Whose fault a reward verifier's failure is, shown by a control run: the same verifier on the task's untouched
working directory, in a fresh container of the task's image with none of the model's files.

A verifier that did not write its reward (it timed out, was killed, lost /logs/verifier), or whose output says a
program or the network it needs was missing, looks like the machine's or the task's failure; but the model's
code runs under that verifier and can cause each one (a FIFO where it reads an answer, a `kill -9 -1`) or print
the line that says so (`bash: line 3: X: command not found`). What the model's code prints or does never decides
an unscored outcome by itself: only when the control run fails the same way (the same program missing, no
reward, a timeout) is it the machine's or the task's fault (unscored, its cause named); when the control gets
further (it finds the program, it writes a reward) the failure is the model's doing, a scored fail naming it.

The control runs on a network of its own with fresh copies of the task's services (what the model may have
changed in the trial's never reaches it). Its result is kept per (engine, task image, verifier files, network)
for the process's run: at most one extra verifier run per task, not per trial.

`verify` is the one entry (confine/docker.py's `verify_environment`): it refuses first a working directory
holding FIFOs, sockets or devices (as grading/gitsafe.py does for built-in tasks), which a verifier can block on
forever: a scored fail naming them, with no verifier run.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import stat
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentic_eval.confine.verifier_cause import VerifierFault, verifier_fault
from agentic_eval.leftovers import owner_labels

if TYPE_CHECKING:
    from docker.models.containers import Container

    from agentic_eval.confine.docker_env import EnvironmentTrial, VerifierRun

SPECIAL_SHOWN = 3
"""Special files a refusal names (and how many more there are)."""


@dataclass(frozen=True)
class ControlRun:
    """What the verifier did on the task's untouched working directory."""

    reward: float | None
    timed_out: bool
    error: str
    """Why it wrote no reward, or why it could not start ('' when it wrote one)."""
    fault: VerifierFault | None
    """The machine's or the task's want of a program or the network its output shows (no model's code ran)."""
    duration_s: float

    def summary(self) -> str:
        if self.timed_out:
            return "it timed out there too"
        if self.reward is not None:
            return f"there it wrote reward {self.reward:g} in {self.duration_s:.0f}s"
        return f"there it wrote none either ({self.error})"


_kept: dict[tuple[str, ...], ControlRun] = {}
_locks: dict[tuple[str, ...], threading.Lock] = {}
_guard = threading.Lock()


SPECIAL_KINDS: dict[int, str] = {stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket",
                                 stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device"}
"""Files that are not files (as grading/gitsafe.py names them for built-in tasks): a verifier that opens one can
block forever (a FIFO) or read without end (a device)."""
WALK_LIMIT = 200_000
"""At most this many entries are looked at (past them, a control run judges what a special file did)."""


def special_files(root: Path, limit: int = WALK_LIMIT) -> list[str]:
    """The FIFOs, sockets and devices under the working directory `root` ('path (a FIFO)'), found with lstat (no
    link followed, nothing opened), iteratively (any depth)."""
    found: list[str] = []
    stack, seen = [""], 0
    while stack and seen < limit:
        rel_dir = stack.pop()
        try:
            with os.scandir(root / rel_dir if rel_dir else root) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        below: list[str] = []
        for entry in entries:
            seen += 1
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            if kind := SPECIAL_KINDS.get(stat.S_IFMT(mode)):
                found.append(f"{rel} ({kind})")
            elif stat.S_ISDIR(mode):
                below.append(rel)
        stack.extend(reversed(below))
    return found


def verify(trial: EnvironmentTrial, cancel: threading.Event | None = None) -> VerifierRun:
    """The trial's reward verifier's run (`EnvironmentTrial.verify`), settled by a control run when it looks like
    the machine's or the task's failure (`settle`); a working directory with special files is refused first."""
    from agentic_eval.confine.docker_env import VerifierRun

    trial.stop()  # every process of the agent's ends before its tree is looked at
    special = special_files(trial.sandbox)
    if special:
        shown = ", ".join(special[:SPECIAL_SHOWN]) + (f" (+{len(special) - SPECIAL_SHOWN} more)"
                                                     if len(special) > SPECIAL_SHOWN else "")
        why = (f"the model left special files in the working directory, which a verifier may block on or read "
               f"without end: {shown}; not verified")
        return VerifierRun(None, f"agentic-eval: {why}\n", 0.0, reward=0.0, model_fault=why)
    return settle(trial, trial.verify(cancel), cancel)


def settle(trial: EnvironmentTrial, run: VerifierRun, cancel: threading.Event | None = None) -> VerifierRun:
    """`run` as it stands when it is a verdict (a reward and no fault), was cancelled or could not start (the
    engine's); else as a control run on the task's untouched working directory shows it: the same failure there
    keeps it unscored (its cause named), the control getting further makes it the model's scored fail."""
    if run.cancelled or run.start_error or (run.reward is not None and not run.fault):
        return run
    control = control_run(trial, cancel)
    if control is None:  # cancelled (then the trial runs again on resume), or the engine could not run it
        return dataclasses.replace(run, cancelled=True) if cancel is not None and cancel.is_set() else run
    if run.fault:
        return _settle_fault(trial, run, control)
    what = "timed out" if run.timed_out else "wrote no reward" + (
        f" ({run.error})" if run.error and "wrote no reward" not in run.error else "")
    if control.reward is not None:  # the control got further: the model's files or code stopped the verifier
        why = (f"the verifier {what} on the model's working directory, but on the task's untouched one "
               f"{control.summary()}: the model's files or code stopped it")
        return dataclasses.replace(run, reward=0.0, timed_out=False, error="", model_fault=why,
                                   output=f"{run.output}\nagentic-eval: {why}\n")
    note = f"on the task's untouched working directory {control.summary()}"
    if control.fault is not None:  # no model's code ran there: what its output says is the machine's or task's
        return dataclasses.replace(run, fault=f"{control.fault.cause} ({note})",
                                   fault_side="machine" if control.fault.kind == "network" else "grader")
    return dataclasses.replace(run, error=f"{run.error or what}; {note}")


def _settle_fault(trial: EnvironmentTrial, run: VerifierRun, control: ControlRun) -> VerifierRun:
    """A fault the run's output showed stands only when the control shows it too (the same program missing, or
    the network's want with no program named)."""
    script = _script(trial)
    fault = verifier_fault(run.output, script, offline=trial.offline, reward=run.reward)
    same = control.fault is not None and fault is not None and (
        control.fault.program == fault.program and (fault.program or control.fault.kind == fault.kind))
    if same:
        return dataclasses.replace(run, fault=f"{run.fault} (the same on the task's untouched working directory)")
    if control.reward is None:  # the control got no further (a timeout, no reward): not shown to be the model's
        return dataclasses.replace(run, fault=f"{run.fault} (on the task's untouched working directory "
                                              f"{control.summary()})")
    said = run.fault.split(" (", 1)[-1].rstrip(")") if " (" in run.fault else run.fault
    why = (f"the verifier's output says what its container lacked ({said[:160]}), but on the task's untouched "
           f"working directory it did not fail so ({control.summary()}): the model's code printed or caused it")
    reward = run.reward if run.reward is not None else 0.0
    return dataclasses.replace(run, reward=reward, fault="", fault_side="", error="", timed_out=False,
                               model_fault=why, output=f"{run.output}\nagentic-eval: {why}\n")


def _script(trial: EnvironmentTrial) -> str:
    try:
        return trial.task.grader_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _key(trial: EnvironmentTrial) -> tuple[str, ...]:
    """What the control's result depends on: the engine, the task's image, its verifier's files and settings, and
    whether its container has a way out."""
    digest = hashlib.sha256()
    for rel in sorted(trial.spec.verifier_files):
        source = trial.task.dir / rel
        paths = sorted(p for p in source.rglob("*") if p.is_file()) if source.is_dir() else [source]
        for path in paths:
            digest.update(str(path.relative_to(trial.task.dir)).encode() + b"\0")
            try:
                digest.update(path.read_bytes() + b"\0")
            except OSError:
                digest.update(b"?\0")
    digest.update(repr(sorted({**trial.spec.env, **trial.spec.verifier_env}.items())).encode())
    digest.update(f"{trial.spec.workdir}\0{trial.spec.verifier_timeout_s}".encode())
    return (str(getattr(trial.engine, "name", "")), trial.image, digest.hexdigest(), str(trial.offline))


def control_run(trial: EnvironmentTrial, cancel: threading.Event | None = None) -> ControlRun | None:
    """The verifier's run on the task's untouched working directory, once per `_key` in this process (a second
    trial of the task waits for the first's); None when it was cancelled or the engine could not run it."""
    key = _key(trial)
    with _guard:
        lock = _locks.setdefault(key, threading.Lock())
    with lock:
        if key in _kept:
            return _kept[key]
        found = _run(trial, cancel)
        if found is not None:
            _kept[key] = found
        return found


def _run(trial: EnvironmentTrial, cancel: threading.Event | None) -> ControlRun | None:
    """One control run: a fresh container of the task's image (its own working directory, untouched), the
    verifier's files at /tests and an empty /logs/verifier, on a network of its own with fresh copies of the
    task's services (or none), as the verifier runs: nothing of the trial's that the model could have changed."""
    from agentic_eval.confine.docker_env import (
        LABEL,
        TESTS_MOUNT,
        VERIFIER_LOGS,
        RewardError,
        VerifierLogs,
        parse_reward,
    )
    from agentic_eval.leftovers import MarkedTempDir

    spec = trial.spec
    start = time.monotonic()
    marked = MarkedTempDir("ae-verify-")  # a killed run's: the next unmounts its logs and removes it
    work = Path(marked.name)
    logs: VerifierLogs | None = None
    container: Container | None = None
    apart = dataclasses.replace(trial, network=None, services=[], container=None, mounted=(), stopped=True,
                                lock=threading.Lock())
    try:
        apart.start_services()  # its own network and services, as the trial's were made
        tests = work / "tests"
        tests.mkdir()
        logs = VerifierLogs(work)
        for rel in spec.verifier_files:
            source = trial.task.dir / rel
            if source.is_dir():
                shutil.copytree(source, tests, dirs_exist_ok=True)
            elif source.exists():
                shutil.copy2(source, tests / source.name)
        network = apart.network
        container = trial.client.containers.create(
            trial.image, ["bash", f"{TESTS_MOUNT}/test.sh"], entrypoint=[], working_dir=spec.workdir,
            environment={**spec.env, "TEST_DIR": TESTS_MOUNT, **spec.verifier_env, "PATH": trial.path_env},
            volumes=[f"{tests}:{TESTS_MOUNT}:rw", f"{logs.path}:{VERIFIER_LOGS}:rw"], init=True, user="0:0",
            labels={LABEL: str(trial.sandbox), **owner_labels()},
            network=network.name if network is not None else None,
            network_mode=None if network is not None else "none",
            mem_limit=f"{spec.memory_mb}m", nano_cpus=int(spec.cpus * 1e9), pids_limit=1024,
            security_opt=["no-new-privileges"], tmpfs={"/tmp": "rw,nosuid,nodev,size=512m,mode=1777"})
        container.start()
        deadline = time.monotonic() + spec.verifier_timeout_s
        timed_out = False
        while True:
            container.reload()
            if container.status not in ("created", "running"):
                break
            if cancel is not None and cancel.is_set():
                return None
            if time.monotonic() >= deadline:
                timed_out = True
                break
            time.sleep(0.1)
        output = container.logs(stdout=True, stderr=True).decode("utf-8", errors="replace")[-64_000:]
        took = time.monotonic() - start
        if timed_out:
            return ControlRun(None, True, "timeout", None, took)
        reward, error = None, ""
        try:
            reward = parse_reward(logs.path)
        except RewardError as exc:
            error = str(exc)
        fault = verifier_fault(output, _script(trial), offline=trial.offline, reward=reward)
        return ControlRun(reward, False, error, fault, took)
    except Exception:  # noqa: BLE001 - the engine could not run it: nothing shown either way
        return None
    finally:
        if container is not None:
            try:
                container.remove(force=True)
            except Exception:  # noqa: BLE001 - gone already
                pass
        apart.end()
        if logs is not None:
            logs.close()
        marked.cleanup()


def forget() -> None:
    """Drop every kept control result (tests; a new run in the same process keeps them: the same task, image
    and engine give the same control)."""
    with _guard:
        _kept.clear()
