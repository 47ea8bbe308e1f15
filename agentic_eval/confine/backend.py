"""Sandbox backends: how a command the model controls is started, and what it can reach.

Everything that runs code the model wrote or chose (the built-in agent's bash and
file tools, a CLI agent, the reference fix, the grader, which runs the model's
tests) is started through a `SandboxBackend`, the one contract every backend meets (its
docstring walks a trial's hooks). Backends are found by name in the `agentic_eval.backends`
entry-point group (`get_backend`), where the built-ins are registered as a plugin's would be:

- `bwrap` (bubblewrap): the default on Linux where it works. A fresh mount, PID,
  network, IPC and UTS namespace per command: the root is built from an
  allow-list (the system's `/usr`, `/etc`, the harness's Python, read-only), only
  the paths a `Confinement` names writable (the sandbox), a private `/tmp`, no
  network (an own loopback only), `/proc` of its own PID namespace (nothing
  outside is visible; everything dies with the command, `setsid` or not), no
  capabilities, and (where the harness runs as root) a uid of the sandbox's own, unprivileged and
  without a passwd entry, so that concurrent trials cannot signal, read or starve each other.
- `local`: today's unconfined behaviour, chosen explicitly; the model can reach
  the machine as the harness's user.
- `docker` (confine/docker.py): a hardened container per trial phase.

Local and bwrap apply the `ResourceLimits` as rlimits (`prlimit`): the command cannot lift them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import IO, Any

from agentic_eval.errors import AgenticEvalError

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
GRADING_SOCKET_FOLDER = "sock"
"""The folder of a grading folder (`SandboxBackend.grading_folder`) that holds the grader's code-host socket:
a backend may bind it into the grader's confinement before grading starts (agentic_eval.grading.sealed)."""
GiB = 1024 ** 3


@dataclass(frozen=True)
class ResourceLimits:
    """rlimits set on a confined command (and inherited by all it starts); None leaves one unset."""

    cpu_s: int | None = None
    """CPU seconds per process (RLIMIT_CPU): a busy loop is killed even where wall time is not checked."""
    memory_bytes: int | None = 4 * GiB
    """Address space per process (RLIMIT_AS)."""
    file_bytes: int | None = 2 * GiB
    """Largest file a process may write (RLIMIT_FSIZE)."""
    processes: int | None = 1024
    """Processes of the confined uid (RLIMIT_NPROC); applied only where that uid is the sandbox's own (root
    harness)."""


@dataclass(frozen=True)
class Confinement:
    """What one confined command may see and do (paths are bound at the same path inside)."""

    writable: tuple[Path, ...] = ()
    """Bound read-write: the sandbox."""
    readable: tuple[Path, ...] = ()
    """Bound read-only, besides the system allow-list."""
    hidden: tuple[Path, ...] = ()
    """Covered by an empty tmpfs where they fall under a bound path (e.g. packs inside the Python prefix)."""
    limits: ResourceLimits = field(default_factory=ResourceLimits)


