"""The `docker` sandbox backend: every phase of a trial in a fresh, hardened container.

A trial's commands run in containers of the suite's image (see `docker_image`), on one Docker engine
or spread over several (`hosts`: `DOCKER_HOST` as usual, or `--docker-host URL`, repeatable): no
network, a read-only root, a private `/tmp`, memory, process and CPU limits, user 65534, every
capability dropped, no new privileges, an init process. The sandbox is bind-mounted at its own path,
so what the harness reads afterwards (the final tree, the diff, the grade) is the same tree; anything
else a command needs is mounted read-only at its own path, and agentic-eval's package read-only at
`/opt/agentic-eval` (a .pth file in the image puts it on sys.path).

A container serves one *phase* of one sandbox, keyed by its first writable path (else by its working
folder): the agent's commands share one; the reference fix and the grader each get a fresh one, and the
previous phase's container (with every process the agent left) is killed before the next runs its first
command, so the grader runs after all of the agent's processes are gone. `close(sandbox)` kills the
current one (a container with nothing writable, the sealed grader's once it has graded, in the background:
nothing in it can change a file, and a next phase of the same sandbox waits until it is gone);
`release(sandbox)` ends the trial. A command with nothing writable (the sealed grader:
grading/sealed.py) gets its working folder, the sandbox, mounted read-only, and can still connect to a
unix socket in a folder it reads (connect() needs no write access to the mount). The model's code that
such a grader has run goes to the harness's CodeHost, whose commands are a phase of their own, keyed by
the work copy of the tree (another container: the work copy and a scratch folder writable, none of the
grader's folders mounted), ended by `close(work copy)`. A fresh work copy keeps that container:
`end_processes(work copy)` kills every process the earlier commands left (a container's own init and
`sleep` run as KEEPER_UID, commands as RUN_UID, so one `kill -9 -1` as RUN_UID ends them all and never the
container, and neither can a command's own), and CodeHost refills the same folders.

The work dir on a size-capped volume: as root, `cap_disk(sandbox)` moves the sandbox onto a tmpfs of
`limits.work_size` (1 GiB; `AGENTIC_EVAL_DOCKER_WORK_SIZE`) mounted at its own path on this machine, so
the harness and every container see the same capped tree (a bind mount on overlay2 cannot be capped
otherwise here: no project quotas on ext4). A model that fills it gets "No space left on device", and
`disk_full(sandbox)` tells the runner, which ends the trial as a scored fail before grading.
`release(sandbox)` unmounts it at the end of the trial (copying the tree out first when it is kept).
Its pages are charged to the writer's memory limit. The model's code run while it is graded works on a
copy of the tree in a grading folder (`grading_folder`), which for a capped sandbox is a tmpfs of the same
cap plus GRADING_ROOM: filling it fails the model's own test run (a scored fail), never this machine's
disk.

Warm start: before a trial's agent starts, the `agent_start` hook calls `warm(sandbox, first=...)`. For an agent
that calls a model (`first`), the sandbox's first container (the sandbox writable, nothing else
mounted but what every container gets) starts in the background while the agent waits for its first
model reply. And once the trial's first phase has its container, the grader's is started beside it
(fresh, idle: no command runs in it before the first phase's container is killed), so grading does not
wait for a container: the sandbox read-only, nothing writable, the folders the runner says the grader
reads, and the socket folder of the trial's grading folder, made then (the socket in it, made only when
grading starts, must be bound: a copy of it would reach nothing). The grader's per-run files that are not
mounted in it (its variables folder, the pristine store: small folders of regular files under /tmp,
where the temp dir is) are copied into its private /tmp at the same paths, read-only, root-owned. Warm containers are
created with the same hardening, used only if they serve the phase (the same writable and hidden paths,
every readable one mounted or copied in), else discarded; after a few misses no more are started. The
grader's, with nothing writable, can serve no phase but the grader's. Beside it the container of the
model's code is started too, binding the grading folder's (empty) work and scratch folders, which the
CodeHost fills when grading starts; if the grader runs none of the model's code it is removed unused, in the
background, and once three were (and more unused than used: graders that only read files) no more are
started ahead: the model's code's container then starts at its first command.
`AGENTIC_EVAL_DOCKER_WARM=0` turns warm starts off (to measure what they save).

Environment tasks (packs/environment.py: a task's own Dockerfile, working directory, user, services) run in
containers of their own image instead (confine/docker_env.py): `environment_start` copies the working
directory out of the image into the sandbox folder and starts the services, every command of the agent's
phase runs in one container of that image, and `verify_environment` runs a reward verifier in a snapshot of
it once it is killed. `prepare_tasks` builds their images (cached by context hash) before any trial;
`base_image` (`--base-image`) builds their outside FROMs on another image, the suite's own for `suite`.

Commands are started through a small helper (`confine/docker_exec.py`, run with `python -I -S`:
standard library only) that calls the engine's exec API over its unix socket with the caller's
environment in the request body (no value on a command line), forwards standard input, and swaps the
harness's Python for the image's. Containers are created and started with the engine's API directly
(one call each). The containers are local to each engine, and bind mounts need the engine on this
machine: engines on other hosts are the next step (see docs/scale-out.md).

Every container is labelled with its sandbox (LABEL) and its owner: the run process's pid, start token and
machine (`OWNER_LABEL` + leftovers.py's `owner_mark`). A run killed with `kill -9` leaves its containers on
the engine (memory reserved, the model's processes running): when the backend first uses an engine
(`remove_dead_runs`, once per engine per run, before any trial) it removes those whose owner ran on this machine
and is gone, and prints one line saying how many; an environment task's containers and network
(confine/docker_env.py, labelled the same way) too. A container of a live run, of another machine (one engine
may serve several) or without the owner labels (an older version's) is never touched.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import stat
import subprocess
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field, field_validator, model_validator

from agentic_eval.confine.backend import GRADING_SOCKET_FOLDER, SandboxBackend
from agentic_eval.confine.docker_copies import NOTHING_HIDDEN, ImageHidden, image_hidden
from agentic_eval.confine.docker_disk import DiskCaps
from agentic_eval.confine.docker_engine import (
    _EXEC_HELPER,
    KEEPER_UID,
    LABEL,
    DockerLimits,
    Engine,
    _package_dir,
    _Phase,
    _remove_quietly,
    _under_any,
    remove_dead_runs,
)
from agentic_eval.confine.docker_grading import GradingFolders
from agentic_eval.confine.docker_image import (
    IMAGE_PATH,
    IMAGE_PYTHON,
    PACKAGE_MOUNT,
    RUN_UID,
    check_packages,
    client_for,
    ensure_image,
    recipe,
)
from agentic_eval.confine.docker_tasks import EnvironmentTasks
from agentic_eval.confine.host import _empty_file
from agentic_eval.confine.options import BackendOptions
from agentic_eval.errors import AgenticEvalError

if TYPE_CHECKING:  # typing only: agents stand above confine
    from docker.models.containers import Container

    from agentic_eval.agents.base import Agent
from agentic_eval.leftovers import owner_labels
from agentic_eval.paths import hidden_from_model
from agentic_eval.trees import walk


def _mount(spec: dict[str, Any]) -> Any:
    from docker.types import Mount

    return Mount(target=spec["Target"], source=spec["Source"], type=spec["Type"], read_only=spec["ReadOnly"])


def cli_refusal(agent: Agent) -> str:
    """Why a CLI agent cannot run in a sandbox container, in one line (empty: it can, or it drives no CLI). The
    installer's kind decides: an npm CLI runs from its tools folder, mounted read-only at its own path, on the
    host's Node.js (mounted at /usr/local/bin/node) or as the native binary its package ships; a PyPI one runs
    on its virtual environment's interpreter, a host Python the image does not hold."""
    if agent.program is None or agent.program.kind == "npm":
        return ""
    return (f"agent {agent.name!r} cannot run in the docker sandbox: its CLI is a {agent.program.kind} package in a "
            "virtual environment on this machine, whose Python is not in the image; use --sandbox bwrap, which "
            "confines it")


