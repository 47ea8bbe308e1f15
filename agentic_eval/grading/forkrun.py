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
both). This file's text is also the server's program (`python -I -B -c`), so its top level uses the standard
library alone.
"""

from __future__ import annotations

import array
import json
import os
import socket
import struct
import sys
from collections.abc import Mapping, Sequence
from typing import Any

SWITCH_ENV = "AGENTIC_EVAL_FORK_RUNS"
"""Set to 0 to run every pytest run as a process of its own (the fork server is on by default)."""
NO_EVIDENCE = "no evidence: the fork server ended while this run was in flight"

_CLONE_NEWNS, _CLONE_NEWUTS, _CLONE_NEWIPC, _CLONE_NEWPID, _CLONE_NEWNET = (
    0x00020000, 0x04000000, 0x08000000, 0x20000000, 0x40000000)
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = (
    1, 2, 4, 8, 32, 4096, 16384, 1 << 18)
_MNT_DETACH = 2
_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE, _PR_CAPBSET_DROP, _PR_SET_NO_NEW_PRIVS, _PR_CAP_AMBIENT = 1, 4, 24, 38, 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_KEYCTL_JOIN_SESSION_KEYRING = 1
_SYS_KEYCTL = {"x86_64": 250, "aarch64": 219}
_SIOCSIFFLAGS, _IFF_UP, _IFF_LOOPBACK, _IFF_RUNNING = 0x8914, 0x1, 0x8, 0x40


# --------------------------------------------------------------------------- framing (both sides)


def send_message(sock: socket.socket, payload: Mapping[str, Any]) -> None:
    data = json.dumps(payload).encode("utf-8")
    sock.sendall(struct.pack(">I", len(data)) + data)


def receive_message(sock: socket.socket, limit: int = 1 << 24) -> dict[str, Any] | None:
    """A framed JSON object, or None when the other side closed (or sent something else)."""
    head = _exactly(sock, 4)
    if head is None:
        return None
    (size,) = struct.unpack(">I", head)
    body = _exactly(sock, size) if size <= limit else None
    try:
        data = json.loads(body.decode("utf-8")) if body is not None else None
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _exactly(sock: socket.socket, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


# --------------------------------------------------------------------------- the server (inside its bwrap, root)


class _Libc:
    def __init__(self) -> None:
        import ctypes

        self.ctypes = ctypes
        self.lib = ctypes.CDLL(None, use_errno=True)
        self.lib.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
        self.lib.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
        self.lib.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]

    def _check(self, result: int, what: str) -> int:
        if result < 0:
            err = self.ctypes.get_errno()
            raise OSError(err, f"{what}: {os.strerror(err)}")
        return result

    def prctl(self, option: int, arg: int = 0) -> int:
        return self._check(self.lib.prctl(option, arg, 0, 0, 0), f"prctl({option})")

    def unshare(self, flags: int) -> None:
        self._check(self.lib.unshare(flags), "unshare")

    def mount(self, source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
        def b(text: str | None) -> bytes | None:
            return None if text is None else text.encode()
        self._check(self.lib.mount(b(source), b(target), b(fstype), flags, b(data)), f"mount {target}")

    def umount(self, target: str) -> None:
        self._check(self.lib.umount2(target.encode(), _MNT_DETACH), f"umount {target}")

    def join_session_keyring(self) -> None:
        import platform

        number = _SYS_KEYCTL.get(platform.machine())
        if number is None:
            raise OSError("no keyctl syscall number for this machine")
        self._check(self.lib.syscall(number, _KEYCTL_JOIN_SESSION_KEYRING, None), "keyctl join")


def _random_last_pid() -> None:
    """The next fork's pid at random in this PID namespace: no pid of a run, left in the server's freed memory,
    tells a later run how many came before it."""
    import secrets

    with open("/proc/sys/kernel/pid_max", encoding="ascii") as handle:
        top = int(handle.read())
    with open("/proc/sys/kernel/ns_last_pid", "w", encoding="ascii") as handle:
        handle.write(str(300 + secrets.randbelow(max(1, top - 70_000))))


def serve(control_fd: int) -> None:
    """The server's loop: import pytest, say ready ("R", or "N" and why not), then per message (one byte with two
    fds: the run's socket and its output pipe) fork a child that runs it. Ends when the harness closes the socket."""
    import gc
    import signal

    control = socket.socket(fileno=control_fd)
    try:
        libc = _Libc()
        libc.prctl(_PR_SET_DUMPABLE, 0)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children reaped by the kernel: the server keeps no pid
        _random_last_pid()
        import importlib

        import pytest  # noqa: F401 - what every run needs, loaded once
        from _pytest.config import default_plugins

        for name in default_plugins:
            importlib.import_module(f"_pytest.{name}")
        if os.fork() == 0:  # a first fork, so that even the first run's finds one before it
            os._exit(0)
    except BaseException as exc:  # noqa: BLE001 - no server: the harness runs each command as before
        control.sendall(b"N" + f"{type(exc).__name__}: {exc}".encode()[:2000])
        os._exit(0)
    gc.collect()
    gc.disable()  # no collection counts that move from one fork to the next (re-enabled in each run)
    gc.freeze()  # and a run's collections leave what the server loaded alone (no copy of its pages)
    control.sendall(b"R")
    space = socket.CMSG_SPACE(2 * array.array("i").itemsize)
    while True:
        message, ancillary, _, _ = control.recvmsg(1, space)
        if not message:
            os._exit(0)
        fds = array.array("i")
        for _, _, data in ancillary:
            fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
        if len(fds) == 2:
            _random_last_pid()
            if os.fork() == 0:
                _child(libc, control, fds[0], fds[1])
        for fd in fds:
            os.close(fd)