class SandboxBackend:
    """The contract between a confinement and everything that starts the model's code through it: the trial
    runner, the sealed grader's code host, `validate` and the CLI agents. Only `wrap` is required; every
    other method is a hook with a documented default (a no-op where a backend has nothing to do), so the
    runner calls each one on any backend and names none.

    A trial's life, as the runner calls the hooks:

        SomeBackend.refusal(agent)                  # once per run: "" or why this agent cannot run here
        backend = SomeBackend.create(options)       # once per run; options: the backend's own settings
        backend.trial_start(sandbox)                # a freshly generated sandbox, before anything runs in it
        backend.prepare(sandbox)                    # hand its tree to the user confined commands run as
        backend.agent_start(sandbox, agent, reads)  # the agent is about to start (a head start, never needed)
        ... backend.wrap(argv, cwd=, spec=) for every command of the agent, the fix, the grader ...
        backend.phase_end(sandbox)                  # the agent's phase is over: none of its processes goes on
        backend.disk_full(sandbox)                  # was the sandbox full at the end (a scored fail)?
        backend.grading_start(sandbox)              # before grading
        backend.grading_folder(sandbox)             # where the grader's code host keeps its work copy
        backend.end_processes(work)                 # between the code host's commands on a fresh copy
        backend.describe(sandbox)                   # what ran the trial, for its record
        backend.trial_end(sandbox, keep=)           # the trial is over (its sandbox kept or removed next)
        backend.close_all()                         # the run is over

    Tasks that bring their own environment add `prepare_tasks(tasks)` (once per run, before any trial: the
    default refuses them), `environment_start(task, sandbox)` (instead of a generator) and
    `verify_environment(sandbox)` (a reward verifier, instead of the grade script); docker's alone.

    Backends are found by name in the `agentic_eval.backends` entry-point group (`--sandbox NAME`; the
    built-ins are registered there too): the entry point names the class, and `create` makes it.
    """

    name: str = ""
    confined: bool = True
    """False for `local`: the command can reach the machine (a warning says so; sealed grading is off)."""

    @classmethod
    def create(cls, options: Mapping[str, Any] | None = None) -> SandboxBackend:
        """The backend for a run, from its own `options` (e.g. docker's `hosts` and `image`). Raise
        AgenticEvalError, one line saying how to fix it, for an option it does not know or when it cannot
        work on this machine."""
        if options:
            raise AgenticEvalError(f"--sandbox {cls.name} takes no options (given: {', '.join(sorted(options))})")
        return cls()

    def wrap(self, argv: Sequence[str], *, cwd: Path, spec: Confinement) -> list[str]:
        """The command line that runs `argv` in `cwd` under `spec` (the environment passes through);
        callers start it and kill it as a process group."""
        raise NotImplementedError

    def prepare(self, path: Path) -> None:
        """Make a fresh tree (a sandbox, a work copy) writable by the user confined commands run as."""
        return None

    @classmethod
    def refusal(cls, agent: Any) -> str:
        """Why `agent` cannot run confined by this backend, in one line ("" when it can): asked once, before
        the backend is made (`get_backend(..., agent=)`)."""
        return ""

    def trial_start(self, sandbox: Path) -> None:
        """A trial's freshly generated sandbox, before anything runs in it (docker: onto a size-capped volume)."""
        return None

    def agent_start(self, sandbox: Path, agent: Any, grader_reads: Sequence[Path] = ()) -> None:
        """The trial's agent is about to start; `grader_reads`: what its grader will read. A head start
        only (docker starts containers ahead): must not raise, and nothing may depend on it."""
        return None

    def phase_end(self, sandbox: Path) -> None:
        """A phase (the agent's, the fix's, a grader's code host's) is over: end every process it left."""
        return None

    def disk_full(self, sandbox: Path) -> str:
        """Why the sandbox counts as full, or "" (a full disk the model made is its scored fail)."""
        return ""

    def grading_start(self, sandbox: Path) -> None:
        """Before grading (docker: room the model never had, for the grader's own files)."""
        return None

    def grading_folder(self, sandbox: Path) -> AbstractContextManager[str | Path]:
        """A folder for the grader's code host (its socket, work copy and scratch), removed on exit (marked: the
        next run removes it if this one is killed)."""
        from agentic_eval.leftovers import MarkedTempDir

        return MarkedTempDir("ae-grading-")

    def end_processes(self, work: Path) -> None:
        """End the processes still running on `work` (a code host's copy) before it is replaced."""
        return None

    def describe(self, sandbox: Path) -> dict[str, str]:
        """What ran the sandbox's commands, for the trial record (docker: `engine`, `image`)."""
        return {}

    def trial_end(self, sandbox: Path, keep: bool = False) -> None:
        """The trial is over; its sandbox is moved into the run folder next when `keep`, else removed.
        Must not raise."""
        return None

    def close_all(self) -> None:
        """The run is over: end everything this backend started."""
        return None

    # ----- tasks that bring their own environment (packs/environment.py): the docker backend's alone

    def prepare_tasks(self, tasks: Sequence[Any], log: Any = None) -> dict[str, str]:
        """Before any trial: get ready for the run's tasks (docker: build the images of environment tasks). The
        tasks it could not get ready (task id -> one line: an image that does not build), which the run goes on
        without. Raise AgenticEvalError, one line, for tasks this backend cannot run at all (here: every
        environment task)."""
        needing = [t.id for t in tasks if getattr(t.meta, "environment", None) is not None]
        if needing:
            listed = ", ".join(needing[:3]) + (f" and {len(needing) - 3} more" if len(needing) > 3 else "")
            raise AgenticEvalError(f"{listed} bring{'s' if len(needing) == 1 else ''} its own environment (a "
                                   f"Dockerfile), which --sandbox {self.name or 'this backend'} cannot run: use "
                                   "--sandbox docker, or leave those tasks out with --task")
        return {}

    def environment_start(self, task: Any, dest: Path) -> None:
        """An environment task's trial: its working directory's files into the empty folder `dest` (the caller
        commits them as pristine), its services started; the sandbox's commands run in its container from then
        on, until `trial_end`."""
        raise AgenticEvalError(f"task {task.id} brings its own environment: use --sandbox docker")

    def verify_environment(self, sandbox: Path, cancel: Any = None) -> Any:
        """Run an environment task's reward verifier once its agent's phase is over (confine/docker_env.py's
        `VerifierRun`)."""
        raise AgenticEvalError("this backend runs no environment verifier: use --sandbox docker")


