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

from agentic_eval.confine import SandboxBackend, default_backend
from agentic_eval.errors import AgenticEvalError
from agentic_eval.grader import GradeResult, ScriptRunner, Verdict
from agentic_eval.leaks import scan_sandbox, task_needles
from agentic_eval.sandbox import materialize_sandbox
from agentic_eval.task import Task, TaskLoadError


@dataclass
class TaskValidation:
    """The verdict on one task: `ok` when there are no reasons."""

    id: str
    reasons: list[str] = field(default_factory=list)
    pristine_fails: int = 0
    fixed_passes: int = 0
    repeat: int = 0
    duration_s: float = 0.0

    @property
    def status(self) -> str:
        return "ok" if not self.reasons else "bad"

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "status": self.status, "reasons": list(self.reasons)}


@dataclass
class ValidationReport:
    tasks: list[TaskValidation]

    @property
    def ok(self) -> int:
        return sum(1 for t in self.tasks if t.status == "ok")

    @property
    def bad(self) -> int:
        return len(self.tasks) - self.ok

    def to_json(self) -> dict[str, object]:
        return {"ok": self.ok, "bad": self.bad, "tasks": [t.to_json() for t in self.tasks]}


def _grader_problem(result: GradeResult) -> str:
    tail = result.script.output.strip().splitlines()[-1:] or [""]
    detail = f" ({tail[0][:120]})" if tail[0] else ""
    return f"grader error: {result.reason}{detail}"


def _count_reason(label: str, good: int, repeat: int) -> str:
    return label if repeat == 1 else f"{label} ({repeat - good}/{repeat})"


def validate_task(task: Task, *, repeat: int = 1, seed: int = 0, workdir: Path | None = None,
                  backend: SandboxBackend | None = None) -> TaskValidation:
    """Validate one task; never raises for a problem of the task itself."""
    start = time.monotonic()
    backend = backend or default_backend()
    report = TaskValidation(id=task.id, repeat=repeat)
    base = Path(tempfile.mkdtemp(prefix=f"ae-validate-{task.id}-", dir=workdir))
    pristine_errors: list[str] = []
    fixed_errors: list[str] = []
    pristine_passes = 0
    fixed_fails = 0
    try:
        for i in range(repeat):
            # The grader on the untouched repo must say "fail".
            sandbox = materialize_sandbox(task, seed, base / f"pristine-{i}")
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
            if result.verdict is Verdict.FAIL:
                report.pristine_fails += 1
            elif result.verdict is Verdict.PASS:
                pristine_passes += 1
            else:
                pristine_errors.append(_grader_problem(result) + " on pristine")
            shutil.rmtree(sandbox.path, ignore_errors=True)

            # The reference fix must make it say "pass".
            sandbox = materialize_sandbox(task, seed, base / f"fixed-{i}")
            backend.prepare(sandbox.path)
            with ScriptRunner(task, sandbox, backend=backend) as runner:
                fix = runner.apply_fix()
                if fix.exit_code != 0:
                    why = "timeout" if fix.timed_out else (fix.start_error or f"exit {fix.exit_code}")
                    last = (fix.output.strip().splitlines() or [""])[-1][:120]
                    fixed_errors.append(f"reference fix failed: {why}" + (f" ({last})" if last else ""))
                    fixed_fails += 1
                else:
                    result = runner.grade()
                    if result.verdict is Verdict.PASS:
                        report.fixed_passes += 1
                    elif result.verdict is Verdict.FAIL:
                        fixed_fails += 1
                    else:
                        fixed_errors.append(_grader_problem(result) + " after reference fix")
            shutil.rmtree(sandbox.path, ignore_errors=True)
    except TaskLoadError as exc:  # e.g. an answer's {{placeholder}} the generator does not provide
        report.reasons.append(str(exc))
    except (AgenticEvalError, OSError, RuntimeError) as exc:
        report.reasons.append(f"sandbox error: {exc}")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if pristine_passes:
        report.reasons.append(_count_reason("passes on pristine", repeat - pristine_passes, repeat))
    if fixed_fails and not fixed_errors:
        report.reasons.append(_count_reason("fails after reference fix", repeat - fixed_fails, repeat))
    # Each distinct error once, with how often it happened.
    for problem in dict.fromkeys(pristine_errors + fixed_errors):
        n = (pristine_errors + fixed_errors).count(problem)
        report.reasons.append(problem if n == 1 else f"{problem} ({n}x)")
    report.duration_s = time.monotonic() - start
    return report


def validate_tasks(
    tasks: Sequence[Task],
    *,
    repeat: int = 1,
    seed: int = 0,
    jobs: int | None = None,
    load_errors: Sequence[TaskLoadError] = (),
    on_done: Callable[[TaskValidation], None] | None = None,
    backend: SandboxBackend | None = None,
) -> ValidationReport:
    """Validate many tasks in parallel; tasks that failed to load are reported bad with their error."""
    if repeat < 1:
        raise AgenticEvalError("--repeat must be at least 1")
    results: list[TaskValidation] = [
        TaskValidation(id=_id_from_error(err), reasons=[f"load error: {err}"]) for err in load_errors
    ]
    workers = max(1, min(jobs or 2, len(tasks) or 1))

    def one(task: Task) -> TaskValidation:
        try:
            result = validate_task(task, repeat=repeat, seed=seed, backend=backend)
        except Exception as exc:  # one task's trouble never stops the others
            result = TaskValidation(id=task.id, repeat=repeat, reasons=[f"internal error: {type(exc).__name__}: {exc}"])
        if on_done is not None:
            on_done(result)
        return result

    with ThreadPoolExecutor(max_workers=workers) as pool:
        results.extend(pool.map(one, tasks))
    return ValidationReport(results)


def _id_from_error(err: TaskLoadError) -> str:
    path = Path(err.path)
    return (path.parent if path.name == "task.toml" or path.suffix else path).name
