"""A fork server for the grader's own pytest runs of the model's tests (issue 39: grading time per trial).

A mutation task runs the model's tests six or seven times (reference, rewrite, mutants), each a confined
`python -I -B -c PYTEST_BOOT ...`: most of such a run is the interpreter's start and `import pytest`. Where the
harness runs as root on bwrap, a `ForkServer` starts once per code host: one bwrap like a run's, but keeping root
in it, whose Python imports pytest (our code: it has run nothing of the model's) and then only forks, one child
per run. A run keeps every isolation it has as a process of its own:

- the child reads what it runs (argv, env, paths) from a socket of its own after the fork: the server holds nothing
  of any run (it keeps no child's pid; each fork gets a random pid; its loop allocates the same each time);
- the child makes its own mount, network, IPC, UTS and PID namespaces (loopback up), a fresh /tmp, /dev/shm and
  /proc, covers the folder of all lanes with a tmpfs holding only its own copy, joins a new session keyring, and
  forks the run's PID 1, which closes every fd but its output, sets the rlimits of today's `prlimit`, drops to the
  copy's uid as `setpriv` does (no groups, empty bounding set, no capabilities, no_new_privs) and runs
  `pytest.main` in the loaded interpreter; when it ends, every process of its namespace ends with it;
- the exit status comes back from the child (root, in a PID namespace the run cannot see), never from the run;
  the server is not dumpable. A run that ends the server (it cannot see it: this is belt and braces) makes itself,
  every run in flight and every later one "no evidence", a failed check, never a pass.

Anything else (not root, not bwrap, a stdin, the server could not start or set up a run before the model's code
ran) falls back to a process per run, as before. `AGENTIC_EVAL_FORK_RUNS=0` turns it off (the benchmark shows
both). The server's program is grading/forkserve.py (standard library only).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping, Sequence
from typing import Any

from agentic_eval.grading.forkserve import receive_message, send_message

SWITCH_ENV = "AGENTIC_EVAL_FORK_RUNS"
"""Set to 0 to run every pytest run as a process of its own (the fork server is on by default)."""
NO_EVIDENCE = "no evidence: the fork server ended while this run was in flight"


# --------------------------------------------------------------------------- the harness's side

EXIT_NO_PYTEST = 97
PYTEST_BOOT = f"""\
import os, sys
paths = [p for p in sys.argv[1].split(os.pathsep) if p]
del sys.argv[1]
sys.argv[0] = "pytest"
try:
    import pytest
except ImportError as exc:
    print(f"{{type(exc).__name__}}: {{exc}}")
    raise SystemExit({EXIT_NO_PYTEST})
