"""Planning a run and the rules it follows: what `agentic-eval run` and `start_run`/`resume_run` check
before any trial (builtin-only options, the agent's `check_options`, the backend's refusal of the agent,
grader requirements, the endpoint's preflight), a new run folder claimed atomically or a recorded run
reopened with the settings it keeps.

`plan_start(settings)` / `plan_resume(run, given)` do the checks and claim the run without running it: a
`Campaign`, whose `execute` runs the trials with callbacks (what the CLI's progress display uses).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentic_eval.agents.base import Agent, AgentOptions
from agentic_eval.confine.backend import SandboxBackend
from agentic_eval.endpoint import Endpoint
from agentic_eval.errors import AgenticEvalError
from agentic_eval.packs.task import Task, environment_tasks
from agentic_eval.plural import counted
from agentic_eval.results.records import RunConfig, TrialResult, utc_now
from agentic_eval.results.run_folder import RunPlan, TrialSpec, pack_infos, versions
from agentic_eval.runner.settings import RunSettings
from agentic_eval.runner.trial import execute_plan

if TYPE_CHECKING:
    from agentic_eval.local.server import LocalServer

Log = Callable[..., None]
"""`log(text, style=None)`: where a campaign's messages go (skipped tasks, warnings, the header); the
style is a hint for a terminal ("bold red" for an unconfined sandbox nobody asked for)."""

MODEL_FREE_RUN_MODEL = "none"
"""The model a run of a model-free agent (oracle, nop) records when no model was given."""


@dataclass
class Campaign:
    """A run ready to execute: its plan (folder, config, trials still to run, the run's lock held), its
    settings, and what runs it. `execute` runs the trials; `start_run` and `resume_run` do both steps."""

    plan: RunPlan
    settings: RunSettings
    agent: Agent
    endpoint: Endpoint
    tasks: list[Task]
    backend: SandboxBackend | None
    """The run's backend; None under `--ray`, where each node makes its own (`backend_class`, the run's options)."""
    backend_class: type[SandboxBackend]
    unbuildable: dict[str, str] = field(default_factory=dict)
    """Tasks whose image did not build (task id -> why, one line): their trials end unscored, the others run."""

    @property
    def run_dir(self) -> Path:
        return self.plan.run_dir

    @property
    def config(self) -> RunConfig:
        return self.plan.config

    @property
    def options(self) -> AgentOptions:
        """The agent's options, with the run's own time limit for it (`--agent-timeout`) when one was given."""
        if self.settings.agent_timeout_s is None:
            return self.settings.agent_options
        return replace(self.settings.agent_options, agent_timeout_s=self.settings.agent_timeout_s)

    @property
    def jobs(self) -> int:
        return self.settings.jobs

    def execute(self, *, on_result: Callable[[TrialResult], None] | None = None,
                on_start: Callable[[TrialSpec], None] | None = None,
                cancel: threading.Event | None = None) -> list[TrialResult]:
        """Run the planned trials (see `execute_plan`, or `execute_on_ray` with `--ray`; KeyboardInterrupt
        propagates, finished trials kept). The run's lock is released when it returns."""
        try:
            if self.settings.ray_address:
                from agentic_eval.runner.cluster import execute_on_ray

                return execute_on_ray(self, on_result=on_result, on_start=on_start, cancel=cancel)
            return execute_plan(self.plan, agent=self.agent, endpoint=self.endpoint, options=self.options,
                                jobs=self.jobs, on_result=on_result, on_start=on_start, cancel=cancel,
                                keep_sandboxes=self.settings.keep_sandboxes, backend=self.backend)
        finally:
            try:
                if self.backend is not None:  # the run is over: its containers, threads and engine connections go
                    self.backend.close_all()  # now, not at exit (a process may run many runs: campaign, the API)
            finally:
                self.plan.release()


def make_run_config(settings: RunSettings, *, run_id: str, endpoint: Endpoint, tasks: list[Task],
                    sandbox: str = "") -> RunConfig:
    """run.json's contents for a new run of `settings` (`sandbox`: the backend's name, as resolved)."""
    options = settings.agent_options
    return RunConfig(
        run_id=run_id, created_at=utc_now(), model=settings.model or "", agent=settings.agent,
        base_url=endpoint.base_url, seed=settings.seed, attempts=settings.attempts, jobs=settings.jobs,
        task_ids=[t.id for t in tasks], task_paths=list(settings.tasks or ()), packs=pack_infos(tasks),
        system_prompt_tokens=options.system_prompt_tokens, lenient_text_calls=options.lenient_text_calls,
        stream=options.stream, emulate_parser=options.emulate_parser, agent_options=dict(options.extra),
        sandbox=sandbox, versions=versions(),
    )


def _quiet(text: str, style: str | None = None) -> None:
    return None


