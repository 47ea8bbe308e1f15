"""Environment tasks on the docker backend: the task's own image, its services, and its verifier.

`EnvironmentBuilder.image(task)` builds the task's Dockerfile (and its services') on an engine, tagged by
the hash of the build context (`agentic-eval-env:<hash>`), so a second trial or run reuses it. A `FROM` the
engine cannot get (no image registry here) is one line saying so; `base_image` (`--base-image suite`, or an
image name) builds every outside `FROM` on that image instead.

`EnvironmentTrial` is one trial of such a task: its pristine tree is the working directory's files copied
out of the image into the trial's sandbox folder (committed as pristine by the caller), which the agent's
container mounts at the working directory (and at its own path, where the harness's tools address it).
Services start on a network only this trial's containers share (internal, reaching nothing else, unless
the task allows the internet); with none and no internet the container has no network at all. The
agent's container is killed when its phase ends and kept stopped: a reward verifier (Harbor's
tests/test.sh) then runs in a new container made from a snapshot of it (`docker commit`), with the
working directory from the host, the task's verifier files copied in at /tests and an empty
/logs/verifier, none of which the agent's container ever had. Before the snapshot, the engine's diff of the
agent's container names the programs and libraries the model changed (`changed_programs`): the verifier may
run them, and the report says so (the verdict stays the verifier's). A verifier that failed for want of a
program or of the network its script installs one from is the machine's or the task's fault, not the model's
(`VerifierRun.fault`, confine/verifier_check.py), when a control run on the task's untouched working directory
fails the same way (confine/verifier_control.py, called through confine/docker.py's `verify_environment`).
"""

from __future__ import annotations

import contextlib
import io
import os
import posixpath
import secrets
import shutil
import stat
import tarfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from agentic_eval.confine.env_changes import ProgramChanges, program_changes, workdir_shadows
from agentic_eval.confine.env_images import LABEL, SNAPSHOT_REPOSITORY
from agentic_eval.confine.layer_cap import LayerWatch, create_capped, layer_full
from agentic_eval.errors import AgenticEvalError
from agentic_eval.leftovers import MarkedTempDir, owner_labels

if TYPE_CHECKING:
    from agentic_eval.confine.env_spec import EnvironmentSpec, EnvironmentTask

REWARD_FILES = ("reward.txt", "reward.json")
"""Where a Harbor verifier writes its reward, in /logs/verifier."""
VERIFIER_LOGS = "/logs/verifier"
TESTS_MOUNT = "/tests"
LOGS_BYTES = 64 << 20
"""At most this many bytes in a verifier's /logs/verifier (its reward and its own logs: a few KiB in practice)."""
LOGS_FILES = 10_000
"""At most this many files and folders there: two million empty ones (no bytes) took the harness over a minute to
remove after each such trial, and the machine's disk as many inodes."""


class VerifierLogs:
    """A verifier's /logs/verifier on this machine: `path` in `work`, as root a tmpfs mounted there capped at
    LOGS_BYTES and LOGS_FILES (else a plain folder, uncapped, as docker's work dir is without root). What the
    verifier (or the model's code it runs) writes past the cap fails (ENOSPC); `full` says so for the record, and
    `close` unmounts it at once however much it holds (a run killed meanwhile: the next one unmounts it, its folder
    being marked)."""

    def __init__(self, work: Path) -> None:
        import subprocess

        files, size = LOGS_FILES, LOGS_BYTES
        self.path = work / "logs"
        self.path.mkdir()
        os.chmod(self.path, 0o777)
        self.capped = os.geteuid() == 0 and shutil.which("mount") is not None and subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size},nr_inodes={files},mode=0777,nosuid,nodev",
             "agentic-eval-logs", str(self.path)], capture_output=True, check=False).returncode == 0
        self.files, self.size = files, size

    def full(self) -> str:
        """The record's note when the verifier's writes met the cap (its files or its bytes), or ''."""
        if not self.capped:
            return ""
        st = os.statvfs(self.path)
        if st.f_ffree == 0:
            return (f"agentic-eval: {VERIFIER_LOGS} reached its cap of {self.files} files and folders; what the "
                    "verifier wrote past it failed")
        if st.f_bavail * st.f_frsize < 64 << 10:
            return (f"agentic-eval: {VERIFIER_LOGS} reached its cap of {self.size >> 20} MiB; what the verifier "
                    "wrote past it failed")
        return ""

    def close(self) -> None:
        import subprocess

        if self.capped:
            subprocess.run(["umount", "--lazy", str(self.path)], capture_output=True, check=False)
            self.capped = False


