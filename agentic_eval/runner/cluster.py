"""Trials spread over a Ray cluster (`run --ray ADDRESS`): each trial is one Ray task on some node.

On the node the task runs the whole trial as a local run does (`TrialRunner`): a fresh sandbox confined by
that node's backend, the wire recorder, the agent, the snapshot, the sealed grader and the classifier, in a
trial folder of its own under the node's temp folder. It returns the trial's record and that folder (wire
log, transcript, diff, tree.json, grader output) as one tar archive; the driver alone writes the run folder,
so `--resume` and a driver killed mid-run work as they do locally.

What travels, and how:

- the package: the driver's own copy of `agentic_eval` (with the built-in packs, generators and grader
  helpers at `_builtin/`, as in a wheel) goes to every node as the job's Ray `working_dir`, uploaded once per
  run (Ray keys it by content) and cached by each node, first on the workers' path: nodes run the driver's
  code. Its
  third-party dependencies (pydantic, httpx, ...) must be installed on the nodes, as Ray itself is.
- the tasks: each task's folder and its pack's `graders/` helpers as one tar archive in Ray's object store,
  put once per run and unpacked once per node (keyed by the archive's hash) under the node's temp folder;
  built-in, folder and entry-point packs alike. The task is loaded from there, so its digest (and the trial
  id) is the one the driver computed.
- the agent and the backend: the agent object and the backend's class are pickled by reference (a plugin's
  package must be installed on the nodes); the backend is made on the node from the run's own options.
- the endpoint key: the task's own small argument (Ray inlines arguments this small into the task itself: held
  in memory, never in the object store's spill files), never on a command line, in an environment variable
  or in a file on the node. On the node it lives in the wire recorder, as locally: the agent gets a
  per-trial placeholder.

A node that cannot run a task's trial (its grader needs a program or module the node lacks, or the run's
sandbox backend does not work there) ends that trial before it starts, unscored, with the node named (fault
'machine'). A node that dies mid-trial: the trial runs once more wherever Ray places it (its record's detail
says so); a second loss records it unscored with the node as cause, and `--resume` reruns it.
"""

from __future__ import annotations

import hashlib
import io
import logging
import re
import shutil
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agentic_eval.confine.backend import SandboxBackend
from agentic_eval.confine.registry import backend_class
from agentic_eval.errors import AgenticEvalError, install_extra
from agentic_eval.leftovers import TRIAL_FOLDER_PREFIX, clean_dead_runs, mark_trial_folder
from agentic_eval.results.records import TrialResult, trial_slot, utc_now
from agentic_eval.results.run_folder import TrialSpec
from agentic_eval.results.trial_log import TrialLog

if TYPE_CHECKING:
    from agentic_eval.agents.base import Agent, AgentOptions
    from agentic_eval.endpoint import Endpoint
    from agentic_eval.packs.task import Task
    from agentic_eval.results.records import RunConfig
    from agentic_eval.results.run_folder import RunPlan
    from agentic_eval.runner.settings import RunSettings, SandboxChoice

class Campaign(Protocol):
    """What a run on the cluster needs of the planned run (runner.planning.Campaign, which calls this module)."""

    plan: RunPlan
    settings: RunSettings
    agent: Agent
    endpoint: Endpoint
    backend_class: type[SandboxBackend]

    @property
    def config(self) -> RunConfig: ...

    @property
    def options(self) -> AgentOptions: ...


RAY_INSTALL = install_extra("ray")
BUNDLE_ROOT = "ae-ray-tasks"
"""The folder under a node's temp folder that holds the tasks shipped to it, one folder per archive hash."""
NODE_LOST = "machine"


def import_ray() -> Any:
    """The `ray` module, or one line saying how to install it."""
    try:
        import ray
    except ImportError:
        raise AgenticEvalError(f"--ray needs Ray, which is not installed here: {RAY_INSTALL}") from None
    return ray


def check_ray_address(address: str) -> str:
    """A Ray cluster address as `--ray` takes it: host:port of the head's GCS, `ray://host:port` (Ray
    Client), or `auto` (the cluster this machine belongs to)."""
    value = address.strip()
    if value == "auto" or re.fullmatch(r"(ray://)?[A-Za-z0-9._\-\[\]:]+:\d{1,5}", value):
        return value
    raise AgenticEvalError(f"--ray {address!r}: give the head node's HOST:PORT (as `ray start --head` printed it), "
                           "ray://HOST:PORT, or auto")


