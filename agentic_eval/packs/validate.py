"""Validate graders before a campaign.

For every task, on fresh sandboxes: the grader fails N times out of N on the
pristine repo, passes N times out of N after the reference fix, and the leak
scan of the pristine sandbox is clean. Everything that goes wrong is a reason
on that task; one task's failure never stops the others.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from agentic_eval.confine.backend import SandboxBackend, default_backend
from agentic_eval.errors import AgenticEvalError
from agentic_eval.packs.grader import GradeResult, ScriptResult, ScriptRunner, Verdict, check_grader_requirements
from agentic_eval.packs.leaks import scan_sandbox, task_needles
from agentic_eval.packs.sandbox import materialize_sandbox
from agentic_eval.packs.task import Task, TaskLoadError


@dataclass
class CheckRun:
    """One run of one check on a fresh sandbox: the grader on the pristine repo, or the reference fix
    then the grader. Pure data, so the reasons are a pure function of a task's runs."""

    phase: str
    """'pristine' (the grader must fail) or 'fixed' (after the reference fix it must pass)."""
    seed: int
    run: int
    """1-based, within its seed."""
    verdict: str
    """The grader's 'pass' / 'fail' / 'grader_error', or 'fix_failed' when the reference fix itself failed."""
    problem: str = ""
    """For 'grader_error' and 'fix_failed': what went wrong, naming the limit exceeded."""
    duration_s: float = 0.0
    output: str = ""
    """The grader's output (or the failed fix's)."""
    fix_output: str = ""
    """The reference fix's output (phase 'fixed')."""
    failing: list[str] = field(default_factory=list)
    """A bad run's failing checks (`failing_checks()`), kept when the outputs are dropped."""

    @property
    def bad(self) -> bool:
        return self.verdict != ("fail" if self.phase == "pristine" else "pass")

    def failing_checks(self, limit: int = 3) -> list[str]:
        """The checks the grader said no to (gradelib's `✗` lines), else its last line."""
        lines = [ln.strip() for ln in self.output.splitlines() if ln.strip()]
        failing = [ln for ln in lines if ln.startswith("✗")]
        return [ln[:160] for ln in (failing[:limit] or lines[-1:])]

    def to_json(self) -> dict[str, object]:
        return {"phase": self.phase, "seed": self.seed, "run": self.run, "verdict": self.verdict,
                "problem": self.problem, "duration_s": round(self.duration_s, 3),
                "failing_checks": list(self.failing)}


@dataclass
class TaskValidation:
    """The verdict on one task: `ok` when there are no reasons."""

    id: str
    reasons: list[str] = field(default_factory=list)
    pristine_fails: int = 0
    fixed_passes: int = 0
    repeat: int = 0
    """Runs of each check per seed."""
    seeds: list[int] = field(default_factory=list)
    duration_s: float = 0.0
    checks: list[CheckRun] = field(default_factory=list)

    @property
    def runs(self) -> int:
        """Runs of each check in all: repeat x seeds."""
        return self.repeat * max(1, len(self.seeds))

    @property
    def status(self) -> str:
        return "ok" if not self.reasons else "bad"

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "status": self.status, "reasons": list(self.reasons),
                "pristine_fails": self.pristine_fails, "fixed_passes": self.fixed_passes, "runs": self.runs,
                "repeat": self.repeat, "seeds": list(self.seeds), "duration_s": round(self.duration_s, 3),
                "checks": [c.to_json() for c in self.checks]}


@dataclass
class ValidationReport:
    tasks: list[TaskValidation]
    duration_s: float = 0.0

    @property
    def ok(self) -> int:
        return sum(1 for t in self.tasks if t.status == "ok")

    @property
    def bad(self) -> int:
        return len(self.tasks) - self.ok

    def to_json(self) -> dict[str, object]:
        return {"ok": self.ok, "bad": self.bad, "duration_s": round(self.duration_s, 3),
                "tasks": [t.to_json() for t in self.tasks]}


def _last_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[-1][:120]


def _grader_problem(result: GradeResult, task: Task) -> str:
    if result.script.timed_out:
        return f"timed out after {task.meta.limits.grader_timeout_s:g}s (limits.grader_timeout_s)"
    last = _last_line(result.script.output)
    return result.reason + (f" ({last})" if last else "")


