"""A trial's life: every (task, attempt) of a run as a trial, graded by script, recorded durably.

One trial, in phases (`TrialRunner`), each returning a frozen part of its record (runner/record.py): fresh
repo -> wire recorder in front of the endpoint -> agent -> snapshot of the final tree (diff.patch, tree.json)
and turn classification of the wire log -> grader -> the outcome judged -> one record, made once, appended
to trials.jsonl. `execute_plan` runs a plan's trials concurrently (`jobs`), each in its own sandbox. One
trial's failure never ends the campaign; Ctrl-C cancels running agents, keeps finished trials, and
leaves the run resumable. The sandbox backend is called through its declared hooks only
(`agentic_eval.confine.SandboxBackend`): nothing here names a backend.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path

from agentic_eval._version import __version__
from agentic_eval.agents.base import AGENT_VERSION_FILE, Agent, AgentContext, AgentOptions, AgentOutcome
from agentic_eval.classify.summary import summarize_wire_log
from agentic_eval.confine.backend import SandboxBackend
from agentic_eval.confine.origin import refused_requests
from agentic_eval.confine.registry import default_backend
from agentic_eval.endpoint import Endpoint, auth_headers, url_secrets
from agentic_eval.faults import WireEnd, exception_fault, rule_agent_end, wire_end
from agentic_eval.grading.phase import GradePart, engine_fields, grade_trial
from agentic_eval.grading.remains import take_remains
from agentic_eval.leftovers import mark_trial_folder
from agentic_eval.packs.builtin import graders_dir
from agentic_eval.packs.sandbox import Sandbox, materialize_environment, materialize_sandbox
from agentic_eval.packs.task import Task
from agentic_eval.results.records import Outcome, RunConfig, TrialResult, trial_slot, utc_now
from agentic_eval.results.run_folder import RunPlan, TrialSpec
from agentic_eval.results.trial_log import TrialLog
from agentic_eval.runner.record import AgentPart, Ending, Identity, TrialFolder, build_record, judge
from agentic_eval.trees import copy_tree, remove_tree

AGENT_STATUS_TO_OUTCOME: dict[str, Outcome] = {
    "timeout": "agent_timeout",
    "endpoint_error": "endpoint_error",
    "agent_error": "agent_error",
}
"""The unscored outcome each agent status can end in; whether it does is `agentic_eval.faults.rule_agent_end`'s
call: an end the model caused (its time run out in its own commands, a context it filled, its CLI killed from
inside) is graded instead."""


def _wire_end(wire_path: Path) -> WireEnd | None:
    """What the trial's wire log says of its last model call (None without a log)."""
    if not wire_path.exists():  # an agent that calls no model: the recorder (and httpx) stay unimported
        return None
    from agentic_eval.wire.recorder import read_wire_log

    try:
        return wire_end(read_wire_log(wire_path, errors=[]))
    except (OSError, ValueError):
        return None


def trial_placeholder_key() -> str:
    """A random stand-in for the API key, made for one trial: what the agent is given instead of the key."""
    import secrets

    return f"ae-trial-{secrets.token_hex(16)}"


class Remover:
    """Removes finished trials' temporary folders (sandbox, pristine store) on a thread of its own: on a busy
    disk a folder's removal costs milliseconds per entry, which the next trial need not wait for. Nothing
    runs in a folder handed over (the backend's `trial_end` ended its processes first); one a killed run
    leaves is marked, and removed by the next run (agentic_eval.leftovers). `drain` waits until all are gone."""

    def __init__(self) -> None:
        import queue

        self._queue: queue.Queue[Path] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def remove(self, folder: Path) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                if self._thread is None:  # a library caller's last trial is removed before the process exits
                    import atexit

                    atexit.register(self.drain)
                self._thread = threading.Thread(target=self._work, daemon=True, name="trial-remover")
                self._thread.start()
        self._queue.put(folder)

    def _work(self) -> None:
        while True:
            folder = self._queue.get()
            try:
                remove_tree(folder)  # iterative: a tree nested any deep goes too
            except Exception:  # noqa: BLE001 - a leftover, never the end of the remover
                pass
            finally:
                self._queue.task_done()

    def drain(self) -> None:
        """Wait until every folder handed over is removed."""
        self._queue.join()


REMOVER = Remover()