_SYSTEM_TOPS = tuple(Path(p) for p in ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/proc",
                                        "/dev", "/sys", "/run", "/var"))


def _system_path(path: Path) -> bool:
    """A path the image has its own of (a CLI's Node.js under /usr): never the host's mounted over it."""
    return any(path == top or top in path.parents for top in _SYSTEM_TOPS) or path == Path("/")


def _root_skeleton(volumes: dict[str, dict[str, str]]) -> str | None:
    """For mounts under /root (a tools folder or a run folder in root's home): a folder of empty, root-owned,
    world-readable mount points to stand in for the image's /root (0700, which uid 65534 cannot pass through,
    and a tmpfs over it keeps that mode): its `root` folder, beside its owner mark (the next run removes it if
    this one is killed). None when nothing is mounted there; the caller removes it."""
    from agentic_eval.leftovers import MarkedTempDir

    root = Path("/root")
    targets = [(Path(src), Path(v["bind"])) for src, v in volumes.items() if root in Path(v["bind"]).parents]
    if not targets:
        return None
    made = MarkedTempDir("ae-root-", inner="root")
    skeleton = Path(made.name)
    for where in (made.top, skeleton):
        os.chmod(where, 0o755)
    for source, target in targets:
        point = skeleton / target.relative_to(root)
        for folder in reversed(point.parents):
            if skeleton in folder.parents and not folder.exists():
                folder.mkdir(mode=0o755)
        if source.is_dir():
            point.mkdir(mode=0o755, exist_ok=True)
        else:
            point.touch()
    return str(made.top)


