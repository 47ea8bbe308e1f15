"""The harness's end of a confined CLI's one way out (the sandbox's end is confine/relay.py): a unix socket on which
the relay hands over each connection, piped to the wire recorder when the CLI itself opened it, refused and
recorded when one of its tools did (confine/origin.py)."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import socket

    from agentic_eval.confine.origin import OriginGuard, Verdict


def serve_unix(listener: socket.socket, closed: threading.Event, handle: Callable[[socket.socket], None]) -> None:
    """Accept connections on `listener` until `closed` is set, each handled by `handle(client)` in a thread of
    its own; a transient failure (out of file descriptors) is waited out, not the end of serving."""
    while not closed.is_set():
        try:
            client, _ = listener.accept()
        except OSError:
            if closed.is_set():
                return
            time.sleep(0.05)
            continue
        threading.Thread(target=handle, args=(client,), daemon=True).start()


def stop_serving(listener: socket.socket, closed: threading.Event) -> None:
    """End `serve_unix` on `listener`: closing the socket alone does not wake a thread blocked in its accept()
    (Linux), which would then wait for good, holding the socket: one thread and one socket per trial."""
    import socket

    closed.set()
    try:
        listener.shutdown(socket.SHUT_RDWR)  # the blocked accept() returns EINVAL, and serve_unix sees `closed`
    except OSError:
        pass
    listener.close()


class UnixRelay:
    """The harness's end of a confined CLI's one way out: a unix socket (in a folder of its own, bound into the
    sandbox) on which the sandbox's relay (confine/relay.py) hands over each connection it accepts. A
    connection the CLI itself opened is piped to `host:port` (the trial's wire recorder); one that another
    process of the sandbox opened (a tool's) is answered HTTP 403 and recorded (confine/origin.py), and so is
    a process other than the relay that connects to the socket itself. `refusals`: the trial's
    refused.jsonl; `refused` counts them either way. `on_first`: called once, when the CLI's first
    connection is let through, before it is forwarded (by then the CLI has read its configuration, and no
    process of the model's has started yet)."""

    def __init__(self, folder: Path, host: str, port: int, refusals: Path | None = None,
                 on_first: Callable[[], None] | None = None) -> None:

        from agentic_eval.confine.origin import RefusalLog
        from agentic_eval.confine.relay import listen_unix

        self.folder, self.host, self.port = folder, host, port
        self.path = folder / "wire.sock"
        self.refusals = RefusalLog(refusals)
        self._on_first = on_first
        self._refusing = threading.BoundedSemaphore(16)  # a tool that floods the relay costs threads, bounded
        self._relay_pid: int | None = None
        self._lock = threading.Lock()
        self._listener = listen_unix(str(self.path), 64)  # the confined uid connects; a long TMPDIR too
        self._closed = threading.Event()
        threading.Thread(target=serve_unix, args=(self._listener, self._closed, self._handle), daemon=True,
                         name="wire-relay").start()

    @property
    def refused(self) -> int:
        """Connections refused as not the agent's own."""
        return self.refusals.count

    def _handle(self, control: socket.socket) -> None:
        """One connection to the unix socket: the relay's (the first, made before the CLI starts), whose
        messages carry the connections it accepted; any other is a process that went around the relay."""
        import socket

        from agentic_eval.confine.origin import OriginGuard, Verdict, process

        creds = control.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
        pid = int.from_bytes(creds[:4], sys.byteorder)
        with self._lock:
            first = self._relay_pid is None
            if first:
                self._relay_pid = pid
        if not first:
            who = process(pid)
            self.refusals.write("wire socket", Verdict(False, (who,) if who else (), "a process that is not "
                                "the sandbox's relay connected to the harness's socket"))
            control.close()
            return
        guard = OriginGuard(pid)
        blind = guard.blind()
        if blind is not None:
            _note_once(f"cannot tell a confined CLI's own requests from its tools' here ({blind}): every "
                       "request the relay hands over is forwarded")
        try:
            while not self._closed.is_set():
                try:
                    _, fds, _, _ = socket.recv_fds(control, 16, 16)
                except OSError:
                    return
                if not fds:
                    return  # the relay is gone
                for fd in fds:
                    try:
                        connection = socket.socket(fileno=fd)
                    except OSError:
                        os.close(fd)  # not a socket
                        continue
                    threading.Thread(target=self._serve, args=(connection, None if blind else guard),
                                     daemon=True).start()
        finally:
            control.close()

    def _serve(self, connection: socket.socket, guard: OriginGuard | None) -> None:
        import socket

        from agentic_eval.confine.relay import splice  # standard library only: it also runs in the sandbox

        if guard is not None:
            verdict = guard.judge(connection)
            if not verdict.allowed:
                self._refuse(connection, verdict)
                return
        with self._lock:
            on_first, self._on_first = self._on_first, None
        if on_first is not None:
            on_first()
        try:
            upstream = socket.create_connection((self.host, self.port), timeout=10)
            upstream.settimeout(None)
        except OSError:
            connection.close()
            return
        splice(connection, upstream)

    def _refuse(self, connection: socket.socket, verdict: Verdict) -> None:
        """Answer a connection that is not the agent's own with HTTP 403 (after reading its request, within
        bounds, so the client sees the answer) and record it."""
        if not self._refusing.acquire(blocking=False):
            self.refusals.write("request", verdict, "(not read: too many refused at once)")
            connection.close()
            return
        try:
            self._answer_403(connection, verdict)
        finally:
            self._refusing.release()

    def _answer_403(self, connection: socket.socket, verdict: Verdict) -> None:
        import socket

        request = _read_request_head(connection)
        self.refusals.write("request", verdict, request)
        body = json.dumps({"error": {
            "message": "agentic-eval: this endpoint serves the agent only; a request from another process in "
                       "its sandbox (its tools) is refused, and recorded", "type": "forbidden",
            "code": "not_the_agent"}}).encode()
        head = (f"HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                "Connection: close\r\n\r\n").encode()
        try:
            connection.sendall(head + body)
            connection.shutdown(socket.SHUT_WR)  # the answer is whole; the client closes
            connection.settimeout(2)
            for _ in range(64):  # what the client still sends, at most 4 MiB, so that closing sends no reset
                if not connection.recv(65536):
                    break
        except OSError:
            pass
        connection.close()

    def close(self) -> None:
        stop_serving(self._listener, self._closed)
        self.refusals.close()


def _read_request_head(connection: socket.socket, limit: int = 65536) -> str:
    """The first line of an HTTP request ('POST /v1/chat/completions'), read within `limit` bytes and a few
    seconds, and its body when it is small; '' when none came."""
    connection.settimeout(5)
    data = b""
    try:
        while b"\r\n\r\n" not in data and len(data) < limit:
            piece = connection.recv(65536)
            if not piece:
                break
            data += piece
    except OSError:
        pass
    first = data.split(b"\r\n", 1)[0].decode("latin-1")[:300]
    return " ".join(first.split()[:2])


_noted: set[str] = set()


def _note_once(line: str) -> None:
    if line not in _noted:
        _noted.add(line)
        print(f"agentic-eval: {line}", file=sys.stderr, flush=True)
