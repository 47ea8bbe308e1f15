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

Warm start: before a trial's agent starts, the runner calls `warm(sandbox, first=...)`. For an agent
that calls a model (`first`), the sandbox's first container (the sandbox writable, nothing else
mounted but what every container gets) starts in the background while the agent waits for its first
model reply. And once the trial's first phase has its container, the grader's is started beside it
(fresh, idle: no command runs in it before the first phase's container is killed), so grading does not
wait for a container: the sandbox read-only, nothing writable, the folders the runner says the grader
reads, and the socket folder of the trial's grading folder, made then (the socket in it, made only when
grading starts, must be bound: a copy of it would reach nothing). The grader's per-run files that are not
mounted in it (its variables folder, the pristine store: small folders of regular files under the temp
dir) are copied into its private /tmp at the same paths, read-only, root-owned. Warm containers are
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
import os
import shutil
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentic_eval.confine.backend import GRADING_SOCKET_FOLDER, SandboxBackend
from agentic_eval.confine.docker_env import LABEL as ENVIRONMENT_LABEL
from agentic_eval.confine.docker_env import SUITE_BASE
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
from agentic_eval.errors import AgenticEvalError
from agentic_eval.leftovers import OWNER_LABEL, owner_is_dead_here, owner_labels, this_machine
from agentic_eval.paths import hidden_from_model
from agentic_eval.trees import copy_tree, remove_tree, walk

LABEL = "agentic-eval.sandbox"
CLEANUP_TIMEOUT_S = 20
KEEP_COPY_S = 120.0
"""`--keep-sandboxes`: at most this long to copy a capped sandbox's tree out before its volume goes."""
"""How long `remove_dead_runs` waits for one answer of the engine; its removals stop after three times that."""
KEEPER_UID = RUN_UID - 1
"""The uid of a container's own processes (its init and `sleep`), not the commands' (RUN_UID, which every
command runs as): their `kill -9 -1` cannot end the container, and `end_processes` ends all of theirs."""


@dataclass
class Engine:
    """One Docker engine and how many trial containers it may run at once."""

    host: str | None
    """Its URL (None: DOCKER_HOST or the default socket)."""
    client: Any
    image: str
    slots: int
    running: int = 0
    lost: str = ""
    """Why the engine is no longer used (empty while it is)."""
    image_id: str = ""
    """The image's id (what the trial record names), once asked."""

    @property
    def name(self) -> str:
        return self.host or os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


@dataclass
class _Phase:
    engine: Engine
    container: Any
    writable: tuple[str, ...]
    mounted: tuple[str, ...]
    """Every host path bound into the container (read-only or not)."""
    hidden: tuple[str, ...] = ()
    """The hidden paths it covers (those under a mounted path: an empty tmpfs over each)."""

    def covers(self, writable: list[Path], readable: list[Path], hidden: Sequence[Path] = ()) -> bool:
        """Whether this container already serves a command with these paths: the same writable ones, and
        every readable one under something it mounts (the agent's tool calls share a container)."""
        return self.missing(writable, readable, hidden) == []

    def missing(self, writable: list[Path], readable: list[Path],
                hidden: Sequence[Path] = ()) -> list[Path] | None:
        """The readable paths this container does not mount (None: its writable or hidden ones differ)."""
        if tuple(sorted(str(p) for p in writable)) != self.writable or _under_any(hidden, self.mounted) != self.hidden:
            return None
        return [p for p in readable if not any(p == Path(m) or Path(m) in p.parents for m in self.mounted)]


@dataclass(frozen=True)
class DockerLimits:
    memory: str = "4g"
    pids: int = 512
    cpus: float = 2.0
    tmp_size: str = "512m"
    work_size: str = field(default_factory=lambda: os.environ.get("AGENTIC_EVAL_DOCKER_WORK_SIZE", "1g"))
    """The sandbox's size cap (a tmpfs size: 1g, 512m)."""