def _covered(hidden: Sequence[Path], binds: Sequence[tuple[str, str]]) -> list[str]:
    """Where in the container each hidden folder appears under a mounted one (`binds`: host path, container
    path), as the bwrap backend covers them: an empty tmpfs goes over each."""
    targets = []
    for path in map(Path, _under_any(hidden, [source for source, _ in binds])):
        for source, target in binds:
            if Path(source) in path.parents:
                targets.append(str(Path(target) / path.relative_to(source)))
    return sorted(set(targets))


def _answers(engine: Engine) -> bool:
    """Whether the engine still answers (a ping, within a few seconds)."""
    try:
        return bool(engine.client.api.ping())
    except Exception:  # noqa: BLE001 - any failure to answer
        return False


class DockerOptions(BackendOptions):
    """The docker backend's own options (`--sandbox-opt KEY=VALUE`, a campaign file's `[sandbox]` table; the flags
    `--docker-host`, `--image`, `--base-image` and `--base-image-packages` are aliases of them)."""

    hosts: tuple[str, ...] = ()
    """Docker engines to spread trials over by free capacity (`--docker-host URL`, repeatable); none: DOCKER_HOST."""
    image: str | None = Field(default=None, min_length=1, max_length=300)
    """An image of your own instead of the suite's (`--image`; it needs python3, git and pytest)."""
    base_image: str | None = Field(default=None, min_length=1, max_length=300)
    """For tasks that bring their own Dockerfile: build every outside FROM on this image (`--base-image`;
    'suite': the suite's own image), for an engine that cannot get their base images."""
    base_image_packages: tuple[str, ...] = Field(default=(), max_length=100)
    """With base_image 'suite': Debian packages added to the stand-in image (`--base-image-packages`, e.g.
    python3-pip,gcc,curl)."""

    @field_validator("image", "base_image")
    @classmethod
    def _one_word(cls, value: str | None) -> str | None:
        if value is not None and value.split() != [value]:
            raise ValueError(f"{value!r} is not an image name: give one without spaces (\"suite\": the suite's own "
                             "image; or one the Docker engine has, e.g. \"python:3.12-slim\")")
        return value

    @model_validator(mode="after")
    def _packages(self) -> DockerOptions:
        check_packages(self.base_image_packages, self.base_image)
        return self


_OPEN: dict[int, DockerBackend] = {}
"""The backends that started containers since their last close_all (id -> backend): closed at interpreter exit,
then dropped, so a long process of many runs (a campaign, the API) keeps none of the runs that ended."""


@atexit.register
def _close_open() -> None:
    for backend in list(_OPEN.values()):
        backend.close_all()