class TrialRunner:
    """Runs one trial end to end and returns its record. Never raises for a problem of the trial.

    `run` goes through the phases in order, each returning a frozen part of the record (runner/record.py):
    `prepare` (the repo made, the backend's trial started) -> `run_agent` (the agent against the wire recorder,
    its end ruled, what it left recorded by `grading.remains`) -> `grading.phase.grade_trial` (the task's grader
    or reward verifier, one job of grading/'s) -> `judge` -> `build_record`, made once from the parts."""

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
        self._secrets = tuple(s for s in (endpoint.api_key, *url_secrets(endpoint.base_url)) if len(s) >= 4)

    def run(self, spec: TrialSpec) -> TrialResult | None:
        """The trial's record, or None when the run was cancelled before the trial finished."""
        folder = self._open(spec)
        try:
            parts = self._phases(spec.task, folder)
            if parts is None:
                return None
            identity = Identity(spec, run_id=self.config.run_id, agent=self.config.agent, model=self.config.model,
                                seed=self.config.seed, sandbox=self.backend.name,
                                lenient_text_calls=self.options.lenient_text_calls,
                                system_prompt_tokens=self.options.system_prompt_tokens,
                                emulate_parser=self.options.emulate_parser)
            try:
                return build_record(identity, folder, *parts, scrub=self._secrets)
            except Exception as exc:  # noqa: BLE001 - a part the record cannot hold: the bare record says why
                return build_record(identity, folder, _harness_error(exc), scrub=self._secrets)
        finally:
            self._end(folder)

    def _phases(self, task: Task, folder: TrialFolder) -> tuple[Ending, AgentPart | None, GradePart | None] | None:
        """The phases in order, up to the one that ends the trial: the ending and the parts made on the way."""
        agent: AgentPart | None = None
        try:
            made = self.prepare(task, folder)
            if isinstance(made, Ending):
                return made, None, None
            agent = self.run_agent(task, made, folder)
            if agent is None:
                return None
            if agent.broken:  # the model's doing, so scored: nothing left that a grader could judge
                return Ending("fail", agent.broken, "model", agent.broken), agent, None
            graded = grade_trial(task, made, self.backend, folder.trial_dir, self.run_dir, self.cancel)
            if graded is None:
                return None  # interrupted while grading: not an outcome, the trial runs again on resume
            return judge(agent, graded, impossible=task.meta.impossible is not None), agent, graded
        except Exception as exc:  # noqa: BLE001 - a harness bug must not end the campaign: record it here
            return _harness_error(exc), agent, None

    def _open(self, spec: TrialSpec) -> TrialFolder:
        started_at, t0 = utc_now(), time.monotonic()
        trial_dir = self.run_dir / "trials" / trial_slot(spec.task.id, spec.attempt)
        if trial_dir.exists():
            remove_tree(trial_dir)  # an earlier unscored attempt of the same trial (its kept sandbox too)
        trial_dir.mkdir(parents=True)
        tmp = Path(tempfile.mkdtemp(prefix=f"ae-trial-{spec.task.id}-"))
        mark_trial_folder(tmp)  # so that the next run cleans it up if this process dies (kill -9)
        return TrialFolder(trial_dir, tmp, started_at, t0)

    def prepare(self, task: Task, folder: TrialFolder) -> Sandbox | Ending:
        """The task's repo made in the trial's folder and the backend's trial started; or why not (unscored)."""
        try:
            env = task.environment_task()
            if env is not None:  # its own image's working directory (docker backend)
                self.backend.environment_start(env, folder.sandbox_dir)  # the folder filled, its services started
                sandbox = materialize_environment(task, self.config.seed, folder.sandbox_dir)
            else:
                sandbox = materialize_sandbox(task, self.config.seed, folder.sandbox_dir)
            self.backend.trial_start(sandbox.path)
            self.backend.prepare(sandbox.path)
            return sandbox
        except Exception as exc:  # noqa: BLE001 - a broken generator is the task's problem, unscored
            fault = exception_fault(exc, default="grader")
            unbuilt = type(exc).__name__ == "EnvironmentBuildError"  # confine/docker_env.py's, kept unimported
            return Ending("agent_error", f"sandbox setup failed: {exc}", fault,
                          "the machine ran out of room" if fault == "machine" else
                          "the task's image does not build" if unbuilt else "the task's generator failed")

    def run_agent(self, task: Task, sandbox: Sandbox, folder: TrialFolder) -> AgentPart | None:
        """The agent's phase: it runs, every process it left ends, whose doing its end was is ruled, and what it
        left is recorded (diff.patch, tree.json) before any grader or code of the model's runs again. None when
        the run was cancelled."""
        trial_dir, wire_path = folder.trial_dir, folder.trial_dir / "wire.jsonl"
        outcome, seconds, api = self._drive(task, sandbox, trial_dir, wire_path)
        tool_requests = refused_requests(trial_dir)  # the agent's tools calling the endpoint
        if outcome.status == "cancelled" or self.cancel.is_set():
            return None
        where = self.backend.describe(sandbox.path)
        self.backend.phase_end(sandbox.path)  # every process the agent left ends before anything is judged
        # Whose doing the agent's end was: one the model caused is graded like any other (agentic_eval.faults).
        ruling = rule_agent_end(outcome, uses_model=self.agent.uses_model, wire=_wire_end(wire_path))
        left = take_remains(sandbox, self.backend, trial_dir, outcome.transcript)  # once no process of its is left
        files, broken = {key: str(path.relative_to(self.run_dir)) for key, path in left.files.items()}, left.broken
        version_file = trial_dir / AGENT_VERSION_FILE
        return AgentPart(
            outcome, ruling, seconds, files, tool_requests=tool_requests, wire_api=WIRE_APIS.get(api, api),
            agent_version=(version_file.read_text(encoding="utf-8", errors="replace").strip()[:200]
                           if version_file.is_file() else f"agentic-eval {__version__}"),
            internet_missing=where.get("internet") == "missing", engine=engine_fields(where), broken=broken,
            summary=summarize_wire_log(wire_path) if wire_path.exists() and not broken else None)

    def _end(self, folder: TrialFolder) -> None:
        """The trial's processes, containers and folders go (the sandbox into the trial's folder with
        `keep_sandboxes`). Never raises: what the model left (a tree of any depth or size) ends no run."""
        tmp, trial_dir = folder.tmp, folder.trial_dir
        for step in (lambda: self.backend.phase_end(tmp / "sandbox"),
                     lambda: self.backend.trial_end(tmp / "sandbox", keep=self.keep_sandboxes)):
            try:
                step()
            except Exception as exc:  # noqa: BLE001 - a leftover the next run removes, not the end of this one
                print(f"agentic-eval: ending a trial: {type(exc).__name__}: {str(exc)[:200]}", file=sys.stderr)
        if self.keep_sandboxes and (tmp / "sandbox").exists():
            try:
                os.rename(tmp / "sandbox", trial_dir / "sandbox")
            except OSError:  # another file system: copied (iterative, links as links, special files left out)
                try:
                    copy_tree(tmp / "sandbox", trial_dir / "sandbox")
                except Exception:  # noqa: BLE001 - the sandbox is not kept, the record is
                    pass
        REMOVER.remove(tmp)  # off the trial's path: its record is written without waiting for the disk

    def _drive(self, task: Task, sandbox: Sandbox, trial_dir: Path, wire_path: Path) -> tuple[AgentOutcome, float, str]:
        """The agent's run (behind the wire recorder when it uses a model): how it ended, how long it took, and
        which wire API it spoke ('' or a key of WIRE_APIS)."""
        # The agent never holds the real key: it gets a placeholder made for this trial alone, which the
        # wire recorder checks and replaces upstream with the real key. Its base URL is the recorder's.
        placeholder = trial_placeholder_key()
        ctx = AgentContext(
            task=task, sandbox=sandbox, instruction=task.render_instruction(sandbox.variables),
            base_url=self.endpoint.shown_url, api_key=placeholder, model=self.config.model,
            timeout_s=self.options.agent_timeout_s or task.meta.limits.agent_timeout_s,
            max_turns=task.meta.limits.max_turns,
            trial_dir=trial_dir, options=self.options, cancel=self.cancel, backend=self.backend,
        )
        a0 = time.monotonic()
        api: str | None = None
        try:
            reads = (task.dir, task.pack_dir, graders_dir(), *filter(None, [sandbox.pristine_store]))
            self.backend.agent_start(sandbox.path, self.agent, reads)  # a head start (docker starts containers)
            if self.agent.uses_model:
                from agentic_eval.classify.emulation import parser_rewriter
                from agentic_eval.wire.recorder import WireRecorder

                # An agent that speaks the Anthropic Messages API (claude-code) says, once per run, whether the
                # endpoint serves it ('native') or the recorder translates it to chat completions ('translate').
                api = self.agent.wire_api(self.endpoint.base_url, self.endpoint.api_key, self.options)
                recorder = WireRecorder(self.endpoint.base_url, wire_path,
                                        upstream_headers=auth_headers(self.endpoint.api_key),
                                        client_key=placeholder, translate_messages=api == "translate",
                                        emulate=parser_rewriter(self.options.emulate_parser)
                                        if self.options.emulate_parser else None)
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
        return outcome, time.monotonic() - a0, api or ""


def _harness_error(exc: Exception) -> Ending:
    fault = exception_fault(exc)
    return Ending("agent_error", f"harness error: {type(exc).__name__}: {exc}", fault,
                  "the machine ran out of room" if fault == "machine" else "a harness error")


WIRE_APIS = {"native": "anthropic-messages", "translate": "anthropic-messages->chat-completions"}
"""A trial's `wire_api`: the Messages API passed through to the endpoint, or translated to its chat completions."""


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
        REMOVER.drain()
        raise
    pool.shutdown(wait=True)
    REMOVER.drain()
    return results
