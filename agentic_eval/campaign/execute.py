"""Running a campaign: check everything first, then every model's instruments and agent runs, resumably.

A campaign folder (`runs/<file's stem>/` by default) holds, per model,

    <model>/instruments/<kind>/<instrument run>   each with asked.json: the campaign settings it answers
    <model>/runs/<agent>[-sys<N>]/<run>           agent runs (`run`'s folders): one, or more when tasks were added

and campaign.json, what the last session asked (the report reads it, so `--report` needs no endpoint).
Running the same file again finds each part by its place: a run with unscored or missing trials is
resumed (`plan_resume`), tasks the file added run as a new run beside it, an instrument already recorded
with the same settings is kept; nothing scored runs twice. Models on different endpoints run side by side
(one thread per endpoint), each at its own `jobs`.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentic_eval.campaign.spec import CampaignSpec, ModelSpec, _did_you_mean, load_campaign, spec_model
from agentic_eval.errors import AgenticEvalError

if TYPE_CHECKING:
    from agentic_eval.endpoint import Endpoint
    from agentic_eval.local.server import LocalServer
    from agentic_eval.results.records import TrialResult

CAMPAIGN_FILE = "campaign.json"
ASKED_FILE = "asked.json"

Log = Callable[[str], None]


def slug(text: str) -> str:
    """A folder name for a model label (what a path may not hold replaced)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in text).strip(".") or "model"
    return safe[:80]


def agent_slot_name(agent: str, padding: int, emulate: str | None = None) -> str:
    """The slot's folder name: opencode, builtin-sys9300, opencode-emulate-hermes (`emulate_parser`)."""
    return agent + (f"-sys{padding}" if padding else "") + (f"-emulate-{slug(emulate)}" if emulate else "")


@dataclass(frozen=True)
class ModelEndpoint:
    """Where a model of the campaign is reached (None for a local model: its server starts when needed)."""

    spec: ModelSpec
    index: int
    base_url: str | None
    api_key: str | None = field(default=None, repr=False)

    @property
    def where(self) -> str:
        """How errors name this entry of the file: models[2] (name 'x')."""
        return f"models[{self.index + 1}] (name {self.spec.name!r})"


@dataclass
class CampaignPlan:
    """A checked campaign: the file, its folder, the tasks it runs, each model's endpoint, what is left."""

    file: Path
    spec: CampaignSpec
    folder: Path
    task_ids: list[str]
    task_paths: list[str] | None
    models: list[ModelEndpoint]
    work: dict[str, list[str]]
    """Model name -> what is left for it (readable items: 'tooling', 'builtin-sys9300: 3 of 14 tasks', ...)."""


@dataclass
class CampaignOutcome:
    """How a session of a campaign ended. `problems`: parts that could not run (an endpoint that died, ...),
    one line each; the same command runs them again."""

    folder: Path
    interrupted: bool = False
    problems: list[str] = field(default_factory=list)
    trials_run: int = 0
    left: dict[str, list[str]] = field(default_factory=dict)
    """Model -> what is still left once the session ended (unscored trials, parts that failed): the same
    call runs it."""


# ------------------------------------------------------------------------------------------------ checking


def _resolve_packs(spec: CampaignSpec, file: Path) -> list[str] | None:
    from agentic_eval.packs.task import named_packs

    if not spec.packs:
        return None
    named = named_packs()
    paths = []
    for entry in spec.packs:
        if entry in named:
            paths.append(str(named[entry]))
            continue
        path = (file.parent / Path(entry).expanduser()).resolve()
        if not path.is_dir():
            hint = _did_you_mean(entry, list(named))
            raise AgenticEvalError(f"{file}: packs: {entry!r} is neither a pack folder (relative to the file) nor a "
                                   f"built-in or installed pack{hint}; known packs: {', '.join(named) or 'none'}")
        paths.append(str(path))
    return paths