def _child(libc: _Libc, control: socket.socket, chan_fd: int, out_fd: int) -> None:
    """One run, in a child of the server (root): read it, make its namespaces, fork its PID 1, report its exit."""
    import signal

    code, started = 1, False
    chan = socket.socket(fileno=chan_fd)
    try:
        os.close(control.detach())
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        if os.getppid() == 1:  # the server is gone
            os._exit(1)
        request = receive_message(chan)
        if request is None:
            os._exit(1)
        _namespaces(libc, request)
        ready_r, ready_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(ready_r)
            _run(libc, request, out_fd, ready_w, chan.detach())
        os.close(ready_w)
        os.close(out_fd)
        ready = _read_all(ready_r)
        if ready != b"1":
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            send_message(chan, {"setup_error": ready.decode("utf-8", "replace")[:2000] or "the run ended in set-up"})
        else:
            started = True
            send_message(chan, {"exit": _wait(pid, chan)})
        code = 0
    except BaseException as exc:  # noqa: BLE001 - before the model's code: the run falls back; after: no evidence
        try:
            send_message(chan, {"lost" if started else "setup_error": f"{type(exc).__name__}: {exc}"})
        except OSError:
            pass
    os._exit(code)


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 4096):
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


def _wait(pid: int, chan: socket.socket) -> int | None:
    """The run's exit (128 + signal when killed, as bwrap says it), or None when the harness closed the socket (its
    time is up, or the grading is over): then the run's PID 1 is killed, and every process of its namespace too."""
    import select
    import signal

    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    poller.register(chan.fileno(), select.POLLIN | select.POLLHUP)
    while True:
        events = dict(poller.poll())
        if pidfd in events:
            break
        if chan.fileno() in events:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.waitstatus_to_exitcode(status)


