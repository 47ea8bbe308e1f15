"""A test run judged by the CPU time its process tree used, not by the wall clock: the same verdict on a quiet
and on a loaded machine.

`run(argv, ...)` starts the command in a session of its own and watches it until it ends or one of three things
stops it (its whole session killed):

- `cpu`: the tree used more than `cpu_limit` CPU seconds: too slow, on any machine (the limit is a multiple of the
  pristine suite's own CPU time, measured on the same machine);
- `idle`: for `idle_s` seconds of wall time the tree used next to no CPU (less than IDLE_CPU_S): blocked (a
  sleep, a lock, a read that never ends), which a loaded machine does not cause: a runnable process gets its
  share of the cores;
- `wall`: the wall-clock guard, only against a hang the two rules above miss; what it stops is undecided (the
  machine may just be very loaded), and the caller tries again with a longer guard before deciding anything.

CPU time is read from /proc (the session's processes: their own time and that of the children they reaped) while
it runs and from `os.wait4` (the leader and every descendant it reaped) at the end.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

IDLE_CPU_S = 0.1
"""CPU seconds under which a stretch of `idle_s` wall seconds counts as idle"""
POLL_S = 0.5
"""seconds between looks at the session's CPU time (a look reads /proc: ~5 ms for 150 processes)"""

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True)
class Measured:
    returncode: int | None
    """None when it was stopped"""
    cpu_s: float
    wall_s: float
    stopped: str = ""
    """"" (it ended), "cpu", "idle" or "wall" """


def session_cpu(sid: int) -> float | None:
    """CPU seconds used so far by the processes of session `sid` (their own, and their reaped children's); None
    when /proc cannot be read (then only the wall-clock guard and the end's figure apply)."""
    total = 0
    try:
        names = os.listdir("/proc")
    except OSError:
        return None
    for name in names:
        if not name.isdigit():
            continue
        try:
            text = Path("/proc", name, "stat").read_text()
        except OSError:
            continue  # gone meanwhile
        fields = text[text.rfind(")") + 2:].split()  # after "pid (comm) ": state is fields[0]
        if len(fields) < 15 or int(fields[3]) != sid:
            continue
        total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    return total / _TICK


def _kill(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run(argv: list[str], *, cwd: Path, env: dict[str, str], wall_limit: float, cpu_limit: float | None = None,
        idle_s: float | None = None) -> Measured:
    """Run `argv` (stdin empty, output discarded) until it ends or is stopped as the module says."""
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    stopped = ""
    last_busy, last_cpu = start, 0.0
    try:
        ended = os.pidfd_open(proc.pid) if hasattr(os, "pidfd_open") else None  # readable once it exits
    except OSError:
        ended = None
    waiter = None
    if ended is not None:
        waiter = select.poll()
        waiter.register(ended, select.POLLIN)
    try:
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            now = time.monotonic()
            if pid == proc.pid:
                proc.returncode = os.waitstatus_to_exitcode(status)
                _kill(proc.pid)  # whatever it left behind in its session
                cpu = usage.ru_utime + usage.ru_stime
                if cpu_limit is not None and cpu > cpu_limit:  # it ended, but over the limit
                    return Measured(None, cpu, now - start, "cpu")
                return Measured(proc.returncode, cpu, now - start)
            cpu_now = session_cpu(proc.pid)
            if cpu_now is not None:
                if cpu_limit is not None and cpu_now > cpu_limit:
                    stopped = "cpu"
                elif cpu_now - last_cpu >= IDLE_CPU_S:
                    last_busy, last_cpu = now, cpu_now
                elif idle_s is not None and now - last_busy > idle_s:
                    stopped = "idle"
            if not stopped and now - start > wall_limit:
                stopped = "wall"
            if stopped:
                break
            if waiter is None:
                time.sleep(POLL_S)
            else:
                waiter.poll(POLL_S * 1000)  # back at once when it ends (poll, not select: any fd number)
    except BaseException:
        _kill(proc.pid)
        proc.wait()
        raise
    finally:
        if ended is not None:
            os.close(ended)
    cpu_end = session_cpu(proc.pid)
    _kill(proc.pid)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    cpu = max(usage.ru_utime + usage.ru_stime, cpu_end or 0.0)
    return Measured(None, cpu, time.monotonic() - start, stopped)
