"""`python -I -S docker_exec.py HOST CONTAINER CWD UID[:GID] PATH PYTHON [WRITABLE...] -- ARGV...`: run ARGV.

The docker backend's command line for every confined command (the backend passes the image's facts,
`docker_image`'s RUN_UID, IMAGE_PATH and IMAGE_PYTHON, so that this file imports nothing of agentic-eval
and starts in a few milliseconds with `-I -S`). It runs ARGV as user UID in CWD through the engine's
exec API over the engine's unix socket: the caller's environment (the allow-listed one it built), with
the harness's own Python and PATH swapped for the image's, goes in the request body, so no value is on
a command line. HOME becomes the container's private /tmp unless it lies under one of the WRITABLE
paths (mounted writable at their own paths: a CLI agent's own HOME). Its standard input is forwarded
(the file tools send their request there), the command's output comes out on this process's stdout
and stderr, and its exit status is the command's.
An engine that is not a unix socket (tcp://, ssh://) is reached through the `docker exec` CLI instead.
Exit 125 with one line on stderr when the engine or the container is not there.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time

_DROP = frozenset({"PYTHONHOME", "LD_LIBRARY_PATH", "LD_PRELOAD", "DOCKER_HOST", "DOCKER_CONFIG"})
USAGE = "usage: python -I -S docker_exec.py HOST CONTAINER CWD UID PATH PYTHON [WRITABLE...] -- ARGV..."


class EngineError(Exception):
    pass


def _connect(sock_path: str) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(sock_path)
    except OSError as exc:
        s.close()
        raise EngineError(f"cannot reach the Docker engine at unix://{sock_path}: {exc.strerror or exc}") from None
    return s


def _head(s: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """Read an HTTP response's status line and headers; (status, headers, what was read past them)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            raise EngineError("the Docker engine closed the connection")
        data += chunk
        if len(data) > 1 << 20:
            raise EngineError("the Docker engine sent an oversized header")
    head, rest = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return status, headers, rest


def _call(sock_path: str, method: str, path: str, body: object = None) -> tuple[int, object]:
    """One JSON API call on a connection of its own; (status, decoded body or None)."""
    data = b"" if body is None else json.dumps(body).encode()
    s = _connect(sock_path)
    try:
        s.sendall(f"{method} {path} HTTP/1.1\r\nHost: docker\r\nConnection: close\r\n"
                  f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n".encode() + data)
        status, headers, rest = _head(s)
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            rest += chunk
    finally:
        s.close()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        out, pos = b"", 0
        while True:
            end = rest.index(b"\r\n", pos)
            size = int(rest[pos:end].split(b";")[0], 16)
            if size == 0:
                break
            out += rest[end + 2:end + 2 + size]
            pos = end + 2 + size + 2
        rest = out
    try:
        return status, json.loads(rest) if rest.strip() else None
    except ValueError:
        return status, {"message": rest.decode(errors="replace")[:300]}


def _message(status: int, answer: object) -> str:
    text = answer.get("message") if isinstance(answer, dict) else None
    return f"{status}: {text or answer}"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view):]
        except BrokenPipeError:
            return


def _pump_stdin(s: socket.socket) -> None:
    try:
        while True:
            chunk = os.read(0, 65536)
            if not chunk:
                break
            s.sendall(chunk)
    except OSError:
        pass
    try:
        s.shutdown(socket.SHUT_WR)  # the command sees the end of its input
    except OSError:
        pass


def run_exec(sock_path: str, container: str, cwd: str, user: str, env: dict[str, str], command: list[str]) -> int:
    """Run `command` in `container` through the exec API; its exit status."""
    status, created = _call(sock_path, "POST", f"/containers/{container}/exec", {
        "AttachStdin": True, "AttachStdout": True, "AttachStderr": True, "Tty": False, "User": user,
        "WorkingDir": cwd, "Env": [f"{k}={v}" for k, v in sorted(env.items())], "Cmd": command,
    })
    if status != 201 or not isinstance(created, dict):
        raise EngineError(f"the Docker engine refused to run a command in container {container[:12]} "
                          f"({_message(status, created)})")
    exec_id = created["Id"]
    s = _connect(sock_path)
    try:
        body = b'{"Detach": false, "Tty": false}'
        s.sendall(f"POST /exec/{exec_id}/start HTTP/1.1\r\nHost: docker\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n"
                  f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
        status, _, buf = _head(s)
        if status not in (101, 200):
            raise EngineError(f"the Docker engine did not start the command ({status})")
        threading.Thread(target=_pump_stdin, args=(s,), daemon=True).start()
        while True:  # frames: 1 byte stream (1 stdout, 2 stderr), 3 zero bytes, 4 bytes big-endian length
            while len(buf) < 8:
                chunk = s.recv(65536)
                if not chunk:
                    break
                buf += chunk
            if len(buf) < 8:
                break
            size = int.from_bytes(buf[4:8], "big")
            while len(buf) < 8 + size:
                chunk = s.recv(max(65536, 8 + size - len(buf)))
                if not chunk:
                    break
                buf += chunk
            _write_all(2 if buf[0] == 2 else 1, buf[8:8 + size])
            buf = buf[8 + size:]
    finally:
        s.close()
    for _ in range(200):  # the stream ends as the command exits; its status follows within moments
        status, info = _call(sock_path, "GET", f"/exec/{exec_id}/json")
        if status != 200 or not isinstance(info, dict):
            raise EngineError(f"the Docker engine lost the command's status ({_message(status, info)})")
        if not info.get("Running") and info.get("ExitCode") is not None:
            return int(info["ExitCode"])
        time.sleep(0.01)
    raise EngineError("the Docker engine did not report the command's exit status")


def main(argv: list[str]) -> int:
    end = argv.index("--") if "--" in argv else -1
    if end < 6 or end == len(argv) - 1:
        print(USAGE, file=sys.stderr)
        return 2
    host, container, cwd, uid, image_path, image_python = argv[:6]
    writable, command = argv[6:end], argv[end + 1:]
    user = uid if ":" in uid else f"{uid}:{uid}"  # UID, or UID:GID (an environment task's user)
    env = {k: v for k, v in os.environ.items() if k not in _DROP}
    env["PATH"] = image_path
    if env.get("AGENTIC_EVAL_GIT_SHIM"):  # a grader's `git` (grading/gitshim.py) stays first on its PATH
        env["PATH"] = f"{env['AGENTIC_EVAL_GIT_SHIM']}:{image_path}"
    home = os.path.normpath(env.get("HOME") or "/")
    if not any(home == w or home.startswith(w.rstrip("/") + "/") for w in map(os.path.normpath, writable)):
        env["HOME"] = "/tmp"  # the caller's home is a host folder; the container's /tmp is its own
    if "AGENTIC_EVAL_PYTHON" in env:
        env["AGENTIC_EVAL_PYTHON"] = image_python
    if not host.startswith("unix://"):  # through the CLI: the environment by name (-e NAME), values not on argv
        names = [arg for name in sorted(env) if name.isidentifier() for arg in ("-e", name)]
        args = ["docker", "exec", "-i", "-u", user, "-w", cwd, *names, container, *command]
        try:
            os.execvpe("docker", args, dict(env, DOCKER_HOST=host))
        except OSError as exc:
            print(f"docker_exec: cannot run the docker CLI for {host}: {exc}", file=sys.stderr)
            return 125
    try:
        return run_exec(host[len("unix://"):], container, cwd, user, env, command)
    except EngineError as exc:
        print(f"docker_exec: {exc}", file=sys.stderr)
        return 125


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