def _prlimit(limits: ResourceLimits, dedicated_uid: bool) -> list[str]:
    tool = shutil.which("prlimit")
    if tool is None:
        return []
    opts = [f"--{name}={value}" for name, value in (("cpu", limits.cpu_s), ("as", limits.memory_bytes),
                                                    ("fsize", limits.file_bytes)) if value is not None]
    if limits.processes is not None and dedicated_uid:
        opts.append(f"--nproc={limits.processes}")
    return [tool, *opts, "--core=0", "--"] if opts else []


class LocalBackend(SandboxBackend):
    """No confinement: the command runs as the harness's user on the host (rlimits only)."""

    name = "local"
    confined = False

    def wrap(self, argv: Sequence[str], *, cwd: Path, spec: Confinement) -> list[str]:
        return [*_prlimit(spec.limits, dedicated_uid=False), *argv]

    def prepare(self, path: Path) -> None:
        return None


@cache
def _python_roots() -> list[Path]:
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


class BwrapBackend(SandboxBackend):
    """bubblewrap: namespaces, an allow-listed read-only root, a private /tmp, no network, no capabilities."""

    name = "bwrap"
    confined = True

    def __init__(self, executable: str | None = None) -> None:
        self.executable = executable or shutil.which("bwrap") or "bwrap"
        self.as_root = os.geteuid() == 0
        self.setpriv = shutil.which("setpriv") or "setpriv"
        self._fixed: list[str] | None = None

    @classmethod
    def create(cls, options: Mapping[str, Any] | None = None) -> SandboxBackend:
        """bubblewrap where it works here; else one line saying why and how to fix it."""
        super().create(options)  # it takes no options
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
        os.chown(path, uid, gid, follow_symlinks=False)
        if not path.is_dir():
            return
        from agentic_eval.trees import walk

        for dirpath, dirnames, filenames in walk(path):  # iterative: a tree of any depth
            for name in (*dirnames, *filenames):
                try:
                    os.chown(os.path.join(dirpath, name), uid, gid, follow_symlinks=False)
                except OSError:  # a path longer than the kernel takes: the model's, left as it is
                    pass

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
        args = [*self._fixed_args()]
        if self.as_root:  # programs ask who they are (node's os.userInfo): name the sandbox's uid
            passwd, group = _identity_files(uid)
            args += ["--ro-bind", str(passwd), "/etc/passwd", "--ro-bind", str(group), "/etc/group"]
        args += ["--dev", "/dev", "--proc", "/proc", "--perms", "1777", "--tmpfs", "/tmp"]
        # Paths as strings (abspath-normalised): Path objects cost more than the rest of this per command.
        mounts = [(os.path.abspath(p), "--ro-bind") for p in [*_python_roots(), *spec.readable]]
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
            if os.path.isdir(where) and any(_under_str(where, m) and where != m for m in made if m != "/"):
                args += ["--tmpfs", where]
        args += ["--chdir", str(cwd), "--"]
        if self.as_root:
            args += [self.setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                     "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", "--"]
        return [*args, *_prlimit(spec.limits, dedicated_uid=self.as_root), *argv]


