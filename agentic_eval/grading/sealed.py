"""Where the model's code runs while a grader grades: apart from the grader, on a copy of the tree.

A grader (the task's `grade.py`) decides in its own process. It reads the agent's final tree as a read-
only snapshot and never runs the model's code itself: every command that would (the repo's tests, its
scripts, a function called for a hidden check) goes to the harness over a unix socket, and the harness
runs it confined through the run's sandbox backend, as another uid (or in another container), on a *work
copy* of the snapshot (its working tree: not .git), with a scratch folder beside it and none of the
task's files, hidden tests, variables or the grader's environment in sight. What crosses back is data:
the exit status, the output, and the files the grader asked for, read here without following links and
never from a FIFO, socket or device. So nothing the model's code does while it is graded can change what
the grader reads, see what the grader knows, or write the verdict.

The protocol: one request per connection, a 4-byte big-endian length and a JSON object each way.

    request  {"argv": [...], "cwd": "rel", "env": {...}, "pythonpath": ["rel", ...], "stdin": b64 | null,
              "timeout": s, "files": {"path": b64}, "collect": ["path", ...], "fresh": bool, "apart": bool}
             or {"note": {"tests_forged": ["tests/test_x.py::test_y", ...]}}: what the grader tells the harness
             or {"warm": "pytest", "python": path}: gradelib's pytest runs apart are coming (grading/forkrun.py)
    response {"exit": int | null, "stopped_by": "", "output": str, "files": {"path": b64 | null},
              "why": {"path": "why it was not collected"}, "duration_s": s, "error": str | null}

Paths in `files` and `collect` are relative to the work tree, or absolute paths under the scratch
folder. `fresh` starts from a new copy of the snapshot (and an empty scratch folder). `apart` runs on a fresh
copy of its own, beside the other `apart` runs of the moment (up to LANES_ENV's count at once, on backends whose
commands run on this host; else one at a time on the work copy, as `fresh`): the copy and its scratch folder sit
at paths of their own, named at random (nothing in them tells one run from another), and the work copy's and
scratch folder's paths in `argv`, `env`, `files` (names and bytes), `stdin` and `collect` are moved there (and
back in the output and the files collected, names and bytes). `error` is set
only for a fault of the harness or the machine (a command that could not be started): the grader
treats it as its own error, never as the model's fail.

The standard-library client (`request`) is what gradelib uses; `CodeHost` is the harness's side.
"""

from __future__ import annotations

import base64
import errno
import json
import os
import socket
import stat
import struct
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentic_eval.confine.backend import GRADING_SOCKET_FOLDER, SandboxBackend
from agentic_eval.confine.relay import at_unix_path, listen_unix
from agentic_eval.confine.shared_disk import out_of_room, tree_bytes

SOCKET_ENV = "AGENTIC_EVAL_RUN_SOCKET"
"""The grader's way to the harness: the unix socket a `CodeHost` listens on."""
WORK_ENV = "AGENTIC_EVAL_WORK"
"""Where the work copy is, as the model's code sees it (the same path on both sides)."""
SCRATCH_ENV = "AGENTIC_EVAL_SCRATCH"
"""The scratch folder beside it (fixtures in, outputs out), the same path on both sides."""
LANES_ENV = "AGENTIC_EVAL_LANES"
"""How many `apart` runs the harness runs at once (what a grader may have in flight)."""
LANES_MAX = 4
"""At most this many `apart` runs at once, and never more than the machine's cores."""
LANE_TREE_BYTES = 64 << 20
"""A tree larger than this (or of more than LANE_TREE_ENTRIES entries) gets one `apart` run at a time: copies side by
side must never fill a disk that one copy at a time would not (the model's tree is its own to make large)."""
LANE_TREE_ENTRIES = 20_000
SOCKET_FOLDER = GRADING_SOCKET_FOLDER
"""The folder of a CodeHost's folder that holds its socket (defined by the confinement: the docker backend
binds it into the grader's container before grading starts)."""

