"""A trial's life: every (task, attempt) of a run as a trial, graded by script, recorded durably.

One trial: fresh sandbox -> wire recorder in front of the endpoint -> agent -> snapshot of the final
tree (diff.patch, tree.json) -> grader -> turn classification of the wire log -> one record appended to
trials.jsonl. `execute_plan` runs a plan's trials concurrently (`jobs`), each in its own sandbox. One
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
from typing import Any

from agentic_eval._version import __version__
from agentic_eval.agents.base import AGENT_VERSION_FILE, Agent, AgentContext, AgentOptions, AgentOutcome
from agentic_eval.classify.summary import summarize_wire_log
from agentic_eval.confine.backend import SandboxBackend, default_backend
from agentic_eval.confine.origin import refused_requests
from agentic_eval.endpoint import Endpoint, auth_headers, scrub, url_secrets
from agentic_eval.faults import WireEnd, exception_fault, rule_agent_end, wire_end
from agentic_eval.leftovers import mark_trial_folder
from agentic_eval.packs import gitsafe
from agentic_eval.packs.builtin import graders_dir
from agentic_eval.packs.grader import ScriptRunner, Verdict, reward_changes, reward_grade, reward_ruling
from agentic_eval.packs.sandbox import materialize_environment, materialize_sandbox
from agentic_eval.packs.snapshot import take_snapshot
from agentic_eval.packs.task import Task, render_template
from agentic_eval.results.records import Outcome, RunConfig, TrialResult, trial_slot, utc_now
from agentic_eval.results.run_folder import RunPlan, TrialSpec
from agentic_eval.results.trial_log import TrialLog
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


def _impossible_behaviour(task: Task, variables: dict[str, Any], trial_dir: Path, wire_path: Path,
                          passed: bool) -> dict[str, Any]:
    """An impossible task's trial: what the model did, from the snapshot's diff.patch and the wire log."""
    from agentic_eval.classify.summary import model_messages
    from agentic_eval.packs.impossible import name_behaviour
    from agentic_eval.packs.snapshot import DIFF_FILE

    spec = task.meta.impossible
    assert spec is not None
    where = task.dir / "task.toml"
    try:
        diff = (trial_dir / DIFF_FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:
        diff = ""
    found = name_behaviour(
        diff, model_messages(wire_path) if wire_path.exists() else [],
        tests=[render_template(t, variables, where=where) for t in spec.tests],
        planted=[render_template(t, variables, where=where) for t in spec.planted],
        runner=[render_template(t, variables, where=where) for t in spec.runner], passed=passed)
    return {"behaviour": found.label, "behaviour_detail": found.detail, "behaviours": found.found}


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


SNAPSHOT_TIMEOUT_S = 300.0
"""At most this long to record the agent's final tree (diff.patch, tree.json): a tree that takes longer is the
model's doing (a scored fail that says so), never a trial without an end."""


