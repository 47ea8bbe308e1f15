"""The docker backend's bridge to environment tasks (confine/docker_env.py): their images built before any trial,
the engine's internet checked, a trial's environment started, its commands wrapped into its container, and its
reward verifier run."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agentic_eval.confine.docker_engine import (
    _EXEC_HELPER,
    Engine,
    _package_dir,
)
from agentic_eval.confine.docker_image import (
    ensure_image,
    recipe,
)
from agentic_eval.confine.env_images import SUITE_BASE
from agentic_eval.errors import AgenticEvalError

if TYPE_CHECKING:
    from agentic_eval.confine.docker_env import EnvironmentTrial, VerifierRun
    from agentic_eval.confine.env_images import EnvironmentBuilder
    from agentic_eval.confine.env_spec import EnvironmentTask
    from agentic_eval.confine.verifier_check import InternetCheck


class EnvironmentTasks:
    """DockerBackend's environment tasks (a mixin: its state lives on the backend)."""

    base_image: str | None
    base_image_packages: tuple[str, ...]
    engines: list[Engine]
    _lock: threading.Lock
    _builders: dict[str, EnvironmentBuilder]
    _envs: dict[str, EnvironmentTrial]
    _env_images: dict[tuple[str, str], tuple[str, dict[str, str]]]
    _env_failed: dict[tuple[str, str], Exception]
    _internet: dict[tuple[str, tuple[str, ...]], InternetCheck]
    _offline: set[tuple[str, str]]
    if TYPE_CHECKING:  # the backend's own (confine/docker.py)
        def _pick(self) -> Engine: ...

    def _builder(self, engine: Engine) -> EnvironmentBuilder:
        """The engine's image builder (one per engine: two trials never build the same context at once)."""
        from agentic_eval.confine.env_images import EnvironmentBuilder

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

    def _task_images(self, engine: Engine, task: EnvironmentTask) -> tuple[str, dict[str, str]]:
        key = (engine.name, str(task.dir))
        with self._lock:
            known = self._env_images.get(key)
            failed = self._env_failed.get(key)
        if known is not None:
            return known
        if failed is not None:  # built once before the run and failed: not again for every trial
            raise failed
        spec = task.spec
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

    def prepare_tasks(self, tasks: Sequence[EnvironmentTask], log: Callable[..., None] | None = None
                      ) -> dict[str, str]:
        """Build the images of the environment tasks on every engine before any trial; the tasks whose image
        cannot be built (a FROM the engine cannot get, a failing step: one line each, with the step's last
        output), which the others go on without: their trials end unscored with that line. Tasks that ask for
        the internet on an engine whose containers reach none are warned of in one line."""
        from agentic_eval.confine.env_images import EnvironmentBuildError

        unbuildable: dict[str, str] = {}
        for task in tasks:
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

    def _check_internet(self, tasks: Sequence[EnvironmentTask], log: Callable[..., None] | None) -> None:
        """Probe each engine once per set of hosts for the tasks that allow the internet; warn in one line of the
        tasks whose engine reaches none (their trials are marked `internet_missing`)."""
        from agentic_eval.confine.verifier_check import engine_internet, fetched_hosts

        for engine in self.engines:
            missing: list[str] = []
            detail = ""
            for task in tasks:
                spec = task.spec
                if not spec.allow_internet:
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

    def environment_start(self, task: EnvironmentTask, dest: Path) -> None:
        """The working directory's files copied out of the task's image into the empty folder `dest`; the trial's
        services started on its own network. Its commands run in the task's container from then on."""
        from agentic_eval.confine.docker_env import EnvironmentTrial
        from agentic_eval.confine.env_changes import shadow_digests
        from agentic_eval.confine.env_images import extract_workdir, image_path_env, image_user

        spec = task.spec
        with self._lock:
            engine = self._pick()
            engine.running += 1
        trial = None
        try:
            image, services = self._task_images(engine, task)
            extract_workdir(engine.client, image, spec.workdir, dest)
            uid, gid = image_user(engine.client, image, spec.user)
            trial = EnvironmentTrial(task=task, engine=engine, image=image, sandbox=dest.resolve(),
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

    def verify_environment(self, sandbox: Path, cancel: threading.Event | None = None) -> VerifierRun:
        env = self._envs.get(str(sandbox.resolve()))
        if env is None:
            raise AgenticEvalError(f"{sandbox}: not an environment task's sandbox")
        # --- verifier control hook: a failure that looks like the machine's or the task's is confirmed by a run
        # on the task's untouched working directory (confine/verifier_control.py); special files refused first
        from agentic_eval.confine.verifier_control import verify

        return verify(env, cancel)

    def _env_wrap(self, env: EnvironmentTrial, argv: Sequence[str], cwd: Path, writable: list[Path],
                  readable: list[Path], hidden: Sequence[Path]) -> list[str]:
        """`argv` run in the environment's agent container, as its user, in the working directory."""
        env.ensure_container(readable, _package_dir(), writable, hidden)
        command = ["python3" if a == sys.executable else a for a in argv[:1]] + list(argv[1:])
        return [sys.executable, "-I", "-S", str(_EXEC_HELPER), env.engine.name, env.container.id,
                env.container_cwd(cwd), f"{env.uid}:{env.gid}", env.path_env, "python3", *map(str, writable), "--",
                *command]
