"""The campaign runner: every (task, attempt) as a trial, graded by script, recorded durably.

One trial: fresh sandbox -> wire recorder in front of the endpoint -> agent ->
snapshot of the final tree (diff.patch, tree.json) -> grader -> turn
classification of the wire log -> one record appended to trials.jsonl. Trials run concurrently (`jobs`), each in its own
sandbox. One trial's failure never ends the campaign; Ctrl-C cancels running
agents, keeps finished trials, and leaves the run resumable.

From Python, a campaign starts and resumes with the same rules `agentic-eval run` follows (resume
keeps the run's settings, builtin-only options, the agent's `check_options`, grader requirements,
the endpoint's preflight, a fresh run folder claimed atomically); bad input raises AgenticEvalError:

    from agentic_eval.runner import resume_run, start_run

    done = start_run(model="qwen3-coder", base_url="http://localhost:8000/v1", tasks=["packs/mine"],
                     attempts=3, jobs=4)
    print(done.run_dir, done.passed, done.scored, done.outcomes)   # a RunOutcome
    if done.interrupted or done.scored < sum(done.outcomes.values()):
        resume_run(done.run_dir, base_url="http://localhost:8001/v1")  # unscored trials again

`plan_start` / `plan_resume` do the checks and claim the run without running it (a `Campaign`,
whose `execute` runs the trials with callbacks: what the CLI's progress display uses).
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from agentic_eval import __version__
from agentic_eval.packs import gitsafe
from agentic_eval.packs.snapshot import take_snapshot
from agentic_eval.agents.base import AGENT_VERSION_FILE, Agent, AgentContext, AgentOptions, AgentOutcome
from agentic_eval.packs.builtin import graders_dir
from agentic_eval.confine.backend import SandboxBackend, default_backend
from agentic_eval.endpoint import Endpoint, auth_headers, scrub, url_secrets
from agentic_eval.errors import AgenticEvalError
from agentic_eval.faults import WireEnd, exception_fault, rule_agent_end, wire_end
from agentic_eval.packs.grader import ScriptRunner, Verdict
from agentic_eval.leftovers import mark_trial_folder
from agentic_eval.results import (
    Outcome,
    PackInfo,
    RunConfig,
    TrialLog,
    TrialResult,
    latest_by_trial,
    read_trials,
    trial_id,
    trial_slot,
    utc_now,
    versions,
    write_run_config,
)
from agentic_eval.packs.sandbox import materialize_sandbox
from agentic_eval.packs.task import Task
from agentic_eval.classify.summary import summarize_wire_log

AGENT_STATUS_TO_OUTCOME: dict[str, Outcome] = {
    "timeout": "agent_timeout",
    "endpoint_error": "endpoint_error",
    "agent_error": "agent_error",
}
"""The unscored outcome each agent status can end in; whether it does is `agentic_eval.faults.rule_agent_end`'s
call: an end the model caused (its time run out in its own commands, a context it filled, its CLI killed from
inside) is graded instead."""


@dataclass(frozen=True)
class TrialSpec:
    task: Task
    attempt: int
    trial_id: str


@dataclass
class RunPlan:
    """What a run will do: its folder, its config, and the trials still to run."""

    run_dir: Path
    config: RunConfig
    trials: list[TrialSpec]
    skipped: int = 0
    """Trials already scored in an earlier session of this run (resume)."""
    lock: Any = None
    """The run's lock file, held while this plan lives."""


@dataclass
class RunProgress:
    """Counts the progress display reads; updated from worker threads."""

    total: int = 0
    done: int = 0
    passed: int = 0
    failed: int = 0
    unscored: int = 0
    running: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, result: TrialResult) -> None:
        with self.lock:
            self.done += 1
            self.running -= 1
            if result.outcome == "pass":
                self.passed += 1
            elif result.outcome == "fail":
                self.failed += 1
            else:
                self.unscored += 1


def plan_trials(tasks: Sequence[Task], agent: str, model: str, seed: int, attempts: int) -> list[TrialSpec]:
    specs = []
    for task in tasks:
        digest = task.digest()
        for attempt in range(1, attempts + 1):
            specs.append(TrialSpec(task, attempt, trial_id(digest, agent, model, seed, attempt)))
    return specs


def pending_trials(run_dir: Path, specs: list[TrialSpec]) -> tuple[list[TrialSpec], int]:
    """The trials of `specs` without a scored record in the run: missing and unscored ones are rerun."""
    records, _ = read_trials(run_dir)
    latest = latest_by_trial(records)

    def done(spec: TrialSpec) -> bool:
        record = latest.get(trial_slot(spec.task.id, spec.attempt))
        return record is not None and record.trial_id == spec.trial_id and record.scored

    todo = [s for s in specs if not done(s)]
    return todo, len(specs) - len(todo)