@dataclass
class DockerBackend(EnvironmentTasks, DiskCaps, GradingFolders, SandboxBackend):
    """Trials in containers, spread over `hosts` by free capacity."""

    hosts: Sequence[str | None] = (None,)
    image: str | None = None
    """An image to use instead of building the suite's (it needs python3, git and pytest)."""
    base_image: str | None = None
    """For environment tasks: an image to build every outside FROM on (`suite`: the suite's own image)."""
    base_image_packages: tuple[str, ...] = ()
    """With base_image `suite`: Debian packages added to the stand-in (python3-pip, gcc, curl, ...): a second
    image of the suite's recipe plus these, built once and cached like the first."""
    slots_per_engine: int = 8
    limits: DockerLimits = field(default_factory=DockerLimits)
    name: str = "docker"
    confined: bool = True

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._removals = ThreadPoolExecutor(max_workers=2, thread_name_prefix="docker-remove")
        self._phases: dict[str, _Phase] = {}
        self._warm: dict[str, Future[_Phase]] = {}
        self._ending: dict[str, Future[None]] = {}
        """Graders' containers being killed in the background (see `_end_later`), by phase key."""
        self._warm_used = self._warm_wasted = 0
        self._host_used = self._host_wasted = 0
        """Gradings that ran the model's code (its container used) and that left a warm one unused."""
        self._hosts: set[str] = set()
        """The work copies of gradings under way (their container is the model's code's)."""
        self._capped: set[str] = set()
        self._skeletons: dict[str, str] = {}
        """Containers that mount a stand-in /root (see `_root_skeleton`), and its folder."""
        self._trials: dict[str, int] = {}
        self._grader_reads: dict[str, list[Path]] = {}
        """Sandboxes of trials (warm() was called) and how many phases each has started."""
        self._grading: dict[str, Path] = {}
        """Grading folders made ahead, by sandbox: the grader's warm container binds their socket folder."""
        self._graded_room: dict[str, int] = {}
        """Capped sandboxes graded, and the size of their last grading folder (for room_taken)."""
        self._warming = ThreadPoolExecutor(max_workers=4, thread_name_prefix="docker-warm")
        self._envs: dict[str, Any] = {}
        self._builders: dict[str, Any] = {}
        """Environment tasks' trials (confine/docker_env.py's EnvironmentTrial), by sandbox."""
        self._env_images: dict[tuple[str, str], tuple[str, dict[str, str]]] = {}
        self._env_failed: dict[tuple[str, str], Exception] = {}
        """(engine, task dir) -> why the task's image could not be built (prepare_tasks)."""
        self._internet: dict[tuple[str, tuple[str, ...]], Any] = {}
        """(engine, hosts) -> what the engine's probe found (confine/verifier_check.py's InternetCheck)."""
        self._offline: set[tuple[str, str]] = set()
        """(engine, task dir) of tasks that allow the internet on an engine whose containers reach none."""
        """(engine, task dir) -> the task's image and its services' images, built by prepare_tasks."""
        self.engines: list[Engine] = []
        for host in self.hosts or (None,):
            client = client_for(host)
            image = self.image or ensure_image(client, recipe(), log=lambda line: print(line, file=sys.stderr))[0]
            self.engines.append(Engine(host, client, image, self.slots_per_engine))
            if cleaned := remove_dead_runs(self.engines[-1]):  # what a killed run left on it, before any trial
                print(cleaned, file=sys.stderr)
        remote = [e.name for e in self.engines if not e.name.startswith("unix://")]
        if remote and shutil.which("docker") is None:  # the exec helper talks to unix sockets itself
            raise AgenticEvalError(
                f"the docker sandbox reaches {remote[0]} with the docker CLI: apt-get install docker.io")

    # ----- the backend contract (see SandboxBackend: these are its hooks)

    Options = DockerOptions
    disk_cap = True

    @classmethod
    def from_options(cls, options: BackendOptions) -> DockerBackend:
        assert isinstance(options, DockerOptions)
        return cls(hosts=options.hosts or (None,), image=options.image, base_image=options.base_image,
                   base_image_packages=options.base_image_packages)

    @classmethod
    def refusal(cls, agent: Agent) -> str:
        """A CLI agent whose program the container cannot run (see `cli_refusal`); other agents run here."""
        return cli_refusal(agent)

    def trial_start(self, sandbox: Path) -> None:
        self.cap_disk(sandbox, size=self._work_size(sandbox))

    def _work_size(self, sandbox: Path) -> str:
        """The work dir's cap: an environment task's own storage_mb, else `limits.work_size`."""
        env = self._envs.get(str(sandbox.resolve()))
        return f"{env.spec.storage_mb}m" if env is not None else self.limits.work_size

    def agent_start(self, sandbox: Path, agent: Agent, grader_reads: Sequence[Path] = ()) -> None:
        """Start the trial's containers ahead: the agent's first one while the model answers (not for a CLI
        agent, whose container mounts its program and home, nor an agent that calls no model), the grader's
        once that runs."""
        first = agent.uses_model and agent.program is None
        if str(sandbox.resolve()) in self._envs:
            return  # the agent's container is the task's image, started at its first command
        try:
            self.warm(sandbox.resolve(), first=first, readable=grader_reads)
        except Exception:  # noqa: BLE001 - only a head start: the first command starts its own
            pass

    def phase_end(self, sandbox: Path) -> None:
        env = self._envs.get(str(sandbox.resolve()))
        if env is not None:
            env.stop()
        try:
            self.close(sandbox.resolve())
        except Exception:  # noqa: BLE001 - an engine that is gone took its container with it
            pass

    def grading_start(self, sandbox: Path) -> None:
        self.make_room(sandbox)

    def trial_end(self, sandbox: Path, keep: bool = False) -> None:
        with self._lock:
            env = self._envs.pop(str(sandbox.resolve()), None)
        if env is not None:
            try:
                env.end()
            except Exception:  # noqa: BLE001 - must not raise; close_all's label sweep is not needed for this
                pass
            with self._lock:
                env.engine.running = max(0, env.engine.running - 1)
        self.release(sandbox, keep=keep)

    def prepare(self, path: Path) -> None:
        """Hand the sandbox to uid 65534, the user commands run as in the container (an environment task's to
        its user; root's keeps the image's owners)."""
        env = self._envs.get(str(path.resolve()))
        if env is None:
            self._chown(path)
        elif env.uid != 0:
            for dirpath, dirnames, filenames in walk(path):  # iterative: a tree of any depth
                for name in ("", *dirnames, *filenames):
                    try:
                        os.chown(os.path.join(dirpath, name) if name else dirpath, env.uid, env.gid,
                                 follow_symlinks=False)
                    except OSError:  # a path longer than the kernel takes: the model's, left as it is
                        pass

    def warm(self, path: Path, first: bool = True, readable: Sequence[Path] = ()) -> None:
        """A trial's sandbox: start its first container in the background (`first`), and its grader's
        (the sandbox read-only, `readable`, its grading folder's socket folder) once the first phase runs
        (see Warm start above)."""
        key = str(path) if path.is_dir() and os.environ.get("AGENTIC_EVAL_DOCKER_WARM") != "0" else ""
        with self._lock:
            if not key:
                return
            self._trials.setdefault(key, 0)
            self._grader_reads[key] = [Path(p) for p in readable]
            if first and key not in self._phases and key not in self._warm and self._warming_pays():
                self._warm[key] = self._warming.submit(self._start_phase, Path(key), [Path(key)], [], None,
                                                      hidden_from_model())  # what the built-in agent hides

    def _hosting_pays(self) -> bool:
        """Whether to start the container of the model's code ahead: until graders that run none of it (a grep)
        have left three unused, and more of them unused than used."""
        return self._host_wasted < 3 or self._host_used >= self._host_wasted

    def _warming_pays(self) -> bool:
        return self._warm_wasted < 3 or self._warm_used >= self._warm_wasted

    def wrap(self, argv: Sequence[str], *, cwd: Path, spec: Any) -> list[str]:
        """`argv` run by the exec helper in the container of this sandbox's current phase (started, and the
        previous phase's removed, when the mounts differ)."""
        writable = [Path(p) for p in getattr(spec, "writable", ())]
        readable = [Path(p) for p in getattr(spec, "readable", ()) if not _system_path(Path(p))]
        env = self._envs.get(str(writable[0])) if writable else None
        if env is not None:  # the agent's or the fix's command in an environment task: the task's container
            return self._env_wrap(env, argv, Path(cwd), writable, readable,
                                  [Path(p) for p in getattr(spec, "hidden", ())])
        if not writable and not _system_path(Path(cwd)) and Path(cwd) not in readable:
            readable.insert(0, Path(cwd))  # nothing writable (the sealed grader): its cwd, the sandbox, read-only
        key = writable[0] if writable else Path(cwd)
        phase = self._phase(key, writable, readable, [Path(p) for p in getattr(spec, "hidden", ())])
        command = [IMAGE_PYTHON if a == sys.executable else a for a in argv[:1]] + list(argv[1:])
        return [sys.executable, "-I", "-S", str(_EXEC_HELPER), phase.engine.name, phase.container.id, str(cwd),
                str(RUN_UID), IMAGE_PATH, IMAGE_PYTHON, *map(str, writable), "--", *command]

    def describe(self, sandbox: Path) -> dict[str, str]:
        """Which engine and image run the sandbox's current phase (for the trial record)."""
        env = self._envs.get(str(sandbox))
        if env is not None:
            return {"engine": env.engine.name, "image": env.image,
                    **({"internet": "missing"} if env.internet_missing else {})}
        phase = self._phases.get(str(sandbox))
        if phase is None:
            return {}
        engine = phase.engine
        if not engine.image_id:  # asked once per engine: its image's tag does not move during a run
            try:
                engine.image_id = engine.client.images.get(engine.image).id
            except Exception:  # noqa: BLE001 - a lost engine: its name is still worth recording
                return {"engine": engine.name, "image": engine.image}
        return {"engine": engine.name, "image": engine.image_id}

    def close(self, sandbox: Path) -> None:
        """Remove the sandbox's container: every process in it ends."""
        with self._lock:
            phase = self._phases.pop(str(sandbox), None)
            # after the trial's first phase, its grader's container stays ready for the next
            keep = self._trials.get(str(sandbox)) == 1
            warm = None if keep else self._warm.pop(str(sandbox), None)
            if str(sandbox) in self._hosts:  # the model's code's, at the end of grading (grading/sealed.py)
                self._hosts.discard(str(sandbox))
                self._host_used += phase is not None  # the grader ran some of it
                self._host_wasted += phase is None and warm is not None
        if phase is not None and not phase.writable:
            self._end_later(str(sandbox), phase)
        elif phase is not None:
            self._remove(phase)
        if warm is not None and warm.done():  # started and never used (nothing of the model's in it): in the background
            try:
                self._removals.submit(self._remove_unused, warm)
                return
            except RuntimeError:  # at interpreter exit
                pass
        if warm is not None:  # still starting: it must not outlive what it binds
            self._remove_unused(warm)

    def close_all(self) -> None:
        """Remove every container this backend started, and wait until they are gone."""
        with self._lock:
            phases, self._phases = list(self._phases.values()), {}
            warm, self._warm = list(self._warm.values()), {}
        phases += [p for p in map(self._claim, warm) if p is not None]
        with self._lock:
            self._ending.clear()  # the removal pool, shut down below, waits for them
        for phase in phases:
            self._remove(phase)
        with self._lock:
            envs, self._envs = list(self._envs.values()), {}
        for env in envs:  # environment tasks' containers, services and networks
            try:
                env.end()
            except Exception:  # noqa: BLE001 - an engine that is gone took them with it
                pass
        for path in list(self._capped):
            self.release(Path(path))
        with self._lock:
            grading, self._grading = list(self._grading.values()), {}
        for folder in grading:
            self._end_grading_folder(folder)
        self._trials.clear()
        self._grader_reads.clear()
        self._removals.shutdown(wait=True)
        self._removals = ThreadPoolExecutor(max_workers=2, thread_name_prefix="docker-remove")
        self._warming.shutdown(wait=True)  # its idle threads too (a new pool starts its threads when used)
        self._warming = ThreadPoolExecutor(max_workers=4, thread_name_prefix="docker-warm")
        for engine in self.engines:  # its pooled connections (a new request opens one again)
            with contextlib.suppress(Exception):
                engine.client.close()
        _OPEN.pop(id(self), None)

    # ----- containers

    def _pick(self) -> Engine:
        """The freest live engine, for a container about to start: the backend is open until its close_all."""
        _OPEN[id(self)] = self
        live = [e for e in self.engines if not e.lost]
        if not live:
            lost = "; ".join(f"{e.name}: {e.lost}" for e in self.engines)
            raise AgenticEvalError(f"no Docker engine is left: {lost}")
        return max(live, key=lambda e: (e.slots - e.running, -self.engines.index(e)))

    def _phase(self, key: Path, writable: list[Path], readable: list[Path], hidden: Sequence[Path] = ()) -> _Phase:
        """The container that runs a command of the phase keyed by `key` (its first writable path, else its cwd):
        the current one if it serves these mounts, else a new one once the current one is killed."""
        sandbox = str(key)
        image = self._image_hidden(hidden)  # before the lock: the first look through the image takes a second
        with self._lock:
            current = self._phases.get(sandbox)
            if current is not None and current.covers(writable, readable, hidden, image):
                return current
            self._phases.pop(sandbox, None)
            # a warm container serves only a phase's start: mid-phase it may be the grader's, which mounts the
            # task (its fix and hidden tests) and must never run the agent's commands
            warm = self._warm.pop(sandbox, None) if current is None else None
        if current is not None:
            self._remove(current)  # the previous phase ends with every process it left
        self._ended(sandbox)  # and a grader's ended off the trial's path, too
        ready = self._claim(warm)
        if ready is not None:
            missing = ready.missing(writable, readable, hidden, image)
            used = missing is not None and (not missing or self._copy_in(ready, missing))
            with self._lock:  # a realpy task's copies in the image are not known ahead: not warming's waste
                self._warm_used += used
                self._warm_wasted += not used and ready.image_hidden == image
            if used:
                return self._begin(sandbox, ready)
            self._remove(ready)
        phase = self._start_phase(key, writable, readable, current.engine if current is not None else None, hidden,
                                  image)
        return self._begin(sandbox, phase)

    def _image_hidden(self, hidden: Sequence[Path]) -> ImageHidden:
        """The copies in the image of the realpy project whose copies `hidden` lists (confine/docker_copies.py;
        every engine runs the same image), found once per project; none for any other task."""
        live = [e for e in self.engines if not e.lost]
        return image_hidden(live[0], hidden) if hidden and live else NOTHING_HIDDEN

    def _begin(self, sandbox: str, phase: _Phase) -> _Phase:
        """Make `phase` the sandbox's current one; after a trial's first, start its grader's container."""
        with self._lock:
            self._phases[sandbox] = phase
            started = self._trials.get(sandbox)
            if started is None:
                return phase
            self._trials[sandbox] = started + 1
            if started == 0 and sandbox not in self._warm and self._warming_pays():
                reads = [p for p in self._grader_reads.get(sandbox, []) if p.exists()]  # the grader's, not this phase's
                self._warm[sandbox] = self._warming.submit(self._warm_grader, sandbox, reads, phase.engine)
        return phase

    def _warm_grader(self, sandbox: str, reads: list[Path], engine: Engine) -> _Phase:
        """The sealed grader's container, started ahead: the sandbox read-only, what the grader reads, and the
        socket folder of a grading folder made now (the grader reaches the model's code through the socket
        grading/sealed.py's CodeHost makes there, so it must be bound, not copied); nothing writable. Then the
        container the model's code will run in while it is graded: its work copy and scratch folder (made
        empty now, filled when grading starts) writable, nothing of the grader's mounted."""
        folder = self._new_grading_folder(sandbox)
        work = folder / "work"
        with self._lock:
            kept = sandbox in self._trials and sandbox not in self._grading  # not released meanwhile
            if kept:
                self._grading[sandbox] = folder
            if kept and self._hosting_pays():
                self._warm[str(work)] = self._warming.submit(self._start_phase, work, [work, folder / "scratch"], [],
                                                             engine, hidden_from_model())
        if not kept:
            self._drop_grading_folder(folder)
            raise AgenticEvalError("the trial ended before its grader's container started")
        return self._start_phase(Path(sandbox), [], [Path(sandbox), *reads, folder / GRADING_SOCKET_FOLDER], engine)

    def _copy_in(self, phase: _Phase, paths: list[Path]) -> bool:
        """Copy small folders under /tmp into the container's private /tmp at their own paths, read-only and
        root-owned; False when they cannot be (too big, elsewhere, holding anything but regular files and folders,
        or the copy failed). Any temp dir under /tmp will do (TMPDIR=/tmp/x), not /tmp alone."""
        import io
        import tarfile

        if any(Path("/tmp") not in p.parents for p in paths):
            return False
        total = 0
        for p in paths:  # regular files and folders only: a socket (the grader's way to its CodeHost) copied is dead
            entries = [str(p)] + [os.path.join(d, n) for d, dirs, names in os.walk(p) for n in (*dirs, *names)]
            for entry in entries:
                try:
                    st = os.lstat(entry)
                except OSError:
                    return False
                if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
                    return False
                total += st.st_size if stat.S_ISREG(st.st_mode) else 0
        if total > 16 << 20:
            return False

        def root_owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
            info.uid = info.gid = 0
            return info

        data = io.BytesIO()
        with tarfile.open(fileobj=data, mode="w") as tar:
            for p in paths:
                tar.add(p, arcname=str(p).lstrip("/"), filter=root_owned)
        argv = [sys.executable, "-I", "-S", str(_EXEC_HELPER), phase.engine.name, phase.container.id, "/", "0",
                IMAGE_PATH, IMAGE_PYTHON, "--", "sh", "-c", 'tar -x -C / -f - && chmod -R a-w "$@"', "sh",
                *map(str, paths)]
        try:
            proc = subprocess.run(argv, input=data.getvalue(), capture_output=True, timeout=60, env={}, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return False
        return proc.returncode == 0

    def _claim(self, warm: Future[_Phase] | None) -> _Phase | None:
        """A warm container once it has started, or None (none, or its start failed)."""
        if warm is None:
            return None
        try:
            return warm.result()
        except Exception:  # noqa: BLE001 - the phase's own start will say why, as one line
            return None

    def _start_phase(self, key: Path, writable: list[Path], readable: list[Path], previous: Engine | None,
                     hidden: Sequence[Path] = (), image: ImageHidden = NOTHING_HIDDEN) -> _Phase:
        """A started container for a phase: on the previous phase's engine while it lives, else the freest."""
        sandbox = str(key)
        for path in writable:
            self._chown(path)
        with self._lock:
            engine = previous if previous is not None and not previous.lost else self._pick()
            engine.running += 1
        try:
            container, mounted = self._start(engine, writable, readable, sandbox, hidden, image)
        except Exception as exc:  # noqa: BLE001 - whatever the engine did, the trial gets the cause
            import docker

            why = f"{type(exc).__name__}: {str(exc)[:200]}"
            # a refusal, or a failure of this container's alone (the runtime refused it, the engine still answers),
            # is this trial's; an engine that does not answer gets no more trials
            refused = isinstance(exc, docker.errors.APIError) and (exc.is_client_error() or _answers(engine))
            with self._lock:
                engine.running -= 1
                if not refused:
                    engine.lost = why
            raise AgenticEvalError(f"Docker engine {engine.name} could not start a container: {why}") from None
        return _Phase(engine, container, tuple(sorted(str(p) for p in writable)), mounted, _under_any(hidden, mounted),
                      image)

    def _start(self, engine: Engine, writable: list[Path], readable: list[Path], sandbox: str,
               hidden: Sequence[Path] = (), image: ImageHidden = NOTHING_HIDDEN) -> tuple[Any, tuple[str, ...]]:
        package = str(_package_dir())
        # agentic-eval's package at the place the image's .pth names and at its own path (the file tools run
        # a script from it); the host's Node.js (Node 20; Debian's image has 18) for the node pack's graders.
        volumes: dict[str, dict[str, str]] = {package: {"bind": f"{PACKAGE_MOUNT}/agentic_eval", "mode": "ro"}}
        node = shutil.which("node")
        if node:
            volumes[os.path.realpath(node)] = {"bind": "/usr/local/bin/node", "mode": "ro"}
        for path in readable:
            if path.exists() and not (path == Path(package) or Path(package) in path.parents):
                volumes[str(path)] = {"bind": str(path), "mode": "ro"}
        for path in writable:
            volumes[str(path)] = {"bind": str(path), "mode": "rw"}
        mounts = [{"Target": package, "Source": package, "Type": "bind", "ReadOnly": True}]
        binds = [f"{src}:{v['bind']}:{v['mode']}" for src, v in volumes.items()]
        skeleton = _root_skeleton({**volumes, package: {"bind": package, "mode": "ro"}})
        if skeleton:
            binds.append(f"{skeleton}/root:/root:ro")  # the engine mounts by depth: /root before what is under it
        limits = self.limits
        tmpfs = {"/tmp": f"rw,nosuid,nodev,size={limits.tmp_size},mode=1777"}
        for target in _covered(hidden, [(src, v["bind"]) for src, v in volumes.items()] + [(package, package)]):
            tmpfs[target] = "rw,noexec,nosuid,nodev,size=64k"  # empty, root-owned: uid 65534 cannot write
        # the image's own copies of a realpy project: folders seen empty, files (wheels, parse.py) empty
        tmpfs.update({folder: "ro,noexec,nosuid,nodev,size=64k" for folder in image.folders})
        binds += [f"{_empty_file()}:{file}:ro" for file in image.files]
        api = engine.client.api  # create and start: one API call each (the SDK's run() inspects it too)
        host_config = api.create_host_config(
            init=True, network_mode="none", read_only=True,
            tmpfs=tmpfs, cap_drop=["ALL"], security_opt=["no-new-privileges"], mem_limit=limits.memory,
            memswap_limit=limits.memory, pids_limit=limits.pids, nano_cpus=int(limits.cpus * 1e9),
            binds=binds, mounts=[_mount(m) for m in mounts],
        )
        try:
            created = api.create_container(
                engine.image, ["sleep", "infinity"], user=f"{KEEPER_UID}:{KEEPER_UID}", working_dir=sandbox,
                labels={LABEL: sandbox, **owner_labels()},
                environment={"HOME": "/tmp", "PATH": IMAGE_PATH}, host_config=host_config,
            )
        except Exception:
            if skeleton:
                shutil.rmtree(skeleton, ignore_errors=True)
            raise
        container = engine.client.containers.prepare_model({"Id": created["Id"]})
        if skeleton:
            with self._lock:
                self._skeletons[container.id] = skeleton
        try:
            api.start(created["Id"])
        except Exception:
            _remove_quietly(container)
            self._drop_skeleton(container)
            raise
        mounted = {path for path in volumes if not node or path != os.path.realpath(node)} | {package}
        return container, tuple(sorted(mounted))

    def _remove(self, phase: _Phase) -> None:
        """Kill the container (every process in it ends: its PID namespace goes with its init) before
        returning; its removal (unmounting, ~70 ms) goes on in the background."""
        self._kill(phase)
        try:
            self._removals.submit(_remove_quietly, phase.container)
        except RuntimeError:  # at interpreter exit (atexit): no new threads, so remove it here
            _remove_quietly(phase.container)

    def _kill(self, phase: _Phase) -> None:
        """Kill the container: the engine answers once its init (and with it every process in it) is gone."""
        try:
            phase.container.kill()
        except Exception:  # noqa: BLE001 - already stopped, or an engine that is gone took it with it
            pass
        with self._lock:
            phase.engine.running = max(0, phase.engine.running - 1)
        self._drop_skeleton(phase.container)

    def _end_later(self, key: str, phase: _Phase) -> None:
        """Kill and remove a container with nothing writable (the sealed grader's, once it has graded) off the
        trial's path: nothing left in it can change a file the harness reads, and the next phase of `key`
        (`_phase`) waits until it is gone before it runs anything."""
        def end() -> None:
            self._kill(phase)
            _remove_quietly(phase.container)

        try:
            ending = self._removals.submit(end)
        except RuntimeError:  # at interpreter exit
            self._remove(phase)
            return
        with self._lock:
            self._ending[key] = ending

    def _ended(self, key: str) -> None:
        """Wait until the container `_end_later` is ending for `key` is gone (none: return at once)."""
        with self._lock:
            ending = self._ending.pop(key, None)
        if ending is not None:
            ending.result()

    def _drop_skeleton(self, container: Container) -> None:
        """Remove the stand-in /root of a killed container (its mounts are gone with it)."""
        with self._lock:
            skeleton = self._skeletons.pop(container.id, None)
        if skeleton:
            shutil.rmtree(skeleton, ignore_errors=True)