_identity_lock = threading.Lock()
_identity_dir: list[Path] = []


def _identity_files(uid: int) -> tuple[Path, Path]:
    """/etc/passwd and /etc/group with a line for `uid` ('agent', HOME /tmp), made once per uid in a
    folder of this process's own (removed at exit; marked: the next run removes it if this one is killed)."""
    with _identity_lock:
        if not _identity_dir:
            import atexit

            from agentic_eval.leftovers import MarkedTempDir

            made = MarkedTempDir("ae-identity-")
            atexit.register(made.cleanup)
            folder = made.top
            _identity_dir.append(folder)
        folder = _identity_dir[0] / str(uid)
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


def backend_names() -> list[str]:
    """Every registered backend's name, built-ins included, sorted."""
    from agentic_eval.plugins import BACKENDS_GROUP, names_in

    return names_in(BACKENDS_GROUP)


LOCAL_WARNING = ("warning: --sandbox local: the model's commands run unconfined as this user: they can read your "
                 "files, reach your network and outlive the trial, and its code can reach the grader (grading is not "
                 "sealed); use --sandbox bwrap for untrusted models")


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


def get_backend(name: str, options: Mapping[str, Any] | None = None, agent: Any = None) -> SandboxBackend:
    """The backend registered as `name`, made with its own `options`; `AgenticEvalError` (saying how to fix
    it) if it is unknown, cannot work here, or refuses `agent` (asked before it is made)."""
    return backend_class(name, agent).create(dict(options or {}))


def backend_class(name: str, agent: Any = None) -> type[SandboxBackend]:
    """The backend class registered as `name`, not made (`run --ray` makes it on each node); `AgenticEvalError`
    (saying how to fix it) if it is unknown or refuses `agent`."""
    from agentic_eval.plugins import BACKENDS_GROUP, entry_points_in

    found = [ep for ep in entry_points_in(BACKENDS_GROUP) if ep.name == name]
    if not found:
        raise AgenticEvalError(f"unknown sandbox {name!r} (available: {', '.join(backend_names()) or 'none'}; a "
                               "third-party one installs as a plugin, see docs/plugins.md)")
    try:
        cls = found[0].load()
    except Exception as exc:  # noqa: BLE001 - a broken plugin: say which, in one line
        raise AgenticEvalError(f"sandbox {name!r} ({found[0].value}) could not be loaded: {type(exc).__name__}: "
                               f"{exc}") from None
    if not (isinstance(cls, type) and issubclass(cls, SandboxBackend)):
        raise AgenticEvalError(f"sandbox {name!r} ({found[0].value}) is not a SandboxBackend subclass")
    if agent is not None and (why := cls.refusal(agent)):
        raise AgenticEvalError(why)
    return cls


def resolve_backend(name: str | None, options: Mapping[str, Any] | None = None,
                    agent: Any = None) -> tuple[SandboxBackend, str | None]:
    """The backend a run uses and a line to print about it: `name` if given (a warning for an unconfined
    one), else `bwrap` where it works, else `local` with a loud line saying why and how to fix it.
    `agent`: the run's agent, which the named backend may refuse."""
    if name is not None:
        backend = get_backend(name, options, agent)
        warning = LOCAL_WARNING.replace("--sandbox local", f"--sandbox {backend.name}")
        return backend, (warning if not backend.confined else None)
    if options:
        raise AgenticEvalError(f"{', '.join(sorted(options))}: these are options of a sandbox; name it with --sandbox")
    problem = bwrap_problem()
    if problem is None:
        return BwrapBackend(), None
    return LocalBackend(), (f"WARNING: commands the model writes will run UNCONFINED (--sandbox local): {problem}. "
                            "Fix that to confine them, or pass --sandbox local to accept it")