def changed_tasks(run_dir: Path, tasks: Sequence[Task]) -> list[str]:
    """Ids of tasks whose files changed since the run recorded trials of them (their digest differs)."""
    records, _ = read_trials(run_dir)
    recorded = {r.task_id: r.task_digest for r in records}
    return [t.id for t in tasks if t.id in recorded and recorded[t.id] != t.digest()]


def pack_infos(tasks: Sequence[Task]) -> list[PackInfo]:
    import hashlib

    by_pack: dict[tuple[str, Path], list[Task]] = {}
    for t in tasks:
        by_pack.setdefault((t.pack, t.pack_dir), []).append(t)
    infos = []
    for (name, path), members in sorted(by_pack.items()):
        h = hashlib.sha256("".join(f"{t.id}:{t.digest()}" for t in sorted(members, key=lambda t: t.id)).encode())
        infos.append(PackInfo(name=name, path=str(path), digest=h.hexdigest()[:16], tasks=[t.id for t in members]))
    return infos


def make_run_config(
    *, run_id: str, model: str, agent: str, endpoint: Endpoint, tasks: Sequence[Task], seed: int,
    attempts: int, jobs: int, options: AgentOptions, task_paths: Sequence[str] = (), sandbox: str = "",
) -> RunConfig:
    return RunConfig(
        run_id=run_id, created_at=utc_now(), model=model, agent=agent, base_url=endpoint.base_url,
        seed=seed, attempts=attempts, jobs=jobs, task_ids=[t.id for t in tasks], task_paths=list(task_paths),
        packs=pack_infos(tasks), system_prompt_tokens=options.system_prompt_tokens,
        lenient_text_calls=options.lenient_text_calls, stream=options.stream, agent_options=dict(options.extra),
        sandbox=sandbox, versions=versions(),
    )


def _wire_end(wire_path: Path) -> WireEnd | None:
    """What the trial's wire log says of its last model call (None without a log)."""
    from agentic_eval.wire.recorder import read_wire_log

    if not wire_path.exists():
        return None
    try:
        return wire_end(read_wire_log(wire_path, errors=[]))
    except (OSError, ValueError):
        return None


def trial_placeholder_key() -> str:
    """A random stand-in for the API key, made for one trial: what the agent is given instead of the key."""
    import secrets

    return f"ae-trial-{secrets.token_hex(16)}"


def repository_damage(sandbox_path: Path, pristine: str) -> str | None:
    """Why the agent left no repository to grade (its folder or its .git deleted or corrupted, the
    pristine commit gone), or None when it is whole. Read through gitsafe: never with the sandbox's own
    config or hooks."""
    if sandbox_path.is_symlink() or not sandbox_path.is_dir():
        return "the agent deleted/corrupted the repository: its folder is gone"
    git_dir = sandbox_path / ".git"
    if git_dir.is_symlink() or not git_dir.is_dir():
        return "the agent deleted/corrupted the repository: its .git folder is gone or replaced"
    try:  # one read of the index against the pristine commit: both must be whole
        gitsafe.sandbox_git(sandbox_path, ["diff-index", "--cached", "--name-only", f"{pristine}^{{commit}}", "--"])
    except gitsafe.GitError as exc:
        return f"the agent deleted/corrupted the repository: {str(exc)[:200]}"
    return None