def _namespaces(libc: _Libc, request: Mapping[str, Any]) -> None:
    """New namespaces for the run, and a view with a fresh /tmp, /dev/shm and /dev/pts, and its own lane alone."""
    lanes, lane = str(request["lanes"]), str(request["lane"])
    if "/" in lane or lane in ("", ".", ".."):
        raise ValueError(f"not a lane's name: {lane!r}")
    libc.unshare(_CLONE_NEWNS | _CLONE_NEWNET | _CLONE_NEWIPC | _CLONE_NEWPID | _CLONE_NEWUTS)
    libc.mount(None, "/", None, _MS_REC | _MS_PRIVATE)
    # what is bound in is opened first (in the new namespace): the fresh /tmp may cover it (folders under /tmp)
    held = {os.path.join(lanes, lane): os.open(os.path.join(lanes, lane), os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW)}
    plain = _MS_NOSUID | _MS_NODEV
    libc.mount("tmpfs", "/tmp", "tmpfs", plain, f"mode=1777,size={int(request['tmp_bytes'])}")
    libc.mount("tmpfs", "/dev/shm", "tmpfs", plain | _MS_NOEXEC, "mode=0755,size=64k")  # as bwrap's: root's
    libc.mount("devpts", "/dev/pts", "devpts", _MS_NOSUID | _MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620")
    # who the run's uid is (/etc/passwd and /etc/group as bwrap's runs get them), from a tmpfs of this run's
    own = "/tmp/.identity"
    os.mkdir(own, 0o700)
    libc.mount("tmpfs", own, "tmpfs", plain, "mode=0755,size=1m")
    for target, text in dict(request.get("identity") or {}).items():
        if target not in ("/etc/passwd", "/etc/group"):
            raise ValueError(f"not an identity file: {target!r}")
        made = os.path.join(own, os.path.basename(target))
        with open(made, "w", encoding="utf-8") as handle:
            handle.write(str(text))
        os.chmod(made, 0o644)
        libc.mount(made, target, None, _MS_BIND)
        libc.mount(None, target, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | plain)
    libc.umount(own)
    os.rmdir(own)
    covered = os.path.isdir(lanes)
    if covered:  # only this run's lane of the lanes
        libc.mount("tmpfs", lanes, "tmpfs", plain, "mode=0755,size=64k")
    else:  # under the fresh /tmp: folders of root's, as bwrap makes them
        os.makedirs(lanes, 0o755)
    os.mkdir(os.path.join(lanes, lane), 0o755)
    for target, fd in held.items():
        libc.mount(f"/proc/self/fd/{fd}", target, None, _MS_BIND | _MS_REC)
        os.close(fd)
    if covered:
        libc.mount(None, lanes, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | plain)


def _run(libc: _Libc, request: Mapping[str, Any], out_fd: int, ready_w: int, chan_fd: int) -> None:
    """The run's PID 1: its own /proc, loopback and keyring; only its output open; the rlimits; the copy's uid with
    no capability; then pytest. Says "1" on `ready_w` just before the model's code, else why not."""
    try:
        import fcntl
        import random
        import resource

        os.close(chan_fd)
        libc.mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            fcntl.ioctl(probe, _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", _IFF_UP | _IFF_LOOPBACK | _IFF_RUNNING))
        libc.join_session_keyring()
        os.setsid()
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        for fd in (null, out_fd):
            if fd > 2:
                os.close(fd)
        os.closerange(3, ready_w)
        os.closerange(ready_w + 1, 1 << 16)
        limits = request["limits"]
        for name, key in (("RLIMIT_CPU", "cpu_s"), ("RLIMIT_AS", "memory_bytes"), ("RLIMIT_FSIZE", "file_bytes"),
                          ("RLIMIT_NPROC", "processes")):
            if limits.get(key) is not None:
                resource.setrlimit(getattr(resource, name), (int(limits[key]), int(limits[key])))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        uid = int(request["uid"])
        if uid <= 0:
            raise ValueError("a run's uid must not be root")
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as handle:
            last = int(handle.read())
        for cap in range(last + 1):
            libc.prctl(_PR_CAPBSET_DROP, cap)
        libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL)
        os.setresuid(uid, uid, uid)
        libc.prctl(_PR_SET_NO_NEW_PRIVS, 1)
        libc.prctl(_PR_SET_DUMPABLE, 1)  # as after an exec: its own /proc/self is its own
        libc.prctl(_PR_SET_PDEATHSIG, 9)
        with open("/proc/self/status", encoding="ascii") as handle:
            status = dict(line.split(":", 1) for line in handle.read().splitlines() if ":" in line)
        if os.getresuid() != (uid,) * 3 or os.getresgid() != (uid,) * 3 or os.getgroups() or any(
                int(status[k].strip(), 16) for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")):
            raise PermissionError("the run kept a privilege")
        os.chdir(str(request["cwd"]))
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in dict(request["env"]).items()})
        random.seed()
        args = [str(a) for a in request["args"]]
        sys.path.extend(str(p) for p in request["paths"])
        sys.argv = ["pytest", *args]
        import gc

        gc.enable()
        import pytest

        worker = os.fork()  # pytest is PID 2, as under bwrap: PID 1 reaps what the run leaves and ends with it
    except BaseException as exc:  # noqa: BLE001 - nothing of the model's ran: the harness runs it as before
        os.write(ready_w, f"{type(exc).__name__}: {exc}".encode()[:2000])
        os._exit(1)
    if worker:
        os.close(ready_w)
        _init(worker)
    os.write(ready_w, b"1")
    os.close(ready_w)
    os._exit(_pytest_main(pytest, args))


def _init(worker: int) -> None:
    """The run's PID 1: reap every process until pytest's ends, then end with its status (and the namespace too)."""
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(1)
        except InterruptedError:
            continue
        if pid == worker:
            os._exit(128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.waitstatus_to_exitcode(status))


def _pytest_main(pytest: Any, args: list[str]) -> int:
    """`raise SystemExit(pytest.main(args))` as an interpreter ends: the exit code, atexit handlers, flushed output."""
    import atexit

    try:
        result: Any = pytest.main(args)
    except SystemExit as exc:
        result = exc.code
    except BaseException:  # noqa: BLE001 - an uncaught error ends an interpreter with 1 and its traceback
        import traceback

        traceback.print_exc()
        result = 1
    if result is None:
        code = 0
    elif isinstance(result, int):
        code = result & 0xFF
    else:
        print(result, file=sys.stderr)
        code = 1
    try:
        if "threading" in sys.modules:  # as an interpreter ends: its threads first
            sys.modules["threading"]._shutdown()
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001 - output that cannot be flushed is lost, as at an interpreter's end
        pass
    return code


if __name__ == "__main__" and len(sys.argv) == 2 and sys.argv[1].isdigit():
    serve(int(sys.argv[1]))


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
        argv = [*backend.server_args(cwd=Path("/"), spec=spec), python, "-I", "-B", "-c",
                Path(__file__).read_text(encoding="utf-8")]
        return cls(python, Path(lanes), argv)

    def _keep(self) -> None:
        import subprocess

        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._proc = subprocess.Popen([*self._argv, str(child.fileno())], pass_fds=(child.fileno(),),
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
                while True:
                    if cancel is not None and cancel.is_set():
                        stopped_by = "was cancelled"
                        break
                    left = end - time.monotonic()
                    if left <= 0:
                        stopped_by = f"timed out after {timeout:g}s"
                        break
                    if select.select([mine], [], [], min(left, 0.05))[0]:
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