def _resolve_tasks(spec: CampaignSpec, file: Path) -> tuple[list[str], list[str] | None]:
    from agentic_eval.packs.task import load_tasks

    paths = _resolve_packs(spec, file)
    loaded = load_tasks(paths)
    known = [t.id for t in loaded.tasks]
    for wanted in spec.tasks:
        if wanted in known:
            continue
        if (broken := next((e for e in loaded.errors if e.task_folder == wanted), None)) is not None:
            raise AgenticEvalError(f"{file}: tasks: {wanted!r} did not load: {broken}")
        raise AgenticEvalError(f"{file}: tasks: unknown task {wanted!r}{_did_you_mean(wanted, known)} "
                               f"(see: agentic-eval tasks list{''.join(' --tasks ' + p for p in paths or [])})")
    ids = list(dict.fromkeys(spec.tasks)) or known
    if not ids:
        raise AgenticEvalError(f"{file}: packs: no task found in {', '.join(spec.packs) or 'the built-in packs'}")
    return ids, paths


def _api_key(model: ModelSpec, where: str, file: Path) -> str | None:
    from agentic_eval.endpoint import key_problem
    from agentic_eval.inputs import read_data_text

    if model.api_key_env:
        key = os.environ.get(model.api_key_env, "").strip()
        if not key:
            raise AgenticEvalError(f"{file}: {where}.api_key_env: the variable {model.api_key_env} is not set "
                                   f"(export {model.api_key_env}=... before running)")
    elif model.api_key_file:
        path = file.parent / Path(model.api_key_file).expanduser()
        text = read_data_text(path, what=f"{file}: {where}.api_key_file {path}", limit=64 * 1024)
        key = (text.splitlines() or [""])[0].strip()
        if not key:
            raise AgenticEvalError(f"{file}: {where}.api_key_file {path}: empty; write the key on its first line")
    else:
        return None
    if problem := key_problem(key):
        raise AgenticEvalError(f"{file}: {where}: the key {problem}")
    return key


def _check_endpoint(model: ModelEndpoint, file: Path) -> None:
    """The endpoint answers and lists the model (`endpoint.preflight`): else its line, naming the file and key."""
    from agentic_eval.endpoint import preflight, resolve_endpoint
    from agentic_eval.errors import ModelNotServedError

    try:
        preflight(resolve_endpoint(model.base_url, model.api_key), model.spec.name)
    except ModelNotServedError as exc:
        raise AgenticEvalError(f"{file}: {model.where}.name: {exc}") from None
    except AgenticEvalError as exc:
        raise AgenticEvalError(f"{file}: {model.where}.base_url: {in_file_terms(str(exc))}") from None


def _check_local(model: ModelEndpoint, file: Path) -> None:
    from agentic_eval.local.server import require_xllamacpp

    try:
        require_xllamacpp()
    except AgenticEvalError as exc:
        raise AgenticEvalError(f"{file}: {model.where}.local: {exc}") from None
    if model.spec.gguf and not (file.parent / Path(model.spec.gguf).expanduser()).is_file():
        raise AgenticEvalError(f"{file}: {model.where}.gguf: no such file {model.spec.gguf}")


def default_folder(file: str | Path, runs_root: str | Path = "runs") -> Path:
    """Where a campaign file's results go unless told: <runs_root>/<the file's name without .toml>."""
    return Path(runs_root) / slug(Path(file).stem)