class TrialRunner:
    """Runs one trial end to end and returns its record. Never raises for a problem of the trial."""

    def __init__(self, *, run_dir: Path, config: RunConfig, agent: Agent, endpoint: Endpoint,
                 options: AgentOptions, cancel: threading.Event, keep_sandboxes: bool = False,
                 backend: SandboxBackend | None = None) -> None:
        self.backend = backend or default_backend()
        self.run_dir = run_dir
        self.config = config
        self.agent = agent
        self.endpoint = endpoint
        self.options = options
        self.cancel = cancel
        self.keep_sandboxes = keep_sandboxes
        self._secrets = [s for s in (endpoint.api_key, *url_secrets(endpoint.base_url)) if len(s) >= 4]

    def run(self, spec: TrialSpec) -> TrialResult | None:
        """The trial's record, or None when the run was cancelled before the trial finished."""
        task = spec.task
        started_at, t0 = utc_now(), time.monotonic()
        trial_dir = self.run_dir / "trials" / trial_slot(task.id, spec.attempt)
        if trial_dir.exists():
            shutil.rmtree(trial_dir)  # an earlier unscored attempt of the same trial
        trial_dir.mkdir(parents=True)
        tmp = Path(tempfile.mkdtemp(prefix=f"ae-trial-{task.id}-"))
        mark_trial_folder(tmp)  # so that the next run cleans it up if this process dies (kill -9)
        files: dict[str, str] = {}
        base: dict[str, Any] = dict(
            trial_id=spec.trial_id, run_id=self.config.run_id, task_id=task.id, task_digest=task.digest(),
            pack=task.pack, agent=self.config.agent, model=self.config.model, seed=self.config.seed,
            attempt=spec.attempt, started_at=started_at, lenient_text_calls=self.options.lenient_text_calls,
            system_prompt_tokens=self.options.system_prompt_tokens, sandbox=self.backend.name,
        )

        def finish(outcome: Outcome, detail: str, fault: str = "", fault_reason: str = "", **extra: Any) -> TrialResult:
            detail = scrub(detail, self._secrets)  # an error message that quoted the URL or the key
            return TrialResult(**base, outcome=outcome, detail=detail, fault=fault,
                               fault_reason=scrub(fault_reason, self._secrets)[:300], ended_at=utc_now(),
                               duration_s=round(time.monotonic() - t0, 3), files=files, **extra)

        try:
            try:
                sandbox = materialize_sandbox(task, self.config.seed, tmp / "sandbox")
                self._backend_hook("cap_disk", sandbox.path)  # docker: the work dir on a size-capped volume
                self.backend.prepare(sandbox.path)
            except Exception as exc:  # noqa: BLE001 - a broken generator is the task's problem, unscored
                fault = exception_fault(exc, default="grader")
                return finish("agent_error", f"sandbox setup failed: {exc}", fault,
                              "the machine ran out of room" if fault == "machine" else "the task's generator failed")
            wire_path = trial_dir / "wire.jsonl"
            outcome, agent_s = self._run_agent(task, sandbox, trial_dir, wire_path)
            if outcome.status == "cancelled" or self.cancel.is_set():
                return None
            if wire_path.exists():
                files["wire"] = str(wire_path.relative_to(self.run_dir))
            if outcome.transcript is not None and outcome.transcript.exists():
                files["transcript"] = str(outcome.transcript.relative_to(self.run_dir))
            known = {Path(f).name for f in files.values()}
            for path in sorted(trial_dir.iterdir()):
                if path.is_file() and path.name not in known:
                    files.setdefault(path.stem, str(path.relative_to(self.run_dir)))
            self._note_engine(base, sandbox.path)
            self._end_phase(sandbox.path)  # every process the agent left ends before anything is judged
            # The record of what the agent left, before any grader, fix or code of the model's runs again:
            # nothing run later can change or erase it.
            for key, path in take_snapshot(sandbox.path, sandbox.pristine_store, sandbox.pristine_commit,
                                           trial_dir).items():
                files[key] = str(path.relative_to(self.run_dir))
            broken = repository_damage(sandbox.path, sandbox.pristine_commit) or self._disk_full(sandbox.path)
            if broken is not None:  # the model's doing, so scored: nothing left that a grader could judge
                return finish("fail", broken, "model", broken, agent_duration_s=round(agent_s, 3),
                              agent_status=outcome.status, stop_reason=outcome.stop_reason, agent_turns=outcome.turns)
            # Whose doing the agent's end was: one the model caused is graded like any other (agentic_eval.faults).
            ruling = rule_agent_end(outcome, uses_model=self.agent.uses_model, wire=_wire_end(wire_path))
            self._backend_hook("make_room", sandbox.path)  # docker: the grader gets space the model never had
            version_file = trial_dir / AGENT_VERSION_FILE
            base["agent_version"] = (version_file.read_text(encoding="utf-8", errors="replace").strip()[:200]
                                     if version_file.is_file() else f"agentic-eval {__version__}")
            g0 = time.monotonic()
            with ScriptRunner(task, sandbox, backend=self.backend) as runner:
                grade = runner.grade(cancel=self.cancel)
            if grade.script.cancelled:
                return None  # interrupted while grading: not an outcome, the trial runs again on resume
            self._note_engine(base, sandbox.path)
            grade_s = time.monotonic() - g0
            (trial_dir / "grader.txt").write_text(grade.script.output, encoding="utf-8")
            files["grader"] = str((trial_dir / "grader.txt").relative_to(self.run_dir))
            summary = summarize_wire_log(wire_path) if wire_path.exists() else None
            extra: dict[str, Any] = dict(
                grader_verdict=grade.verdict.value, agent_duration_s=round(agent_s, 3),
                grade_duration_s=round(grade_s, 3), agent_status=outcome.status, stop_reason=outcome.stop_reason,
                agent_turns=outcome.turns,
            )
            if summary is not None:
                extra.update(turns=summary.turns, text_call_families=summary.families, flags=summary.flags,
                             requests=summary.requests, prompt_tokens=summary.prompt_tokens,
                             completion_tokens=summary.completion_tokens)
            if ruling.unscored is not None:
                return finish(ruling.unscored, outcome.detail, ruling.fault, ruling.reason, **extra)
            if grade.verdict is Verdict.ERROR:
                return finish("grader_error", f"grader error: {grade.reason}", "grader", grade.reason, **extra)
            detail = ruling.note or outcome.stop_reason or outcome.detail
            return finish("pass" if grade.verdict is Verdict.PASS else "fail", detail, ruling.fault, ruling.reason,
                          **extra)
        except Exception as exc:  # noqa: BLE001 - a harness bug must not end the campaign: record it here
            fault = exception_fault(exc)
            return finish("agent_error", f"harness error: {type(exc).__name__}: {exc}", fault,
                          "the machine ran out of room" if fault == "machine" else "a harness error")
        finally:
            self._end_phase(tmp / "sandbox")
            self._backend_hook("release", tmp / "sandbox", keep=self.keep_sandboxes)
            if self.keep_sandboxes and (tmp / "sandbox").exists():
                shutil.move(str(tmp / "sandbox"), str(trial_dir / "sandbox"))
            shutil.rmtree(tmp, ignore_errors=True)

    def _note_engine(self, record: dict[str, Any], sandbox_path: Path) -> None:
        """docker: the engine and image that ran the trial (the agent's phase, else the grader's)."""
        if record.get("sandbox_engine"):
            return
        describe = getattr(self.backend, "describe", None)
        where: dict[str, str] = describe(sandbox_path) if callable(describe) else {}
        record.update({f"sandbox_{k}": v for k, v in where.items() if k in ("engine", "image")})

    def _backend_hook(self, name: str, sandbox_path: Path, **kwargs: Any) -> None:
        """Call a backend's optional per-sandbox step (docker's cap_disk, release) when it has one."""
        hook = getattr(self.backend, name, None)
        if callable(hook):
            hook(sandbox_path, **kwargs)

    def _disk_full(self, sandbox_path: Path) -> str | None:
        """docker: why the model's work dir is full (a scored fail: it filled it), else None."""
        full = getattr(self.backend, "disk_full", None)
        return (full(sandbox_path) or None) if callable(full) else None

    def _warm(self, sandbox_path: Path, first: bool, readable: tuple[Path, ...]) -> None:
        """Backends that can start a trial's containers ahead of its commands (docker) do so; `readable`:
        what its grader will read."""
        warm = getattr(self.backend, "warm", None)
        if callable(warm):
            try:
                warm(sandbox_path.resolve(), first=first, readable=readable)
            except Exception:  # noqa: BLE001 - only a head start: the first command starts its own
                pass

    def _end_phase(self, sandbox_path: Path) -> None:
        """Backends that keep a trial's processes in a container of their own (docker) end them here."""
        close = getattr(self.backend, "close", None)
        if callable(close):
            try:
                close(sandbox_path.resolve())
            except Exception:  # noqa: BLE001 - an engine that is gone took its container with it
                pass

    def _run_agent(self, task: Task, sandbox: Any, trial_dir: Path, wire_path: Path) -> tuple[AgentOutcome, float]:
        # The agent never holds the real key: it gets a placeholder made for this trial alone, which the
        # wire recorder checks and replaces upstream with the real key. Its base URL is the recorder's.
        placeholder = trial_placeholder_key()
        ctx = AgentContext(
            task=task, sandbox=sandbox, instruction=task.render_instruction(sandbox.variables),
            base_url=self.endpoint.shown_url, api_key=placeholder, model=self.config.model,
            timeout_s=task.meta.limits.agent_timeout_s, max_turns=task.meta.limits.max_turns,
            trial_dir=trial_dir, options=self.options, cancel=self.cancel, backend=self.backend,
        )
        a0 = time.monotonic()
        try:
            # docker: the grader's container starts during the agent; the first one while the model answers
            reads = (task.dir, task.pack_dir, graders_dir(), *filter(None, [sandbox.pristine_store]))
            from agentic_eval.agents.adapters import CliAgent  # its first container mounts its CLI and HOME

            self._warm(sandbox.path, first=self.agent.uses_model and not isinstance(self.agent, CliAgent),
                       readable=reads)
            if self.agent.uses_model:
                from agentic_eval.wire.recorder import WireRecorder

                recorder = WireRecorder(self.endpoint.base_url, wire_path,
                                        upstream_headers=auth_headers(self.endpoint.api_key),
                                        client_key=placeholder)
                recorder.start()
                outcome = AgentOutcome("agent_error", detail="the agent did not return")
                try:
                    ctx.base_url = recorder.base_url
                    outcome = self.agent.run(ctx)
                    if outcome.status == "timeout" and outcome.waiting_for_endpoint is None:
                        # Was the endpoint still answering when the time ran out (its time: unscored), or were the
                        # model's own commands running (its doing: graded)? The recorder saw every request.
                        moment = outcome.timed_out_at if outcome.timed_out_at is not None else a0 + ctx.timeout_s
                        outcome.waiting_for_endpoint = recorder.endpoint_busy_at(moment)
                finally:
                    # An agent that gave up (time limit, Ctrl-C) left its request behind: do not wait for it.
                    recorder.stop(grace_s=5.0 if outcome.status in ("completed", "endpoint_error") else 0.5)
            else:
                outcome = self.agent.run(ctx)
        except Exception as exc:  # noqa: BLE001 - an agent that crashes ends its own trial, not the campaign
            outcome = AgentOutcome("agent_error", detail=f"{type(exc).__name__}: {exc}")
        return outcome, time.monotonic() - a0


