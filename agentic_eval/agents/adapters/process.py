"""Run one CLI process headless: own session, stdin from /dev/null, output to files, a hard deadline.

On expiry or cancellation the whole process group is sent SIGTERM, then SIGKILL.
CLIs that start helpers in a session of their own (a shell tool, a language
server) are found afterwards by a marker in their inherited environment and
killed too, so nothing a trial started outlives it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentic_eval.confine.process import signal_group

MARKER_VAR = "AGENTIC_EVAL_AGENT_RUN"
"""Environment variable set to a per-run token on every CLI process (and so on its children)."""
POLL_S = 0.1
TERM_GRACE_S = 3.0


@dataclass(frozen=True)
class ProcessResult:
    exit_code: int | None
    """None when the process was killed (timeout, cancel) or could not start."""
    duration_s: float
    timed_out: bool = False
    cancelled: bool = False
    start_error: str | None = None
    leftovers_killed: int = 0
    """Processes of this run still alive after it ended (killed by marker)."""
    signal: int | None = None
    """The signal that ended the process when the harness sent none (it sends one only on timeout or cancel):
    its own exit status, or 128 + N, which a shell, the sandbox's relay and bwrap report for a child that died
    by signal N."""
    deadline_at: float | None = None
    """On timeout: the deadline that passed (time.monotonic())."""


def signal_of(exit_code: int | None) -> int | None:
    """The signal an exit status says the process died by: -N from Python's own child, 128 + N from a shell
    or a wrapper that reports its child's death that way (the relay, bwrap, docker)."""
    if exit_code is None:
        return None
    if exit_code < 0:
        return -exit_code
    return exit_code - 128 if 128 < exit_code <= 128 + 64 else None


def kill_marked(token: str, rounds: int = 3) -> int:
    """SIGKILL every process whose environment carries `MARKER_VAR=token`; returns how many were hit.

    Linux only (reads /proc); elsewhere it does nothing. Bounded: at most `rounds` passes.
    """
    needle = f"{MARKER_VAR}={token}".encode()
    proc_root = Path("/proc")
    if not proc_root.is_dir():
        return 0
    me = os.getpid()
    killed = 0
    for _ in range(rounds):
        hits = 0
        for entry in proc_root.iterdir():
            if not entry.name.isdigit() or int(entry.name) == me:
                continue
            try:
                environ = (entry / "environ").read_bytes()
            except OSError:
                continue
            if needle in environ.split(b"\0"):
                try:
                    os.kill(int(entry.name), signal.SIGKILL)
                    hits += 1
                except (ProcessLookupError, PermissionError):
                    pass
        killed += hits
        if hits == 0:
            break
        time.sleep(0.05)
    return killed


def run_headless(
    argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], stdout: Path, stderr: Path, timeout_s: float,
    cancel: threading.Event, token: str,
) -> ProcessResult:
    """Run `argv` in a new session with stdin /dev/null, stdout/stderr to files, until it exits, the
    deadline passes, or `cancel` is set. Everything it started is killed before this returns."""
    t0 = time.monotonic()
    full_env = dict(env)
    full_env[MARKER_VAR] = token
    with stdout.open("wb") as out, stderr.open("wb") as err:
        try:
            proc = subprocess.Popen(list(argv), cwd=cwd, env=full_env, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=err, start_new_session=True)
        except OSError as exc:
            return ProcessResult(None, time.monotonic() - t0, start_error=str(exc))
        deadline = t0 + max(0.0, timeout_s)
        timed_out = cancelled = False
        try:
            while proc.poll() is None:
                if cancel.is_set():
                    cancelled = True
                    break
                if time.monotonic() >= deadline:
                    timed_out = True
                    break
                try:
                    proc.wait(timeout=POLL_S)
                except subprocess.TimeoutExpired:
                    pass
            if timed_out or cancelled:
                signal_group(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=TERM_GRACE_S)
                except subprocess.TimeoutExpired:
                    pass
        finally:
            signal_group(proc.pid, signal.SIGKILL)
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            leftovers = kill_marked(token)
    code = None if (timed_out or cancelled) else proc.returncode
    return ProcessResult(code, time.monotonic() - t0, timed_out=timed_out, cancelled=cancelled,
                         leftovers_killed=leftovers, signal=signal_of(code),
                         deadline_at=deadline if timed_out else None)


def last_line(path: Path, limit: int = 300) -> str:
    """The last non-empty line of a text file (at most `limit` characters), or ''."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 16384))
            tail = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    lines = [ln.strip() for ln in tail.splitlines() if ln.strip()]
    return lines[-1][:limit] if lines else ""