MESSAGE_LIMIT = 96 << 20
"""Largest request or response accepted, in bytes."""
FILE_LIMIT = 16 << 20
"""Largest file collected; a larger one is named, not sent."""
COLLECT_LIMIT = 48 << 20
"""All collected files of one response together."""
OUTPUT_LIMIT = 32_000
"""Bytes of a command's output kept, head and tail each."""
ENV_ALLOWED = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM", "SYSTEMROOT")
"""The harness's variables a command of the model's code sees: nothing of the task or the grader."""


class SealedRunError(RuntimeError):
    """The harness could not run a command (a fault of the harness or the machine, not of the model)."""


# --------------------------------------------------------------------------- framing (both sides)


def _send(sock: socket.socket, payload: Mapping[str, Any]) -> None:
    data = json.dumps(payload).encode("utf-8")
    sock.sendall(struct.pack(">I", len(data)) + data)


def _receive(sock: socket.socket) -> dict[str, Any]:
    head = _exactly(sock, 4)
    (size,) = struct.unpack(">I", head)
    if size > MESSAGE_LIMIT:
        raise SealedRunError(f"a message of {size} bytes is over the limit of {MESSAGE_LIMIT}")
    data = json.loads(_exactly(sock, size).decode("utf-8"))
    if not isinstance(data, dict):
        raise SealedRunError("a message is not a JSON object")
    return data


def _exactly(sock: socket.socket, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise SealedRunError("the connection closed early")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def encode(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def decode(text: str) -> bytes:
    return base64.b64decode(text.encode("ascii"), validate=True)


def request(payload: Mapping[str, Any], socket_path: str | None = None, timeout: float | None = None) -> dict[str, Any]:
    """Send one request to the harness and return its response (the grader's side)."""
    path = socket_path or os.environ.get(SOCKET_ENV)
    if not path:
        raise SealedRunError(f"{SOCKET_ENV} is not set: run this grader through agentic-eval")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        try:
            at_unix_path(sock.connect, path)  # a long TMPDIR too
            _send(sock, payload)
            return _receive(sock)
        except (OSError, ValueError) as exc:
            raise SealedRunError(f"the harness did not answer: {exc}") from None


# --------------------------------------------------------------------------- safe paths (harness side)


def _parts(rel: str) -> list[str]:
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise ValueError(f"not a plain relative path: {rel!r}")
    return parts


def _open_beneath(root: Path, rel: str, flags: int, *, make_dirs: bool = False, mode: int = 0o644,
                  unshare: bool = False) -> int:
    """Open `root/rel` without following a link anywhere on the way (a link the model planted must never
    lead the harness, which may be root, out of the tree): every folder is opened with O_NOFOLLOW. `unshare`: a
    regular file there with other hard links is unlinked first (what is written goes to this path alone)."""
    parts = _parts(rel)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for part in parts[:-1]:
            try:
                nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not make_dirs:
                    raise
                os.mkdir(part, 0o755, dir_fd=fd)
                nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = nxt
        if unshare:
            try:
                st = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                pass
            else:
                if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
                    os.unlink(parts[-1], dir_fd=fd)
        return os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode, dir_fd=fd)
    finally:
        os.close(fd)


def read_regular(root: Path, rel: str, limit: int) -> tuple[bytes | None, str]:
    """(the bytes of the regular file `root/rel`, "") or (None, why not): never follows a link, never
    blocks on a FIFO, never reads more than `limit` bytes."""
    try:
        fd = _open_beneath(root, rel, os.O_RDONLY)
    except (OSError, ValueError) as exc:
        return None, _why(exc)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None, "not a regular file"
        if st.st_size > limit:
            return None, f"{st.st_size} bytes, over the limit of {limit}"
        chunks, left = [], limit + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return (data, "") if len(data) <= limit else (None, f"over the limit of {limit} bytes")
    finally:
        os.close(fd)


def _why(exc: BaseException) -> str:
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, OSError) and exc.errno is not None:
        import errno

        if exc.errno == errno.ELOOP:
            return "a symbolic link"
        if exc.errno == errno.ENOTDIR:
            return "a folder on its path is not a folder"
        return os.strerror(exc.errno).lower()
    return str(exc)


