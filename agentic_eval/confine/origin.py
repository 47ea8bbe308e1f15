"""Who opened a connection to a confined CLI's relay: the CLI itself, or a process its tools started.

A confined CLI reaches the endpoint only through the sandbox's relay (confine/relay.py), which hands every
connection it accepts to the harness: the socket itself. The harness looks up the connection's other end in
the sandbox's own /proc: the TCP table of the sandbox's network namespace (`/proc/RELAY/net/tcp`, the kernel's
format, read as the kernel documents it: no library reads another namespace's table) names the client
socket's inode, and the open files of the sandbox's processes (those in the relay's PID namespace) say who
holds it. The harness can read them where it runs as root, or as the user whose namespace bwrap made.

The first connection is the CLI's: before the model's first reply, nothing of the model's runs in the
sandbox. The process (or processes) holding it are pinned, by pid and start time, and every later
connection must be held by one of them: a connection from any other process (the CLI's shell tool, a
script the model wrote, the model's own HTTP client) is refused, answered HTTP 403 and recorded in the trial
folder's `refused.jsonl` (`RefusalLog`), which the trial's record counts (`tool_requests`).

What this does not stop: a process that takes over the CLI itself (ptrace, /proc/PID/mem: the kernel's
Yama ptrace_scope 1 forbids that between a process and its parent, and is off on some machines), and a
tool built into the CLI that fetches URLs in the CLI's own process (the adapters turn those off).
"""

from __future__ import annotations

import json
import os
import socket
import struct
import threading
import time
from dataclasses import dataclass
from pathlib import Path

REFUSED_FILE = "refused.jsonl"
"""In a trial's folder: one JSON line per connection to the relay that was refused (not the agent's own)."""


@dataclass(frozen=True)
class Process:
    """A process of the sandbox, as the harness sees it."""

    pid: int
    """Its pid on this machine."""
    start: str
    """Its start time (field 22 of /proc/PID/stat): with the pid, who it is (a pid can be reused)."""
    inner_pid: int
    """Its pid inside the sandbox's PID namespace (what the model's commands see)."""
    command: str
    """Its command line, shortened."""

    def shown(self) -> dict[str, object]:
        return {"pid": self.inner_pid, "command": self.command}

    @property
    def short(self) -> str:
        """Its pid in the sandbox and the first words of its command, paths cut to their last part."""
        words = [word.rsplit("/", 1)[-1] if "/" in word else word for word in self.command.split()[:4]]
        return f"pid {self.inner_pid} {' '.join(words)[:80]!r}"


def process(pid: int) -> Process | None:
    """`Process` of a pid, or None when it is gone or cannot be read."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
        status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8", errors="replace")
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()  # after the command name, which may hold spaces and parens
    start = fields[19].decode() if len(fields) > 19 else ""
    inner = next((line.split()[-1] for line in status.splitlines() if line.startswith("NSpid:")), str(pid))
    command = cmdline.replace(b"\0", b" ").decode("utf-8", "replace").strip()
    return Process(pid, start, int(inner), command[:200] + ("..." if len(command) > 200 else ""))


def _address(text: str) -> tuple[str, int]:
    """An address of /proc/net/tcp or tcp6 ('0100007F:1F90'): each 32-bit word of the address printed as the
    host stores it, the port in hex."""
    host, port = text.split(":")
    words = [struct.pack("=I", int(host[i:i + 8], 16)) for i in range(0, len(host), 8)]
    raw = b"".join(words)
    if len(raw) == 4:
        return socket.inet_ntop(socket.AF_INET, raw), int(port, 16)
    if raw[:12] == b"\0" * 10 + b"\xff\xff":  # an IPv4-mapped IPv6 address
        return socket.inet_ntop(socket.AF_INET, raw[12:]), int(port, 16)
    return socket.inet_ntop(socket.AF_INET6, raw), int(port, 16)


def socket_inode(netns_pid: int, local: tuple[str, int], remote: tuple[str, int]) -> int | None:
    """The inode of the TCP socket at `local` connected to `remote` in the network namespace of `netns_pid`,
    or None when there is none (closed already) or the table cannot be read."""
    for table in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/{netns_pid}/net/{table}").read_text(encoding="ascii").splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            if len(parts) < 10:
                continue
            try:
                if _address(parts[1]) == local and _address(parts[2]) == remote and parts[9] != "0":
                    return int(parts[9])
            except (ValueError, OSError):
                continue
    return None


def holders(inode: int, pidns_pid: int) -> list[Process]:
    """The processes in the PID namespace of `pidns_pid` that hold the socket `inode` open."""
    try:
        namespace = os.readlink(f"/proc/{pidns_pid}/ns/pid")
    except OSError:
        return []
    found: list[Process] = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and _in_namespace(entry.name, namespace) and _holds(entry.name, f"socket:[{inode}]"):
            if (held := process(int(entry.name))) is not None:
                found.append(held)
    return found


def _in_namespace(pid: str, namespace: str) -> bool:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid") == namespace
    except OSError:
        return False


def _holds(pid: str, target: str) -> bool:
    """Whether one of the process's open files is `target` (what /proc/PID/fd/N links to)."""
    try:
        with os.scandir(f"/proc/{pid}/fd") as fds:
            for fd in fds:
                try:
                    if os.readlink(fd.path) == target:
                        return True
                except OSError:
                    continue
    except OSError:
        pass
    return False