def execute_plan(
    plan: RunPlan, *, agent: Agent, endpoint: Endpoint, options: AgentOptions, jobs: int,
    on_result: Callable[[TrialResult], None] | None = None, on_start: Callable[[TrialSpec], None] | None = None,
    keep_sandboxes: bool = False, cancel: threading.Event | None = None, backend: SandboxBackend | None = None,
) -> list[TrialResult]:
    """Run the plan's trials with `jobs` workers; each record is durable before `on_result` sees it.

    KeyboardInterrupt cancels running agents (they kill their processes), drops queued trials, and
    re-raises once the workers have stopped: finished trials are on disk and the run resumes.
    """
    cancel = cancel or threading.Event()
    log = TrialLog(plan.run_dir)
    runner = TrialRunner(run_dir=plan.run_dir, config=plan.config, agent=agent, endpoint=endpoint,
                         options=options, cancel=cancel, keep_sandboxes=keep_sandboxes, backend=backend)
    results: list[TrialResult] = []

    def one(spec: TrialSpec) -> TrialResult | None:
        if cancel.is_set():
            return None
        if on_start is not None:
            on_start(spec)
        result = runner.run(spec)
        if result is not None:
            log.append(result)
            if on_result is not None:
                on_result(result)
        return result

    pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="trial")
    futures: set[Future[TrialResult | None]] = {pool.submit(one, s) for s in plan.trials}
    try:
        while futures:
            done, futures = wait(futures, timeout=0.2, return_when=FIRST_COMPLETED)
            for f in done:
                r = f.result()
                if r is not None:
                    results.append(r)
    except KeyboardInterrupt:
        cancel.set()
        for f in futures:
            f.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return results