class RewardError(ValueError):
    """The verifier wrote no reward, or one that is not a number from 0 to 1."""


def parse_reward(folder: Path) -> float:
    """The reward a Harbor verifier wrote in `folder` (its /logs/verifier): reward.txt holding one number, or
    reward.json holding {"reward": x} (or a single number under another key). RewardError when there is none,
    it is not such a number, or it lies outside 0..1."""
    import json
    import math

    text_file, json_file = (folder / name for name in REWARD_FILES)
    if text_file.is_file() and not text_file.is_symlink():
        raw = text_file.read_text(encoding="utf-8", errors="replace")[:1000].strip()
        try:
            value = float(raw)
        except ValueError:
            raise RewardError(f"reward.txt holds {raw[:60]!r}, not a number") from None
    elif json_file.is_file() and not json_file.is_symlink():
        try:
            data = json.loads(json_file.read_text(encoding="utf-8", errors="replace")[:100_000])
        except ValueError as exc:
            raise RewardError(f"reward.json is not JSON: {exc}") from None
        numbers = data if isinstance(data, dict) else {}
        picked = numbers.get("reward") if "reward" in numbers else (
            next(iter(numbers.values())) if len(numbers) == 1 else None)
        if isinstance(picked, bool) or not isinstance(picked, int | float):
            raise RewardError("reward.json holds no number under \"reward\" (nor a single number)")
        value = float(picked)
    else:
        raise RewardError(f"the verifier wrote no reward ({VERIFIER_LOGS}/reward.txt or reward.json)")
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise RewardError(f"the reward {value!r} is not a number from 0 to 1")
    return value



@dataclass(frozen=True)
class VerifierRun:
    """What a reward verifier's run left: its exit and output, and the reward (or why there is none)."""

    exit_code: int | None
    output: str
    duration_s: float
    reward: float | None = None
    error: str = ""
    """Why there is no reward: no reward file, not a number from 0 to 1."""
    timed_out: bool = False
    cancelled: bool = False
    start_error: str | None = None
    changes: ProgramChanges | None = None
    """What the model changed where programs live, from the engine's diff of its container (None: it ran no
    command, so there was no container to change)."""
    fresh: bool = False
    """It ran in a fresh container of the task's image, not in the agent's (where a missing program may be the
    model's doing)."""
    fault: str = ""
    """A verifier's failure that is the machine's or the task's, not the model's (in a fresh container, a program
    its script runs that the image lacks; in either, a runner its script installs from a network its container
    had not): one line (confine/verifier_check.py), '' otherwise."""
    offline: bool = False
    """Its container had no way out: no network, an internal one, or an engine whose probe reached nothing."""
    fault_side: str = ""
    """Whose that fault is: 'machine' (no network) or 'grader' (the task's image lacks a program its verifier runs)."""
    model_fault: str = ""
    """A failure that looked like the machine's or the task's (no reward, a timeout, a program missing) but that a
    control run on the task's untouched working directory did not show: the model's doing, a scored fail with
    this cause (confine/verifier_control.py)."""
    in_agent_container: bool = False
    """The verifier ran in a snapshot of the agent's container (the task's `verifier_container = "agent"`), where
    what the model changed outside its working directory could reach it; else in a fresh container of the image."""
    shadows: tuple[str, ...] = ()
    """Entries the model added or changed at the top of the working directory that shadow a module the verifier's
    Python imports (`pytest.py` beside `python3 -m pytest`), as paths in the container."""
    artifacts_missing: tuple[str, ...] = ()
    """The task's `verifier_artifacts` not found in the agent's container."""
    logs_full: str = ""
    """A line when the verifier's writes met the cap of its /logs/verifier (VerifierLogs), else ''."""