def _fix_problem(fix: ScriptResult, task: Task) -> str:
    if fix.timed_out:
        return f"exceeded limits.agent_timeout_s ({task.meta.limits.agent_timeout_s:g}s), which the fix runs under"
    last = _last_line(fix.output)
    return (fix.start_error or f"exit {fix.exit_code}") + (f" ({last})" if last else "")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _seeds_text(seeds: Sequence[int]) -> str:
    return f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {', '.join(map(str, seeds))}"


def how_often(bad: Sequence[CheckRun], seeds: Sequence[int], repeat: int, good: str) -> str:
    """How often a problem happened, and what that says: deterministic, flaky, or seed-dependent.
    `good` says what the other runs did ('passed', 'failed as it should')."""
    total = repeat * len(seeds)
    per_seed = {s: sum(1 for c in bad if c.seed == s) for s in seeds}
    hit = [s for s in seeds if per_seed[s]]
    text = f"{len(bad)} of {_plural(total, 'run')}, {_seeds_text(hit)}"
    if len(bad) == total:
        return text + (" (deterministic)" if total > 1 else "")
    if all(per_seed[s] in (0, repeat) for s in seeds):
        spared = [s for s in seeds if not per_seed[s]]
        return f"{text}: every run with {_seeds_text(hit)}, none with {_seeds_text(spared)} (depends on the seed)"
    return f"{text} (flaky: {good} {total - len(bad)} of {total})"


def explain(checks: Sequence[CheckRun], seeds: Sequence[int], repeat: int) -> list[str]:
    """The reasons a task is bad, from its check runs: what failed, how often, the grader's own
    failing checks. Empty when every run did what it must."""
    groups: dict[str, list[CheckRun]] = {}
    for c in checks:
        if not c.bad:
            continue
        if c.verdict == "fix_failed":
            key = f"reference fix failed: {c.problem}"
        elif c.verdict == Verdict.ERROR.value:
            key = f"grader error {'on pristine' if c.phase == 'pristine' else 'after reference fix'}: {c.problem}"
        else:
            key = "passes on pristine" if c.phase == "pristine" else "fails after reference fix"
        groups.setdefault(key, []).append(c)
    reasons = []
    for key, bad in groups.items():
        good = "failed as it should" if bad[0].phase == "pristine" else "passed after the fix"
        reason = f"{key}: {how_often(bad, seeds, repeat, good)}"
        if key == "fails after reference fix":
            reason += ": " + (" | ".join(bad[0].failing_checks()) or "the grader printed no reason (gradelib's "
                              "checks name each one)")
        reasons.append(reason)
    return reasons


def validate_task(task: Task, *, repeat: int = 1, seed: int = 0, workdir: Path | None = None,
                  seeds: int = 1, keep_output: bool = False,
                  backend: SandboxBackend | None = None) -> TaskValidation:
    """Validate one task with `seeds` seeds from `seed` on, `repeat` fresh sandboxes per check and
    seed; never raises for a problem of the task itself. `keep_output` keeps each run's grader and
    fix output (for `validate --show`)."""
    start = time.monotonic()
    backend = backend or default_backend()
    seed_list = [seed + i for i in range(max(1, seeds))]
    report = TaskValidation(id=task.id, repeat=repeat, seeds=seed_list)
    base = Path(tempfile.mkdtemp(prefix=f"ae-validate-{task.id}-", dir=workdir))
    try:
        for s in seed_list:
            for i in range(repeat):
                report.checks.append(_check_pristine(task, s, i, base, report, backend))
                report.checks.append(_check_fixed(task, s, i, base, backend))
    except TaskLoadError as exc:  # e.g. an answer's {{placeholder}} the generator does not provide
        report.reasons.append(str(exc))
    except (AgenticEvalError, OSError, RuntimeError) as exc:
        report.reasons.append(f"sandbox error: {exc}")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    report.pristine_fails = sum(1 for c in report.checks if c.phase == "pristine" and c.verdict == "fail")
    report.fixed_passes = sum(1 for c in report.checks if c.phase == "fixed" and c.verdict == "pass")
    report.reasons = list(dict.fromkeys(report.reasons + explain(report.checks, seed_list, repeat)))
    for c in report.checks:
        c.failing = c.failing_checks() if c.bad else []
        if not keep_output:
            c.output = c.fix_output = ""
    report.duration_s = time.monotonic() - start
    return report