def _write_beneath(root: Path, rel: str, data: bytes, owner: tuple[int, int] | None) -> None:
    # a copy keeps the model's hard links (trees.copy_tree): the grader's file must not write through one
    fd = _open_beneath(root, rel, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, make_dirs=True, unshare=True)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{rel} is not a regular file")
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if owner is not None and os.geteuid() == 0:
            os.fchown(fd, *owner)
    finally:
        os.close(fd)
    if owner is not None and os.geteuid() == 0:  # folders made on the way belong to the model's uid too
        for parent in Path(rel).parents:
            if str(parent) != ".":
                os.chown(os.path.join(root, parent), *owner, follow_symlinks=False)


def copy_tree(source: Path, target: Path, skip_top: tuple[str, ...] = (".git",),
              deadline: float | None = None) -> list[str]:
    """Copy a tree into `target` (made when missing) without following links and without opening special
    files, at any depth (agentic_eval/trees.py: iterative); returns what was left out (FIFOs, sockets, devices, and
    entries the harness could not copy, each with why), relative to `source`. `skip_top`: entries at the top
    not copied (the repository's .git: three quarters of a small sandbox's files, and nothing a test needs).
    TreeTimeout past `deadline`."""
    from agentic_eval.trees import copy_tree as copy

    return copy(source, target, skip_top=skip_top, deadline=deadline)


def _empty(folder: Path) -> None:
    """Remove what `folder` holds but keep the folder itself (a container binds it), without following links
    and at any depth; made when missing. A file that appeared meanwhile (a process of the last command still
    ending) is removed on a later pass; OSError when the folder cannot be emptied."""
    from agentic_eval.trees import remove_tree

    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        folder.unlink()
    folder.mkdir(exist_ok=True)
    for attempt in range(3):
        with os.scandir(folder) as entries:
            names = [entry.name for entry in entries]
        if not names:
            return
        for name in names:
            remove_tree(folder / name)
        if attempt < 2:
            time.sleep(0.1 * attempt)
    with os.scandir(folder) as entries:
        left = [entry.name for entry in entries]
    if left:
        raise OSError(f"{folder} could not be emptied: {left[0]} stays")


def _tree_within(top: Path, size: int, entries: int) -> bool:
    """Whether the tree at `top` holds at most `entries` entries and `size` bytes of files (lstat only, iterative;
    stops at the first limit passed)."""
    folders, count, total = [str(top)], 0, 0
    while folders:
        try:
            with os.scandir(folders.pop()) as found:
                for entry in found:
                    count += 1
                    st = entry.stat(follow_symlinks=False)
                    total += st.st_size if stat.S_ISREG(st.st_mode) else 0
                    if count > entries or total > size:
                        return False
                    if stat.S_ISDIR(st.st_mode):
                        folders.append(entry.path)
        except OSError:
            return False
    return True


def _moved_text(text: str, moves: tuple[tuple[str, str], ...]) -> str:
    for old, new in moves:
        text = text.replace(old, new)
    return text


def _moved_data(text: str, moves: tuple[tuple[str, str], ...]) -> str:
    """Base64 `text` with the paths moved in the bytes it holds (a twin module that imports by absolute path)."""
    data = decode(text)
    for old, new in moves:
        data = data.replace(old.encode("utf-8"), new.encode("utf-8"))
    return encode(data)


