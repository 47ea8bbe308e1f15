"""The fork server's own side (grading/forkrun.py is the harness's, and says what a run keeps): this file's text runs
as `python -I -B -c` inside a bwrap that keeps root, imports pytest once, and forks a child per run that makes the
run's namespaces, drops to its uid and runs `pytest.main`. Standard library only: nothing of agentic_eval is in the
server's sight."""

from __future__ import annotations

import array
import json
import os
import re
import socket
import struct
import sys
from collections.abc import Mapping
from typing import Any

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
    # and what the server's bwrap bound under /tmp (a Python whose venv lives there, the lanes' folder), each with
    # what is mounted on it (the hidden copies' covers): put back on the fresh /tmp as they were
    kept = {top: os.open(top, os.O_PATH | os.O_NOFOLLOW) for top in _mounted_under("/tmp")}
    plain = _MS_NOSUID | _MS_NODEV
    libc.mount("tmpfs", "/tmp", "tmpfs", plain, f"mode=1777,size={int(request['tmp_bytes'])}")
    for top, fd in kept.items():
        if os.path.isdir(f"/proc/self/fd/{fd}"):
            os.makedirs(top, 0o755, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(top), 0o755, exist_ok=True)
            os.close(os.open(top, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o644))
        libc.mount(f"/proc/self/fd/{fd}", top, None, _MS_BIND | _MS_REC)
        os.close(fd)
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


def _mounted_under(top: str) -> list[str]:
    """The mount points below `top` (not `top` itself) that no other one below it holds, from /proc/self/mountinfo."""
    found = []
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as handle:
        for line in handle:
            fields = line.split(" ")
            if len(fields) > 4:  # the mount point, with " ", tab, newline and backslash written as \ooo
                point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
                if point.startswith(top.rstrip("/") + "/"):
                    found.append(point)
    outer = [p for p in found if not any(p.startswith(o + "/") for o in found if o != p)]
    return sorted(set(outer))


def _run(libc: _Libc, request: Mapping[str, Any], out_fd: int, ready_w: int, chan_fd: int) -> None:
    """The run's PID 1: its own /proc, loopback and keyring; only its output open; the rlimits; the copy's uid with
    no capability; then pytest. Says "1" on `ready_w` just before the model's code, else why not."""
    try:
        import fcntl
        import random
        import resource

        os.close(chan_fd)
        libc.mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
        for shared in ("/proc/key-users", "/proc/keys"):  # every uid's key counts (confine/host.py KERNEL_SHARED)
            if os.path.exists(shared):
                libc.mount("/dev/null", shared, None, _MS_BIND)
                libc.mount(None, shared, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID)  # reads: nothing
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