def nodes_backend(choice: SandboxChoice, agent: Agent) -> tuple[type[SandboxBackend], str | None]:
    """The backend class the nodes make for a `--ray` run with the run's options (the named one, else bwrap: never
    a silent fall back to an unconfined run where a node lacks it) and a warning for an unconfined one. The driver
    makes none: it needs neither bwrap nor an engine of its own."""
    cls = backend_class(choice.name or "bwrap", agent)
    cls.check_options(choice.options)  # a bad option is one line here, not an error on every node
    warning = None if cls.confined else (f"WARNING: commands the model writes will run UNCONFINED on the nodes "
                                         f"(--sandbox {cls.name}), with each node's network: on a cluster, confine")
    return cls, warning


# --------------------------------------------------------------------------- what travels to the nodes


def _tar(add: Callable[[tarfile.TarFile], None]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as tar:
        add(tar)
    return buffer.getvalue()


def _no_cache(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    return None if "__pycache__" in Path(info.name).parts else info


def task_bundle(task: Task) -> bytes:
    """A task's folder, its pack's shared `graders/` helpers (what its digest covers) and the pack's own
    generators (`sandboxes/`) as one archive: `<pack dir name>/<task dir name>/...`, `<pack dir name>/graders/`
    and `<pack dir name>/sandboxes/`."""
    pack = task.pack_dir.name or "pack"

    def add(tar: tarfile.TarFile) -> None:
        tar.add(task.dir, arcname=f"{pack}/{task.dir.name}", filter=_no_cache)
        for shared in ("graders", "sandboxes"):
            if (task.pack_dir / shared).is_dir():
                tar.add(task.pack_dir / shared, arcname=f"{pack}/{shared}", filter=_no_cache)

    return _tar(add)


def stage_package(into: Path) -> Path:
    """A copy of the running `agentic_eval` package laid out as in a wheel (the built-in packs, generators and
    grader helpers at `_builtin/`) in the folder `into`, the working directory Ray ships to the nodes."""
    from agentic_eval.paths import builtin_root

    here = Path(__file__).resolve().parent.parent  # the agentic_eval package
    staged = into / "agentic_eval"
    shutil.copytree(here, staged, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"), symlinks=True)
    if not (staged / "_builtin" / "tasks").is_dir():  # a source checkout keeps them at the repository's top
        for name in ("tasks", "sandboxes", "graders"):
            source = builtin_root() / name
            if source.is_dir():
                shutil.copytree(source, staged / "_builtin" / name,
                                ignore=shutil.ignore_patterns("__pycache__", "*.pyc"), symlinks=True)
    return staged


def _unpack(data: bytes, key: str) -> Path:
    """The archive unpacked under the node's temp folder, once per node (`key`: its hash)."""
    root = Path(tempfile.gettempdir()) / BUNDLE_ROOT
    root.mkdir(mode=0o700, exist_ok=True)
    target = root / key
    if target.is_dir():
        return target
    scratch = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=root))
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        tar.extractall(scratch, filter="tar")
    try:
        scratch.rename(target)  # atomic: two trials unpacking at once keep the first
    except OSError:
        shutil.rmtree(scratch, ignore_errors=True)
    return target


# --------------------------------------------------------------------------- on the node


@dataclass(frozen=True)
class TrialJob:
    """What a node needs to run one trial, besides the task's archive (its own argument, from the store)."""

    config: RunConfig
    trial_id: str
    attempt: int
    task_id: str
    pack: str
    task_path: str
    """The task's folder inside its archive."""
    bundle_key: str
    agent: Agent
    options: AgentOptions
    backend_class: type[SandboxBackend]
    backend_options: dict[str, Any]


@dataclass(frozen=True)
class NodeReturn:
    """What a node sends back: the trial's record (None: cancelled) and its trial folder as an archive."""

    record: str | None
    folder: bytes
    node: str


def node_name() -> str:
    """This node as a record names it: the start of its Ray node id and its address."""
    import ray

    return f"{ray.get_runtime_context().get_node_id()[:12]} ({ray.util.get_node_ip_address()})"


_backends: dict[tuple[type, str], Any] = {}
_backends_lock = threading.Lock()


def _node_backend(job: TrialJob) -> SandboxBackend:
    """The run's backend made on this node (once per worker process: docker keeps its engines' state)."""
    key = (job.backend_class, repr(sorted(job.backend_options.items())))
    with _backends_lock:
        if key not in _backends:
            _backends[key] = job.backend_class.create(dict(job.backend_options))
        return _backends[key]  # type: ignore[no-any-return]


def _refused(job: TrialJob, endpoint: Endpoint, node: str, why: str) -> NodeReturn:
    from agentic_eval.endpoint import scrub, url_secrets

    secrets = [s for s in (endpoint.api_key, *url_secrets(endpoint.base_url)) if len(s) >= 4]
    now = utc_now()
    record = TrialResult(trial_id=job.trial_id, run_id=job.config.run_id, task_id=job.task_id, task_digest="",
                         pack=job.pack, agent=job.config.agent, model=job.config.model, seed=job.config.seed,
                         attempt=job.attempt, outcome="agent_error", fault=NODE_LOST,
                         detail=scrub(f"node {node} cannot run this trial: {why}", secrets)[:500],
                         fault_reason=f"node {node} lacks what the trial needs", started_at=now, ended_at=now,
                         duration_s=0.0, sandbox=job.backend_class.name, node=node)
    return NodeReturn(record.model_dump_json(), b"", node)


_cleaned: list[bool] = []


def _clean_once() -> None:
    """What trials of dead workers left on this node (their sandboxes, the model's processes in them), once per
    worker process: a worker is killed, never cleans up, when its task is cancelled or its driver dies."""
    with _backends_lock:
        if not _cleaned:
            _cleaned.append(True)
            clean_dead_runs()


def run_trial_on_node(job: TrialJob, bundle: bytes, endpoint: Endpoint) -> NodeReturn:
    """The Ray task: one trial run on this node, returned as data (see the module's docstring). The endpoint
    (its key) is an argument of its own, always small enough for Ray to inline it in the task: a large job
    (a run of many tasks has a large config) could otherwise take it into the object store, which spills."""
    from agentic_eval.grading.grader import check_grader_requirements
    from agentic_eval.packs.task import load_task
    from agentic_eval.runner.trial import TrialRunner

    node = node_name()
    try:
        task = load_task(_unpack(bundle, job.bundle_key) / job.task_path, pack=job.pack)
        check_grader_requirements([task])  # before the trial starts: a grader that cannot run here
        backend = _node_backend(job)
    except AgenticEvalError as exc:
        return _refused(job, endpoint, node, str(exc))
    _clean_once()
    run_dir = Path(tempfile.mkdtemp(prefix=f"{TRIAL_FOLDER_PREFIX}ray-"))
    mark_trial_folder(run_dir)  # a worker killed with its node's job (Ctrl-C, a dead driver) leaves it behind
    try:
        runner = TrialRunner(run_dir=run_dir, config=job.config, agent=job.agent, endpoint=endpoint,
                             options=job.options, cancel=threading.Event(), backend=backend)
        result = runner.run(TrialSpec(task, job.attempt, job.trial_id))
        if result is None:
            return NodeReturn(None, b"", node)
        result = result.model_copy(update={"node": node})
        folder = run_dir / "trials" / trial_slot(job.task_id, job.attempt)
        data = _tar(lambda tar: tar.add(folder, arcname=".")) if folder.is_dir() else b""
        return NodeReturn(result.model_dump_json(), data, node)
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


# --------------------------------------------------------------------------- on the driver


def _lost_node(exc: BaseException) -> str | None:
    """The node a Ray error says was lost under the trial ("id (ip)"), '' when it names none, None when the error
    is not a lost node or worker."""
    import ray.exceptions as rex

    if not isinstance(exc, rex.NodeDiedError | rex.WorkerCrashedError | rex.ObjectLostError
                      | rex.LocalRayletDiedError | rex.OutOfMemoryError):
        return None
    text = str(exc)
    node_id = re.search(r"node ID: ([0-9a-f]+)", text)
    ip = re.search(r"Node IP: ([0-9A-Fa-f.:]+)", text)
    if node_id:
        return f"{node_id.group(1)[:12]} ({ip.group(1) if ip else 'unknown address'})"
    return ""


@dataclass
class _Flight:
    spec: TrialSpec
    started: float
    lost: str | None = None
    """The node lost under this trial's first try (set when it runs a second time)."""


def _unscored(campaign: Campaign, spec: TrialSpec, started: float, cause: str, node: str | None) -> TrialResult:
    """The record of a trial whose Ray task ended without one: its node lost (`node`, fault 'machine'), or the
    task failed before the trial could record itself (None: fault 'harness')."""
    config = campaign.config
    return TrialResult(trial_id=spec.trial_id, run_id=config.run_id, task_id=spec.task.id,
                       task_digest=spec.task.digest(), pack=spec.task.pack, agent=config.agent, model=config.model,
                       seed=config.seed, attempt=spec.attempt, outcome="agent_error", detail=cause[:500],
                       fault=NODE_LOST if node is not None else "harness", fault_reason=cause[:300],
                       started_at=utc_now(), ended_at=utc_now(), duration_s=round(time.monotonic() - started, 3),
                       sandbox=campaign.backend_class.name, node=node or "")


def _write_folder(run_dir: Path, spec: TrialSpec, data: bytes) -> None:
    folder = run_dir / "trials" / trial_slot(spec.task.id, spec.attempt)
    if folder.exists():
        shutil.rmtree(folder)  # an earlier unscored attempt of the same trial
    folder.mkdir(parents=True)
    if data:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            tar.extractall(folder, filter="data")  # nothing in it may land outside the trial's folder


def resources(task: Task) -> dict[str, Any]:
    """The Ray resources one trial of `task` asks for: its `[limits]` cpus and memory, or what its `[environment]`
    gives the agent's container (a Harbor task's cpus and memory), whichever is more."""
    limits, env = task.meta.limits, task.meta.environment
    cpus = max(limits.cpus, env.cpus) if env is not None else limits.cpus
    memory_mb = max(limits.memory_mb or 0, env.memory_mb if env is not None else 0)
    asked: dict[str, Any] = {"num_cpus": cpus}
    if memory_mb:
        asked["memory"] = memory_mb * 1024 * 1024
    return asked


_joined: list[str] = []
"""The address this process joined: it stays joined, so that later runs (a campaign's) reuse the connection, the
shipped package and the nodes' warm workers; Ray leaves the cluster when the process exits."""
_join_lock = threading.Lock()


def join_cluster(address: str) -> None:
    """Connect this process to the cluster as a driver whose tasks run this package (staged, then uploaded by
    `ray.init`), unless it is connected already: by an earlier run to the same address, or by the Python
    caller, whose connection and runtime environment stand."""
    import ray

    with _join_lock:
        if ray.is_initialized():
            if not _joined or _joined[0] == address:
                return
            ray.shutdown()  # joined for an earlier run to another cluster
        _joined.clear()
        staging = Path(tempfile.mkdtemp(prefix="ae-ray-package-"))
        try:
            # working_dir rather than py_modules: with it Ray does not also put the driver's current folder
            # first on the workers' path, where a source checkout's own package would shadow the shipped one.
            ray.init(address=address, runtime_env={"working_dir": str(stage_package(staging).parent)},
                     logging_level=logging.WARNING, log_to_driver=False, configure_logging=False)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise AgenticEvalError(f"--ray {address}: cannot join the Ray cluster "
                                   f"({str(exc).splitlines()[0][:200]}); is `ray start --head` running there and "
                                   "reachable from here?") from None
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        _joined.append(address)


def execute_on_ray(campaign: Campaign, *, on_result: Callable[[TrialResult], None] | None = None,
                   on_start: Callable[[TrialSpec], None] | None = None,
                   cancel: threading.Event | None = None) -> list[TrialResult]:
    """Run the campaign's trials as Ray tasks on the cluster at `campaign.settings.ray_address`, at most `-j`
    in flight; each record is durable before `on_result` sees it. KeyboardInterrupt cancels the tasks in
    flight and re-raises: finished trials are on disk and the run resumes."""
    ray = import_ray()
    settings, plan = campaign.settings, campaign.plan
    cancel = cancel or threading.Event()
    log = TrialLog(plan.run_dir)
    results: list[TrialResult] = []
    join_cluster(str(settings.ray_address))
    remote = ray.remote(max_retries=0)(run_trial_on_node)  # a lost node's trial is retried here, said so
    bundles = _bundles(ray, plan.trials)
    backend_cls, backend_options = campaign.backend_class, dict(settings.sandbox.options)

    def submit(spec: TrialSpec) -> Any:
        key, bundle, path = bundles[spec.task.id]
        job = TrialJob(config=plan.config, trial_id=spec.trial_id, attempt=spec.attempt, task_id=spec.task.id,
                       pack=spec.task.pack, task_path=path, bundle_key=key, agent=campaign.agent,
                       options=campaign.options, backend_class=backend_cls, backend_options=backend_options)
        return remote.options(**resources(spec.task)).remote(job, bundle, campaign.endpoint)

    def finish(result: TrialResult) -> None:
        log.append(result)
        results.append(result)
        if on_result is not None:
            on_result(result)

    queue = list(reversed(plan.trials))
    flights: dict[Any, _Flight] = {}
    try:
        while (queue or flights) and not cancel.is_set():
            while queue and len(flights) < max(1, settings.jobs):
                spec = queue.pop()
                if on_start is not None:
                    on_start(spec)
                flights[submit(spec)] = _Flight(spec, time.monotonic())
            ready, _ = ray.wait(list(flights), num_returns=1, timeout=0.5)
            for ref in ready:
                landed = _landed(ray, ref, flights.pop(ref), campaign)
                if isinstance(landed, _Flight):  # its node lost: one more try, wherever Ray places it
                    flights[submit(landed.spec)] = landed
                elif landed is not None:
                    finish(landed)
    except KeyboardInterrupt:
        cancel.set()
        raise
    finally:
        for ref in flights:
            ray.cancel(ref, force=True)
    return results


def _bundles(ray: Any, trials: Sequence[TrialSpec]) -> dict[str, tuple[str, Any, str]]:
    """Each task's folder packed once and put in Ray's object store: task id -> (content key, object ref, path)."""
    bundles: dict[str, tuple[str, Any, str]] = {}
    for spec in trials:
        task = spec.task
        if task.id not in bundles:
            data = task_bundle(task)
            bundles[task.id] = (hashlib.sha256(data).hexdigest()[:24], ray.put(data),
                                f"{task.pack_dir.name or 'pack'}/{task.dir.name}")
    return bundles


def _landed(ray: Any, ref: Any, flight: _Flight, campaign: Campaign) -> TrialResult | _Flight | None:
    """What a finished Ray task gives its trial: the record (its folder written into the run), an unscored one
    when the task failed or its node was lost twice, a second flight when its node was lost the first time (the
    caller submits it), or None (cancelled, or no record: the run was interrupted there)."""
    import ray.exceptions as rex

    spec = flight.spec
    try:
        back: NodeReturn = ray.get(ref)
    except rex.TaskCancelledError:
        return None
    except rex.RayError as exc:
        node = _lost_node(exc)
        if node is not None and flight.lost is None:
            return _Flight(spec, flight.started, lost=node or "unknown")
        cause = (f"Ray node {node or 'unknown'} was lost mid-trial" if node is not None
                 else f"the trial's Ray task failed: {str(exc).splitlines()[0][:300]}")
        if flight.lost is not None:
            cause += f" (its first try was lost with node {flight.lost})"
        return _unscored(campaign, spec, flight.started, cause, node)
    if back.record is None:
        return None
    result = TrialResult.model_validate_json(back.record)
    if not result.task_digest:  # refused before the node could load the task
        result = result.model_copy(update={"task_digest": spec.task.digest()})
    if flight.lost is not None:
        note = f"ran again on node {back.node} after node {flight.lost} was lost mid-trial"
        result = result.model_copy(update={"detail": f"{result.detail}; {note}" if result.detail else note})
    _write_folder(campaign.plan.run_dir, spec, back.folder)
    return result
