"""Running one confined command to its end: its output's head and tail, its exit, its process group killed."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from agentic_eval.confine.backend import Confinement, SandboxBackend


@dataclass(frozen=True)
class CommandResult:
    """A finished confined command: its output (head and tail kept), exit code, and why it was stopped."""

    output: bytes
    returncode: int | None
    stopped_by: str = ""
    """'' when it exited by itself; else 'timed out after Ns' or 'was cancelled'."""


class HeadAndTail:
    """Collects a stream's bytes keeping at most `limit` of its head and `limit` of its tail."""

    def __init__(self, limit: int) -> None:
        self.limit, self.total = limit, 0
        self.head, self.tail = bytearray(), bytearray()

    def add(self, block: bytes) -> None:
        self.total += len(block)
        room = self.limit - len(self.head)
        if room > 0:
            self.head += block[:room]
            block = block[room:]
        self.tail += block
        del self.tail[: -self.limit]

    def read_all(self, stream: IO[bytes]) -> None:
        while block := os.read(stream.fileno(), 65536):
            self.add(block)

    @property
    def omitted(self) -> int:
        return self.total - len(self.head) - len(self.tail)

    def data(self, marker: bytes = b"") -> bytes:
        return bytes(self.head) + (marker if self.omitted else b"") + bytes(self.tail)


def signal_group(pgid: int, sig: int | None = None) -> None:
    """Send `sig` (default SIGKILL) to the process group `pgid`; a group already gone, or not ours,
    is left alone. The one process-group kill: graders, CLI agents and cold-start use it too."""
    import signal

    try:
        os.killpg(pgid, signal.SIGKILL if sig is None else sig)
    except (ProcessLookupError, PermissionError):
        pass


def run_command(backend: SandboxBackend, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str],
                spec: Confinement, timeout_s: float, cancel: threading.Event | None = None,
                stdin: bytes | None = None, output_limit: int = 16_000) -> CommandResult:
    """Run `argv` through `backend` with stdout and stderr merged, until it exits, `timeout_s` passes or
    `cancel` is set; its whole process group (and, confined, its PID namespace) is killed before this
    returns. Keeps `output_limit` bytes of the output's head and as many of its tail. The time limit counts
    from the call: a backend that must first start a place to run the command (a docker container) spends it."""
    end = time.monotonic() + timeout_s
    proc = subprocess.Popen(backend.wrap(argv, cwd=cwd, spec=spec), cwd=cwd, env=dict(env),
                            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    output = HeadAndTail(output_limit)
    assert proc.stdout is not None
    reader = threading.Thread(target=output.read_all, args=(proc.stdout,), daemon=True)
    reader.start()
    if stdin is not None:
        def feed() -> None:
            try:
                assert proc.stdin is not None
                proc.stdin.write(stdin)
                proc.stdin.close()
            except OSError:
                pass
        threading.Thread(target=feed, daemon=True).start()
    stopped_by = ""
    # Wait without reaping, so the group id cannot be reused before the group is killed.
    while os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
        if cancel is not None and cancel.is_set():
            stopped_by = "was cancelled"
            break
        if time.monotonic() >= end:
            stopped_by = f"timed out after {timeout_s:g}s"
            break
        time.sleep(0.01)
    signal_group(proc.pid)  # also ends whatever the command left running in the background
    proc.wait()
    reader.join(timeout=5)
    return CommandResult(output.data(f"\n[... {output.omitted} bytes of output omitted ...]\n".encode()),
                         None if stopped_by else proc.returncode, stopped_by)