def _remove_quietly(container: Any) -> None:
    try:
        container.remove(force=True)
    except Exception:  # noqa: BLE001 - gone already
        pass


def remove_dead_runs(engine: Engine, timeout_s: float = CLEANUP_TIMEOUT_S) -> str:
    """Remove every container (force: its processes killed), then every network, on `engine` that a dead run of
    this machine left: the suite's sandboxes and environment tasks' containers, services and networks. One list
    call each, filtered by this machine's label, then removals until 3 x `timeout_s` have passed. One line for the
    run's output ("" when there was none); an engine that errs is a warning line, never an exception."""
    import docker

    machine = this_machine()
    if machine is None:  # off Linux nothing is marked as this machine's
        return ""

    def dead(labels: Mapping[str, str] | None) -> bool:
        labels = labels or {}
        return ((LABEL in labels or ENVIRONMENT_LABEL in labels)
                and owner_is_dead_here({key[len(OWNER_LABEL):]: value for key, value in labels.items()
                                        if key.startswith(OWNER_LABEL)}))

    deadline = time.monotonic() + 3 * timeout_s
    removed = {"container": 0, "network": 0}
    failed: list[str] = []

    def remove_dead(kind: str, found: list[dict[str, Any]], remove: Callable[[str], Any]) -> None:
        doomed = [item["Id"] for item in found if dead(item.get("Labels"))]
        for index, item_id in enumerate(doomed):
            if time.monotonic() > deadline:
                failed.append(f"{len(doomed) - index} {kind}(s) left for the next run (time limit)")
                return
            try:
                remove(item_id)
                removed[kind] += 1
            except docker.errors.NotFound:
                pass  # another run removed it first
            except docker.errors.APIError as exc:
                if exc.status_code != 409:  # 409: its removal is under way (another run's)
                    failed.append(f"{kind} {item_id[:12]}: {str(exc.explanation or exc)[:120]}")

    client = None
    try:
        # a client of its own, for a short timeout on each call (the run's keeps its own), at the API version the
        # run's already asked for (none: one more call to ask)
        version = getattr(getattr(engine.client, "api", None), "api_version", None)
        client = (docker.DockerClient(base_url=engine.host, timeout=int(timeout_s), version=version) if engine.host
                  else docker.from_env(timeout=int(timeout_s), version=version))
        mine = {"label": [f"{OWNER_LABEL}machine={machine}"]}
        remove_dead("container", client.api.containers(all=True, filters=mine),
                    lambda item: client.api.remove_container(item, force=True))
        remove_dead("network", client.api.networks(filters=mine), client.api.remove_network)  # once they are empty
    except Exception as exc:  # noqa: BLE001 - whatever the engine did, the run goes on
        return (f"warning: could not remove the containers of dead runs on {engine.name}: {type(exc).__name__}: "
                f"{str(exc)[:200]}" + (f" (removed {removed['container']})" if removed["container"] else ""))
    finally:
        if client is not None:
            client.close()
    if not any(removed.values()) and not failed:
        return ""
    return (f"removed {removed['container']} container(s)"
            + (f" and {removed['network']} network(s)" if removed["network"] else "")
            + f" of dead runs on {engine.name}" + (f"; could not remove: {'; '.join(failed[:3])}" if failed else ""))


def _mount(spec: dict[str, Any]) -> Any:
    from docker.types import Mount

    return Mount(target=spec["Target"], source=spec["Source"], type=spec["Type"], read_only=spec["ReadOnly"])


GRADING_ROOM = 256 << 20
"""Room the model never had: added to a capped work dir before grading, and to the cap of the grading folder
(where the model's code runs on a copy of the tree while it is graded)."""