def plan_campaign(file: str | Path, folder: str | Path | None = None, *, spec: CampaignSpec | None = None
                  ) -> CampaignPlan:
    """Read and check the campaign (one AgenticEvalError line naming the file and key for any mistake:
    unknown keys, agents, tasks or packs, a key variable not set, an endpoint down or not listing its
    model), and find what is left to do. Endpoints are asked only for models with work left."""
    from agentic_eval.agents.base import load_agent

    file = Path(file)
    spec = spec or load_campaign(file)
    folder = Path(folder) if folder is not None else default_folder(file)
    for agent in spec.agents:
        try:
            load_agent(agent)
        except AgenticEvalError as exc:
            raise AgenticEvalError(f"{file}: agents: {exc}") from None
    task_ids, task_paths = _resolve_tasks(spec, file)
    if spec.ray_address and spec.agents:  # a cluster where none answers: one line now, not one per agent run
        from agentic_eval.runner.cluster import check_ray_address, import_ray
        from agentic_eval.runner.cluster_probe import probe_cluster

        try:
            import_ray()
            probe_cluster(check_ray_address(spec.ray_address))
        except AgenticEvalError as exc:
            raise AgenticEvalError(f"{file}: ray_address: {exc}") from None
    models = []
    for i, m in enumerate(spec.models):
        where = f"models[{i + 1}] (name {m.name!r})"
        models.append(ModelEndpoint(m, i, None if m.local else m.base_url, _api_key(m, where, file)))
    plan = CampaignPlan(file=file, spec=spec, folder=folder, task_ids=task_ids, task_paths=task_paths,
                        models=models, work={})
    for model in models:
        plan.work[model.spec.name] = work_left(plan, model.spec)
        if not plan.work[model.spec.name]:
            continue
        if model.spec.local:
            _check_local(model, file)
        else:
            _check_endpoint(model, file)
    return plan


# ------------------------------------------------------------------------------------------------ state


def instrument_options(spec: CampaignSpec, kind: str) -> dict[str, object]:
    """What an instrument run of the campaign is asked (asked.json: a recorded run answers it when equal)."""
    return {"kind": kind, "options": spec.options(kind).asked()}


def instrument_runs(folder: Path, model: str, kind: str, asked: dict[str, object]) -> list[Path]:
    """The recorded instrument runs of `model` under the campaign that answer `asked`, oldest first."""
    slot = folder / slug(model) / "instruments" / kind
    found = []
    for run in sorted(slot.glob("*/instrument.json")) if slot.is_dir() else []:
        try:
            if json.loads((run.parent / ASKED_FILE).read_text(encoding="utf-8")) == asked:
                found.append(run.parent)
        except (OSError, ValueError):
            continue
    return found


def runs_wanted(spec: CampaignSpec, kind: str) -> int:
    return spec.options(kind).runs_wanted()


@dataclass(frozen=True)
class AgentPart:
    """One recorded agent run of a campaign slot, and whether it measured what the file asks."""

    run_dir: Path
    task_ids: tuple[str, ...]
    matches: bool
    complete: bool
    sandbox: str | None = None
    """The sandbox backend it recorded."""


def agent_parts(plan_spec: CampaignSpec, folder: Path, model: str, agent: str, padding: int,
                emulate: str | None = None) -> list[AgentPart]:
    """The agent runs recorded for (model, agent, padding, emulated parser): those with the file's seed and
    attempts match."""
    from agentic_eval.results.records import latest_by_trial
    from agentic_eval.results.run_folder import read_run_config
    from agentic_eval.results.trial_log import read_trials

    slot = folder / slug(model) / "runs" / agent_slot_name(agent, padding, emulate)
    parts = []
    for run_json in sorted(slot.glob("*/run.json")) if slot.is_dir() else []:
        try:
            config = read_run_config(run_json.parent)
            records, _ = read_trials(run_json.parent)
        except AgenticEvalError:
            continue
        matches = (config.agent == agent and config.seed == plan_spec.seed and config.attempts == plan_spec.attempts
                   and (config.system_prompt_tokens or 0) == padding and config.emulate_parser == emulate
                   and dict(config.agent_options) == plan_spec.options_of(agent))
        scored = {(t.task_id, t.attempt) for t in latest_by_trial(records).values() if t.scored}
        complete = all((task, a) in scored for task in config.task_ids for a in range(1, config.attempts + 1))
        parts.append(AgentPart(run_json.parent, tuple(config.task_ids), matches, complete, config.sandbox))
    return parts


