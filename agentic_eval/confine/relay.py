"""Inside a confined CLI agent: the one way out, a relay from the sandbox's own loopback to the harness.

`python -I -S relay.py PORT SOCKET -- CLI ARGS...` listens on the sandbox's
127.0.0.1:PORT (its own network namespace: nothing else is there), connects
once to the unix socket SOCKET, which the harness bound into the sandbox, and
then starts the CLI as its child. Each connection it accepts is handed to the
harness as it is (the socket itself, passed over SOCKET with SCM_RIGHTS) and
closed here: the harness, not this process, reads and answers it, so it can
look up which of the sandbox's processes opened it (confine/origin.py) and
refuse the ones the CLI's tools open. The connection to SOCKET is made before
the CLI starts, when nothing else runs in the sandbox: that is how the harness
knows it is this relay's. The relay exits with the CLI's exit status;
everything else dies with the sandbox's PID namespace. Standard library only:
it runs on the harness's interpreter with -S.

`at_unix_path` is how every unix socket of the harness's is bound and reached (here, in confine/backend.py,
grading/sealed.py), whatever the length of the temp folder it lies in.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
from collections.abc import Callable

UNIX_PATH_MAX = 103 if sys.platform == "darwin" else 107
"""Bytes of a unix socket's path, its final NUL not counted (sun_path is 104 bytes on macOS, 108 on Linux)."""


LINK_FOLDER_PREFIX = "ae-sock-"
"""Name prefix of the folders under /tmp that `at_unix_path` makes where there is no /proc (leftovers.py removes
one a killed run left)."""


class UnixPathTooLong(OSError):
    """A unix socket's path too long to bind or reach, even through /proc/self/fd or a link."""


def at_unix_path(call: Callable[[str], None], path: str) -> None:
    """`call(path)`: a unix socket's bind or connect. A path longer than a socket's address can be (a long
    TMPDIR) is reached as /proc/self/fd/N/NAME instead, where N is an O_PATH descriptor of its folder (Linux):
    the same file, no race (the folder is opened once) and no change of the cwd, which threads share. Without
    /proc (macOS), through a link to its folder in a folder of this process's own under /tmp (mode 0700, so no
    one else can change the link), removed at once. Where neither can be (a name too long itself, no /tmp to
    write), UnixPathTooLong says which path and how to fix it."""
    if len(os.fsencode(path)) <= UNIX_PATH_MAX:
        call(path)
        return
    folder, name = os.path.split(os.path.abspath(path))
    o_path = getattr(os, "O_PATH", 0)
    if o_path and os.path.isdir("/proc/self/fd"):
        fd = os.open(folder, o_path | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            short = f"/proc/self/fd/{fd}/{name}"
            if len(os.fsencode(short)) <= UNIX_PATH_MAX:
                call(short)
                return
        finally:
            os.close(fd)
    elif len(os.fsencode(name)) <= UNIX_PATH_MAX - 32:  # /tmp/ae-sock-XXXXXXXX/d/NAME
        import shutil
        import tempfile

        try:
            links = tempfile.mkdtemp(prefix=LINK_FOLDER_PREFIX, dir="/tmp")
        except OSError:
            links = ""
        if links:
            try:
                os.symlink(folder, os.path.join(links, "d"))
                call(os.path.join(links, "d", name))
                return
            finally:  # the link is removed, never followed (one left, unlikely, goes with the next run: leftovers.py)
                shutil.rmtree(links, ignore_errors=True)
    raise UnixPathTooLong(f"the unix socket {path} is {len(os.fsencode(path))} bytes long, over the "
                          f"{UNIX_PATH_MAX} a socket's path may be here: set TMPDIR to a shorter folder (TMPDIR=/tmp)")


def listen_unix(path: str, backlog: int) -> socket.socket:
    """A unix socket listening at `path` (`at_unix_path`: whatever its length), which every uid may connect to
    (mode 0666: a confined command runs as another uid; who reaches it is decided by where its folder is bound)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        at_unix_path(listener.bind, path)
        os.chmod(path, 0o666)
        listener.listen(backlog)
    except OSError:
        listener.close()
        raise
    return listener


def splice(client: socket.socket, upstream: socket.socket) -> None:
    """Copy both ways until both sides are done, then close both (the harness's UnixRelay uses it)."""
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def _serve(listener: socket.socket, control: socket.socket) -> None:
    """Hand every accepted connection to the harness; once the harness is gone, nothing gets out."""
    import time

    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            time.sleep(0.05)  # transient (out of file descriptors): the relay lives as long as the CLI
            continue
        try:
            socket.send_fds(control, [b"c"], [client.fileno()])
        except OSError:
            pass
        client.close()


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        print("usage: relay.py PORT SOCKET -- COMMAND...", file=sys.stderr)
        return 2
    port, target, command = int(argv[0]), argv[1], argv[3:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    control = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        at_unix_path(control.connect, target)
    except OSError as exc:
        print(f"relay: cannot reach the harness at {target}: {exc}", file=sys.stderr)
        return 125
    pid = os.fork()
    if pid == 0:
        listener.close()
        control.close()
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            print(f"cannot start {command[0]}: {exc}", file=sys.stderr)
            os._exit(127)
    threading.Thread(target=_serve, args=(listener, control), daemon=True).start()
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
