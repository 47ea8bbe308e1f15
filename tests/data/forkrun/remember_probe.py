"""A model's test that wants to tell one run of the grader's from another (tests/test_forkrun.py puts it in a tree as
tests/test_remember.py): it looks for a mark
that an earlier run or a run beside it left in every place a process of the run can write, leaves its own, waits,
and looks again. It fails when it finds one. It writes what it found to report.json beside its HOME."""

import ctypes
import errno
import json
import os
import pwd
import secrets
import socket
import subprocess
import sys
import time
from pathlib import Path

TOKEN = secrets.token_hex(6)
NAME = "forkruns-remember"
PORT = 47_611
SHM_KEY = 0x4F524B31
libc = ctypes.CDLL(None, use_errno=True)
SYS_ADD_KEY, SYS_KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}[os.uname().machine]
KEYRINGS = {"session": -3, "user": -4}
MINE: dict[str, int] = {}
"""The ids of this run's key and SysV segment (what they hold is not readable back in every keyring)."""


def _files() -> dict[str, Path]:
    work = Path.cwd()
    return {"tmp": Path("/tmp") / NAME, "shm": Path("/dev/shm") / NAME, "scratch": Path.home().parent / NAME,
            "lane": work.parent / NAME, "lanes": work.parent.parent / NAME}


def _key_id(ring: int) -> int:
    return libc.syscall(SYS_KEYCTL, 10, ring, b"user", NAME.encode(), 0)  # KEYCTL_SEARCH


def _processes() -> dict[int, str]:
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                found[int(entry)] = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                pass
    return found


def look(mine: bool = False) -> dict[str, str]:
    """Where a mark is found: its token (another's, or with `mine`, this run's own)."""
    found = {}
    for where, path in _files().items():
        try:
            found[where] = path.read_text()
        except OSError:
            pass
    for cmdline in _processes().values():
        if NAME in cmdline and "-c" in cmdline:
            found["process"] = cmdline.split()[-1]
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as client:
        client.settimeout(2)
        try:
            client.connect(("127.0.0.1", PORT))
            found["tcp"] = client.recv(64).decode()
        except OSError:
            pass
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(2)
        try:
            client.connect("\0" + NAME)
            found["abstract"] = client.recv(64).decode()
        except OSError:
            pass
    for ring, number in KEYRINGS.items():
        key = _key_id(number)
        if key >= 0:
            found[f"key-{ring}"] = TOKEN if MINE.get(f"key-{ring}") == key else str(key)
    shm = libc.shmget(SHM_KEY, 0, 0)
    if shm >= 0:
        found["sysv-shm"] = TOKEN if MINE.get("sysv-shm") == shm else str(shm)
    for name in set(os.listdir("/dev/pts")) - {"ptmx"}:
        if str(MINE.get("pts")) == name:
            found["pts"] = TOKEN
        else:
            found[f"pts {name}"] = name
    return {k: v for k, v in found.items() if (v == TOKEN) == mine}


KEEPER = f"""
import socket, sys, threading, time
token = sys.argv[-1]
tcp = socket.socket(); tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); tcp.bind(("127.0.0.1", {PORT}))
unix = socket.socket(socket.AF_UNIX); unix.bind("\\0{NAME}")
def serve(sock):
    sock.listen(4)
    while True:
        conn, _ = sock.accept(); conn.sendall(token.encode()); conn.close()
for sock in (tcp, unix):
    threading.Thread(target=serve, args=(sock,), daemon=True).start()
import os, pty
leader, follower = os.openpty()
print("up", os.ttyname(follower).rsplit("/", 1)[-1], flush=True)
time.sleep(60)
"""


def mark() -> dict[str, str]:
    """Leave a mark everywhere: what could not be left (and why)."""
    refused = {}
    for where, path in _files().items():
        try:
            path.write_text(TOKEN)
        except OSError as exc:
            refused[where] = errno.errorcode.get(exc.errno or 0, str(exc))
    keeper = subprocess.Popen([sys.executable, "-c", KEEPER, NAME, TOKEN], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, start_new_session=True)
    line = (keeper.stdout.readline() if keeper.stdout else b"").decode()
    if not line.startswith("up "):
        refused["keeper"] = line[:200]
    else:
        MINE["pts"] = int(line.split()[1])
    for ring, number in KEYRINGS.items():
        key = libc.syscall(SYS_ADD_KEY, b"user", NAME.encode(), TOKEN.encode(), len(TOKEN), number)
        MINE[f"key-{ring}"] = key
        if key < 0:
            refused[f"key-{ring}"] = errno.errorcode.get(ctypes.get_errno(), "?")
    MINE["sysv-shm"] = libc.shmget(SHM_KEY, 4096, 0o1000 | 0o2000 | 0o666)  # IPC_CREAT | IPC_EXCL
    if MINE["sysv-shm"] < 0:
        refused["sysv-shm"] = errno.errorcode.get(ctypes.get_errno(), "?")
    return refused


def others() -> dict[str, str]:
    """What of the run's surroundings is not its own: processes of another uid, fds that are sockets."""
    seen = {}
    for pid in _processes():
        try:
            uid = os.stat(f"/proc/{pid}").st_uid
        except OSError:
            continue
        if uid != os.getuid():
            seen[f"process {pid}"] = f"uid {uid}"
        if pid != os.getpid() and pid > 1:
            try:
                os.kill(pid, 0)
            except OSError:
                seen[f"process {pid}"] = "not signallable"
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:"):
            seen[f"fd {fd}"] = target
    return seen


def test_nothing_of_another_run_is_here() -> None:
    before = look()
    refused = mark()
    time.sleep(float(os.environ.get("REMEMBER_WAIT", "1.0")))  # a run beside this one has marked by now
    beside = look()
    own = look(mine=True)
    report = {"before": before, "beside": beside, "refused": refused, "own": sorted(own), "others": others(),
              "uid": os.getuid(), "pid": os.getpid(), "name": pwd.getpwuid(os.getuid()).pw_name,
              "lanes": len(os.listdir(Path.cwd().parent.parent))}
    (Path.home().parent / "report.json").write_text(json.dumps(report))
    assert not before and not beside, report
