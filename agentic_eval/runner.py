"""The campaign runner: every (task, attempt) as a trial, graded by script, recorded durably.

One trial: fresh sandbox -> wire recorder in front of the endpoint -> agent ->
grader -> turn classification of the wire log -> final diff -> one record
appended to trials.jsonl. Trials run concurrently (`jobs`), each in its own
sandbox. One trial's failure never ends the campaign; Ctrl-C cancels running
agents, keeps finished trials, and leaves the run resumable.
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

from agentic_eval import __version__, gitsafe
from agentic_eval.agent import AGENT_VERSION_FILE, Agent, AgentContext, AgentOptions, AgentOutcome
from agentic_eval.builtin import graders_dir
from agentic_eval.confine import SandboxBackend, default_backend
from agentic_eval.endpoint import Endpoint, scrub, url_secrets
from agentic_eval.errors import AgenticEvalError
from agentic_eval.grader import ScriptRunner, Verdict
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
from agentic_eval.sandbox import Sandbox, materialize_sandbox
from agentic_eval.task import Task
from agentic_eval.turns import summarize_wire_log

AGENT_STATUS_TO_OUTCOME: dict[str, Outcome] = {
    "timeout": "agent_timeout",
    "endpoint_error": "endpoint_error",
    "agent_error": "agent_error",
}


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


def _final_diff(sandbox: Sandbox, dest: Path) -> None:
    """Everything the agent changed against the pristine commit, ignored and excluded files included,
    computed from the harness's pristine store: never with the sandbox's git config, hooks or history."""
    try:
        if sandbox.pristine_store is None:
            raise gitsafe.GitError("no pristine store")
        dest.write_bytes(gitsafe.final_diff(sandbox.path, sandbox.pristine_store, sandbox.pristine_commit))
    except (OSError, gitsafe.GitError) as exc:
        dest.write_text(f"could not compute the diff: {exc}\n", encoding="utf-8")


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

        def finish(outcome: Outcome, detail: str, **extra: Any) -> TrialResult:
            detail = scrub(detail, self._secrets)  # an error message that quoted the URL or the key
            return TrialResult(**base, outcome=outcome, detail=detail, ended_at=utc_now(),
                               duration_s=round(time.monotonic() - t0, 3), files=files, **extra)

        try:
            try:
                sandbox = materialize_sandbox(task, self.config.seed, tmp / "sandbox")
                self._backend_hook("cap_disk", sandbox.path)  # docker: the work dir on a size-capped volume
                self.backend.prepare(sandbox.path)
            except Exception as exc:  # a broken generator is the task's problem, unscored
                return finish("agent_error", f"sandbox setup failed: {exc}")
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
            broken = repository_damage(sandbox.path, sandbox.pristine_commit) or self._disk_full(sandbox.path)
            if broken is not None:  # the model's doing, so scored: nothing left that a grader could judge
                return finish("fail", broken, agent_duration_s=round(agent_s, 3), agent_status=outcome.status,
                              stop_reason=outcome.stop_reason, agent_turns=outcome.turns)
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
            _final_diff(sandbox, trial_dir / "diff.patch")
            files["diff"] = str((trial_dir / "diff.patch").relative_to(self.run_dir))
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
            if outcome.status in AGENT_STATUS_TO_OUTCOME:
                return finish(AGENT_STATUS_TO_OUTCOME[outcome.status], outcome.detail, **extra)
            if grade.verdict is Verdict.ERROR:
                return finish("grader_error", f"grader error: {grade.reason}", **extra)
            detail = outcome.stop_reason or outcome.detail
            return finish("pass" if grade.verdict is Verdict.PASS else "fail", detail, **extra)
        except Exception as exc:  # a harness bug must not end the campaign: record it on this trial
            return finish("agent_error", f"harness error: {type(exc).__name__}: {exc}")
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
            self._warm(sandbox.path, first=self.agent.uses_model, readable=reads)
            if self.agent.uses_model:
                from agentic_eval.wire import WireRecorder

                recorder = WireRecorder(self.endpoint.base_url, wire_path,
                                        upstream_headers={"Authorization": f"Bearer {self.endpoint.api_key}"},
                                        client_key=placeholder)
                recorder.start()
                outcome = AgentOutcome("agent_error", detail="the agent did not return")
                try:
                    ctx.base_url = recorder.base_url
                    outcome = self.agent.run(ctx)
                finally:
                    # An agent that gave up (time limit, Ctrl-C) left its request behind: do not wait for it.
                    recorder.stop(grace_s=5.0 if outcome.status in ("completed", "endpoint_error") else 0.5)
            else:
                outcome = self.agent.run(ctx)
        except Exception as exc:
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