def agent_slots(spec: CampaignSpec) -> list[tuple[str, int, str | None]]:
    """(agent, padding, emulated parser) of every agent run the file asks for: with `emulate_parser`, each agent
    run twice, plain and with the parser emulated (the what-if run)."""
    emulations = [None, spec.emulate_parser] if spec.emulate_parser else [None]
    return [(agent, padding, emulate) for agent in spec.agents for padding in spec.paddings(agent)
            for emulate in emulations]


def work_left(plan: CampaignPlan, model: ModelSpec) -> list[str]:
    """What is left to run for `model`, one readable item each; [] when everything is recorded."""
    left = []
    for kind in plan.spec.kinds():
        have = len(instrument_runs(plan.folder, model.name, kind, instrument_options(plan.spec, kind)))
        if have < runs_wanted(plan.spec, kind):
            left.append(kind)
    for agent, padding, emulate in agent_slots(plan.spec):
        parts = [p for p in agent_parts(plan.spec, plan.folder, model.name, agent, padding, emulate) if p.matches]
        covered = {t for p in parts for t in p.task_ids}
        missing = [t for t in plan.task_ids if t not in covered]
        unfinished = [p for p in parts if not p.complete and set(p.task_ids) & set(plan.task_ids)]
        if missing or unfinished:
            what = ([f"{len(missing)} task(s) to start"] if missing else []) + \
                ([f"{len(unfinished)} run(s) with unscored or missing trials"] if unfinished else [])
            left.append(f"{agent_slot_name(agent, padding, emulate)}: {', '.join(what)}")
    return left


def write_campaign_record(plan: CampaignPlan) -> None:
    """campaign.json: what this session asks (the report reads it); credentials in a base_url redacted,
    as in run.json."""
    from agentic_eval.endpoint import redact_url

    plan.folder.mkdir(parents=True, exist_ok=True)
    spec = plan.spec.model_dump(mode="json", by_alias=True)
    for model in spec["models"]:
        if model.get("base_url"):
            model["base_url"] = redact_url(model["base_url"])
    record = {"format_version": 1, "file": str(plan.file.resolve()), "task_ids": plan.task_ids, "spec": spec}
    tmp = plan.folder / (CAMPAIGN_FILE + ".tmp")
    tmp.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, plan.folder / CAMPAIGN_FILE)


