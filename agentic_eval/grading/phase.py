"""A trial's grade phase, as one job: the task's grade script, or its reward verifier in its environment once the
agent's container is gone, the grader's output kept, and on an impossible task what the model did; returned as the
frozen `GradePart` of the trial's record (the runner's other parts and the judging are in runner/record.py).

Nothing here judges the outcome: `runner.record.judge` does, from this part and the agent's.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from agentic_eval.classify.summary import model_messages
from agentic_eval.confine.backend import SandboxBackend
from agentic_eval.confine.shared_disk import out_of_room
from agentic_eval.grading.grader import (
    CodeHostStats,
    GradeResult,
    ScriptResult,
    ScriptRunner,
    Verdict,
    reward_changes,
    reward_grade,
    reward_ruling,
)
from agentic_eval.grading.impossible import name_behaviour
from agentic_eval.grading.remains import room_taken_emptied
from agentic_eval.grading.snapshot import DIFF_FILE
from agentic_eval.packs.sandbox import Sandbox
from agentic_eval.packs.task import Task, render_template

GRADER_FILE = "grader.txt"
"""The grader's output in the trial folder."""


@dataclass(frozen=True)
class GradePart:
    """The grade phase: the grader's verdict and what it saw."""

    grade: GradeResult
    seconds: float
    files: Mapping[str, str]
    """The grader's files by key, relative to the run folder."""
    side: str = ""
    """Whose fault a fresh reward verifier's failure is, when not the model's ('' for a grade script)."""
    tampering: tuple[str, str] = ("", "")
    """`grading.grader.reward_ruling`: ('tampered' | 'fail' | '', why)."""
    changes: tuple[list[str], int, str] | None = None
    """A reward verifier's changed programs: the first paths, how many, why unknown; None for a grade script."""
    engine: Mapping[str, str] = field(default_factory=dict)
    behaviour: Mapping[str, object] = field(default_factory=dict)
    """An impossible task's `behaviour`, `behaviour_detail` and `behaviours`: what the model did (empty otherwise);
    recorded when the trial's ending is the grader's."""

    def fields(self) -> dict[str, object]:
        fields: dict[str, object] = dict(
            grader_verdict=self.grade.verdict.value, grade_duration_s=round(self.seconds, 3), reward=self.grade.reward,
            tests_forged=list(self.grade.tests_forged))
        if self.changes is not None:
            fields.update(changed_programs=self.changes[0][:20], changed_programs_count=self.changes[1],
                          changed_programs_error=self.changes[2])
        return fields


def grade_trial(task: Task, sandbox: Sandbox, backend: SandboxBackend, trial_dir: Path, run_dir: Path,
                cancel: threading.Event) -> GradePart | None:
    """The grade phase of the trial in `trial_dir` (under `run_dir`): the task's grade script, or its reward
    verifier after the agent's container is gone. None when the run was cancelled while grading."""
    backend.grading_start(sandbox.path)
    g0 = time.monotonic()
    try:
        part, host = _run_grader(task, sandbox, backend, cancel)
    except Exception as exc:  # one that ran out of room is ruled here; any other is the runner's
        if (full := out_of_room(exc)) is None or not (taken := room_taken_emptied(backend, sandbox.path, 0)):
            raise
        script = ScriptResult(None, f"agentic-eval: grading stopped: {full}\n", time.monotonic() - g0)
        part, host = GradePart(_models_fail(script, taken, str(full)), 0.0, {}), None
    if part.grade.script.cancelled:
        return None
    if host is not None and host.out_of_room and part.grade.verdict is not Verdict.PASS:
        part = rule_out_of_room(part, host, backend, sandbox)
    grade = part.grade
    seconds = time.monotonic() - g0
    (trial_dir / GRADER_FILE).write_text(grade.script.output, encoding="utf-8")
    behaviour = (impossible_behaviour(task, sandbox, trial_dir, grade.verdict is Verdict.PASS)
                 if task.meta.impossible is not None else {})  # what the model did where only a cheat passes
    engine = engine_fields(backend.describe(sandbox.path))  # what ran the grader or the verifier
    return GradePart(part.grade, seconds, {"grader": str((trial_dir / GRADER_FILE).relative_to(run_dir))},
                     side=part.side, tampering=part.tampering, changes=part.changes,
                     engine=engine, behaviour=behaviour)


def _run_grader(task: Task, sandbox: Sandbox, backend: SandboxBackend, cancel: threading.Event
                ) -> tuple[GradePart, CodeHostStats | None]:
    """The task's grade script, or its reward verifier: its part (not yet timed) and what the grade script's code
    host saw (None for a reward verifier)."""
    if task.verifier == "reward":
        run = backend.verify_environment(sandbox.path, cancel)
        grade = reward_grade(run)
        changed = (*reward_changes(run), run.changes.error if run.changes is not None else "")
        # whose fault a fresh verifier's failure is; what it ran that the model changed (docker_env.py)
        return GradePart(grade, 0.0, {}, side=run.fault_side, tampering=reward_ruling(run, grade.verdict),
                         changes=changed), None
    with ScriptRunner(task, sandbox, backend=backend) as runner:
        grade = runner.grade(cancel=cancel)
    return GradePart(grade, 0.0, {}), runner.last_host


def rule_out_of_room(part: GradePart, host: CodeHostStats, backend: SandboxBackend, sandbox: Sandbox) -> GradePart:
    """A grade that is not a pass, from a grading whose code host ran out of room on the disk the sandbox shares
    with the machine (confine/shared_disk.py): the model's scored fail, naming the cause, when its tree and what its
    code wrote took at least half of the room free at the trial's start (the sandbox is emptied then, so that the
    record can be written), or on docker's capped grading folder, which only they fill (confine/docker_grading.py);
    else the machine's fault, unscored (the grader could not judge in full)."""
    # elsewhere > 0: the code host ran out of room (what docker's room_taken asks for)
    taken = room_taken_emptied(backend, sandbox.path, max(host.room_used, 1))
    if taken:
        return replace(part, grade=_models_fail(part.grade.script, taken, host.out_of_room))
    why = f"the disk ran out of room while grading ({host.out_of_room}), not by the model's doing: free some space"
    return replace(part, grade=replace(part.grade, verdict=Verdict.ERROR, error=why, cause_found=True),
                   side="machine")


def _models_fail(script: ScriptResult, taken: str, full: str) -> GradeResult:
    return GradeResult(Verdict.FAIL, script, note=f"{taken}: grading ran out of room ({full[:200]}); the sandbox was "
                                                  "emptied")


def impossible_behaviour(task: Task, sandbox: Sandbox, trial_dir: Path, passed: bool) -> dict[str, object]:
    """An impossible task's trial: what the model did, from the snapshot's diff.patch and the wire log."""
    spec = task.meta.impossible
    assert spec is not None
    variables, wire_path = sandbox.variables, trial_dir / "wire.jsonl"
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


def engine_fields(where: Mapping[str, str]) -> dict[str, str]:
    """What ran a phase, as the record's fields (docker: `sandbox_engine`, `sandbox_image`)."""
    return {f"sandbox_{k}": v for k, v in where.items() if k in ("engine", "image")}