def _builtin_only_check(settings: RunSettings) -> None:
    """The builtin agent's options given to another agent are an error, not ignored."""
    options = settings.agent_options
    given = [flag for flag, value in (("--system-prompt-tokens", options.system_prompt_tokens),
                                      ("--lenient-text-calls", options.lenient_text_calls),
                                      ("--stream", options.stream)) if value]
    if given and settings.agent != "builtin":
        raise AgenticEvalError(f"{', '.join(given)}: only the builtin agent has "
                               f"{'this option' if len(given) == 1 else 'these options'}; "
                               f"drop {'it' if len(given) == 1 else 'them'} or use --agent builtin")


def plan_start(settings: RunSettings | None = None, /, *, local_server: LocalServer | None = None,
               log: Log | None = None,
               **keywords: Any) -> Campaign:
    """Check everything and claim a new run folder under `settings.runs_root`; nothing runs yet. The
    settings: a `RunSettings`, or its keywords (`RunSettings.of`)."""
    from agentic_eval.agents.base import load_agent

    if settings is None:
        settings = RunSettings.of(**keywords)
    elif keywords:
        raise TypeError("give a RunSettings or its keywords, not both")

    if local_server is not None and not settings.model:
        settings = replace(settings, model=local_server.model)
    settings = replace(settings, agent=settings.agent or "builtin")
    if not settings.model and not load_agent(settings.agent).uses_model:
        settings = replace(settings, model=MODEL_FREE_RUN_MODEL)
    if not settings.model:
        raise AgenticEvalError("--model is required (the model name your endpoint serves), or --resume RUN, "
                               "or --local")
    _builtin_only_check(settings)
    return _campaign(None, None, settings, local_server=local_server, log=log or _quiet)


def plan_resume(run: str | Path, given: Mapping[str, Any] | None = None, /, *,
                local_server: LocalServer | None = None,
                log: Log | None = None, **keywords: Any) -> Campaign:
    """Reopen a run (its folder, or its id under `given["runs_root"]`) to rerun its unscored and missing
    trials.

    Its settings come from its run.json (`RunSettings.recorded`); `given` holds what this session was
    given, as `RunSettings.of` keywords: a setting the run measures must equal the recorded one (see
    `RunSettings.resumed_with`). `tasks` may point at the packs' new place (the tasks' digests still decide
    which trials stand); keywords add to `given`. It goes back to the endpoint it recorded unless
    `base_url` (or `local_server`) says otherwise; a key is never stored, so give `api_key` again."""
    from agentic_eval.results.run_folder import read_run_config, resolve_agent_run

    given = {**(given or {}), **keywords}
    run_dir = resolve_agent_run(run, Path(given.get("runs_root") or "runs"), to="resume")
    config = read_run_config(run_dir)
    try:
        settings = RunSettings.recorded(config).resumed_with(given)
    except AgenticEvalError as exc:
        raise AgenticEvalError(str(exc).replace("this run", f"run {config.run_id}", 1)) from None
    return _campaign(run_dir, config, settings, local_server=local_server, log=log or _quiet)


def _campaign(run_dir: Path | None, config: RunConfig | None, settings: RunSettings, *,
              local_server: LocalServer | None, log: Log) -> Campaign:
    """The checks and preparation a new run and a resumed one share (`config` None: a new run)."""
    from agentic_eval.agents.base import load_agent
    from agentic_eval.confine.registry import resolve_backend
    from agentic_eval.endpoint import preflight, resolve_endpoint
    from agentic_eval.grading.grader import check_grader_requirements
    from agentic_eval.leftovers import clean_dead_runs
    from agentic_eval.packs.task import load_tasks, select_tasks

    if settings.ray_address:  # before anything is claimed: Ray installed, an address it takes, a cluster there
        settings = _checked_ray(settings)
    agent = load_agent(settings.agent)
    backend: SandboxBackend | None = None
    if settings.ray_address:  # made on each node, not here
        from agentic_eval.runner.cluster import nodes_backend

        backend_cls, warning = nodes_backend(settings.sandbox, agent)
    else:
        backend, warning = resolve_backend(settings.sandbox.name, settings.sandbox.options, agent)
        backend_cls = type(backend)
    if warning:
        log(warning, style="bold red" if settings.sandbox.name is None else "yellow")
    agent.check_options(dict(settings.agent_options.extra))
    loaded = load_tasks(list(settings.tasks) if settings.tasks else None)
    for err in loaded.errors:
        log(f"skipped task: {err}")
    tasks = select_tasks(loaded.tasks, list(settings.task_ids), loaded.errors)
    if not tasks:
        raise AgenticEvalError("no tasks to run (check --tasks and --task)")
    check_grader_requirements([t for t in tasks if t.verifier == "script"])  # before any trial: a grader that
    # cannot run would grade every trial wrong; a reward verifier runs in its task's own image
    own_env = [t.id for t in tasks if t.meta.environment is not None]
    if own_env and agent.program is not None:  # its program and home are this machine's
        raise AgenticEvalError(f"{own_env[0]}{' and others' if len(own_env) > 1 else ''}: agent {settings.agent!r} "
                               "(a CLI) does not run in a task's own environment yet; use the builtin agent, or leave "
                               "those tasks out with --task")
    # environment tasks: refused, or images built, first (under --ray on the nodes, by each trial)
    unbuildable = (backend.prepare_tasks(environment_tasks(tasks), log) if backend is not None else None) or {}
    # A resumed run goes back to the endpoint it recorded, unless base_url (or a local server) says otherwise.
    recorded_url = config.base_url if config is not None and not config.local else None
    endpoint = resolve_endpoint(local_server.base_url if local_server is not None
                                else (settings.base_url or recorded_url), settings.api_key)
    model = settings.model or ""
    if agent.uses_model:
        preflight(endpoint, model)
    if settings.ray_address:  # joined before a run folder is claimed: a cluster that refuses us leaves none
        from agentic_eval.runner.cluster import join_cluster

        join_cluster(settings.ray_address)
    plan = _run_folder(run_dir, config, settings, endpoint=endpoint, tasks=tasks, sandbox=backend_cls.name,
                       local_server=local_server, log=log)
    if cleaned := clean_dead_runs().describe():  # sandboxes and processes a killed run left behind
        log(cleaned)
    log(_announcement(plan, settings, len(tasks), model=model if agent.uses_model else None,
                      at=endpoint.shown_url, sandbox=backend_cls.name))
    log(f"results: {plan.run_dir}")
    return Campaign(plan=plan, settings=settings, agent=agent, endpoint=endpoint, tasks=list(tasks), backend=backend,
                    backend_class=backend_cls, unbuildable=unbuildable)