def read_campaign_record(folder: Path) -> tuple[CampaignSpec, list[str]]:
    """The spec and task ids a campaign folder's last session asked."""
    path = folder / CAMPAIGN_FILE
    if not path.is_file():
        raise AgenticEvalError(f"{folder}: not a campaign folder (no {CAMPAIGN_FILE}); run the campaign first: "
                               "agentic-eval campaign FILE.toml")
    from agentic_eval.inputs import read_data_text

    try:
        data = json.loads(read_data_text(path, what=str(path), limit=10_000_000))
        return spec_model().model_validate(data["spec"]), [str(t) for t in data["task_ids"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise AgenticEvalError(f"{path}: unreadable ({type(exc).__name__}); run the campaign again to rewrite it"
                               ) from None


# ------------------------------------------------------------------------------------------------ running


@dataclass
class _Session:
    """What every part of one session shares."""

    plan: CampaignPlan
    log: Log
    on_result: Callable[[str, TrialResult], None] | None
    cancel: threading.Event
    outcome: CampaignOutcome
    lock: threading.Lock = field(default_factory=threading.Lock)

    def problem(self, text: str) -> None:
        with self.lock:
            self.outcome.problems.append(text)
        self.log(f"problem: {text}")


def _run_instrument(session: _Session, kind: str, model: ModelSpec, served: str, endpoint: Endpoint) -> None:
    """Run the instrument until the model has the runs the file wants of it, each recorded with asked.json."""
    from agentic_eval.instruments.registry import entry
    from agentic_eval.results.instrument_runs import read_instrument_run

    spec, folder = session.plan.spec, session.plan.folder
    asked = instrument_options(spec, kind)
    slot = folder / slug(model.name) / "instruments" / kind
    instrument = entry(kind).load_campaign()
    while len(instrument_runs(folder, model.name, kind, asked)) < runs_wanted(spec, kind):
        if session.cancel.is_set():
            return
        session.log(f"{model.name}: {kind} ...")
        run_dir = instrument.measure(endpoint, served, spec.options(kind), slot,
                                     lambda text: session.log(f"{model.name}: {text}"))
        (run_dir / ASKED_FILE).write_text(json.dumps(asked) + "\n", encoding="utf-8")
        session.log(f"{model.name}: {kind}: {read_instrument_run(run_dir).headline_text}")


_FLAGS_IN_FILE = {"pass --base-image suite": 'set base_image = "suite" in the campaign file',
                  "use --sandbox docker": 'set sandbox = "docker" (or base_image = "suite") in the campaign file',
                  "start the server or pass --base-url": "start the server or fix base_url",
                  "use --base-url ": "set base_url = ", "try --base-url ": "try base_url = ",
                  "pass the right key with --api-key-file, OPENAI_API_KEY or --api-key":
                      "give the right key through api_key_env or api_key_file"}
"""`run`'s advice in an error, as a campaign file takes it."""


def in_file_terms(text: str) -> str:
    """An error's advice to pass a flag of `run` said as the campaign file's key."""
    for flag, key in _FLAGS_IN_FILE.items():
        text = text.replace(flag, key)
    return text


def _resumed_sandbox(spec: CampaignSpec, part: AgentPart) -> Any:
    """A resumed run keeps the sandbox it recorded; the file's sandbox options go with it when the file names that
    backend (a run recorded on another sandbox resumes there, without them)."""
    from agentic_eval.runner.settings import SandboxChoice

    choice = spec.sandbox_choice()
    return SandboxChoice(None, choice.options if part.sandbox == choice.name else {})


def _run_agent_slot(session: _Session, model: ModelEndpoint, agent: str, padding: int, emulate: str | None,
                    server: LocalServer | None) -> None:
    """Resume the slot's unfinished runs, then start one for the tasks no run of it covers."""
    from agentic_eval.runner import RunSettings, plan_resume, plan_start

    plan, spec = session.plan, session.plan.spec
    slot = plan.folder / slug(model.spec.name) / "runs" / agent_slot_name(agent, padding, emulate)
    label = f"{model.spec.name} / {agent_slot_name(agent, padding, emulate)}"
    parts = [p for p in agent_parts(spec, plan.folder, model.spec.name, agent, padding, emulate) if p.matches]
    how: dict[str, Any] = {"base_url": model.base_url, "api_key": model.api_key, "jobs": model.spec.jobs,
                           "tasks": plan.task_paths, "runs_root": slot, "ray_address": spec.ray_address,
                           "agent_timeout_s": spec.agent_timeout_s}

    def log(text: str, style: str | None = None) -> None:
        session.log(f"{label}: {in_file_terms(text)}")  # an unbuildable task's advice, as the file says it

    campaigns = [plan_resume(p.run_dir, {**how, "sandbox": _resumed_sandbox(spec, p)}, local_server=server, log=log)
                 for p in parts if not p.complete and set(p.task_ids) & set(plan.task_ids)]
    covered = {t for p in parts for t in p.task_ids}
    missing = [t for t in plan.task_ids if t not in covered]
    if missing:
        sandbox = spec.sandbox_choice()
        settings = RunSettings.of(model=server.model if server is not None else model.spec.name, agent=agent,
                                  seed=spec.seed, attempts=spec.attempts, system_prompt_tokens=padding or None,
                                  emulate_parser=emulate, task_ids=missing, sandbox=sandbox,
                                  agent_options=spec.options_of(agent) or None, **how)
        campaigns.append(plan_start(settings, local_server=server, log=log))
    for campaign in campaigns:
        if session.cancel.is_set():
            return

        def seen(result: TrialResult) -> None:
            with session.lock:
                session.outcome.trials_run += 1
            if session.on_result is not None:
                session.on_result(label, result)

        campaign.execute(on_result=seen, cancel=session.cancel)


def _run_model(session: _Session, model: ModelEndpoint) -> None:
    """Everything left for one model; a failure of one part is a problem line, and the next part runs."""
    from agentic_eval.endpoint import resolve_endpoint

    if not work_left(session.plan, model.spec) or session.cancel.is_set():
        return
    server = None
    try:
        if model.spec.local:
            from agentic_eval.local.server import LocalServer

            gguf = session.plan.file.parent / Path(model.spec.gguf).expanduser() if model.spec.gguf else None
            session.log(f"{model.spec.name}: starting the local model on 127.0.0.1 (ctx {model.spec.ctx}) ...")
            server = LocalServer(gguf=gguf, ctx=model.spec.ctx, log=session.log).start()
        served = server.model if server is not None else model.spec.name
        endpoint = resolve_endpoint(server.base_url if server is not None else model.base_url, model.api_key)
        parts: list[tuple[str, Callable[[], None]]] = [
            (kind, lambda kind=kind: _run_instrument(session, kind, model.spec, served, endpoint))  # type: ignore[misc]
            for kind in session.plan.spec.kinds()]
        parts += [(agent_slot_name(agent, padding, emulate),
                   lambda agent=agent, padding=padding, emulate=emulate: _run_agent_slot(  # type: ignore[misc]
                       session, model, agent, padding, emulate, server))
                  for agent, padding, emulate in agent_slots(session.plan.spec)]
        for name, part in parts:
            if session.cancel.is_set():
                return
            try:
                part()
            except AgenticEvalError as exc:
                session.problem(f"{model.spec.name} / {name}: {in_file_terms(str(exc))}")
            except KeyboardInterrupt:
                session.cancel.set()
                return
            except Exception as exc:  # noqa: BLE001 - one part's failure never ends the campaign
                session.problem(f"{model.spec.name} / {name}: {type(exc).__name__}: {exc}")
    except AgenticEvalError as exc:
        session.problem(f"{model.spec.name}: {exc}")
    finally:
        if server is not None:
            server.stop()


def _endpoint_groups(plan: CampaignPlan) -> list[list[ModelEndpoint]]:
    """Models sharing an endpoint run one after another; different endpoints (and each local model) side by side."""
    groups: dict[str, list[ModelEndpoint]] = {}
    for m in plan.models:
        key = f"local:{m.index}" if m.spec.local else (m.base_url or "")
        groups.setdefault(key, []).append(m)
    return list(groups.values())


def run_campaign(file: str | Path, folder: str | Path | None = None, *, log: Log | None = None,
                 on_result: Callable[[str, TrialResult], None] | None = None, plan: CampaignPlan | None = None
                 ) -> CampaignOutcome:
    """Check the campaign file (`plan_campaign`), then run what is left of it under `folder` (default
    runs/<file's stem>); the same call again resumes. `on_result(label, trial)` sees each agent trial once
    it is on disk. Ctrl-C stops it cleanly: `interrupted`, finished trials and instrument runs kept."""
    plan = plan or plan_campaign(file, folder)
    say = log or (lambda text: None)
    write_campaign_record(plan)
    session = _Session(plan=plan, log=say, on_result=on_result, cancel=threading.Event(),
                       outcome=CampaignOutcome(folder=plan.folder))
    threads = []
    for group in _endpoint_groups(plan):
        def work(group: list[ModelEndpoint] = group) -> None:
            for model in group:
                _run_model(session, model)

        thread = threading.Thread(target=work, name=f"campaign-{group[0].spec.name}", daemon=True)
        thread.start()
        threads.append(thread)
    try:
        for thread in threads:
            while thread.is_alive():
                thread.join(0.2)
    except KeyboardInterrupt:
        session.cancel.set()
        session.outcome.interrupted = True
        say("stopping: running trials are cancelled, finished ones kept ...")
        for thread in threads:
            while thread.is_alive():
                thread.join(0.2)
    if session.cancel.is_set():
        session.outcome.interrupted = True
    session.outcome.left = {m.spec.name: w for m in plan.models if (w := work_left(plan, m.spec))}
    return session.outcome