def _mount_tmpfs(path: Path, size: str, extra: int, source: str) -> str:
    """Mount a tmpfs of `size` (a tmpfs size: 1g, 512m) plus `extra` bytes at `path`, an empty folder, with one
    file per 4 KiB of it (or using up the inodes would be a way out of the cap); '' when done, else why not."""
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755,nosuid,nodev", source, str(path)],
                          capture_output=True, text=True, check=False)
    if proc.returncode == 0:
        st = os.statvfs(path)
        total = st.f_blocks * st.f_frsize + extra
        proc = subprocess.run(["mount", "-o", f"remount,size={total},nr_inodes={max(total // 4096, 1024)}", str(path)],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            subprocess.run(["umount", str(path)], capture_output=True, check=False)
    return "" if proc.returncode == 0 else (proc.stderr.strip()[-200:] or f"mount exited {proc.returncode}")

_EXEC_HELPER = Path(__file__).resolve().parent / "docker_exec.py"
"""Run with `python -I -S`: standard library only, it starts in a few milliseconds."""


def cli_refusal(agent: Any) -> str:
    """Why a CLI agent cannot run in a sandbox container, in one line (empty: it can). The installer's kind
    decides: an npm CLI runs from its tools folder, mounted read-only at its own path, on the host's Node.js
    (mounted at /usr/local/bin/node) or as the native binary its package ships; a PyPI one runs on its
    virtual environment's interpreter, a host Python the image does not hold."""
    tool = getattr(agent, "tool", None)
    kind = getattr(tool, "kind", "")
    if kind == "npm":
        return ""
    what = f"a {kind} package in a virtual environment on this machine" if kind else "not an npm package"
    return (f"agent {getattr(agent, 'name', '?')!r} cannot run in the docker sandbox: its CLI is {what}, whose "
            "Python is not in the image; use --sandbox bwrap, which confines it")


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


def _under_any(paths: Sequence[Path], mounted: Sequence[str]) -> tuple[str, ...]:
    """The folders among `paths` that lie under one of the `mounted` host paths (one under another such
    folder left out: it is covered with it)."""
    found = {os.path.abspath(p) for p in paths if Path(p).is_dir()}
    inside = [p for p in found if any(Path(m) in Path(p).parents for m in mounted)]
    return tuple(sorted(p for p in inside if not any(Path(q) in Path(p).parents for q in inside)))


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


def _package_dir() -> Path:
    return Path(__file__).resolve().parents[1]  # the agentic_eval package


@dataclass
class DockerBackend(SandboxBackend):
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
        atexit.register(self.close_all)

    # ----- the backend contract (see SandboxBackend: these are its hooks)

    OPTIONS = ("hosts", "image", "base_image", "base_image_packages")
    """Its own options: the engines to spread trials over (`--docker-host`, default DOCKER_HOST) and an image of
    the user's own (`--image`)."""

    @classmethod
    def create(cls, options: Mapping[str, Any] | None = None) -> DockerBackend:
        options = dict(options or {})
        unknown = sorted(set(options) - set(cls.OPTIONS))
        if unknown:
            raise AgenticEvalError(f"--sandbox docker: unknown option {', '.join(unknown)} (it takes "
                                   f"{', '.join(cls.OPTIONS)})")
        hosts = tuple(options.get("hosts") or ()) or (None,)
        packages = tuple(options.get("base_image_packages") or ())
        check_packages(packages, options.get("base_image") or None)
        return cls(hosts=hosts, image=options.get("image") or None, base_image=options.get("base_image") or None,
                   base_image_packages=packages)

    @classmethod
    def refusal(cls, agent: Any) -> str:
        """A CLI agent whose program the container cannot run (see `cli_refusal`); other agents run here."""
        return cli_refusal(agent) if getattr(agent, "tool", None) is not None else ""

    def trial_start(self, sandbox: Path) -> None:
        self.cap_disk(sandbox, size=self._work_size(sandbox))

    def _work_size(self, sandbox: Path) -> str:
        """The work dir's cap: an environment task's own storage_mb, else `limits.work_size`."""
        env = self._envs.get(str(sandbox.resolve()))
        return f"{env.spec.storage_mb}m" if env is not None else self.limits.work_size

    def agent_start(self, sandbox: Path, agent: Any, grader_reads: Sequence[Path] = ()) -> None:
        """Start the trial's containers ahead: the agent's first one while the model answers (not for a CLI
        agent, whose container mounts its program and home, nor an agent that calls no model), the grader's
        once that runs."""
        first = bool(getattr(agent, "uses_model", True)) and getattr(agent, "tool", None) is None
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

    # ----- environment tasks (confine/docker_env.py)

    def _builder(self, engine: Engine) -> Any:
        """The engine's image builder (one per engine: two trials never build the same context at once)."""
        from agentic_eval.confine.docker_env import EnvironmentBuilder

        with self._lock:
            builder = self._builders.get(engine.name)
            if builder is None:
                stand_in = engine.image
                if self.base_image_packages:  # the stand-in with the user's packages: its own cached image
                    stand_in = ensure_image(engine.client, recipe(self.base_image_packages),
                                            log=lambda line: print(line, file=sys.stderr))[0]
                builder = self._builders[engine.name] = EnvironmentBuilder(
                    stand_in, self.base_image, log=lambda line: print(line, file=sys.stderr))
        return builder

    def _task_images(self, engine: Engine, task: Any) -> tuple[str, dict[str, str]]:
        key = (engine.name, str(task.dir))
        with self._lock:
            known = self._env_images.get(key)
            failed = self._env_failed.get(key)
        if known is not None:
            return known
        if failed is not None:  # built once before the run and failed: not again for every trial
            raise failed
        spec = task.meta.environment
        builder = self._builder(engine)
        if spec.image and not (task.dir / spec.dockerfile).is_file():
            image = builder.prebuilt(engine.client, spec.image, task.id)
        else:
            image, _ = builder.build(engine.client, task.dir, spec.dockerfile, spec.build_timeout_s, task.id)
        services = {}
        for service in spec.services:
            if service.dockerfile:
                services[service.name] = builder.build(engine.client, task.dir, service.dockerfile,
                                                       spec.build_timeout_s, f"{task.id} service {service.name}")[0]
            else:
                services[service.name] = str(service.image)
        with self._lock:
            self._env_images[key] = (image, services)
        return image, services

    def prepare_tasks(self, tasks: Sequence[Any], log: Any = None) -> dict[str, str]:
        """Build the images of the environment tasks on every engine before any trial; the tasks whose image
        cannot be built (a FROM the engine cannot get, a failing step: one line each, with the step's last
        output), which the others go on without: their trials end unscored with that line. Tasks that ask for
        the internet on an engine whose containers reach none are warned of in one line."""
        from agentic_eval.confine.docker_env import EnvironmentBuildError

        unbuildable: dict[str, str] = {}
        for task in tasks:
            if getattr(task.meta, "environment", None) is None:
                continue
            for engine in self.engines:
                if log is not None:
                    log(f"environment of {task.id}: building or finding its image on {engine.name} ...")
                try:
                    self._task_images(engine, task)
                except EnvironmentBuildError as exc:
                    with self._lock:
                        self._env_failed[(engine.name, str(task.dir))] = exc
                    unbuildable.setdefault(task.id, str(exc))
                    if log is not None:
                        log(f"cannot build: {exc}")
        self._check_internet([t for t in tasks if t.id not in unbuildable], log)
        return unbuildable

    def _check_internet(self, tasks: Sequence[Any], log: Any) -> None:
        """Probe each engine once per set of hosts for the tasks that allow the internet; warn in one line of the
        tasks whose engine reaches none (their trials are marked `internet_missing`)."""
        from agentic_eval.confine.verifier_check import engine_internet, fetched_hosts

        for engine in self.engines:
            missing: list[str] = []
            detail = ""
            for task in tasks:
                spec = getattr(task.meta, "environment", None)
                if spec is None or not spec.allow_internet:
                    continue
                hosts = fetched_hosts([task.dir / spec.dockerfile, task.grader_path])
                probe = (engine.name, tuple(hosts))
                if probe not in self._internet:
                    self._internet[probe] = engine_internet(engine.client, engine.image, hosts, engine.name)
                found = self._internet[probe]
                if not found.reached:
                    missing.append(task.id)
                    detail = detail or found.detail
                    self._offline.add((engine.name, str(task.dir)))
            if missing and log is not None:
                listed = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
                log(f"warning: {listed} ask{'s' if len(missing) == 1 else ''} for the internet (allow_internet), which "
                    f"the Docker engine {engine.name} does not give its containers ({detail}): they run offline "
                    "(their trials marked internet_missing), and a verifier that fails for want of it is unscored "
                    "(the machine's fault), not the model's fail; give the engine a network, or put what the task "
                    "fetches into its image",
                    "yellow")

    def environment_start(self, task: Any, dest: Path) -> None:
        """The working directory's files copied out of the task's image into the empty folder `dest`; the trial's
        services started on its own network. Its commands run in the task's container from then on."""
        from agentic_eval.confine.docker_env import (
            EnvironmentTrial,
            extract_workdir,
            image_path_env,
            image_user,
            shadow_digests,
        )

        spec = task.meta.environment
        with self._lock:
            engine = self._pick()
            engine.running += 1
        trial = None
        try:
            image, services = self._task_images(engine, task)
            extract_workdir(engine.client, image, spec.workdir, dest)
            uid, gid = image_user(engine.client, image, spec.user)
            trial = EnvironmentTrial(task=task, spec=spec, engine=engine, image=image, sandbox=dest.resolve(),
                                     uid=uid, gid=gid, path_env=image_path_env(engine.client, image),
                                     service_images=services, pristine_shadows=shadow_digests(dest),
                                     internet_missing=(engine.name, str(task.dir)) in self._offline,
                                     stand_in=self.base_image == SUITE_BASE)
            trial.start_services()
        except Exception:
            if trial is not None:
                trial.end()
            with self._lock:
                engine.running = max(0, engine.running - 1)
            raise
        with self._lock:
            self._envs[str(dest.resolve())] = trial

    def verify_environment(self, sandbox: Path, cancel: Any = None) -> Any:
        env = self._envs.get(str(sandbox.resolve()))
        if env is None:
            raise AgenticEvalError(f"{sandbox}: not an environment task's sandbox")
        # --- verifier control hook: a failure that looks like the machine's or the task's is confirmed by a run
        # on the task's untouched working directory (confine/verifier_control.py); special files refused first
        from agentic_eval.confine.verifier_control import verify

        return verify(env, cancel)

    def _env_wrap(self, env: Any, argv: Sequence[str], cwd: Path, writable: list[Path],
                  readable: list[Path], hidden: Sequence[Path]) -> list[str]:
        """`argv` run in the environment's agent container, as its user, in the working directory."""
        env.ensure_container(readable, _package_dir(), writable, hidden)
        command = ["python3" if a == sys.executable else a for a in argv[:1]] + list(argv[1:])
        return [sys.executable, "-I", "-S", str(_EXEC_HELPER), env.engine.name, env.container.id,
                env.container_cwd(cwd), f"{env.uid}:{env.gid}", env.path_env, "python3", *map(str, writable), "--",
                *command]

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

    def cap_disk(self, path: Path, size: str | None = None) -> None:
        """Move the sandbox onto a tmpfs of `size` (default `limits.work_size`) mounted at its own path (as root;
        else the sandbox stays uncapped)."""
        path = path.resolve()
        if os.geteuid() != 0 or not path.is_dir() or os.path.ismount(path) or shutil.which("mount") is None:
            return
        staging = path.with_name(path.name + ".uncapped")
        os.rename(path, staging)
        path.mkdir()
        why = _mount_tmpfs(path, size or self.limits.work_size, 0, "agentic-eval-work")
        if why:
            path.rmdir()
            os.rename(staging, path)
            cap = size or self.limits.work_size
            raise AgenticEvalError(f"cannot mount the size-capped work dir ({cap}) at {path}: {why}")
        with self._lock:
            self._capped.add(str(path))
        shutil.copytree(staging, path, symlinks=True, dirs_exist_ok=True)
        shutil.rmtree(staging)

    def disk_full(self, path: Path) -> str:
        """Why the sandbox counts as full (under 16 MiB left of its cap; an environment task's container's own
        filesystem over its cap), or an empty string."""
        path = path.resolve()
        env = self._envs.get(str(path))
        return "; ".join(filter(None, [self._work_dir_full(path), env.layer_full() if env is not None else ""]))

    def _work_dir_full(self, path: Path) -> str:
        if str(path) not in self._capped:
            return ""
        st = os.statvfs(path)
        if st.f_files and st.f_favail < 1024:
            return f"the work dir used up its files ({st.f_files} inodes): no room left to grade in"
        if st.f_bavail * st.f_frsize >= 16 << 20:
            return ""
        return f"the work dir filled its size cap ({self._work_size(path)}): no space left to grade in"

    def make_room(self, path: Path) -> None:
        """Before grading: grow the capped work dir by GRADING_ROOM (and its files in proportion), so a model
        that left it nearly full cannot make the grader crash for want of space (an unscored grader_error
        instead of its fail). The sealed grader writes nothing there (the model's code it has run writes in
        the grading folder, capped with its own room): this is room for the harness alone."""
        path = path.resolve()
        if str(path) not in self._capped:
            return
        st = os.statvfs(path)
        self._remount(path, f"size={st.f_blocks * st.f_frsize + GRADING_ROOM}",
                      f"nr_inodes={st.f_files + GRADING_ROOM // 4096}")

    @staticmethod
    def _remount(path: Path, *options: str) -> None:
        proc = subprocess.run(["mount", "-o", ",".join(["remount", *options]), str(path)], capture_output=True,
                              text=True, check=False)
        if proc.returncode != 0:
            raise AgenticEvalError(f"cannot remount the work dir at {path} ({', '.join(options)}): "
                                   f"{proc.stderr.strip()[-200:]}")

    def release(self, path: Path, keep: bool = False) -> None:
        """Unmount the sandbox's capped volume (its tree copied back to a plain folder first when `keep`).
        Never raises."""
        path = path.resolve()
        with self._lock:
            self._trials.pop(str(path), None)
            self._grader_reads.pop(str(path), None)
            warm = self._warm.pop(str(path), None)
            grading = self._grading.pop(str(path), None)
            self._ending.pop(str(path), None)  # no phase follows: its grader's container goes on ending alone
            capped = str(path) in self._capped
            self._capped.discard(str(path))
        ready = self._claim(warm)
        if ready is not None:
            self._remove(ready)
        if grading is not None:
            self._end_grading_folder(grading)
        if not capped:
            return
        kept = path.with_name(path.name + ".kept")
        try:
            if keep:  # iterative, links kept as links, special files left out: whatever the model's tree holds
                copy_tree(path, kept, deadline=time.monotonic() + KEEP_COPY_S)
        except Exception:  # noqa: BLE001 - the tree is lost with the mount, not the trial's record nor the run
            remove_tree(kept)
            keep = False
        subprocess.run(["umount", "--lazy", str(path)], capture_output=True, check=False)
        try:
            path.rmdir()
            if keep:
                os.rename(kept, path)
        except OSError:
            pass

    def _chown(self, path: Path) -> None:
        if os.geteuid() != 0 or not path.is_dir() or path.stat().st_uid == RUN_UID:
            return
        os.chown(path, RUN_UID, RUN_UID)
        for dirpath, dirnames, filenames in walk(path):  # iterative: a tree of any depth
            for name in (*dirnames, *filenames):
                try:
                    os.chown(os.path.join(dirpath, name), RUN_UID, RUN_UID, follow_symlinks=False)
                except OSError:  # a path longer than the kernel takes: the model's, left as it is
                    pass

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

    # ----- containers

    def _pick(self) -> Engine:
        live = [e for e in self.engines if not e.lost]
        if not live:
            lost = "; ".join(f"{e.name}: {e.lost}" for e in self.engines)
            raise AgenticEvalError(f"no Docker engine is left: {lost}")
        return max(live, key=lambda e: (e.slots - e.running, -self.engines.index(e)))

    def _phase(self, key: Path, writable: list[Path], readable: list[Path], hidden: Sequence[Path] = ()) -> _Phase:
        """The container that runs a command of the phase keyed by `key` (its first writable path, else its cwd):
        the current one if it serves these mounts, else a new one once the current one is killed."""
        sandbox = str(key)
        with self._lock:
            current = self._phases.get(sandbox)
            if current is not None and current.covers(writable, readable, hidden):
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
            missing = ready.missing(writable, readable, hidden)
            used = missing is not None and (not missing or self._copy_in(ready, missing))
            with self._lock:
                self._warm_used += used
                self._warm_wasted += not used
            if used:
                return self._begin(sandbox, ready)
            self._remove(ready)
        phase = self._start_phase(key, writable, readable, current.engine if current is not None else None, hidden)
        return self._begin(sandbox, phase)

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

    # ----- the grading folder (grading/sealed.py's CodeHost: its socket, the work copy, a scratch folder)

    @contextmanager
    def grading_folder(self, sandbox: Path) -> Iterator[Path]:
        """Where grading `sandbox` keeps the grader's socket, the work copy of the tree and the scratch folder
        (grading/sealed.py's CodeHost, which empties and refills the last two, never replaces them), removed
        afterwards: the one made when the trial's first phase started (its socket folder is bound into the
        grader's warm container, its work and scratch folders into the model's code's), else a new one. On a
        tmpfs of the work dir's cap plus GRADING_ROOM when the sandbox is capped: the model's code run while
        grading cannot fill this machine's disk either (it fills its own copy: its tests fail, a scored fail)."""
        key = str(sandbox.resolve())
        with self._lock:
            warm = self._warm.get(key)
        if warm is not None:  # the grader's container, still starting, may bind this trial's grading folder
            self._claim(warm)
        with self._lock:
            folder = self._grading.pop(key, None)
        if folder is None:
            folder = self._new_grading_folder(key)
        with self._lock:
            self._hosts.add(str(folder / "work"))
        try:
            yield folder
        finally:
            with self._lock:
                self._hosts.discard(str(folder / "work"))
            self._end_grading_folder(folder)

    def _new_grading_folder(self, sandbox: str) -> Path:
        """A grading folder, marked with its owner (the next run unmounts and removes it if this one is killed):
        beneath the tmpfs, for after a reboot, and on it, which hides the first."""
        from agentic_eval.leftovers import MarkedTempDir, mark_trial_folder

        folder = MarkedTempDir("ae-grading-").top
        with self._lock:
            capped = sandbox in self._capped
        if capped:
            why = _mount_tmpfs(folder, self.limits.work_size, GRADING_ROOM, "agentic-eval-grading")
            if why:
                shutil.rmtree(folder, ignore_errors=True)
                raise AgenticEvalError(f"cannot mount the size-capped grading folder ({self.limits.work_size} + "
                                       f"{GRADING_ROOM >> 20} MiB) at {folder}: {why}")
            mark_trial_folder(folder)
        os.chmod(folder, 0o755)
        for sub in (GRADING_SOCKET_FOLDER, "work", "scratch"):
            (folder / sub).mkdir(mode=0o755)
        return folder

    def _end_grading_folder(self, folder: Path) -> None:
        """The model's code's container goes (killed now if a command ran in it; one never used is removed in
        the background, with the folder after it), and the folder with it."""
        work = str(folder / "work")
        with self._lock:
            phase = self._phases.pop(work, None)
            warm = self._warm.pop(work, None)
        if phase is not None:
            self._remove(phase)
        if warm is None:
            self._drop_grading_folder(folder)
            return

        def unused() -> None:
            self._remove_unused(warm)
            self._drop_grading_folder(folder)

        try:
            self._removals.submit(unused)
        except RuntimeError:  # at interpreter exit
            unused()

    def _remove_unused(self, warm: Future[_Phase]) -> None:
        ready = self._claim(warm)
        if ready is not None:
            self._remove(ready)

    @staticmethod
    def _drop_grading_folder(folder: Path) -> None:
        """Unmount (a container that binds part of it keeps its own reference) and remove a grading folder."""
        if os.path.ismount(folder):
            subprocess.run(["umount", "--lazy", str(folder)], capture_output=True, check=False)
        remove_tree(folder)  # iterative: the model's work copy may be nested any deep

    _END_ALL = """\
import os, signal, time
me, uid = os.getpid(), str(os.getuid())
def left():
    found = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/status") as status:
                mine = any(line.split()[1:2] == [uid] for line in status if line.startswith("Uid:"))
            found += mine and int(pid) != me
        except OSError:
            pass
    return found
for _ in range(1000):
    os.kill(-1, signal.SIGKILL)
    if not left():
        break
    time.sleep(0.005)
else:
    raise SystemExit(1)
"""
    """Run as the commands' user: kills every process of theirs in the container (kill(-1) spares the caller and
    the container's own, KEEPER_UID's) until none is left (the container's init reaps them)."""

    def end_processes(self, path: Path) -> None:
        """End every process the commands of `path`'s phase left but keep its container (and its mounts) for the
        next: what a fresh work copy needs, without the cost of a new container. Removes the container instead
        when that fails."""
        with self._lock:
            phase = self._phases.get(str(path))
        if phase is None:
            return
        argv = [sys.executable, "-I", "-S", str(_EXEC_HELPER), phase.engine.name, phase.container.id, "/",
                str(RUN_UID), IMAGE_PATH, IMAGE_PYTHON, "--", IMAGE_PYTHON, "-I", "-S", "-c", self._END_ALL]
        try:
            ended = subprocess.run(argv, capture_output=True, timeout=30, env={}, check=False).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            ended = False
        if not ended:
            self.close(path)

    def _copy_in(self, phase: _Phase, paths: list[Path]) -> bool:
        """Copy small folders under the temp dir into the container's private /tmp at their own paths,
        read-only and root-owned; False when they cannot be (too big, elsewhere, holding anything but regular
        files and folders, or the copy failed)."""
        import io
        import tarfile
        import tempfile

        tmp = Path(tempfile.gettempdir()).resolve()
        if tmp != Path("/tmp") or any(tmp not in p.parents for p in paths):
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
                     hidden: Sequence[Path] = ()) -> _Phase:
        """A started container for a phase: on the previous phase's engine while it lives, else the freest."""
        sandbox = str(key)
        for path in writable:
            self._chown(path)
        with self._lock:
            engine = previous if previous is not None and not previous.lost else self._pick()
            engine.running += 1
        try:
            container, mounted = self._start(engine, writable, readable, sandbox, hidden)
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
        return _Phase(engine, container, tuple(sorted(str(p) for p in writable)), mounted, _under_any(hidden, mounted))

    def _start(self, engine: Engine, writable: list[Path], readable: list[Path],
               sandbox: str, hidden: Sequence[Path] = ()) -> tuple[Any, tuple[str, ...]]:
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

    def _drop_skeleton(self, container: Any) -> None:
        """Remove the stand-in /root of a killed container (its mounts are gone with it)."""
        with self._lock:
            skeleton = self._skeletons.pop(container.id, None)
        if skeleton:
            shutil.rmtree(skeleton, ignore_errors=True)