@cache
def default_backend() -> SandboxBackend:
    """`bwrap` where it works, else `local` (library callers that pick no backend)."""
    return BwrapBackend() if bwrap_problem() is None else LocalBackend()


def serve_unix(listener: Any, closed: threading.Event, handle: Any) -> None:
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

    def _handle(self, control: Any) -> None:
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

    def _serve(self, connection: Any, guard: Any) -> None:
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

    def _refuse(self, connection: Any, verdict: Any) -> None:
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

    def _answer_403(self, connection: Any, verdict: Any) -> None:
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
        self._closed.set()
        self._listener.close()
        self.refusals.close()


def _read_request_head(connection: Any, limit: int = 65536) -> str:
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


@dataclass(frozen=True)
class CommandResult:
    """A finished confined command: its output (head and tail kept), exit code, and why it was stopped."""

    output: bytes
    returncode: int | None
    stopped_by: str = ""
    """'' when it exited by itself; else 'timed out after Ns' or 'was cancelled'."""


class HeadAndTail:
    """Collects a stream's bytes keeping at most `limit` of its head and `limit` of its tail."""

    def __init__(self, limit: int) -> None:
        self.limit, self.total = limit, 0
        self.head, self.tail = bytearray(), bytearray()

    def add(self, block: bytes) -> None:
        self.total += len(block)
        room = self.limit - len(self.head)
        if room > 0:
            self.head += block[:room]
            block = block[room:]
        self.tail += block
        del self.tail[: -self.limit]

    def read_all(self, stream: IO[bytes]) -> None:
        while block := os.read(stream.fileno(), 65536):
            self.add(block)

    @property
    def omitted(self) -> int:
        return self.total - len(self.head) - len(self.tail)

    def data(self, marker: bytes = b"") -> bytes:
        return bytes(self.head) + (marker if self.omitted else b"") + bytes(self.tail)


def signal_group(pgid: int, sig: int | None = None) -> None:
    """Send `sig` (default SIGKILL) to the process group `pgid`; a group already gone, or not ours,
    is left alone. The one process-group kill: graders, CLI agents and cold-start use it too."""
    import signal

    try:
        os.killpg(pgid, signal.SIGKILL if sig is None else sig)
    except (ProcessLookupError, PermissionError):
        pass


def run_command(backend: SandboxBackend, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str],
                spec: Confinement, timeout_s: float, cancel: threading.Event | None = None,
                stdin: bytes | None = None, output_limit: int = 16_000) -> CommandResult:
    """Run `argv` through `backend` with stdout and stderr merged, until it exits, `timeout_s` passes or
    `cancel` is set; its whole process group (and, confined, its PID namespace) is killed before this
    returns. Keeps `output_limit` bytes of the output's head and as many of its tail. The time limit counts
    from the call: a backend that must first start a place to run the command (a docker container) spends it."""
    end = time.monotonic() + timeout_s
    proc = subprocess.Popen(backend.wrap(argv, cwd=cwd, spec=spec), cwd=cwd, env=dict(env),
                            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    output = HeadAndTail(output_limit)
    assert proc.stdout is not None
    reader = threading.Thread(target=output.read_all, args=(proc.stdout,), daemon=True)
    reader.start()
    if stdin is not None:
        def feed() -> None:
            try:
                assert proc.stdin is not None
                proc.stdin.write(stdin)
                proc.stdin.close()
            except OSError:
                pass
        threading.Thread(target=feed, daemon=True).start()
    stopped_by = ""
    # Wait without reaping, so the group id cannot be reused before the group is killed.
    while os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
        if cancel is not None and cancel.is_set():
            stopped_by = "was cancelled"
            break
        if time.monotonic() >= end:
            stopped_by = f"timed out after {timeout_s:g}s"
            break
        time.sleep(0.01)
    signal_group(proc.pid)  # also ends whatever the command left running in the background
    proc.wait()
    reader.join(timeout=5)
    return CommandResult(output.data(f"\n[... {output.omitted} bytes of output omitted ...]\n".encode()),
                         None if stopped_by else proc.returncode, stopped_by)
