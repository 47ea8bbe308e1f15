"""The backends that run a command as a process of this host: `local` (unconfined, rlimits only) and `bwrap`
(bubblewrap: a fresh mount, PID, network, IPC and UTS namespace per command, an allow-listed read-only root,
only the paths a `Confinement` names writable, a private /tmp, no network, no capabilities, and, where the
harness runs as root, a uid of the sandbox's own). Both apply the `ResourceLimits` as rlimits (`prlimit`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from agentic_eval.confine.backend import Confinement, ResourceLimits, SandboxBackend
from agentic_eval.confine.shared_disk import SharedDisk
from agentic_eval.errors import AgenticEvalError

if TYPE_CHECKING:
    from agentic_eval.confine.options import BackendOptions

TMP_BYTES = 1 << 30
"""The size of a bwrap command's private /tmp (a tmpfs, so memory): a model that fills it gets "No space left on
device", not the machine's memory."""
UNPRIVILEGED_UID = 65534
"""The uid (and gid) of confined commands with no writable path, when the harness is root ('nobody')."""
SANDBOX_UIDS = (200_000, 60_000)
"""A root harness runs each sandbox's commands as uid (and gid) first + hash(sandbox path) % count."""


def sandbox_uid(path: Path) -> int:
    """The unprivileged uid of the sandbox at `path` (a root harness's confined commands run as it)."""
    import hashlib

    digest = hashlib.sha256(str(Path(os.path.abspath(path))).encode()).digest()
    first, count = SANDBOX_UIDS
    return first + int.from_bytes(digest[:8], "big") % count
def _prlimit(limits: ResourceLimits, dedicated_uid: bool) -> list[str]:
    tool = shutil.which("prlimit")
    if tool is None:
        return []
    opts = [f"--{name}={value}" for name, value in (("cpu", limits.cpu_s), ("as", limits.memory_bytes),
                                                    ("fsize", limits.file_bytes)) if value is not None]
    if limits.processes is not None and dedicated_uid:
        opts.append(f"--nproc={limits.processes}")
    return [tool, *opts, "--core=0", "--"] if opts else []


class LocalBackend(SharedDisk, SandboxBackend):
    """No confinement: the command runs as the harness's user on the host (rlimits only)."""

    name = "local"
    confined = False
    host_process = True
    file_tool_worker = True

    def wrap(self, argv: Sequence[str], *, cwd: Path, spec: Confinement) -> list[str]:
        return [*_prlimit(spec.limits, dedicated_uid=False), *argv]

    def prepare(self, path: Path) -> None:
        return None


KERNEL_SHARED = ("/proc/key-users", "/proc/keys")
"""What /proc shows of every uid's kernel keys (counts, bytes): covered with an empty file in every confined command,
so that no run learns from them how many ran before it (graders/mutation.py also draws the runs' order afresh)."""


@cache
def python_roots() -> list[Path]:
    """Where the harness's Python lives (its prefix, base prefix, the interpreter's real folder)."""
    roots = {Path(sys.prefix), Path(sys.base_prefix), Path(os.path.realpath(sys.executable)).parent.parent}
    return sorted(p for p in roots if p.is_dir() and not _under(p, Path("/usr")))


def _under(path: Path, top: Path) -> bool:
    return path == top or top in path.parents


def _under_str(path: str, top: str) -> bool:
    """`_under` for abspath-normalised strings."""
    return path == top or path.startswith(top if top == "/" else top + "/")


def _parents_top_down(path: str) -> list[str]:
    """The folders above the abspath `path`, from "/" down ('/a/b/c' -> ['/', '/a', '/a/b'])."""
    out: list[str] = []
    parent = os.path.dirname(path)
    while True:
        out.append(parent)
        up = os.path.dirname(parent)
        if up == parent:
            break
        parent = up
    return out[::-1]