def prepare_run(run_dir: Path, config: RunConfig, tasks: Sequence[Task], *, resume: bool) -> RunPlan:
    """Create (or reopen, for resume) the run folder and list the trials to run."""
    run_dir.mkdir(parents=True, exist_ok=True)
    lock = _lock_run(run_dir)
    specs = plan_trials(tasks, config.agent, config.model, config.seed, config.attempts)
    skipped = 0
    if resume:
        specs, skipped = pending_trials(run_dir, specs)
    else:
        write_run_config(run_dir, config)
    return RunPlan(run_dir=run_dir, config=config, trials=specs, skipped=skipped, lock=lock)


def _lock_run(run_dir: Path) -> IO[str]:
    """Hold the run's lock file while this process works on it (released when the process ends), so
    that two processes never run one run's trials at once (a resume while the run still goes)."""
    import fcntl

    handle = (run_dir / "run.lock").open("a", encoding="utf-8")
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise AgenticEvalError(f"run {run_dir.name} is in progress in another process: wait for it to end, or stop "
                               "it (Ctrl-C), then resume") from None
    return handle


# ---------------------------------------------------------------------------------------------------
# The Python API: start or resume a campaign with the rules the `run` command follows.

Log = Callable[..., None]
"""`log(text, style=None)`: where a campaign's messages go (skipped tasks, warnings, the header); the
style is a hint for a terminal ("bold red" for an unconfined sandbox nobody asked for)."""

MODEL_FREE_RUN_MODEL = "none"
"""The model a run of a model-free agent (oracle, nop) records when no model was given."""


@dataclass
class Campaign:
    """A run ready to execute: its plan (folder, config, trials still to run, the run's lock held) and
    what runs it. `execute` runs the trials; `start_run` and `resume_run` do both steps."""

    plan: RunPlan
    agent: Agent
    endpoint: Endpoint
    options: AgentOptions
    tasks: list[Task]
    backend: SandboxBackend
    jobs: int = 1
    keep_sandboxes: bool = False

    @property
    def run_dir(self) -> Path:
        return self.plan.run_dir

    @property
    def config(self) -> RunConfig:
        return self.plan.config

    def execute(self, *, on_result: Callable[[TrialResult], None] | None = None,
                on_start: Callable[[TrialSpec], None] | None = None,
                cancel: threading.Event | None = None) -> list[TrialResult]:
        """Run the planned trials (see `execute_plan`; KeyboardInterrupt propagates, finished trials kept)."""
        return execute_plan(self.plan, agent=self.agent, endpoint=self.endpoint, options=self.options,
                            jobs=self.jobs, on_result=on_result, on_start=on_start, cancel=cancel,
                            keep_sandboxes=self.keep_sandboxes, backend=self.backend)