def _moved(payload: Mapping[str, Any], moves: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    """`payload` with the paths of `moves` (old, new) moved in its argv, env values, files (names and bytes), stdin
    and collect."""
    moved = dict(payload)
    if isinstance(payload.get("argv"), list):  # anything else is refused as it is
        moved["argv"] = [_moved_text(a, moves) if isinstance(a, str) else a for a in payload["argv"]]
    moved["env"] = {k: _moved_text(str(v), moves) for k, v in dict(payload.get("env") or {}).items()}
    moved["files"] = {_moved_text(str(k), moves): _moved_data(str(v), moves)
                      for k, v in dict(payload.get("files") or {}).items()}
    if isinstance(payload.get("stdin"), str):
        moved["stdin"] = _moved_data(payload["stdin"], moves)
    moved["collect"] = [_moved_text(str(c), moves) for c in payload.get("collect") or []]
    return moved


# --------------------------------------------------------------------------- the harness's side

_NO_ROOM = tuple(f"({os.strerror(n).lower()})" for n in (errno.ENOSPC, errno.EDQUOT))
"""How `copy_tree` names an entry it could not write for want of room."""


def argv_name(payload: Mapping[str, Any]) -> str:
    """The program a request asked to run, for a note."""
    argv = payload.get("argv")
    return str(argv[0])[:100] if isinstance(argv, list) and argv else "a request"


def _not_run(why: str, start: float) -> dict[str, Any]:
    """The response to a request whose command was not run (or not to its end), for `why`."""
    return {"exit": None, "stopped_by": why, "output": "", "files": {}, "why": {},
            "duration_s": round(time.monotonic() - start, 3), "error": None}


class _Either(threading.Event):
    """Set while either of two events is (what run_command polls to stop a command)."""

    def __init__(self, first: threading.Event | None, second: threading.Event) -> None:
        super().__init__()
        self._events = tuple(e for e in (first, second) if e is not None)

    def is_set(self) -> bool:
        return any(e.is_set() for e in self._events)


class CodeHost:
    """Runs the model's code for one grader: confined by `backend`, on a work copy of `snapshot`.

    `deadline` (monotonic) bounds every command: a command is cut at the deadline less `reserve`, so that
    the grader, waiting for it, still has time to say "fail" before its own time runs out.
    """

    def __init__(self, snapshot: Path, folder: Path, backend: SandboxBackend, *, hidden: tuple[Path, ...] = (),
                 cancel: threading.Event | None = None, lanes: int | None = None) -> None:
        self.snapshot = snapshot
        self.folder = folder
        self.backend = backend
        self.hidden = hidden
        self.cancel = cancel
        self.work = folder / "work"
        self.scratch = folder / "scratch"
        self.socket_dir = folder / SOCKET_FOLDER
        """The folder holding the socket: the only thing of the host's the grader mounts."""
        self.socket_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.socket_dir, 0o755)
        self.socket_path = self.socket_dir / "run.sock"
        self.deadline: float | None = None
        self.reserve = 5.0
        self.commands = 0
        self.busy_s = 0.0
        self.skipped: list[str] = []
        self.out_of_room = ""
        """The first step of the host's that ran out of room on the disk (ENOSPC), or ''."""
        self.room_used = 0
        """Then: the bytes of its work copy and scratch folder (the model's tree and what its code wrote)."""
        self.late = False
        """A command of the model's code was cut, or not run, at the grader's deadline: the grader was answered and
        what time it had left was its own (validate tells a loaded machine from a grader that waits by it)."""
        self._fresh = True
        self._lock = threading.Lock()
        self.lanes = max(1, lanes or min(LANES_MAX, os.cpu_count() or 1)) if backend.host_process else 1
        """`apart` runs at once (`lanes`, or the cores up to LANES_MAX): on a backend whose commands run on this
        host (each on a copy at a path of its own: its own uid, mounts, namespaces); docker's share the trial's
        one container, so one at a time."""
        self._lane_slots = threading.BoundedSemaphore(self.lanes)
        self._in_lanes = threading.Condition()
        self._lanes_busy = 0
        self._small: bool | None = None
        self._closed = threading.Event()
        self._fork_server: Any = None
        self._fork_start = threading.Lock()
        self.forked = 0
        """pytest runs made by the fork server (grading/forkrun.py), not as processes of their own."""
        self._listener = listen_unix(str(self.socket_path), 8)  # the grader's uid connects; a long TMPDIR too
        from agentic_eval.confine.relay_harness import serve_unix

        self._thread = threading.Thread(target=serve_unix, args=(self._listener, self._closed, self._handle),
                                        daemon=True, name="sealed-run")
        self._thread.start()

    @property
    def env(self) -> dict[str, str]:
        """What the grader is told: the socket, and where the work copy and scratch folder are."""
        return {SOCKET_ENV: str(self.socket_path), WORK_ENV: str(self.work), SCRATCH_ENV: str(self.scratch),
                LANES_ENV: str(self.lanes)}

    def close(self) -> None:
        from agentic_eval.confine.relay_harness import stop_serving

        stop_serving(self._listener, self._closed)  # its thread ends too
        with self._lock:  # a command still running (its grader was stopped) ends first: _closed cancels it
            pass
        with self._in_lanes:  # and so do the `apart` runs (each removes its copy); bounded: cancelled, they end
            self._in_lanes.wait_for(lambda: self._lanes_busy == 0, timeout=60.0)
        with self._fork_start:  # one still starting (a hint's) is closed too
            if self._fork_server is not None:
                self._fork_server.close()
        if self.work.exists():
            self.backend.phase_end(self.work.resolve())  # docker: the model's container goes

    notes: dict[str, list[str]] = {}  # replaced, never mutated: see take_note
    """What the grader told the harness beside its verdict (`tests_forged`: tests a report called passed that
    the grader's own checks failed). Only the grader reaches the socket, never the model's code."""

    def take_note(self, note: object) -> dict[str, Any]:
        """A grader's note (`{"note": {"tests_forged": [...]}}`): kept, at most 100 names of 300 characters."""
        if not isinstance(note, dict):
            return {"error": "a note is a JSON object"}
        kept = dict(self.notes)
        for key, values in note.items():
            if key == "tests_forged" and isinstance(values, list):
                kept[key] = list(dict.fromkeys([*kept.get(key, []), *(str(v)[:300] for v in values)]))[:100]
        self.notes = kept
        return {"exit": 0, "output": "", "files": {}, "why": {}, "error": None}

    def _ran_out(self, what: str) -> None:
        """A step ran out of room: noted with what the model's tree and code held in the host's folders then, for
        the backend's `room_taken` (whose doing it was is ruled after grading: grading/phase.py)."""
        if self.out_of_room:
            return
        deadline = time.monotonic() + 10.0
        self.room_used = sum(tree_bytes(path, deadline) for path in (self.work, self.scratch) if path.is_dir())
        self.out_of_room = what[:300]

    # ----- serving

    def _handle(self, client: socket.socket) -> None:
        with client:
            try:
                payload = _receive(client)
            except (OSError, ValueError, SealedRunError):
                return
            if self._closed.is_set():  # its grader is gone: nothing more is started
                return
            try:
                response = self.run(payload)
            except Exception as exc:  # noqa: BLE001 - the harness's fault: the grader reports it as its own error
                import traceback

                if (full := out_of_room(exc)) is not None:  # the disk's: whose doing, grading/phase.py rules
                    self._ran_out(f"{argv_name(payload)}: {full}")
                frame = traceback.extract_tb(exc.__traceback__)[-1:]  # where, so that a rare one can be traced
                where = f" ({Path(frame[0].filename).name}:{frame[0].lineno})" if frame else ""
                response = {"error": f"{type(exc).__name__}: {exc}{where}"}
            try:
                _send(client, response)
            except OSError:
                pass

    # ----- one command

    def _fill(self, work: Path, scratch: Path) -> None:
        """A new copy of the snapshot in `work` and an empty `scratch` beside it, handed to the model's uid."""
        # no process of the previous copy survives: docker ends them and keeps the container (whose binds of
        # the work and scratch folders stay valid: they are emptied and refilled, never replaced)
        if work.exists():
            self.backend.end_processes(work.resolve())
        for path in (work, scratch):
            _empty(path)
        deadline = self.deadline - self.reserve if self.deadline is not None else None
        self.skipped = copy_tree(self.snapshot, work, deadline=deadline)  # TreeTimeout: the model's tree
        full = [entry for entry in self.skipped if entry.endswith(_NO_ROOM)]
        if full:
            self._ran_out(f"the work copy left out {len(full)} entries for want of room, first {full[0]}")
        (scratch / "home").mkdir()
        if os.geteuid() == 0:
            os.chown(work, 0, 0)  # so that prepare() hands every file over, not only a new top
        self.backend.prepare(work)
        owner = work.stat()
        if os.geteuid() == 0:
            for path in (scratch, scratch / "home"):
                os.chown(path, owner.st_uid, owner.st_gid)

    def _prepare(self, fresh: bool) -> None:
        if fresh or self._fresh or not self.work.exists():
            self._fill(self.work, self.scratch)
            self._fresh = False

    @staticmethod
    def _place(rel: str, work: Path, scratch: Path) -> tuple[Path, str]:
        """(the root, the path under it) for a path of a request: relative to the work tree, or absolute
        under the scratch folder."""
        if os.path.isabs(rel):
            under = str(scratch) + os.sep
            if not rel.startswith(under):
                raise ValueError(f"{rel!r} is neither relative to the work tree nor under {scratch}")
            return scratch, rel[len(under):]
        return work, rel

    def run(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """Run one request (see the module's docstring) and return its response: one at a time on the work
        copy, or (`apart`) on a copy of its own beside the other such runs."""
        if "note" in payload:
            return self.take_note(payload["note"])
        if "warm" in payload:  # the grader will run its pytest apart: the fork server starts meanwhile
            python = str(payload.get("python") or "")
            if python and self._fork_server is None and self._forkable():
                threading.Thread(target=self._fork_server_for, args=(python,), daemon=True, name="fork-warm").start()
            return {"exit": 0, "output": "", "files": {}, "why": {}, "error": None}
        if payload.get("apart") and self.lanes > 1 and self._small_tree():
            return self._run_in_lane(payload)
        with self._lock:  # one command at a time on the work copy
            if self._closed.is_set():  # its grader is gone: nothing more is started
                return {"error": "the grading is over"}
            return self._run(payload, self.work, self.scratch, fresh=bool(payload.get("fresh") or
                                                                          payload.get("apart")))

    def _small_tree(self) -> bool:
        """Whether the snapshot's tree is small enough for copies side by side (looked at once: it never changes)."""
        with self._in_lanes:
            if self._small is None:
                self._small = _tree_within(self.snapshot, LANE_TREE_BYTES, LANE_TREE_ENTRIES)
            return self._small

    def _run_in_lane(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """`payload` on a fresh copy of its own, at a path no one can predict (so not even its path tells the
        command which of a grader's runs it is), removed afterwards with every process of it."""
        import secrets

        from agentic_eval.trees import remove_tree

        with self._lane_slots:
            if self._closed.is_set():
                return {"error": "the grading is over"}
            with self._in_lanes:
                self._lanes_busy += 1
            lane = self.folder / "lanes" / secrets.token_hex(8)
            work, scratch = lane / "work", lane / "scratch"
            there = ((str(self.work), str(work)), (str(self.scratch), str(scratch)))
            back = tuple((new, old) for old, new in there)
            try:
                lane.mkdir(parents=True)
                response = self._run(_moved(payload, there), work, scratch, fresh=True)
            finally:
                if work.exists():
                    self.backend.end_processes(work.resolve())
                remove_tree(lane)
                with self._in_lanes:
                    self._lanes_busy -= 1
                    self._in_lanes.notify_all()
        if isinstance(response.get("output"), str):
            response["output"] = _moved_text(response["output"], back)
        if isinstance(response.get("files"), dict):  # what the run wrote, as if it ran on the work copy
            response["files"] = {_moved_text(k, back): None if v is None else _moved_data(v, back)
                                 for k, v in response["files"].items()}
        if isinstance(response.get("why"), dict):
            response["why"] = {_moved_text(k, back): v for k, v in response["why"].items()}
        return response

    def _run(self, payload: Mapping[str, Any], work: Path, scratch: Path, *, fresh: bool) -> dict[str, Any]:
        argv = payload.get("argv")
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            return {"error": "argv must be a non-empty list of strings"}
        start = time.monotonic()
        if self.deadline is not None and self.deadline - self.reserve <= start:  # no copy made, no file placed
            self.late = True
            return _not_run("not run: the grader's time is up", start)
        from agentic_eval.trees import TreeTimeout

        try:
            if work == self.work:
                self._prepare(fresh)
            else:
                self._fill(work, scratch)
        except TreeTimeout as exc:  # a tree too large to copy in the grader's time: the model's, a scored fail
            self._fresh = True
            return _not_run(f"not run: the model's tree could not be copied in the grader's time ({exc})", start)
        if (refused := self._place_files(payload, work, scratch)) is not None:
            return _not_run(refused, start)
        cwd = work
        if payload.get("cwd"):
            cwd = work.joinpath(*_parts(str(payload["cwd"])))
            try:  # the model's tree lacks it, or holds a link or a file there: the model's doing, never a harness error
                where = _open_beneath(work, str(payload["cwd"]), os.O_RDONLY | os.O_DIRECTORY)
                os.close(where)
            except (OSError, ValueError) as exc:
                return _not_run(f"not run: the folder {payload['cwd']} to run it in is not in the model's tree "
                                f"({_why(exc)})", start)
        try:
            result_code, output, stopped_by = self._command(payload, argv, work, scratch, cwd)
        except OSError as exc:
            return {"error": f"could not start {argv[0]!r}: {exc}"}
        files, why = self._collect(payload, work, scratch)
        elapsed = time.monotonic() - start
        with self._in_lanes:
            self.commands += 1
            self.busy_s += elapsed
        return {"exit": result_code, "stopped_by": stopped_by, "output": output.decode("utf-8", "replace"),
                "files": files, "why": why, "duration_s": round(elapsed, 3), "error": None}

    def _place_files(self, payload: Mapping[str, Any], work: Path, scratch: Path) -> str | None:
        """Put the request's files in place; why one could not be placed (the model's code left something in the
        way: a link, a folder, a full disk), or None."""
        owner = (work.stat().st_uid, work.stat().st_gid)
        for rel, text in dict(payload.get("files") or {}).items():
            root, under = self._place(rel, work, scratch)  # a path outside both: the grader's own mistake, an error
            try:
                _write_beneath(root, under, decode(text), owner)
            except (OSError, ValueError) as exc:
                if out_of_room(exc) is not None:
                    self._ran_out(f"the grader's file {rel} could not be placed: {exc}")
                return f"the grader's file {rel} could not be placed: {_why(exc)}"
        return None

    def _command(self, payload: Mapping[str, Any], argv: list[str], work: Path, scratch: Path, cwd: Path
                 ) -> tuple[int | None, bytes, str | None]:
        """Run the request's command confined on `work` (OSError: it could not start): exit, output, stopped_by."""
        from agentic_eval.confine.backend import Confinement, ResourceLimits
        from agentic_eval.confine.process import run_command

        timeout = float(payload.get("timeout") or 30.0)
        if self.deadline is not None:
            timeout = min(timeout, self.deadline - self.reserve - time.monotonic())
        env = {k: os.environ[k] for k in ENV_ALLOWED if k in os.environ}
        env.update(HOME=str(scratch / "home"), AGENTIC_EVAL_SANDBOX=str(work), PYTHONDONTWRITEBYTECODE="1",
                   LC_ALL=os.environ.get("LC_ALL", "C.UTF-8"))
        pythonpath = [str(work.joinpath(*_parts(p))) for p in payload.get("pythonpath") or []]
        if pythonpath:
            env["PYTHONPATH"] = os.pathsep.join(pythonpath)
        env.update({str(k): str(v) for k, v in dict(payload.get("env") or {}).items()})
        stdin = decode(payload["stdin"]) if payload.get("stdin") is not None else None
        if timeout <= 0:
            self.late = True
            return None, b"", "not run: the grader's time is up"
        spec = Confinement(writable=(work, scratch), hidden=self.hidden, limits=ResourceLimits(cpu_s=int(timeout) + 1))
        forked = self._forked(argv, work, cwd, env, spec, timeout) if stdin is None and work != self.work else None
        if forked is not None:
            code, output, stopped_by = forked
        else:
            done = run_command(self.backend, argv, cwd=cwd, env=env, spec=spec, timeout_s=timeout,
                               cancel=_Either(self.cancel, self._closed), stdin=stdin, output_limit=OUTPUT_LIMIT)
            code, output, stopped_by = done.returncode, done.output, done.stopped_by
        if stopped_by and self.deadline is not None and time.monotonic() >= self.deadline - self.reserve:
            self.late = True  # cut at the grader's deadline
        if stopped_by and not self._closed.is_set():  # docker: else it goes on in its container
            threading.Thread(target=self.backend.end_processes, args=(work.resolve(),),
                             daemon=True).start()  # beside the answer
        return code, output, stopped_by

    def _forkable(self) -> bool:
        """Whether gradelib's pytest runs in lanes may go through a fork server here (a root harness on bwrap)."""
        from agentic_eval.confine.host import BwrapBackend
        from agentic_eval.grading import forkrun

        return forkrun.enabled() and isinstance(self.backend, BwrapBackend) and self.backend.as_root and self.lanes > 1

    def _fork_server_for(self, python: str) -> Any:
        """The host's fork server (started by the first caller: a grader's hint, or its first run; the others wait)."""
        from agentic_eval.grading import forkrun

        with self._fork_start:
            if self._fork_server is None and not self._closed.is_set():
                self._fork_server = forkrun.ForkServer.start(self.backend, python, self.folder / "lanes", self.hidden)
            return self._fork_server

    def _forked(self, argv: list[str], work: Path, cwd: Path, env: Mapping[str, str], spec: Any, timeout: float
                ) -> tuple[int | None, bytes, str | None] | None:
        """gradelib's pytest run in a lane through the host's fork server (grading/forkrun.py), or None: run it as
        before (no server here, or it could not set the run up before the model's code ran)."""
        from agentic_eval.confine.host import TMP_BYTES, _identity_files, sandbox_uid
        from agentic_eval.grading import forkrun

        wanted = forkrun.pytest_run(argv)
        if wanted is None or not self._forkable() or work.parent.parent != self.folder / "lanes":
            return None
        server = self._fork_server_for(argv[0])
        if server is None or server.python != argv[0] or server.why_not and not server.broken:
            return None
        uid = sandbox_uid(work)
        passwd, group = _identity_files(uid)
        limits = spec.limits
        done = server.run(args=wanted[1], paths=wanted[0], lane=work.parent.name, cwd=str(cwd), env=env, uid=uid,
                          limits={"cpu_s": limits.cpu_s, "memory_bytes": limits.memory_bytes,
                                  "file_bytes": limits.file_bytes, "processes": limits.processes},
                          timeout=timeout, cancel=_Either(self.cancel, self._closed), output_limit=OUTPUT_LIMIT,
                          identity={"/etc/passwd": passwd.read_text(encoding="utf-8"),
                                    "/etc/group": group.read_text(encoding="utf-8")}, tmp_bytes=TMP_BYTES)
        if done is not None:
            with self._in_lanes:
                self.forked += 1
        return done

    def _collect(self, payload: Mapping[str, Any], work: Path, scratch: Path
                 ) -> tuple[dict[str, str | None], dict[str, str]]:
        """The files the request collects (base64, or None with why), within FILE_LIMIT each, COLLECT_LIMIT in all."""
        files: dict[str, str | None] = {}
        why: dict[str, str] = {}
        total = 0
        for rel in payload.get("collect") or []:
            try:
                root, under = self._place(str(rel), work, scratch)
                data, reason = read_regular(root, under, min(FILE_LIMIT, COLLECT_LIMIT - total))
            except ValueError as exc:
                data, reason = None, str(exc)
            files[str(rel)] = None if data is None else encode(data)
            if data is None:
                why[str(rel)] = reason
            else:
                total += len(data)
        return files, why