class BwrapBackend(SharedDisk, SandboxBackend):
    """bubblewrap: namespaces, an allow-listed read-only root, a private /tmp, no network, no capabilities."""

    name = "bwrap"
    confined = True
    host_process = True
    file_tool_worker = True

    def __init__(self, executable: str | None = None) -> None:
        self.executable = executable or shutil.which("bwrap") or "bwrap"
        self.as_root = os.geteuid() == 0
        self.setpriv = shutil.which("setpriv") or "setpriv"
        self._fixed: list[str] | None = None

    @classmethod
    def from_options(cls, options: BackendOptions) -> SandboxBackend:
        """bubblewrap where it works here; else one line saying why and how to fix it."""
        problem = bwrap_problem()
        if problem is not None:
            raise AgenticEvalError(f"--sandbox bwrap: {problem}; or accept an unconfined run with --sandbox local")
        return cls()

    def prepare(self, path: Path, uid: int | None = None) -> None:
        """chown the tree to the sandbox's uid (root harness only; a tree whose top it owns already is left
        as is)."""
        uid = gid = sandbox_uid(path) if uid is None else uid
        if not self.as_root or not path.exists() or path.stat().st_uid == uid:
            return
        from agentic_eval.trees import chown_tree

        chown_tree(path, uid, gid)

    def end_processes(self, work: Path) -> None:
        """A root harness runs a tree's commands as that tree's own uid: end every process of it that is still
        alive (a command killed for its time whose namespace is still being torn down, on a loaded machine),
        and wait until they are gone, so that the tree can be emptied and refilled."""
        if self.as_root:
            for uid in {sandbox_uid(work), sandbox_uid(Path(os.path.realpath(work)))}:
                end_uid_processes(uid)

    def phase_end(self, sandbox: Path) -> None:
        self.end_processes(sandbox)

    def _fixed_args(self) -> list[str]:
        """The part of every command line that depends on nothing but this machine: bwrap's namespaces and
        the system's read-only folders (worked out once)."""
        if self._fixed is None:
            args = [self.executable, "--die-with-parent", "--new-session", "--unshare-ipc", "--unshare-pid",
                    "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
            if not self.as_root:
                args += ["--unshare-user", "--cap-drop", "ALL"]
            args += ["--ro-bind", "/usr", "/usr"]
            for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
                if os.path.islink(top):
                    args += ["--symlink", os.readlink(top), top]
                elif os.path.isdir(top):
                    args += ["--ro-bind", top, top]
            self._fixed = [*args, "--ro-bind", "/etc", "/etc"]
        return self._fixed

    def wrap(self, argv: Sequence[str], *, cwd: Path, spec: Confinement) -> list[str]:
        uid = sandbox_uid(spec.writable[0]) if spec.writable else UNPRIVILEGED_UID
        for path in spec.writable:  # a tree nobody prepared (a library caller's) is handed over on first use
            self.prepare(Path(path), uid)
        args = self._bwrap_args(cwd, spec, uid)
        if self.as_root:
            args += [self.setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                     "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", "--"]
        return [*args, *_prlimit(spec.limits, dedicated_uid=self.as_root), *argv]

    def server_args(self, *, cwd: Path, spec: Confinement) -> list[str]:
        """bwrap's part of `wrap` for a root harness's fork server (grading/forkrun.py): the same namespaces and
        mounts, but it keeps root there (each of its runs drops it), no identity files, no rlimits; nothing chowned."""
        return self._bwrap_args(cwd, spec, None)

    def _bwrap_args(self, cwd: Path, spec: Confinement, uid: int | None) -> list[str]:
        args = [*self._fixed_args()]
        if self.as_root and uid is not None:  # programs ask who they are (node's os.userInfo): name the sandbox's uid
            passwd, group = _identity_files(uid)
            args += ["--ro-bind", str(passwd), "/etc/passwd", "--ro-bind", str(group), "/etc/group"]
        args += ["--dev", "/dev", "--proc", "/proc", *_kernel_covers()]
        args += ["--perms", "1777", "--size", str(TMP_BYTES), "--tmpfs", "/tmp"]
        # Paths as strings (abspath-normalised): Path objects cost more than the rest of this per command.
        mounts = [(os.path.abspath(p), "--ro-bind") for p in [*python_roots(), *spec.readable]]
        mounts += [(os.path.abspath(p), "--bind") for p in spec.writable]
        made: set[str] = {"/", "/usr", "/etc", "/tmp", "/dev", "/proc"}
        for mount, how in sorted(mounts, key=lambda m: 1 if m[0] == "/" else m[0].count("/") + 1):
            if not os.path.exists(mount) or any(_under_str(mount, t) for t in ("/usr", "/etc", "/proc", "/dev")):
                continue
            for parent in _parents_top_down(mount):
                if parent not in made:
                    args += ["--perms", "0755", "--dir", parent]
                    made.add(parent)
            args += [how, mount, mount]
            made.add(mount)
        for hidden in spec.hidden:
            where = os.path.abspath(hidden)
            if not any(_under_str(where, m) and where != m for m in made if m != "/"):
                continue
            if os.path.isdir(where):
                args += ["--tmpfs", where]
            elif os.path.isfile(where):  # a module file (a copy of a realpy project's parse.py): seen empty
                args += ["--ro-bind", str(_empty_file()), where]
        return [*args, "--chdir", str(cwd), "--"]


_identity_lock = threading.Lock()
_identity_dir: list[Path] = []


def _own_folder() -> Path:
    """A folder of this process's own for files it binds into commands (removed at exit; marked: the next run
    removes it if this one is killed). Call with `_identity_lock` held."""
    if not _identity_dir:
        import atexit

        from agentic_eval.leftovers import MarkedTempDir

        made = MarkedTempDir("ae-identity-")
        atexit.register(made.cleanup)
        _identity_dir.append(made.top)
    return _identity_dir[0]


@cache
def _kernel_covers() -> tuple[str, ...]:
    """bwrap's arguments that cover KERNEL_SHARED with an empty file (worked out once: they depend on the machine)."""
    return tuple(arg for shared in KERNEL_SHARED if os.path.exists(shared)
                 for arg in ("--ro-bind", str(_empty_file()), shared))


def _empty_file() -> Path:
    """An empty, read-only regular file bound over a hidden file (/dev/null cannot be opened there: nodev)."""
    with _identity_lock:
        empty = _own_folder() / "empty"
        if not empty.exists():
            empty.touch(mode=0o444)
        return empty


def _identity_files(uid: int) -> tuple[Path, Path]:
    """/etc/passwd and /etc/group with a line for `uid` ('agent', HOME /tmp), made once per uid in the
    process's own folder (`_own_folder`)."""
    with _identity_lock:
        folder = _own_folder() / str(uid)
        passwd, group = folder / "passwd", folder / "group"
        if not group.exists():
            folder.mkdir(exist_ok=True)
            for path, source, line in ((passwd, "/etc/passwd", f"agent:x:{uid}:{uid}:agent:/tmp:/bin/bash\n"),
                                       (group, "/etc/group", f"agent:x:{uid}:\n")):
                try:
                    text = Path(source).read_text(encoding="utf-8", errors="replace")
                except OSError:
                    text = ""
                tmp = path.with_suffix(".tmp")
                tmp.write_text(text + ("" if not text or text.endswith("\n") else "\n") + line, encoding="utf-8")
                tmp.chmod(0o644)
                os.replace(tmp, path)
        return passwd, group


def end_uid_processes(uid: int, wait_s: float = 10.0) -> int:
    """SIGKILL every process running as `uid` (never 0), round after round until none is left (at most
    `wait_s`: one forked meanwhile is ended too); returns how many were signalled. Linux only (reads /proc);
    a no-op elsewhere."""
    import signal

    if uid == 0 or not os.path.isdir("/proc"):
        return 0

    def alive() -> list[int]:
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    if os.stat(f"/proc/{entry}").st_uid == uid:
                        found.append(int(entry))
                except OSError:  # it ended meanwhile
                    pass
        return found

    signalled: set[int] = set()
    deadline = time.monotonic() + wait_s
    while (pids := alive()) and time.monotonic() < deadline:
        for pid in pids:  # every round: a process forked since the last one is ended too
            try:
                os.kill(pid, signal.SIGKILL)
                signalled.add(pid)
            except OSError:
                pass
        time.sleep(0.02)
    return len(signalled)


@cache
def bwrap_problem() -> str | None:
    """Why bubblewrap cannot confine commands here (None when it can): probed once by running `true` in it."""
    if not sys.platform.startswith("linux"):
        return "bubblewrap needs Linux"
    if shutil.which("bwrap") is None:
        return "bwrap is not installed (install it: apt-get install bubblewrap)"
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        return "setpriv is missing (install it: apt-get install util-linux)"
    backend = BwrapBackend()
    try:
        proc = subprocess.run(backend.wrap(["true"], cwd=Path("/"), spec=Confinement()), capture_output=True,
                              timeout=30, stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bwrap could not start: {exc}"
    if proc.returncode != 0:
        why = proc.stderr.decode(errors="replace").strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
        return (f"bwrap cannot run here ({why[0]}); enable unprivileged user namespaces "
                "(sysctl kernel.unprivileged_userns_clone=1) or run as root")
    return None