@dataclass(frozen=True)
class Verdict:
    """Whether a connection is the agent's own, who holds it, and why it was refused."""

    allowed: bool
    who: tuple[Process, ...] = ()
    why: str = ""


class OriginGuard:
    """Tells the CLI's own connections from its tools': pins the holders of the first connection, then
    accepts only connections they hold. `relay_pid`: the relay's pid on this machine (its unix socket's peer),
    whose namespaces are the sandbox's."""

    def __init__(self, relay_pid: int) -> None:
        self.relay_pid = relay_pid
        self.pinned: tuple[Process, ...] = ()
        self._lock = threading.Lock()

    def blind(self) -> str | None:
        """Why this harness cannot look into the sandbox's /proc (then it cannot tell), or None when it can."""
        for path in (f"/proc/{self.relay_pid}/net/tcp", f"/proc/{self.relay_pid}/fd"):
            try:
                if path.endswith("/fd"):
                    os.listdir(path)
                else:
                    Path(path).read_bytes()
            except OSError as exc:
                return f"cannot read {path} ({exc.strerror or exc})"
        return None

    def judge(self, connection: socket.socket) -> Verdict:
        """The verdict on a connection the relay accepted (the socket as the relay handed it over)."""
        try:
            local, remote = connection.getsockname(), connection.getpeername()
        except OSError as exc:
            return Verdict(False, why=f"not a connection ({exc.strerror or exc})")
        if not (isinstance(local, tuple) and isinstance(remote, tuple)):
            return Verdict(False, why="not a TCP connection")
        who: tuple[Process, ...] = ()
        for _ in range(3):  # a connect() the client has not finished may not show in the table yet
            inode = socket_inode(self.relay_pid, (remote[0], remote[1]), (local[0], local[1]))
            who = tuple(holders(inode, self.relay_pid)) if inode is not None else ()
            if who:
                break
            time.sleep(0.05)
        if not who:
            return Verdict(False, why="no process of the sandbox holds its other end (closed, or unreadable)")
        with self._lock:
            if not self.pinned:
                self.pinned = who  # the first connection: the CLI's, before the model had a say
                return Verdict(True, who)
            pinned = {(p.pid, p.start) for p in self.pinned}
        if any((p.pid, p.start) in pinned for p in who):
            return Verdict(True, who)
        return Verdict(False, who, "opened by a process that is not the agent's own (the agent's is "
                       + ", ".join(p.short for p in self.pinned) + ")")


MAX_LOGGED = 1000
"""Refusals written one line each; past this many, a trial's log ends with one line counting the rest."""


class RefusalLog:
    """`refused.jsonl` of a trial: one line per refused connection (a tool's request, or a process that is
    not the relay on the wire socket), at most MAX_LOGGED, then `close()` adds one line `{"what": "more",
    "count": N}` for the rest. Written by the harness, outside the sandbox."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.count = 0
        self._lock = threading.Lock()

    def write(self, what: str, verdict: Verdict, request: str = "") -> None:
        entry: dict[str, object] = {"at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "what": what,
                                    "request": request, "by": [p.shown() for p in verdict.who], "why": verdict.why}
        with self._lock:
            self.count += 1
            if self.count <= MAX_LOGGED:
                self._append(entry)

    def close(self) -> None:
        with self._lock:
            if self.count > MAX_LOGGED:
                self._append({"what": "more", "count": self.count - MAX_LOGGED})

    def _append(self, entry: dict[str, object]) -> None:
        if self.path is None:
            return
        try:
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry, ensure_ascii=True) + "\n")
        except OSError:
            pass  # a full disk: the trial loses the lines, not the run


def refused_requests(trial_dir: Path) -> int:
    """How many connections a trial's relay refused as not the agent's own (from its refused.jsonl)."""
    count = 0
    try:
        with (trial_dir / REFUSED_FILE).open("rb") as handle:
            for line in handle:
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                more = entry.get("count") if isinstance(entry, dict) and entry.get("what") == "more" else None
                count += more if isinstance(more, int) and more > 0 else 1
    except OSError:
        return 0
    return count