@dataclass(frozen=True)
class RunOutcome:
    """Where a run is and how it ended: `outcomes` counts every trial of the run (its latest record),
    not only those of this session; `interrupted` when Ctrl-C stopped it (resume it with `resume_run`)."""

    run_dir: Path
    run_id: str
    trials_run: list[TrialResult] = field(repr=False)  # every record in full: too long to print
    skipped: int
    interrupted: bool
    outcomes: dict[str, int]

    @property
    def scored(self) -> int:
        return self.outcomes.get("pass", 0) + self.outcomes.get("fail", 0)

    @property
    def passed(self) -> int:
        return self.outcomes.get("pass", 0)


def _quiet(text: str, style: str | None = None) -> None:
    return None


def _builtin_only_check(agent: str, system_prompt_tokens: int | None, lenient_text_calls: bool, stream: bool) -> None:
    """The builtin agent's options given to another agent are an error, not ignored."""
    given = [flag for flag, value in (("--system-prompt-tokens", system_prompt_tokens),
                                      ("--lenient-text-calls", lenient_text_calls), ("--stream", stream)) if value]
    if given and agent != "builtin":
        raise AgenticEvalError(f"{', '.join(given)}: only the builtin agent has "
                               f"{'this option' if len(given) == 1 else 'these options'}; "
                               f"drop {'it' if len(given) == 1 else 'them'} or use --agent builtin")


def _check_resume_settings(config: RunConfig, given: dict[str, tuple[Any, Any]]) -> None:
    """A resumed run keeps its settings: one that would change them is an error, not ignored."""
    changed = [flag for flag, (value, kept) in given.items() if value is not None and value != kept]
    if changed:
        raise AgenticEvalError(f"--resume keeps the run's settings; drop {', '.join(changed)} (to change them, start "
                               "a new run)")


def plan_start(
    *, model: str | None = None, agent: str = "builtin", base_url: str | None = None, api_key: str | None = None,
    tasks: Sequence[str | Path] | None = None, task_ids: Sequence[str] = (), seed: int = 0, attempts: int = 1,
    jobs: int = 1, runs_root: str | Path = "runs", system_prompt_tokens: int | None = None,
    lenient_text_calls: bool = False, stream: bool = False, agent_options: dict[str, str] | None = None,
    sandbox: str | None = None, docker_hosts: Sequence[str] = (), image: str | None = None,
    keep_sandboxes: bool = False, local_server: Any = None, log: Log | None = None,
) -> Campaign:
    """Check everything and claim a new run folder under `runs_root`; nothing runs yet (see `start_run`)."""
    from agentic_eval.agents.base import load_agent

    if local_server is not None and not model:
        model = local_server.model
    agent = agent or "builtin"
    if not model and not getattr(load_agent(agent), "uses_model", True):
        model = MODEL_FREE_RUN_MODEL
    if not model:
        raise AgenticEvalError("--model is required (the model name your endpoint serves), or --resume RUN, "
                               "or --local")
    _builtin_only_check(agent, system_prompt_tokens, lenient_text_calls, stream)
    options = AgentOptions(system_prompt_tokens=system_prompt_tokens, lenient_text_calls=lenient_text_calls,
                           stream=stream, extra=dict(agent_options or {}))
    task_paths = [str(Path(p).resolve()) for p in tasks] if tasks else None
    return _campaign(None, None, agent_name=agent, model=model, task_ids=list(task_ids), task_paths=task_paths,
                     options=options, seed=seed, attempts=attempts, jobs=jobs, runs_root=Path(runs_root),
                     base_url=base_url, api_key=api_key, sandbox=sandbox, docker_hosts=docker_hosts, image=image,
                     keep_sandboxes=keep_sandboxes, local_server=local_server, log=log or _quiet)