def _checked_ray(settings: RunSettings) -> RunSettings:
    """`--ray`, checked before anything is claimed: Ray installed, an address it takes, a cluster there."""
    from agentic_eval.runner.cluster import check_ray_address, import_ray
    from agentic_eval.runner.cluster_probe import probe_cluster

    import_ray()
    address = check_ray_address(settings.ray_address or "")
    probe_cluster(address)  # in seconds: ray.init where nothing answers hangs for minutes
    if settings.keep_sandboxes:
        raise AgenticEvalError("--keep-sandboxes keeps sandboxes on this machine, --ray runs them on the "
                               "cluster's nodes: drop one")
    return replace(settings, ray_address=address)


def _run_folder(run_dir: Path | None, config: RunConfig | None, settings: RunSettings, *, endpoint: Endpoint,
                tasks: Sequence[Task], sandbox: str, local_server: LocalServer | None, log: Log) -> RunPlan:
    """The run's folder and plan: a resumed run's (`config` given: its changed tasks and torn records said), or a
    new one claimed under `runs_root` with its run.json."""
    from agentic_eval.results.run_folder import changed_tasks, claim_run_dir, new_run_id, prepare_run
    from agentic_eval.results.trial_log import read_trials

    if config is not None and run_dir is not None:
        config = config.model_copy(update={"base_url": endpoint.shown_url})
        for task_id in changed_tasks(run_dir, tasks):
            log(f"warning: task {task_id} changed since this run recorded it (its files differ): its "
                "trials run again, and the report counts the new ones")
        plan = prepare_run(run_dir, config, tasks, resume=True)
        for w in read_trials(run_dir)[1]:  # torn records: their trials are in the plan again
            log(f"warning: {w}")
        return plan
    run_dir = claim_run_dir(settings.runs_root, new_run_id(settings.model or "", settings.agent))
    config = make_run_config(settings, run_id=run_dir.name, endpoint=endpoint, tasks=list(tasks), sandbox=sandbox)
    if local_server is not None:
        gguf = getattr(local_server, "gguf", None)
        config = config.model_copy(update={"local": True, "local_ctx": getattr(local_server, "ctx", None),
                                           "local_gguf": str(Path(gguf).resolve()) if gguf else None})
    return prepare_run(run_dir, config, tasks, resume=False)


def _announcement(plan: RunPlan, settings: RunSettings, tasks: int, *, model: str | None, at: str,
                  sandbox: str) -> str:
    """The line that starts a run: its trials, agent, model (None: an agent that calls none), jobs, sandbox."""
    config = plan.config
    return (f"run {config.run_id}: {counted(len(plan.trials), 'trial')} "
            f"({counted(tasks, 'task')} x {counted(config.attempts, 'attempt')}"
            + (f", {plan.skipped} already scored" if plan.skipped else "")
            + f"), agent {settings.agent}, "
            + (f"model {model} at {at}" if model is not None else "no model calls")
            + f", -j {settings.jobs}, sandbox {sandbox}"
            + (f" on the nodes of Ray cluster {settings.ray_address}" if settings.ray_address else "")
            + (f"; parser emulated: {settings.agent_options.emulate_parser} (a what-if run: the agent gets the calls "
               "it reads in the endpoint's text as structured calls)" if settings.agent_options.emulate_parser else ""))