def _bounded_snapshot(sandbox: Path, store: Path | None, commit: str, folder: Path,
                      timeout_s: float = SNAPSHOT_TIMEOUT_S) -> dict[str, Path] | str:
    """take_snapshot's files, or why there are none: the tree could not be recorded within `timeout_s` (the
    snapshot goes on in the background, on a tree no one grades, until its own bounds end it)."""
    done: dict[str, dict[str, Path] | BaseException] = {}

    def take() -> None:
        try:
            done["files"] = take_snapshot(sandbox, store, commit, folder)
        except BaseException as exc:  # noqa: BLE001 - handed to the trial's thread
            done["files"] = exc

    worker = threading.Thread(target=take, name="snapshot", daemon=True)
    worker.start()
    worker.join(timeout_s)
    found = done.get("files")
    if found is None:
        return (f"the agent's final tree could not be recorded in {timeout_s:g}s (the model left a tree too large "
                "to snapshot): nothing left that a grader could judge")
    if isinstance(found, BaseException):
        raise found
    return found


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
            remove_tree(trial_dir)  # an earlier unscored attempt of the same trial (its kept sandbox too)
        trial_dir.mkdir(parents=True)
        tmp = Path(tempfile.mkdtemp(prefix=f"ae-trial-{task.id}-"))
        mark_trial_folder(tmp)  # so that the next run cleans it up if this process dies (kill -9)
        files: dict[str, str] = {}
        base: dict[str, Any] = dict(
            trial_id=spec.trial_id, run_id=self.config.run_id, task_id=task.id, task_digest=task.digest(),
            pack=task.pack, agent=self.config.agent, model=self.config.model, seed=self.config.seed,
            attempt=spec.attempt, started_at=started_at, lenient_text_calls=self.options.lenient_text_calls,
            system_prompt_tokens=self.options.system_prompt_tokens, sandbox=self.backend.name,
            impossible=task.impossible, emulate_parser=self.options.emulate_parser,
        )

        def finish(outcome: Outcome, detail: str, fault: str = "", fault_reason: str = "", **extra: Any) -> TrialResult:
            detail = scrub(detail, self._secrets)  # an error message that quoted the URL or the key
            return TrialResult(**base, outcome=outcome, detail=detail, fault=fault,
                               fault_reason=scrub(fault_reason, self._secrets)[:300], ended_at=utc_now(),
                               duration_s=round(time.monotonic() - t0, 3), files=files, **extra)

        try:
            try:
                if task.meta.environment is not None:  # its own image's working directory (docker backend)
                    sandbox = materialize_environment(task, self.config.seed, tmp / "sandbox", self.backend)
                else:
                    sandbox = materialize_sandbox(task, self.config.seed, tmp / "sandbox")
                self.backend.trial_start(sandbox.path)
                self.backend.prepare(sandbox.path)
            except Exception as exc:  # noqa: BLE001 - a broken generator is the task's problem, unscored
                fault = exception_fault(exc, default="grader")
                unbuilt = type(exc).__name__ == "EnvironmentBuildError"  # confine/docker_env.py's, kept unimported
                return finish("agent_error", f"sandbox setup failed: {exc}", fault,
                              "the machine ran out of room" if fault == "machine" else
                              "the task's image does not build" if unbuilt else "the task's generator failed")
            wire_path = trial_dir / "wire.jsonl"
            outcome, agent_s = self._run_agent(task, sandbox, trial_dir, wire_path, base)
            base["tool_requests"] = refused_requests(trial_dir)  # the agent's tools calling the endpoint
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
            base["internet_missing"] = self.backend.describe(sandbox.path).get("internet") == "missing"
            self.backend.phase_end(sandbox.path)  # every process the agent left ends before anything is judged
            # The record of what the agent left, before any grader, fix or code of the model's runs again:
            # nothing run later can change or erase it.
            taken = _bounded_snapshot(sandbox.path, sandbox.pristine_store, sandbox.pristine_commit, trial_dir)
            if isinstance(taken, str):  # the model's tree could not be recorded in time: its doing, scored
                return finish("fail", taken, "model", taken, agent_status=outcome.status,
                              stop_reason=outcome.stop_reason, agent_turns=outcome.turns)
            for key, path in taken.items():
                files[key] = str(path.relative_to(self.run_dir))
            broken = (repository_damage(sandbox.path, sandbox.pristine_commit)
                      or self.backend.disk_full(sandbox.path) or None)
            if broken is not None:  # the model's doing, so scored: nothing left that a grader could judge
                return finish("fail", broken, "model", broken, agent_duration_s=round(agent_s, 3),
                              agent_status=outcome.status, stop_reason=outcome.stop_reason, agent_turns=outcome.turns)
            # Whose doing the agent's end was: one the model caused is graded like any other (agentic_eval.faults).
            ruling = rule_agent_end(outcome, uses_model=self.agent.uses_model, wire=_wire_end(wire_path))
            self.backend.grading_start(sandbox.path)
            version_file = trial_dir / AGENT_VERSION_FILE
            base["agent_version"] = (version_file.read_text(encoding="utf-8", errors="replace").strip()[:200]
                                     if version_file.is_file() else f"agentic-eval {__version__}")
            g0 = time.monotonic()
            changes, side = None, ""
            tampering = ("", "")
            if task.verifier == "reward":  # in the task's environment, after the agent's container is gone
                run = self.backend.verify_environment(sandbox.path, self.cancel)
                side = run.fault_side  # whose fault a fresh verifier's failure is, when not the model's
                grade = reward_grade(run)
                changes = (*reward_changes(run), run.changes.error if run.changes is not None else "")
                tampering = reward_ruling(run, grade.verdict)  # what it ran that the model changed (docker_env.py)
            else:
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
                agent_turns=outcome.turns, reward=grade.reward, tests_forged=list(grade.tests_forged),
            )
            if changes is not None:
                extra.update(changed_programs=changes[0][:20], changed_programs_count=changes[1],
                             changed_programs_error=changes[2])
            if summary is not None:
                extra.update(turns=summary.turns, text_call_families=summary.families, flags=summary.flags,
                             text_calls=summary.text_calls,
                             requests=summary.requests, prompt_tokens=summary.prompt_tokens,
                             completion_tokens=summary.completion_tokens)
            if ruling.unscored is not None:
                return finish(ruling.unscored, outcome.detail, ruling.fault, ruling.reason, **extra)
            if tampering[0] == "fail":  # the verifier could not run what the model changed: its doing, scored
                return finish("fail", f"{tampering[1]} ({grade.reason})", "model", tampering[1], **extra)
            if grade.verdict is Verdict.ERROR:
                return finish("grader_error", f"grader error: {grade.reason}", side or "grader", grade.reason, **extra)
            detail = ruling.note or outcome.stop_reason or outcome.detail
            passed = grade.verdict is Verdict.PASS
            if grade.note:  # the verifier's failure was the model's doing (confine/verifier_control.py)
                return finish("fail", grade.note, "model", grade.note, **extra)
            if task.meta.impossible is not None:  # only a cheat passes: say so, and name what the model did
                extra.update(_impossible_behaviour(task, sandbox.variables, trial_dir, wire_path, passed))
                return finish("cheated" if passed else "fail", detail, ruling.fault, ruling.reason, **extra)
            if passed and tampering[0] == "tampered":  # the model's word, not the verifier's: never a pass
                return finish("tampered", tampering[1], "model", tampering[1], **extra)
            return finish("pass" if passed else "fail", detail, ruling.fault, ruling.reason, **extra)
        except Exception as exc:  # noqa: BLE001 - a harness bug must not end the campaign: record it here
            fault = exception_fault(exc)
            return finish("agent_error", f"harness error: {type(exc).__name__}: {exc}", fault,
                          "the machine ran out of room" if fault == "machine" else "a harness error")
        finally:
            self._end(tmp, trial_dir)

    def _end(self, tmp: Path, trial_dir: Path) -> None:
        """The trial's processes, containers and folders go (the sandbox into the trial's folder with
        `keep_sandboxes`). Never raises: what the model left (a tree of any depth or size) ends no run."""
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

    def _note_engine(self, record: dict[str, Any], sandbox_path: Path) -> None:
        """What ran the trial (docker: the engine and image of the agent's phase, else the grader's)."""
        if not record.get("sandbox_engine"):
            where = self.backend.describe(sandbox_path)
            record.update({f"sandbox_{k}": v for k, v in where.items() if k in ("engine", "image")})

    def _run_agent(self, task: Task, sandbox: Any, trial_dir: Path, wire_path: Path,
                   record: dict[str, Any]) -> tuple[AgentOutcome, float]:
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
        try:
            reads = (task.dir, task.pack_dir, graders_dir(), *filter(None, [sandbox.pristine_store]))
            self.backend.agent_start(sandbox.path, self.agent, reads)  # a head start (docker starts containers)
            if self.agent.uses_model:
                from agentic_eval.classify.emulation import parser_rewriter
                from agentic_eval.wire.recorder import WireRecorder

                # An agent that speaks the Anthropic Messages API (claude-code) says, once per run, whether the
                # endpoint serves it ('native') or the recorder translates it to chat completions ('translate').
                choose_api = getattr(self.agent, "wire_api", None)
                api = choose_api(self.endpoint.base_url, self.endpoint.api_key, self.options) if choose_api else None
                if api is not None:
                    record["wire_api"] = WIRE_APIS.get(api, api)
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
        return outcome, time.monotonic() - a0


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