def plan_resume(
    run: str | Path, *, runs_root: str | Path = "runs", base_url: str | None = None, api_key: str | None = None,
    tasks: Sequence[str | Path] | None = None, jobs: int = 1, sandbox: str | None = None,
    docker_hosts: Sequence[str] = (), image: str | None = None, keep_sandboxes: bool = False,
    local_server: Any = None, log: Log | None = None, model: str | None = None, agent: str | None = None,
    seed: int | None = None, attempts: int | None = None, system_prompt_tokens: int | None = None,
    lenient_text_calls: bool | None = None, stream: bool | None = None, task_ids: Sequence[str] | None = None,
    agent_options: dict[str, str] | None = None,
) -> Campaign:
    """Reopen a run (its folder, or its id under `runs_root`) to rerun its unscored and missing trials.

    Its settings come from its run.json; any of `model` ... `agent_options` given must equal them (a
    resumed run never changes what it measures). `tasks` may point at the packs' new place (the tasks'
    digests still decide which trials stand). It goes back to the endpoint it recorded unless
    `base_url` (or `local_server`) says otherwise; a key is never stored, so pass `api_key` again."""
    from agentic_eval.results import read_run_config, resolve_run_dir

    run_dir = resolve_run_dir(run, Path(runs_root))
    config = read_run_config(run_dir)
    if model and model != config.model:
        raise AgenticEvalError(f"--resume: run {config.run_id} is for model {config.model!r}, not {model!r}")
    _check_resume_settings(config, {  # flag: (the value given, None when not given; the run's own)
        "--agent": (agent, config.agent), "--seed": (seed, config.seed), "--attempts": (attempts, config.attempts),
        "--system-prompt-tokens": (system_prompt_tokens, config.system_prompt_tokens),
        "--lenient-text-calls": (lenient_text_calls or None, config.lenient_text_calls),
        "--stream": (stream or None, config.stream),
        "--task": (sorted(task_ids) if task_ids else None, sorted(config.task_ids)),
        "--agent-opt": (dict(agent_options) if agent_options else None, dict(config.agent_options)),
        "--sandbox": (sandbox if config.sandbox else None, config.sandbox),
    })
    options = AgentOptions(system_prompt_tokens=config.system_prompt_tokens,
                           lenient_text_calls=config.lenient_text_calls, stream=config.stream,
                           extra=dict(config.agent_options))
    task_paths = [str(Path(p).resolve()) for p in tasks] if tasks else (config.task_paths or None)
    return _campaign(run_dir, config, agent_name=config.agent, model=config.model, task_ids=config.task_ids,
                     task_paths=task_paths, options=options, seed=config.seed, attempts=config.attempts, jobs=jobs,
                     runs_root=Path(runs_root), base_url=base_url, api_key=api_key,
                     sandbox=sandbox or config.sandbox or None, docker_hosts=docker_hosts, image=image,
                     keep_sandboxes=keep_sandboxes, local_server=local_server, log=log or _quiet)


def _campaign(
    run_dir: Path | None, config: RunConfig | None, *, agent_name: str, model: str, task_ids: Sequence[str],
    task_paths: list[str] | None, options: AgentOptions, seed: int, attempts: int, jobs: int, runs_root: Path,
    base_url: str | None, api_key: str | None, sandbox: str | None, docker_hosts: Sequence[str], image: str | None,
    keep_sandboxes: bool, local_server: Any, log: Log,
) -> Campaign:
    """The checks and preparation a new run and a resumed one share (`config` None: a new run)."""
    from agentic_eval.agents.adapters import CliAgent
    from agentic_eval.agents.base import load_agent
    from agentic_eval.confine.backend import resolve_backend
    from agentic_eval.endpoint import preflight, resolve_endpoint
    from agentic_eval.leftovers import clean_dead_runs
    from agentic_eval.packs.grader import check_grader_requirements
    from agentic_eval.packs.task import load_tasks, select_tasks
    from agentic_eval.results import claim_run_dir, new_run_id

    agent = load_agent(agent_name)
    if (sandbox == "docker" or docker_hosts or image) and isinstance(agent, CliAgent):
        from agentic_eval.confine.docker import cli_refusal

        if refusal := cli_refusal(agent):
            raise AgenticEvalError(refusal)
    backend, warning = resolve_backend(sandbox, docker_hosts=docker_hosts, image=image)
    if warning:
        log(warning, style="bold red" if sandbox is None else "yellow")
    check_options = getattr(agent, "check_options", None)  # optional: agents that know their options
    if callable(check_options):
        check_options(dict(options.extra))
    loaded = load_tasks(task_paths)
    for err in loaded.errors:
        log(f"skipped task: {err}")
    tasks = select_tasks(loaded.tasks, list(task_ids))
    if not tasks:
        raise AgenticEvalError("no tasks to run (check --tasks and --task)")
    check_grader_requirements(tasks)  # before any trial: a grader that cannot run would grade every trial wrong
    # A resumed run goes back to the endpoint it recorded, unless base_url (or a local server) says otherwise.
    recorded_url = config.base_url if config is not None and not config.local else None
    endpoint = resolve_endpoint(local_server.base_url if local_server is not None else (base_url or recorded_url),
                                api_key)
    if agent.uses_model:
        preflight(endpoint, model)
    if config is not None and run_dir is not None:
        config = config.model_copy(update={"base_url": endpoint.shown_url})
        for task_id in changed_tasks(run_dir, tasks):
            log(f"warning: task {task_id} changed since this run recorded it (its files differ): its "
                "trials run again, and the report counts the new ones")
        resume = True
    else:
        run_dir = claim_run_dir(runs_root, new_run_id(model, agent_name))
        config = make_run_config(run_id=run_dir.name, model=model, agent=agent_name, endpoint=endpoint, tasks=tasks,
                                 seed=seed, attempts=attempts, jobs=jobs, options=options,
                                 task_paths=task_paths or [], sandbox=backend.name)
        if local_server is not None:
            gguf = getattr(local_server, "gguf", None)
            config = config.model_copy(update={"local": True, "local_ctx": getattr(local_server, "ctx", None),
                                               "local_gguf": str(Path(gguf).resolve()) if gguf else None})
        resume = False
    plan = prepare_run(run_dir, config, tasks, resume=resume)
    if resume:
        for w in read_trials(run_dir)[1]:  # torn records: their trials are in the plan again
            log(f"warning: {w}")
    if cleaned := clean_dead_runs().describe():  # sandboxes and processes a killed run left behind
        log(cleaned)
    log(f"run {config.run_id}: {len(plan.trials)} trials ({len(tasks)} tasks x {config.attempts} attempts"
        + (f", {plan.skipped} already scored" if plan.skipped else "")
        + f"), agent {agent_name}, "
        + (f"model {model} at {endpoint.shown_url}" if agent.uses_model else "no model calls")
        + f", -j {jobs}, sandbox {backend.name}")
    log(f"results: {run_dir}")
    return Campaign(plan=plan, agent=agent, endpoint=endpoint, options=options, tasks=list(tasks), backend=backend,
                    jobs=jobs, keep_sandboxes=keep_sandboxes)