@dataclass
class EnvironmentTrial:
    """One trial's environment on one engine: the agent's container, its services and their network."""

    task: EnvironmentTask
    engine: Any
    """The `docker.Engine` the trial runs on."""
    image: str
    sandbox: Path
    uid: int
    gid: int
    path_env: str
    service_images: dict[str, str] = field(default_factory=dict)
    network: Any = None
    services: list[Any] = field(default_factory=list)
    container: Any = None
    mounted: tuple[str, ...] = ()
    sources: dict[str, tuple[int, int]] = field(default_factory=dict)
    """The agent's container's bind sources as it was made (path -> device and inode). The engine makes a missing
    one again, empty, at any look into the stopped container's files (the verifier's `program_changes`, its
    artifacts): a grader's variables folder bound by validate's fix phase, gone with its grading, came back in the
    temp dir after every such trial. `end` removes those the engine made."""
    layer_watch: LayerWatch | None = None
    """Where the engine cannot cap the container's writable layer: the watch that kills it over the cap."""
    stopped: bool = False
    internet_missing: bool = False
    """The task allows the internet, and the engine's probe reached none (confine/verifier_check.py)."""
    stand_in: bool = False
    """Its image was built on the suite's stand-in base (`--base-image suite`), which lacks what the field's have."""
    pristine_shadows: dict[str, str] | None = None
    """`shadow_digests` of the pristine working directory (taken when it is copied out of the image)."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def spec(self) -> EnvironmentSpec:
        """The task's `[environment]`: its container's limits, working directory, services and verifier."""
        return self.task.spec

    @property
    def client(self) -> Any:
        return self.engine.client

    def start_services(self) -> None:
        """The trial's network (when it has services or the internet) and its services, started on it."""
        if not self.spec.services and not self.spec.allow_internet:
            return
        name = f"ae-env-{secrets.token_hex(6)}"
        self.network = self.client.networks.create(name, driver="bridge", internal=not self.spec.allow_internet,
                                                   labels={LABEL: str(self.sandbox), **owner_labels()})
        for service in self.spec.services:
            image = self.service_images[service.name]
            container = self.client.containers.create(
                image, service.command, name=f"{name}-{service.name}", environment=dict(service.env),
                labels={LABEL: str(self.sandbox), **owner_labels()}, init=True,
                mem_limit=f"{self.spec.memory_mb}m", nano_cpus=int(self.spec.cpus * 1e9), pids_limit=1024,
                security_opt=["no-new-privileges"], network=self.network.name)
            self.services.append(container)
            try:  # reachable by the service's name on the trial's network
                self.network.disconnect(container, force=True)
                self.network.connect(container, aliases=[service.name])
                container.start()
            except Exception as exc:  # noqa: BLE001 - one line, the trial's
                raise AgenticEvalError(f"service {service.name!r} did not start: {type(exc).__name__}: "
                                       f"{str(exc)[:200]}") from None

    def container_cwd(self, cwd: Path) -> str:
        """Where `cwd` (the sandbox or a folder in it) is in the container: under the working directory."""
        cwd = Path(cwd)
        if cwd == self.sandbox or self.sandbox in cwd.parents:
            return str(PurePosixPath(self.spec.workdir, *cwd.relative_to(self.sandbox).parts))
        return str(cwd)

    def ensure_container(self, readable: Sequence[Path], package: Path, writable: Sequence[Path] = (),
                         hidden: Sequence[Path] = ()) -> None:
        """The agent's container, started at its first command: the task's image, the sandbox at the working
        directory (and at its own path), its other `writable` paths at their own, `readable` and agentic-eval's
        package read-only at their own paths, an empty tmpfs over each `hidden` folder under a mounted one (the
        built-in packs inside an installed package)."""
        with self.lock:
            if self.container is not None and not self.stopped:
                missing = [p for p in readable if p.exists() and not any(
                    p == Path(m) or Path(m) in p.parents for m in self.mounted)]
                if missing:
                    raise AgenticEvalError(f"the environment's container does not mount {missing[0]} (a command of "
                                           "the agent's phase needs what its first one did not)")
                return
            if self.stopped:
                raise AgenticEvalError("the environment's agent phase is over: its container is gone")
            binds = {str(self.sandbox): {"bind": self.spec.workdir, "mode": "rw"}}
            volumes = [f"{self.sandbox}:{self.spec.workdir}:rw", f"{self.sandbox}:{self.sandbox}:rw",
                       f"{package}:{package}:ro"]
            mounted = [str(self.sandbox), str(package)]
            for path in writable:
                if path.exists() and path != self.sandbox:
                    volumes.append(f"{path}:{path}:rw")
                    mounted.append(str(path))
            solution = self.task.dir / "solution"
            if self.task.harbor and solution.is_dir() and any(p == self.task.dir for p in readable):
                volumes.append(f"{solution}:/solution:ro")  # the oracle's phase: where Harbor puts solution/
            for path in readable:
                if path.exists() and str(path) not in binds and not any(
                        path == Path(m) or Path(m) in path.parents for m in mounted):
                    volumes.append(f"{path}:{path}:ro")
                    mounted.append(str(path))
            root = self.uid == 0
            tmpfs = {"/tmp": "rw,nosuid,nodev,size=512m,mode=1777"}
            for folder in hidden:
                if Path(folder).is_dir() and any(Path(m) in Path(folder).parents for m in mounted):
                    tmpfs[str(folder)] = "ro,noexec,nosuid,nodev,size=64k"
            for source in (volume.split(":", 1)[0] for volume in volumes):
                with contextlib.suppress(OSError):
                    st = os.stat(source)
                    self.sources[source] = (st.st_dev, st.st_ino)
            try:
                self._create_agent_container(volumes, tmpfs, root)
            except Exception as exc:  # noqa: BLE001 - whatever the engine said, one line for the trial
                if self.container is not None:
                    self._remove(self.container)
                    self.container = None
                raise AgenticEvalError(f"the environment's container did not start: {type(exc).__name__}: "
                                       f"{str(exc)[:200]}") from None
            self.mounted = tuple(mounted)

    def _create_agent_container(self, volumes: list[str], tmpfs: dict[str, str], root: bool) -> None:
        self.container, engine_caps = create_capped(
            self.engine, self.spec.storage_mb, self.client.containers.create,
            self.image, ["sleep", "infinity"], entrypoint=[], working_dir=self.spec.workdir,
            environment={**self.spec.env, "PATH": self.path_env}, volumes=volumes, init=True,
            labels={LABEL: str(self.sandbox), **owner_labels()},
            network=self.network.name if self.network is not None else None,
            network_mode=None if self.network is not None else "none",
            mem_limit=f"{self.spec.memory_mb}m", memswap_limit=f"{self.spec.memory_mb}m",
            nano_cpus=int(self.spec.cpus * 1e9), pids_limit=1024, security_opt=["no-new-privileges"],
            cap_drop=None if root else ["ALL"], tmpfs=tmpfs, user="0:0")
        self.container.start()
        self.layer_watch = None if engine_caps else LayerWatch(self.client, self.container, self.spec.storage_mb)

    def layer_full(self) -> str:
        """Why the agent's container's own filesystem counts as full (agentic_eval.confine.layer_cap), or ''."""
        if self.container is None:
            return ""
        return layer_full(self.client, self.container, self.spec.storage_mb, self.layer_watch)

    def stop(self) -> None:
        """End the agent's phase: its container is killed (every process in it ends) and kept for the snapshot."""
        with self.lock:
            self.stopped = True
            container = self.container
        if self.layer_watch is not None:
            self.layer_watch.stop()
        if container is not None:
            try:
                container.kill()
            except Exception:  # noqa: BLE001 - already stopped
                pass

    def verify(self, cancel: threading.Event | None = None) -> VerifierRun:
        """Run the reward verifier in a container made from a snapshot of the agent's (or the image, when the
        agent started none), its verifier files at /tests and an empty /logs/verifier; the reward is the verdict."""
        self.stop()
        start = time.monotonic()
        snapshot = None
        marked = MarkedTempDir("ae-verify-")  # a killed run's: the next unmounts its logs and removes it
        work = Path(marked.name)
        logs: VerifierLogs | None = None
        container = None
        changes = None
        in_agent = self.spec.verifier_container == "agent"
        shadows = tuple(f"{self.spec.workdir.rstrip('/')}/{name}"
                        for name in workdir_shadows(self.sandbox, self.pristine_shadows))
        agent_container: Any = None
        missing: tuple[str, ...] = ()
        try:
            image = self.image
            fresh = self.container is None or not in_agent  # a fresh container of the task's image (dodges')
            if self.container is not None:
                changes = program_changes(self.client, self.container.id, self.spec.workdir, self.path_env,
                                          (*self.mounted, "/solution", "/tmp"))
                if in_agent:  # the task's word: its verifier must see the agent's container
                    snapshot = self.container.commit(repository=SNAPSHOT_REPOSITORY, tag=secrets.token_hex(8))
                    image = snapshot.id
                    self._remove(self.container)
                    self.container = None
                else:  # a fresh container of the task's image: only the working directory and artifacts go over
                    agent_container = self.container
            tests = self._verifier_tests(work)
            logs = VerifierLogs(work)
            container = self.client.containers.create(
                image, ["bash", f"{TESTS_MOUNT}/test.sh"], entrypoint=[], working_dir=self.spec.workdir,
                environment={**self.spec.env, "TEST_DIR": TESTS_MOUNT, **self.spec.verifier_env, "PATH": self.path_env},
                volumes=[f"{self.sandbox}:{self.spec.workdir}:rw", f"{tests}:{TESTS_MOUNT}:rw",
                         f"{logs.path}:{VERIFIER_LOGS}:rw"], init=True, user="0:0",
                labels={LABEL: str(self.sandbox), **owner_labels()},
                network=self.network.name if self.network is not None else None,
                network_mode=None if self.network is not None else "none",
                mem_limit=f"{self.spec.memory_mb}m", nano_cpus=int(self.spec.cpus * 1e9), pids_limit=1024,
                security_opt=["no-new-privileges"], tmpfs={"/tmp": "rw,nosuid,nodev,size=512m,mode=1777"})
            if self.spec.verifier_artifacts:
                missing = tuple(copy_artifacts(self.client, agent_container.id, container.id,
                                               self.spec.verifier_artifacts) if agent_container is not None else
                                [f"{a}: the agent ran no command" for a in self.spec.verifier_artifacts])
            container.start()
            code, timed_out, cancelled = self._await_exit(container, cancel)
            output = container.logs(stdout=True, stderr=True).decode("utf-8", errors="replace")[-64_000:]
            took = time.monotonic() - start
            where: dict[str, Any] = dict(changes=changes, in_agent_container=in_agent, shadows=shadows,
                                         artifacts_missing=missing, logs_full=logs.full())
            if timed_out or cancelled:
                return VerifierRun(None, output, took, timed_out=timed_out, cancelled=cancelled, **where)
            reward, error = None, ""
            try:
                reward = parse_reward(logs.path)
            except RewardError as exc:
                error = str(exc)
            fault, side = self._machine_fault(output, reward, fresh)
            return VerifierRun(code, output, took, reward=reward, error=error, fresh=fresh, fault=fault,
                               fault_side=side, offline=self.offline, **where)
        except Exception as exc:  # noqa: BLE001 - the engine failed the verifier: a grader error, one line
            return VerifierRun(None, "", time.monotonic() - start, start_error=f"{type(exc).__name__}: {exc}"[:300],
                               changes=changes, in_agent_container=in_agent, shadows=shadows)
        finally:
            if container is not None:
                self._remove(container)
            if snapshot is not None:
                try:
                    self.client.images.remove(snapshot.id, force=True)
                except Exception:  # noqa: BLE001
                    pass
            if logs is not None:
                logs.close()
            marked.cleanup()

    def _verifier_tests(self, work: Path) -> Path:
        """The verifier's /tests (its files copied from the task's folder), in `work`."""
        tests = work / "tests"
        tests.mkdir()
        for rel in self.spec.verifier_files:
            source = self.task.dir / rel
            target = tests if source.is_dir() else tests / source.name
            if source.is_dir():
                shutil.copytree(source, target, dirs_exist_ok=True)
            else:
                shutil.copy2(source, target)
        return tests

    def _await_exit(self, container: Any, cancel: threading.Event | None) -> tuple[int | None, bool, bool]:
        """The verifier's exit code once its container stops, or (None, timed out, cancelled); a container still
        running at the verifier's time limit or on Ctrl-C is killed."""
        deadline = time.monotonic() + self.spec.verifier_timeout_s
        code, timed_out, cancelled = None, False, False
        while True:
            container.reload()
            if container.status not in ("created", "running"):
                code = int(container.attrs.get("State", {}).get("ExitCode", -1))
                break
            if cancel is not None and cancel.is_set():
                cancelled = True
                break
            if time.monotonic() >= deadline:
                timed_out = True
                break
            time.sleep(0.1)
        if timed_out or cancelled:
            container.kill()
        return code, timed_out, cancelled

    @property
    def offline(self) -> bool:
        """Whether the trial's containers have no way out (no network, an internal one, or no internet behind)."""
        return self.internet_missing or self.network is None or not self.spec.allow_internet

    def _machine_fault(self, output: str, reward: float | None, fresh: bool) -> tuple[str, str]:
        """Why the verifier's failure is the machine's or the task's (confine/verifier_check.py), and whose: ('', '')
        when it is neither's. In a snapshot of the agent's container only the network's counts (a runner the
        task's image lacks, which its script installs, on a container with no way out: no model could pass, and
        nothing it did there changes that); a program merely missing there may be the model's doing."""
        from agentic_eval.confine.verifier_check import machine_fault

        try:
            script = self.task.grader_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "", ""
        fault = machine_fault(self.client, self.image, self.path_env, output, script, offline=self.offline,
                              reward=reward)
        if fault is None or (not fresh and fault.kind != "network"):
            return "", ""
        from agentic_eval.confine.verifier_check import stand_in_hint

        hint = stand_in_hint(f"{fault.program}: not found") if self.stand_in and fault.kind == "program" else ""
        return fault.cause + (f"; {hint}" if hint else ""), "machine" if fault.kind == "network" else "grader"

    @staticmethod
    def _remove(container: Any) -> None:
        try:
            container.remove(force=True)
        except Exception:  # noqa: BLE001 - gone already
            pass

    def end(self) -> None:
        """Remove everything of the trial: the agent's container, the services, the network."""
        self.stop()
        for container in [c for c in (self.container, *self.services) if c is not None]:
            self._remove(container)
        self.container, self.services = None, []
        if self.network is not None:
            try:
                self.network.remove()
            except Exception:  # noqa: BLE001
                pass
            self.network = None
        for path, made in self.sources.items():  # a source the engine made again: another folder, empty
            with contextlib.suppress(OSError):
                st = os.lstat(path)
                if stat.S_ISDIR(st.st_mode) and (st.st_dev, st.st_ino) != made:
                    os.rmdir(path)  # only if empty: a folder with anything in it is not the engine's
        self.sources = {}


