"""The sandbox backend contract: how a command the model controls is started, and what it can reach.

Everything that runs code the model wrote or chose (the built-in agent's bash and
file tools, a CLI agent, the reference fix, the grader, which runs the model's
tests) is started through a `SandboxBackend`, the one contract every backend meets (its
docstring walks a trial's hooks), under a `Confinement` (what it may see) with `ResourceLimits`.
Backends are found by name in the `agentic_eval.backends` entry-point group (confine/registry.py),
where the built-ins are registered as a plugin's would be: `bwrap` and `local` (confine/host.py),
`docker` (confine/docker.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from agentic_eval._lazy import lazy_face
from agentic_eval.errors import AgenticEvalError

if TYPE_CHECKING:  # typing only: agents stand above confine; pydantic stays out of the grader's imports
    import threading

    from agentic_eval.agents.base import Agent
    from agentic_eval.confine.docker_env import VerifierRun
    from agentic_eval.confine.env_spec import EnvironmentTask
    from agentic_eval.confine.options import BackendOptions

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
        backend.room_taken(sandbox, elsewhere)      # recording or grading ran out of room: the model's doing?
        backend.end_processes(work)                 # between the code host's commands on a fresh copy
        backend.describe(sandbox)                   # what ran the trial, for its record
        backend.trial_end(sandbox, keep=)           # the trial is over (its sandbox kept or removed next)
        backend.close_all()                         # the run is over

    Tasks that bring their own environment add `prepare_tasks(tasks)` (once per run, before any trial: the
    default refuses them), `environment_start(task, sandbox)` (instead of a generator; both take the task as an
    `EnvironmentTask`, confine/env_spec.py) and
    `verify_environment(sandbox)` (a reward verifier, instead of the grade script); docker's alone.

    Backends are found by name in the `agentic_eval.backends` entry-point group (`--sandbox NAME`; the
    built-ins are registered there too): the entry point names the class, and `create` makes it.
    """

    name: str = ""
    confined: bool = True
    """False for `local`: the command can reach the machine (a warning says so; sealed grading is off)."""
    Options: ClassVar[type[BackendOptions] | None] = None
    """Its own options (`--sandbox-opt KEY=VALUE`, a campaign file's `[sandbox]` table): a `BackendOptions`
    subclass (confine/options.py), one field per option; None: it takes none."""

    # Capabilities, read by the code that would otherwise switch on a backend's name.
    host_process: ClassVar[bool] = False
    """Each command is a process of this host that `wrap`'s command line starts directly (local, bwrap), not a
    process in a container or elsewhere: a long-lived helper started through `wrap` stays close at hand."""
    file_tool_worker: ClassVar[bool] = False
    """The built-in agent's file tools may be served by one long-lived worker started through `wrap`
    (agents/builtin/tools.py `FileToolWorker`); False: a process per call."""
    disk_cap: ClassVar[bool] = False
    """The sandbox's disk is capped for the trial (docker: a size-capped tmpfs), so `disk_full` can tell a full
    disk the model made and the snapshot is still taken; False: it shares the machine's disk, and a `disk_full`
    (confine/shared_disk.py) means the machine's disk is full: the sandbox is emptied before anything is written."""

    @classmethod
    def create(cls, options: Mapping[str, Any] | None = None) -> SandboxBackend:
        """The backend for a run, from its own `options` (text from `--sandbox-opt`, TOML values, or Python):
        checked against `Options` (an unknown key or a bad value is one line naming it and the keys it takes),
        then made by `from_options`."""
        return cls.from_options(cls.check_options(options))

    @classmethod
    def check_options(cls, options: Mapping[str, Any] | None) -> BackendOptions:
        """`options` checked against `Options` (none: the empty model); AgenticEvalError, one line naming the bad
        key or value and the keys it takes. Asked before anything is made (a campaign file, `run --ray`)."""
        from agentic_eval.confine.options import BackendOptions

        return (cls.Options or BackendOptions).of(options, cls.name)

    @classmethod
    def from_options(cls, options: BackendOptions) -> SandboxBackend:
        """Make the backend from its checked options; raise AgenticEvalError, one line saying how to fix it,
        when it cannot work on this machine. The default takes none: `cls()`."""
        return cls()

    def wrap(self, argv: Sequence[str], *, cwd: Path, spec: Confinement) -> list[str]:
        """The command line that runs `argv` in `cwd` under `spec` (the environment passes through);
        callers start it and kill it as a process group."""
        raise NotImplementedError

    def prepare(self, path: Path) -> None:
        """Make a fresh tree (a sandbox, a work copy) writable by the user confined commands run as."""
        return None

    @classmethod
    def refusal(cls, agent: Agent) -> str:
        """Why `agent` cannot run confined by this backend, in one line ("" when it can): asked once, before
        the backend is made (`get_backend(..., agent=)`)."""
        return ""

    def trial_start(self, sandbox: Path) -> None:
        """A trial's freshly generated sandbox, before anything runs in it (docker: onto a size-capped volume)."""
        return None

    def agent_start(self, sandbox: Path, agent: Agent, grader_reads: Sequence[Path] = ()) -> None:
        """The trial's agent is about to start; `grader_reads`: what its grader will read. A head start
        only (docker starts containers ahead): must not raise, and nothing may depend on it."""
        return None

    def phase_end(self, sandbox: Path) -> None:
        """A phase (the agent's, the fix's, a grader's code host's) is over: end every process it left."""
        return None

    def disk_full(self, sandbox: Path) -> str:
        """Why the sandbox counts as full, or "" (a full disk the model made is its scored fail)."""
        return ""

    def room_taken(self, sandbox: Path, elsewhere: int = 0) -> str:
        """A step of recording or grading the sandbox ran out of room (ENOSPC): why that was the model's doing (a
        scored fail), or "" (the machine's fault). `elsewhere`: bytes of the grader's copies of the model's tree and
        of what its code wrote there, given (> 0) only when the grader's code host ran out of room. Docker's capped
        sandbox never takes the machine's room, but its grading folder is its own: full, it is the model's doing."""
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

    def prepare_tasks(self, tasks: Sequence[EnvironmentTask], log: Callable[..., None] | None = None
                      ) -> dict[str, str]:
        """Before any trial: get ready for the run's tasks that bring their own environment (docker: build their
        images; `packs.task.environment_tasks` picks them out). The tasks it could not get ready (task id -> one
        line: an image that does not build), which the run goes on without. Raise AgenticEvalError, one line, for
        tasks this backend cannot run at all (here: every one)."""
        if tasks:
            needing = [t.id for t in tasks]
            listed = ", ".join(needing[:3]) + (f" and {len(needing) - 3} more" if len(needing) > 3 else "")
            raise AgenticEvalError(f"{listed} bring{'s' if len(needing) == 1 else ''} its own environment (a "
                                   f"Dockerfile), which --sandbox {self.name or 'this backend'} cannot run: use "
                                   "--sandbox docker, or leave those tasks out with --task")
        return {}

    def environment_start(self, task: EnvironmentTask, dest: Path) -> None:
        """An environment task's trial: its working directory's files into the empty folder `dest` (the caller
        commits them as pristine), its services started; the sandbox's commands run in its container from then
        on, until `trial_end`."""
        raise AgenticEvalError(f"task {task.id} brings its own environment: use --sandbox docker")

    def verify_environment(self, sandbox: Path, cancel: threading.Event | None = None) -> VerifierRun:
        """Run an environment task's reward verifier once its agent's phase is over (confine/docker_env.py's
        `VerifierRun`)."""
        raise AgenticEvalError("this backend runs no environment verifier: use --sandbox docker")


# The names that lived here before confine/ was split by concept, still importable from here.
__getattr__, _ = lazy_face(__name__, {
    **dict.fromkeys(("LocalBackend", "BwrapBackend", "sandbox_uid", "end_uid_processes", "bwrap_problem",
                     "UNPRIVILEGED_UID", "SANDBOX_UIDS"), "agentic_eval.confine.host"),
    **dict.fromkeys(("backend_names", "get_backend", "backend_class", "resolve_backend", "default_backend",
                     "LOCAL_WARNING"), "agentic_eval.confine.registry"),
    **dict.fromkeys(("serve_unix", "UnixRelay"), "agentic_eval.confine.relay_harness"),
    **dict.fromkeys(("CommandResult", "HeadAndTail", "signal_group", "run_command"), "agentic_eval.confine.process"),
})