def _finish(campaign: Campaign, on_result: Callable[[TrialResult], None] | None) -> RunOutcome:
    """Execute the campaign; Ctrl-C ends it as an interrupted outcome (finished trials are kept)."""
    from collections import Counter

    results: list[TrialResult] = []

    def collect(result: TrialResult) -> None:
        results.append(result)
        if on_result is not None:
            on_result(result)

    interrupted = False
    try:
        campaign.execute(on_result=collect)
    except KeyboardInterrupt:
        interrupted = True
    latest = latest_by_trial(read_trials(campaign.run_dir)[0])
    return RunOutcome(run_dir=campaign.run_dir, run_id=campaign.config.run_id, trials_run=results,
                      skipped=campaign.plan.skipped, interrupted=interrupted,
                      outcomes=dict(Counter(r.outcome for r in latest.values())))


def start_run(
    *, model: str | None = None, agent: str = "builtin", base_url: str | None = None, api_key: str | None = None,
    tasks: Sequence[str | Path] | None = None, task_ids: Sequence[str] = (), seed: int = 0, attempts: int = 1,
    jobs: int = 1, runs_root: str | Path = "runs", system_prompt_tokens: int | None = None,
    lenient_text_calls: bool = False, stream: bool = False, agent_options: dict[str, str] | None = None,
    sandbox: str | None = None, docker_hosts: Sequence[str] = (), image: str | None = None,
    keep_sandboxes: bool = False, local_server: Any = None, log: Log | None = None,
    on_result: Callable[[TrialResult], None] | None = None,
) -> RunOutcome:
    """Start a new run and run all its trials (`plan_start` then `Campaign.execute`); `on_result` sees
    each trial's record once it is on disk. Ctrl-C ends it early: `interrupted`, resumable."""
    settings = dict(locals())
    del settings["on_result"]
    return _finish(plan_start(**settings), on_result)


def resume_run(
    run: str | Path, *, runs_root: str | Path = "runs", base_url: str | None = None, api_key: str | None = None,
    tasks: Sequence[str | Path] | None = None, jobs: int = 1, sandbox: str | None = None,
    docker_hosts: Sequence[str] = (), image: str | None = None, keep_sandboxes: bool = False,
    local_server: Any = None, log: Log | None = None, model: str | None = None, agent: str | None = None,
    seed: int | None = None, attempts: int | None = None, system_prompt_tokens: int | None = None,
    lenient_text_calls: bool | None = None, stream: bool | None = None, task_ids: Sequence[str] | None = None,
    agent_options: dict[str, str] | None = None, on_result: Callable[[TrialResult], None] | None = None,
) -> RunOutcome:
    """Resume a run (its folder, or its id under `runs_root`): rerun its unscored and missing trials,
    keep its scored ones (`plan_resume` then `Campaign.execute`)."""
    settings = dict(locals())
    del settings["run"], settings["on_result"]
    return _finish(plan_resume(run, **settings), on_result)