# --------------------------------------------------------------------------- the verifier apart (issue 39)

VERIFIER_CONTAINERS = ("fresh", "agent")
"""Where a reward verifier runs: `fresh`, a new container of the task's image with the agent's working directory
(and the task's `verifier_artifacts`) copied in, as Harbor's separate-verifier mode does (the default); `agent`,
a snapshot of the agent's own container, for a task that must see what the agent did outside its working
directory (a pass there with changed programs is `tampered`, not a pass)."""
ARTIFACTS_LIMIT = 1 << 30
"""At most this many bytes of the agent's container, as the engine archives them, are copied into a fresh
verifier's (all of a trial's artifacts together): a sparse file counts at its full size, which it takes once
copied. More is the model's doing (a declared folder holding 1 GiB of nothing, taking no room, was held in the
harness's memory twice over and written out in full: 10 GiB of it would have ended the run), and what would pass
the limit is left out: the verifier judges its absence, a scored fail, and the record names why."""


def copy_artifacts(client: Any, source_id: str, target_id: str, paths: Sequence[str],
                   limit: int = ARTIFACTS_LIMIT) -> list[str]:
    """Copy `paths` (absolute) of the agent's stopped container into the verifier's created one, at the same
    places (the task's `verifier_artifacts`), streamed (never whole in memory); returns one line per path that
    could not be copied (none there, or past `limit` bytes with those before it: the model's doing, the verifier
    judges its absence)."""
    import docker

    missing: list[str] = []
    for path in paths:
        try:
            size = _archive_size(client, source_id, path, limit)
        except docker.errors.NotFound:
            missing.append(f"{path}: not in the agent's container")
            continue
        if size is None:
            missing.append(f"{path}: left out, over the {limit >> 20} MiB the artifacts may take as copied (sparse "
                           "files at their full size)")
            continue
        limit -= size
        parent = posixpath.dirname(path.rstrip("/")) or "/"
        try:  # the container is stopped: the second archive of the path is the first's
            client.api.put_archive(target_id, parent, client.api.get_archive(source_id, path)[0])
        except docker.errors.APIError as exc:  # its parent folder is not in the image: made first
            if "no such file" not in str(exc).lower() and "not found" not in str(exc).lower():
                raise
            folders = io.BytesIO()
            with tarfile.open(fileobj=folders, mode="w") as tar:
                walked = ""
                for part in PurePosixPath(parent).parts[1:]:
                    walked = f"{walked}/{part}" if walked else part
                    info = tarfile.TarInfo(walked)
                    info.type, info.mode = tarfile.DIRTYPE, 0o755
                    tar.addfile(info)
            client.api.put_archive(target_id, "/", folders.getvalue())
            client.api.put_archive(target_id, parent, client.api.get_archive(source_id, path)[0])
    return missing


def _archive_size(client: Any, source_id: str, path: str, limit: int) -> int | None:
    """The size of the engine's archive of `path`, read and dropped; None once it is over `limit` (what is left
    is not read)."""
    stream, _ = client.api.get_archive(source_id, path)
    total = 0
    try:
        for chunk in stream:
            total += len(chunk)
            if total > limit:
                return None
    finally:
        stream.close()
    return total