sys.path.extend(paths)
raise SystemExit(pytest.main(sys.argv[1:]))
"""
"""gradelib's pytest run (`python -I -B -c PYTEST_BOOT paths args...`): the one a fork server runs instead, in an
interpreter that has pytest loaded already (the same sys.path, pytest.main with the same arguments)."""
PYTEST_BOOT_HEAD = ("-I", "-B", "-c")
"""A pytest run of gradelib's: `python -I -B -c PYTEST_BOOT paths args...` (gradelib's `_PYTEST_BOOT`)."""


def enabled() -> bool:
    """Whether pytest runs may go through a fork server (`AGENTIC_EVAL_FORK_RUNS`, on unless 0)."""
    return os.environ.get(SWITCH_ENV, "1").strip() not in ("0", "false", "no", "off")


def pytest_argv(python: str, paths: Sequence[str]) -> list[str]:
    """The head of gradelib's pytest run (`python -I -B -c PYTEST_BOOT paths`; pytest's arguments follow): the one
    place it is written, so that `pytest_run` knows every run built here."""
    return [python, *PYTEST_BOOT_HEAD, PYTEST_BOOT, os.pathsep.join(paths)]


def pytest_run(argv: Sequence[str]) -> tuple[list[str], list[str]] | None:
    """(the pythonpath folders, pytest's arguments) when `argv` is exactly gradelib's pytest run, else None."""
    if len(argv) < 6 or tuple(argv[1:4]) != PYTEST_BOOT_HEAD or argv[4] != PYTEST_BOOT:
        return None
    return [p for p in argv[5].split(os.pathsep) if p], list(argv[6:])


class ForkServer:
    """One server per code host (see the module's docstring): started by `start`, runs by `run`, gone by `close`."""

    def __init__(self, python: str, lanes: Any, argv: list[str]) -> None:
        import threading

        self.python = python
        self.lanes = lanes
        self.broken = False
        """The server ended while the host still used it: every run in flight then or started later is no evidence."""
        self.why_not = ""
        self._argv = argv
        self._closing = threading.Event()
        self._ready = threading.Event()
        self._send = threading.Lock()
        self._usable = True
        self._control: socket.socket | None = None
        self._proc: Any = None
        # bwrap's --die-with-parent follows the thread that started it: a thread of its own, alive until close()
        self._keeper = threading.Thread(target=self._keep, daemon=True, name="fork-server")
        self._keeper.start()
        self._ready.wait(60.0)
        if self._control is None and not self.why_not:
            self.why_not = "it did not start within 60 s"

    @classmethod
    def start(cls, backend: Any, python: str, lanes: Any, hidden: Sequence[Any]) -> ForkServer:
        """A server for runs on copies under the folder `lanes`; its `why_not` says why it is not there (then every
        run goes as before)."""
        from pathlib import Path

        from agentic_eval.confine.backend import Confinement
        Path(lanes).mkdir(exist_ok=True)  # bound into the server: it must be there before the first lane is
        spec = Confinement(writable=(Path(lanes),), hidden=tuple(Path(h) for h in hidden))
        from agentic_eval.grading import forkserve

        argv = [*backend.server_args(cwd=Path("/"), spec=spec), python, "-I", "-B", "-c",
                Path(forkserve.__file__).read_text(encoding="utf-8")]
        return cls(python, Path(lanes), argv)

    def _keep(self) -> None:
        import subprocess

        from agentic_eval.grading.sealed import ENV_ALLOWED

        # The server's environment is what every run's /proc/self/environ shows (a fork keeps the block it was
        # started with, whatever os.environ says): only what a run started on its own gets, never the harness's.
        env = {k: os.environ[k] for k in ENV_ALLOWED if k in os.environ}
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._proc = subprocess.Popen([*self._argv, str(child.fileno())], pass_fds=(child.fileno(),), env=env,
                                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.PIPE, start_new_session=True)
        except OSError as exc:
            self.why_not = f"it could not start: {exc}"
            self._ready.set()
            return
        finally:
            child.close()
        parent.settimeout(60.0)
        try:
            first = parent.recv(4096)
        except OSError as exc:
            first = f"N{exc}".encode()
        if first == b"R":
            parent.settimeout(None)
            self._control = parent
        else:
            err = self._proc.stderr.read(2000).decode("utf-8", "replace").strip() if not first else ""
            self.why_not = (first[1:].decode("utf-8", "replace") or err or "it ended at its start")[:300]
            parent.close()
            self._proc.kill()
        self._ready.set()
        self._proc.wait()  # until it ends: closed, or ended by something else (then it is broken)
        self._proc.stderr.close()  # else a pipe per server, one per graded trial, stays open in the harness
        if self._control is not None and not self._closing.is_set():
            self.broken = True

    def run(self, *, args: Sequence[str], paths: Sequence[str], lane: str, cwd: str, env: Mapping[str, str],
            uid: int, limits: Mapping[str, int | None], timeout: float, cancel: Any, output_limit: int,
            identity: Mapping[str, str], tmp_bytes: int) -> tuple[int | None, bytes, str] | None:
        """Run pytest with `args` on the lane `lane` (a folder of `lanes`): (exit, output, stopped_by) as run_command
        says them, or None when it was not run (the caller runs it as before)."""
        import select
        import threading
        import time

        from agentic_eval.confine.process import HeadAndTail

        end = time.monotonic() + timeout
        if self.broken:
            return None, b"", NO_EVIDENCE
        if self._control is None or not self._usable:
            return None
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        out_r, out_w = os.pipe()
        try:
            with self._send:
                control = self._control
                if control is None:
                    raise OSError("the fork server is closed")
                socket.send_fds(control, [b"F"], [theirs.fileno(), out_w])
        except OSError:
            self.broken = not self._closing.is_set()
            mine.close()
            os.close(out_r)
            return (None, b"", NO_EVIDENCE) if self.broken else None
        finally:
            theirs.close()
            os.close(out_w)
        output = HeadAndTail(output_limit)
        with os.fdopen(out_r, "rb", buffering=0) as stream:
            reader = threading.Thread(target=output.read_all, args=(stream,), daemon=True)
            reader.start()
            with mine:
                send_message(mine, {"args": list(args), "paths": list(paths), "lanes": str(self.lanes), "lane": lane,
                                    "cwd": cwd, "env": dict(env), "uid": uid, "limits": dict(limits),
                                    "identity": dict(identity), "tmp_bytes": tmp_bytes})
                stopped_by = ""
                answer: dict[str, Any] | None = None
                poller = select.poll()  # not select.select: a harness holding over 1,024 files has fds it cannot take
                poller.register(mine, select.POLLIN | select.POLLHUP)
                while True:
                    if cancel is not None and cancel.is_set():
                        stopped_by = "was cancelled"
                        break
                    left = end - time.monotonic()
                    if left <= 0:
                        stopped_by = f"timed out after {timeout:g}s"
                        break
                    if poller.poll(min(left, 0.05) * 1000):
                        mine.settimeout(10.0)
                        try:
                            answer = receive_message(mine)
                        except OSError:
                            answer = None
                        break
            # closed: a run still going is killed by its keeper, with every process of its namespace
            reader.join(timeout=10.0)
        data = output.data(f"\n[... {output.omitted} bytes of output omitted ...]\n".encode())
        if self.broken:
            return None, data, NO_EVIDENCE
        if stopped_by:
            return None, data, stopped_by
        if answer is not None and "setup_error" in answer:
            self.why_not = f"a run could not be set up: {str(answer['setup_error'])[:300]}"
            self._usable = False  # the rest go as before; this one too (nothing of the model's ran)
            return None
        if answer is None or not isinstance(answer.get("exit"), int):
            return None, data, "no evidence: the run's keeper ended without its exit status"
        return int(answer["exit"]), data, ""

    def close(self) -> None:
        self._closing.set()
        control, self._control = self._control, None
        if control is not None:
            control.close()  # the server ends at once; runs in flight end with their keepers' sockets
        if self._proc is not None and self._proc.poll() is None:
            try:
                self._proc.wait(timeout=5.0)
            except Exception:  # noqa: BLE001 - a server that does not end is killed
                self._proc.kill()
