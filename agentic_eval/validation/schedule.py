"""Which red-team attempts each task gets, and the two pools validate's units run on (`jobs` that work,
and the attempts that only wait beside them).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from agentic_eval.errors import AgenticEvalError
from agentic_eval.packs.task import Task
from agentic_eval.validation import redteam as rt
from agentic_eval.validation.report import TaskValidation

# --------------------------------------------------------------------------- which attempts run

@dataclass
class RedTeamPlan:
    """The attempts each task gets: the registered ones plus its pack's own `redteam.py`."""

    per_task: dict[str, list[rt.AttemptLike]] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)
    """Task id -> why its pack's own attempts could not be loaded (a reason: the pack author's bug)."""
    names: list[str] = field(default_factory=list)
    """Every attempt that may run, in order."""


def plan_redteam(tasks: Sequence[Task], redteam: bool | Sequence[str]) -> RedTeamPlan | None:
    """What the red team runs on each task (None when `redteam` is False). A sequence of names runs only
    those; an unknown name, or a plugin that fails to load, raises AgenticEvalError before anything runs."""
    if redteam is False:
        return None
    registered = rt.registered_attempts()
    plan = RedTeamPlan()
    by_pack: dict[Path, tuple[list[rt.AttemptLike], str]] = {}
    for task in tasks:
        if task.pack_dir not in by_pack:
            try:
                by_pack[task.pack_dir] = (rt.pack_attempts(task.pack_dir), "")
            except AgenticEvalError as exc:
                by_pack[task.pack_dir] = ([], str(exc))
        own, problem = by_pack[task.pack_dir]
        attempts = {**registered, **{a.name: a for a in own}}
        # the red team edits a generated repo's copy: an environment task's state lives in its containers too
        plan.per_task[task.id] = list(attempts.values()) if task.meta.environment is None else []
        if problem:
            plan.problems[task.id] = problem
    known = list(dict.fromkeys([*registered, *(a.name for own, _ in by_pack.values() for a in own)]))
    if redteam is not True:
        wanted = list(dict.fromkeys(redteam))
        unknown = [n for n in wanted if n not in known]
        if unknown:
            raise AgenticEvalError(f"--redteam: no attempt named {', '.join(map(repr, unknown))} "
                                   f"(there are: {', '.join(known)})")
        plan.per_task = {tid: [a for a in attempts if a.name in wanted] for tid, attempts in plan.per_task.items()}
        known = [n for n in known if n in wanted]
    plan.names = known
    return plan


# --------------------------------------------------------------------------- running the units

WAITING_UNITS_MAX = 256
"""Attempts that make the grader wait (a hang, a FIFO) run at once, up to this many: they cost a grader's
time limit of waiting each, not CPU."""


class TaskJob:
    """One task's validation while its units run: the report they fill in, and how many are left. It
    starts with one unit counted (its submission), so it cannot finish before everything is submitted."""

    def __init__(self, task: Task, report: TaskValidation, base: Path,
                 finish: Callable[[TaskJob], None]) -> None:
        self.task, self.report, self.base, self._finish = task, report, base, finish
        self.lock = threading.Lock()
        self.pending = 1
        self.started = time.monotonic()
        self.finished = threading.Event()
        self.check_reasons: dict[tuple[int, int], list[str]] = {}
        """(seed, run) -> what that run of the checks found wrong with the task itself (a leak, a placeholder,
        the generator): merged in seed order when the task finishes, whatever order its units ran in."""

    def add(self) -> None:
        with self.lock:
            self.pending += 1

    def done(self) -> None:
        with self.lock:
            self.pending -= 1
            last = self.pending == 0
        if last:
            try:
                self._finish(self)
            finally:
                self.finished.set()


class Engine:
    """Two pools: `jobs` units at a time that work, and the units that wait beside them."""

    def __init__(self, jobs: int) -> None:
        self.cpu = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="validate")
        self.waiting = ThreadPoolExecutor(max_workers=WAITING_UNITS_MAX, thread_name_prefix="validate-wait")
        self.cancel = threading.Event()
        """Set on Ctrl-C or SIGTERM: running graders and fixes are killed, queued units never start."""

    def submit(self, job: TaskJob, unit: Callable[[], None], *, wait: bool = False) -> Future[None]:
        job.add()
        return (self.waiting if wait else self.cpu).submit(self._run, job, unit)

    @staticmethod
    def _run(job: TaskJob, unit: Callable[[], None]) -> None:
        try:
            unit()
        except Exception as exc:  # noqa: BLE001 - one unit's trouble never stops the others
            job.report.reasons.append(f"internal error: {type(exc).__name__}: {exc}")
        finally:
            job.done()

    def close(self, *, cancel: bool = False) -> None:
        if cancel:
            self.cancel.set()
        self.cpu.shutdown(wait=True, cancel_futures=cancel)
        self.waiting.shutdown(wait=True, cancel_futures=cancel)