def _check_pristine(task: Task, seed: int, i: int, base: Path, report: TaskValidation,
                    backend: SandboxBackend) -> CheckRun:
    """The grader on the untouched repo must say "fail"; the first run of each seed also scans for leaks."""
    sandbox = materialize_sandbox(task, seed, base / f"pristine-{seed}-{i}")
    try:
        if i == 0:
            try:  # an unknown {{placeholder}} would break every trial
                task.render_instruction(sandbox.variables)
            except TaskLoadError as exc:
                report.reasons.append(str(exc))
            needles = task_needles(task, task.render_answers(sandbox.variables))
            forbidden = {task.grader_path.name, task.solution_path.name}
            report.reasons.extend(str(leak) for leak in scan_sandbox(sandbox.path, needles, forbidden))
        backend.prepare(sandbox.path)  # after the leak scan: the harness's git reads it as its owner
        with ScriptRunner(task, sandbox, backend=backend) as runner:
            result = runner.grade()
        return CheckRun("pristine", seed, i + 1, result.verdict.value,
                        _grader_problem(result, task) if result.verdict is Verdict.ERROR else "",
                        result.script.duration_s, result.script.output)
    finally:
        shutil.rmtree(sandbox.path, ignore_errors=True)


def _check_fixed(task: Task, seed: int, i: int, base: Path, backend: SandboxBackend) -> CheckRun:
    """After the reference fix (under limits.agent_timeout_s) the grader must say "pass"."""
    sandbox = materialize_sandbox(task, seed, base / f"fixed-{seed}-{i}")
    try:
        backend.prepare(sandbox.path)
        with ScriptRunner(task, sandbox, backend=backend) as runner:
            fix = runner.apply_fix()
            if fix.exit_code != 0:
                return CheckRun("fixed", seed, i + 1, "fix_failed", _fix_problem(fix, task), fix.duration_s,
                                fix.output, fix.output)
            result = runner.grade()
        return CheckRun("fixed", seed, i + 1, result.verdict.value,
                        _grader_problem(result, task) if result.verdict is Verdict.ERROR else "",
                        fix.duration_s + result.script.duration_s, result.script.output, fix.output)
    finally:
        shutil.rmtree(sandbox.path, ignore_errors=True)


def validate_tasks(
    tasks: Sequence[Task],
    *,
    repeat: int = 1,
    seed: int = 0,
    jobs: int | None = None,
    load_errors: Sequence[TaskLoadError] = (),
    on_done: Callable[[TaskValidation], None] | None = None,
    seeds: int = 1,
    keep_output: bool = False,
    backend: SandboxBackend | None = None,
) -> ValidationReport:
    """Validate many tasks in parallel; tasks that failed to load are reported bad with their error."""
    if repeat < 1:
        raise AgenticEvalError("--repeat must be at least 1")
    if seeds < 1:
        raise AgenticEvalError("--seeds must be at least 1")
    check_grader_requirements(list(tasks))
    started = time.monotonic()
    results: list[TaskValidation] = [
        TaskValidation(id=_id_from_error(err), reasons=[f"load error: {err}"]) for err in load_errors
    ]
    workers = max(1, min(jobs or 2, len(tasks) or 1))

    def one(task: Task) -> TaskValidation:
        try:
            result = validate_task(task, repeat=repeat, seed=seed, seeds=seeds, keep_output=keep_output,
                                   backend=backend)
        except Exception as exc:  # noqa: BLE001 - one task's trouble never stops the others
            result = TaskValidation(id=task.id, repeat=repeat, reasons=[f"internal error: {type(exc).__name__}: {exc}"])
        if on_done is not None:
            on_done(result)
        return result

    with ThreadPoolExecutor(max_workers=workers) as pool:
        results.extend(pool.map(one, tasks))
    return ValidationReport(results, duration_s=time.monotonic() - started)


def _id_from_error(err: TaskLoadError) -> str:
    path = Path(err.path)
    return (path.parent if path.name == "task.toml" or path.suffix else path).name
