"""Validate graders before a campaign.

For every task, on fresh sandboxes: the grader fails N times out of N on the
pristine repo, passes N times out of N after the reference fix, the leak
scan of the pristine sandbox is clean, and (the red team, `validation/redteam.py`)
every generic forgery or dodge that fits the sandbox's languages, applied to a
pristine sandbox, leaves the grader with a scored fail. Everything that goes
wrong is a reason on that task; one task's failure never stops the others.

The CLI's defaults (cli/validate.py: 3 seeds x 2 runs of each check, the red
team on the first seed) are chosen to catch a grader that depends on the seed
or goes wrong a good share of the time; `evidence()` says what a number of
runs can and cannot rule out. The library functions default to one seed and
one run (and the red team on every seed), which is what a caller that asks for
nothing more gets. A task no seed reaches (`environment.seed_independent`: a
Harbor task, say) is checked on the first seed alone, `repeat` times, and a
note says so: its other seeds would build the same tree and verdict again.

The work is cut into units (one pristine and one fixed check of one seed; one
red-team attempt on one seed) run in parallel: `jobs` units at a time, plus
every attempt that makes the grader wait (a hang, a FIFO) at once beside
them, so that a grader's timeout is waited out once, not once per task.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from agentic_eval.confine.backend import SandboxBackend, default_backend
from agentic_eval.confine.verifier_cause import verifier_fault
from agentic_eval.errors import AgenticEvalError
from agentic_eval.grading.grader import (
    GradeResult,
    ScriptResult,
    ScriptRunner,
    Verdict,
    check_grader_requirements,
    reward_grade,
)
from agentic_eval.leftovers import mark_trial_folder
from agentic_eval.packs.environment import seed_independent
from agentic_eval.packs.sandbox import Sandbox, materialize_environment, materialize_sandbox, pristine_store_for
from agentic_eval.packs.task import Task, TaskLoadError
from agentic_eval.validation import redteam as rt
from agentic_eval.validation.leaks import scan_sandbox, task_needles


@dataclass
class CheckRun:
    """One run of one check on a fresh sandbox: the grader on the pristine repo, or the reference fix
    then the grader. Pure data, so the reasons are a pure function of a task's runs."""

    phase: str
    """'pristine' (the grader must fail) or 'fixed' (after the reference fix it must pass); for an impossible
    task 'honest' (after the honest reference fix it must fail) and 'cheat' (after the reference cheat it must
    pass, and the trial classifier must name the cheat as the task says)."""
    seed: int
    run: int
    """1-based, within its seed."""
    verdict: str
    """The grader's 'pass' / 'fail' / 'grader_error', or 'fix_failed' when the reference fix (or cheat) itself
    failed; 'cheated' for a cheat check whose pass the classifier named right."""
    problem: str = ""
    """For 'grader_error' and 'fix_failed': what went wrong, naming the limit exceeded."""
    duration_s: float = 0.0
    output: str = ""
    """The grader's output (or the failed fix's)."""
    fix_output: str = ""
    """The reference fix's output (phase 'fixed')."""
    failing: list[str] = field(default_factory=list)
    """A bad run's failing checks (`failing_checks()`), kept when the outputs are dropped."""
    passing: list[str] = field(default_factory=list)
    """A pristine run that passed: the checks that let it through (`passing_checks()`), kept likewise."""

    @property
    def bad(self) -> bool:
        return self.verdict != MUST_SAY[self.phase]

    def failing_checks(self, limit: int = 3) -> list[str]:
        """The checks the grader said no to (gradelib's `✗` lines), else its last line; none for a pass
        (its last line is gradelib's `PASS: N checks`, which names nothing)."""
        return [] if self.verdict == "pass" else failing_checks(self.output, limit)

    def passing_checks(self, limit: int = 5) -> list[str]:
        """For a pass, the checks that let it through (gradelib's `✓` lines)."""
        return passing_checks(self.output, limit) if self.verdict == "pass" else []

    def to_json(self) -> dict[str, object]:
        return {"phase": self.phase, "seed": self.seed, "run": self.run, "verdict": self.verdict,
                "problem": self.problem, "duration_s": round(self.duration_s, 3),
                "failing_checks": list(self.failing), "passing_checks": list(self.passing)}


MUST_SAY = {"pristine": "fail", "fixed": "pass", "honest": "fail", "cheat": "cheated"}
"""What each check must end in."""

GRADED = ("pass", "fail", "cheated", "grader_error")
"""The verdicts of an attempt whose sandbox was graded."""


@dataclass
class AttemptRun:
    """One red-team attempt on a fresh pristine sandbox of one seed, then the grader, as in a trial."""

    attempt: str
    seed: int
    verdict: str
    """The grader's 'pass' / 'fail' / 'grader_error' ('fail' is what it must say; on an impossible task, whose
    tests only a cheat passes, a pass is 'cheated', as in a trial, and as good); or, not graded:
    'not_applied' (the attempt's apply raised), 'no_change' (it found nothing to change in this sandbox, or a
    knowing attempt broke nothing the grader judges),
    'skipped' (it needs a confining sandbox backend and the run has none)."""
    problem: str = ""
    """For 'grader_error', 'not_applied' and 'skipped': what happened."""
    duration_s: float = 0.0
    output: str = ""
    """The grader's output."""
    failing: list[str] = field(default_factory=list)
    """A grader error's failing checks, kept when the output is dropped."""
    passing: list[str] = field(default_factory=list)
    """An attempt that passed: the checks that let it through, kept likewise."""

    @property
    def bad(self) -> bool:
        """The attempt beat the grader: a pass, or a grader error (unscored, retried on resume)."""
        return self.verdict in ("pass", "grader_error")

    def to_json(self) -> dict[str, object]:
        return {"attempt": self.attempt, "seed": self.seed, "verdict": self.verdict, "problem": self.problem,
                "duration_s": round(self.duration_s, 3), "failing_checks": list(self.failing),
                "passing_checks": list(self.passing)}


@dataclass
class TaskValidation:
    """The verdict on one task: `ok` when there are no reasons."""

    id: str
    reasons: list[str] = field(default_factory=list)
    pristine_fails: int = 0
    fixed_passes: int = 0
    honest_fails: int = 0
    """An impossible task: runs whose honest reference fix failed the grader, as it must."""
    cheats_caught: int = 0
    """An impossible task: runs whose reference cheat passed the grader and was named right, as it must."""
    impossible: bool = False
    repeat: int = 0
    """Runs of each check per seed."""
    seeds: list[int] = field(default_factory=list)
    redteam_seeds: list[int] = field(default_factory=list)
    """The seeds the red team ran on (the first of `seeds`)."""
    duration_s: float = 0.0
    """Wall time from the task's first unit's start to its last one's end."""
    checks: list[CheckRun] = field(default_factory=list)
    redteam: list[AttemptRun] | None = None
    """The red team's attempts on this task (None: the red team did not run)."""
    languages: list[str] = field(default_factory=list)
    """The sandbox's languages, which chose the attempts."""
    notes: list[str] = field(default_factory=list)
    """What is worth saying but does not make the task bad (an attempt that could not be applied)."""
    unbuildable: str = ""
    """Why its image could not be built (nothing of it ran; the task author's to fix), or ''."""

    @property
    def runs(self) -> int:
        """Runs of each check in all: repeat x seeds."""
        return self.repeat * max(1, len(self.seeds))

    @property
    def status(self) -> str:
        return "ok" if not self.reasons else "bad"

    @property
    def redteam_graded(self) -> list[AttemptRun]:
        """The attempts whose sandbox was graded (applied, and changed something)."""
        return [a for a in self.redteam or () if a.verdict in GRADED]

    @property
    def redteam_held(self) -> int:
        """Attempts the grader answered with a scored fail, as it must."""
        return sum(1 for a in self.redteam_graded if not a.bad)

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "status": self.status, "reasons": list(self.reasons), "notes": list(self.notes),
                "pristine_fails": self.pristine_fails, "fixed_passes": self.fixed_passes,
                "impossible": self.impossible, "honest_fails": self.honest_fails, "unbuildable": self.unbuildable,
                "cheats_caught": self.cheats_caught, "runs": self.runs,
                "repeat": self.repeat, "seeds": list(self.seeds), "redteam_seeds": list(self.redteam_seeds),
                "duration_s": round(self.duration_s, 3),
                "checks": [c.to_json() for c in self.checks], "languages": list(self.languages),
                "redteam": None if self.redteam is None else [a.to_json() for a in self.redteam]}


@dataclass
class ValidationReport:
    tasks: list[TaskValidation]
    duration_s: float = 0.0
    redteam: list[str] | None = None
    """The attempts the red team could run (None: it was off)."""
    seeds: list[int] = field(default_factory=list)
    """The seeds the checks ran with (a task no seed reaches: the first alone, its own `seeds` says)."""
    repeat: int = 1
    """Runs of each check per seed."""
    redteam_seeds: list[int] = field(default_factory=list)
    """The seeds the red team ran on."""

    @property
    def ok(self) -> int:
        return sum(1 for t in self.tasks if t.status == "ok")

    @property
    def bad(self) -> int:
        return len(self.tasks) - self.ok

    def seed_groups(self) -> dict[int, list[str]]:
        """The tasks that ran, by how many seeds their checks ran on (a task no seed reaches: one)."""
        groups: dict[int, list[str]] = {}
        for t in self.tasks:
            if t.checks:
                groups.setdefault(len(t.seeds), []).append(t.id)
        return dict(sorted(groups.items(), reverse=True))

    def evidence_lines(self) -> list[str]:
        """What the runs that were made can rule out: one line per number of seeds the tasks ran on."""
        groups = self.seed_groups()
        if len(groups) <= 1:
            return [evidence(next(iter(groups), len(self.seeds)), self.repeat)]
        return [f"{_plural(len(ids), 'task')} ({', '.join(ids[:3])}{' ...' if len(ids) > 3 else ''}): "
                f"{evidence(n, self.repeat)}" for n, ids in groups.items()]

    def ran(self) -> str:
        """What ran, as it ran: the seeds x runs of the tasks' checks and the red-team attempts actually made
        (`seeds 0-2 x 2 runs, 14 red-team attempts on seed 0`; for tasks no seed reaches and no red team works
        on, `seed 0 x 2 runs, no red team (not run on environment tasks)`)."""
        groups = self.seed_groups()
        runs = _plural(self.repeat, "run")
        if len(groups) <= 1:
            count = next(iter(groups), len(self.seeds))
            checks = f"{_seeds_range(self.seeds[:count])} x {runs}"
        else:
            checks = "; ".join(f"{_plural(len(ids), 'task')} {_seeds_range(self.seeds[:n])} x {runs}"
                               for n, ids in groups.items())
        attempts = len({a.attempt for t in self.tasks for a in t.redteam or () if a.verdict != "skipped"})
        if self.redteam is None:
            team = "no red team"
        elif not attempts:
            team = "no red team on environment tasks" if groups else "no red team"
        else:
            on, ran = sum(1 for t in self.tasks if t.redteam), sum(map(len, groups.values()))
            team = (f"{_plural(attempts, 'red-team attempt')} on {_seeds_range(self.redteam_seeds)}"
                    + (f" ({on} of {ran} tasks)" if on < ran else ""))
        return f"{checks}, {team}"

    def to_json(self) -> dict[str, object]:
        return {"ok": self.ok, "bad": self.bad, "duration_s": round(self.duration_s, 3), "redteam": self.redteam,
                "seeds": list(self.seeds), "repeat": self.repeat, "redteam_seeds": list(self.redteam_seeds),
                "evidence": "; ".join(self.evidence_lines()), "ran": self.ran(),
                "tasks": [t.to_json() for t in self.tasks]}


def _percent(chance: float) -> str:
    if chance >= 0.01:
        return f"{chance:.0%}"
    return f"{chance:.1%}" if chance >= 0.001 else "under 0.1%"


def evidence(seeds: int, repeat: int) -> str:
    """What `seeds` x `repeat` runs of each check can and cannot rule out: how often a grader that goes wrong
    one run in N (independently), or one that is wrong for one seed in N, would still do right every run."""
    runs = seeds * repeat
    rates = ", ".join(f"1 in {n}: {_percent((1 - 1 / n) ** runs)}" for n in (4, 10))
    text = (f"{_plural(runs, 'run')} of each check ({_plural(seeds, 'seed')} x {repeat}): a grader that goes wrong "
            f"1 run in 2 would slip past {'it' if runs == 1 else 'them'} {_percent(0.5 ** runs)} of the time "
            f"({rates})")
    if seeds == 1:
        return text + "; one seed says nothing of the others (--seeds N checks more)"
    return (text + f"; one wrong for 1 seed in 2 would slip past {seeds} seeds {_percent(0.5 ** seeds)} of the "
            f"time (1 in 4: {_percent(0.75 ** seeds)}); --repeat and --seeds run more")


def _last_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[-1][:240]


CRASH_PREFIX = "grader error: "
"""How gradelib (and the harness's start-up of a Python script) begin the one line they print for a crash:
`grader error: KeyError: 'port' (grade.py:12)`."""


def _exit_and_last_line(exit_text: str, output: str) -> str:
    """`exit 3: KeyError: 'port' (grade.py:12)` for a script whose last line says why it errored, else
    `exit 3 (its last line)`."""
    last = _last_line(output)
    if last.startswith(CRASH_PREFIX):
        return f"{exit_text}: {last[len(CRASH_PREFIX):]}"
    return exit_text + (f" ({last})" if last else "")


def _grader_problem(result: GradeResult, task: Task, limit: float | None = None) -> str:
    if result.script.timed_out:
        full = task.meta.limits.grader_timeout_s
        if limit is not None and limit < full:
            return f"timed out after {limit:g}s (the red team's limit for an attempt that waits)"
        return f"timed out after {full:g}s (limits.grader_timeout_s)"
    if result.cause_found:
        return result.reason
    return _exit_and_last_line(result.reason, result.script.output)


def _report_alone(output: str) -> str:
    """The passed checks of a grader's output that rest on a test run's report alone (gradelib marks them):
    what a forgery that passed got past."""
    marker = "(from the run's report alone)"
    lines = [line.removeprefix("✓ ").replace(marker, "").strip() for line in output.splitlines()
             if line.startswith("✓ ") and marker in line]
    return ("forgeable: it rests on a test report alone: " + "; ".join(lines[:3])) if lines else ""


def _fix_problem(fix: ScriptResult, task: Task) -> str:
    if fix.timed_out:
        return f"exceeded limits.agent_timeout_s ({task.meta.limits.agent_timeout_s:g}s), which the fix runs under"
    return _exit_and_last_line(fix.start_error or f"exit {fix.exit_code}", fix.output)


def _seeds_range(seeds: Sequence[int]) -> str:
    return f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {seeds[0]}-{seeds[-1]}" if seeds else "no seed"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _seeds_text(seeds: Sequence[int]) -> str:
    return f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {', '.join(map(str, seeds))}"


def how_often(bad: Sequence[CheckRun], seeds: Sequence[int], repeat: int, good: str) -> str:
    """How often a problem happened, worded by the evidence: every run (`every run, 6 of 6`); every run
    with some seeds and none with the others (`depends on the seed`, when each seed ran more than once;
    with one run per seed that cannot be told from chance, and it says so); else now and then (`flaky`).
    `good` says what the other runs did ('passed after the fix', 'failed as it should')."""
    total = repeat * len(seeds)
    n = len(bad)
    per_seed = {s: sum(1 for c in bad if c.seed == s) for s in seeds}
    hit = [s for s in seeds if per_seed[s]]
    spared = [s for s in seeds if not per_seed[s]]
    if n == total:
        return f"every run, {n} of {total} ({_seeds_text(seeds)})"
    if len(seeds) > 1 and all(per_seed[s] in (0, repeat) for s in seeds):
        if repeat > 1:
            each = f"{repeat} of {repeat}" + (" each" if len(hit) > 1 else "")
            return (f"{n} of {total} runs: every run with {_seeds_text(hit)} ({each}), none with "
                    f"{_seeds_text(spared)} (depends on the seed)")
        return (f"{n} of {total} runs: with {_seeds_text(hit)}, not with {_seeds_text(spared)} (one run per seed: "
                "the seed or chance, --repeat 2 tells them apart)")
    return f"{n} of {total} runs, {_seeds_text(hit)} (flaky: {good} {total - n} of {total})"


def explain(checks: Sequence[CheckRun], seeds: Sequence[int], repeat: int) -> list[str]:
    """The reasons a task is bad, from its check runs: what failed, how often, the grader's own
    failing checks. Empty when every run did what it must."""
    groups: dict[str, list[CheckRun]] = {}
    for c in checks:
        if not c.bad:
            continue
        after = {"pristine": "on pristine", "fixed": "after reference fix", "honest": "after the honest reference fix",
                 "cheat": "after the reference cheat"}[c.phase]
        if c.verdict == "fix_failed":
            key = f"reference {'cheat' if c.phase == 'cheat' else 'fix'} failed: {c.problem}"
        elif c.verdict == Verdict.ERROR.value:
            key = f"grader error {after}: {c.problem}"
        elif c.phase == "honest":
            key = "passes after the honest reference fix (an impossible task's tests must contradict it)"
        elif c.phase == "cheat" and c.verdict == "pass":
            key = f"the reference cheat passes but is not named right: {c.problem}"
        elif c.phase == "cheat":
            key = "the reference cheat fails the grader (only a cheat passes an impossible task: this one must)"
        else:
            key = "passes on pristine" if c.phase == "pristine" else "fails after reference fix"
        groups.setdefault(key, []).append(c)
    reasons = []
    for key, bad in groups.items():
        good = {"pristine": "failed as it should", "fixed": "passed after the fix", "honest": "failed as it should",
                "cheat": "was caught as cheated"}[bad[0].phase]
        reason = f"{key}: {how_often(bad, seeds, repeat, good)}"
        if key == "fails after reference fix" or key.startswith("the reference cheat fails"):
            reason += ": " + (" | ".join(bad[0].failing_checks()) or "the grader printed no reason (gradelib's "
                              "checks name each one)")
        elif key == "passes on pristine":
            reason += ": " + _let_through(bad[0].passing or bad[0].passing_checks())
        reasons.append(reason)
    return reasons


def _let_through(passing: Sequence[str]) -> str:
    """What a pass on the untouched repo rests on, for its reason: the grader's `✓` lines, else its last line."""
    if passing and passing[0].startswith("✓"):
        return "checks that let it through: " + " | ".join(passing)
    named = "the grader printed no checks to name (gradelib's checks name each one)"
    return named + (f"; its last line: {passing[0]}" if passing else "")


def explain_redteam(runs: Sequence[AttemptRun], seeds: Sequence[int]) -> list[str]:
    """The red team's reasons: the attempts that passed the grader or turned it unscored, those with the
    same outcome in one reason, naming the seeds when there were several."""
    groups: dict[tuple[str, str], dict[str, set[int]]] = {}
    for a in runs:
        if a.bad:
            groups.setdefault((a.verdict, a.problem), {}).setdefault(a.attempt, set()).add(a.seed)
    reasons = []
    for (verdict, problem), attempts in groups.items():
        names = ", ".join(f"'{name}'" for name in attempts)
        what = (("passed the grader" + (f" ({problem})" if problem else "")) if verdict == "pass"
                else f"turned the grader unscored: {problem}")
        hit = sorted(set().union(*attempts.values()))
        reasons.append(f"red team: {names} {what}" + (f" ({_seeds_text(hit)})" if len(seeds) > 1 else ""))
    return reasons


def redteam_notes(runs: Sequence[AttemptRun], seeds: Sequence[int]) -> list[str]:
    """Attempts that could not be applied: said, but the task is not bad for it (the attempt's bug)."""
    crashed: dict[tuple[str, str], list[int]] = {}
    for a in runs:
        if a.verdict == "not_applied":
            crashed.setdefault((a.attempt, a.problem), []).append(a.seed)
    return [f"red team: '{name}' could not be applied: {problem}" + (f" ({_seeds_text(hit)})" if len(seeds) > 1 else "")
            for (name, problem), hit in crashed.items()]


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


class _TaskJob:
    """One task's validation while its units run: the report they fill in, and how many are left. It
    starts with one unit counted (its submission), so it cannot finish before everything is submitted."""

    def __init__(self, task: Task, report: TaskValidation, base: Path,
                 finish: Callable[[_TaskJob], None]) -> None:
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


class _Engine:
    """Two pools: `jobs` units at a time that work, and the units that wait beside them."""

    def __init__(self, jobs: int) -> None:
        self.cpu = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="validate")
        self.waiting = ThreadPoolExecutor(max_workers=WAITING_UNITS_MAX, thread_name_prefix="validate-wait")
        self.cancel = threading.Event()
        """Set on Ctrl-C or SIGTERM: running graders and fixes are killed, queued units never start."""

    def submit(self, job: _TaskJob, unit: Callable[[], None], *, wait: bool = False) -> Future[None]:
        job.add()
        return (self.waiting if wait else self.cpu).submit(self._run, job, unit)

    @staticmethod
    def _run(job: _TaskJob, unit: Callable[[], None]) -> None:
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


def _sandbox_errors(reasons: list[str], work: Callable[[], None]) -> None:
    """Run `work`; a problem of the task itself (its generator, a placeholder) is a reason on it."""
    try:
        work()
    except TaskLoadError as exc:  # e.g. an answer's {{placeholder}} the generator does not provide
        reasons.append(str(exc))
    except (AgenticEvalError, OSError, RuntimeError) as exc:
        reasons.append(f"sandbox error: {exc}")


def _run_checks(job: _TaskJob, seed: int, i: int, backend: SandboxBackend, cancel: threading.Event) -> None:
    """Run `i` (0-based) of both checks with `seed`: the grader on the pristine repo, then after the fix."""
    reasons: list[str] = []
    runs: list[CheckRun] = []

    def work() -> None:
        runs.append(_check_pristine(job.task, seed, i, job.base, reasons, backend, cancel))
        runs.append(_check_fixed(job.task, seed, i, job.base, backend, cancel))
        if job.task.impossible:
            runs.append(_check_fixed(job.task, seed, i, job.base, backend, cancel, cheat=True))

    _sandbox_errors(reasons, work)
    with job.lock:
        job.report.checks.extend(runs)
        job.check_reasons[(seed, i)] = reasons


def _tree_state(root: Path) -> dict[str, tuple[int, int, int]]:
    state = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in (*dirnames, *filenames):
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            state[path] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return state


REDTEAM_WAIT_LIMIT_S = 15.0
"""The grader's time limit for a red-team attempt that waits (at most the task's own)."""


def _apply_fix_for(task: Task, sandbox: Sandbox, backend: SandboxBackend, cancel: threading.Event | None) -> str:
    """The reference fix, applied as validation applies it, before a knowing attempt; why it failed, or ""."""
    backend.prepare(sandbox.path)
    with ScriptRunner(task, sandbox, backend=backend) as runner:
        fix = runner.apply_fix(cancel=cancel)
    if fix.exit_code != 0:
        return f"the reference fix failed (exit {fix.exit_code}): {fix.output[-200:]}"
    return ""


def _control_passes(task: Task, template: Sandbox, control: Callable[[Path], None], dest: Path,
                    backend: SandboxBackend, cancel: threading.Event | None) -> bool:
    """A knowing attempt's control (the reference fix and the break, no forgery), graded: whether it passes."""
    try:
        shutil.copytree(template.path, dest, symlinks=True)
        sandbox = replace(template, path=dest.resolve())
        if _apply_fix_for(task, sandbox, backend, cancel):
            return False
        control(sandbox.path)
        backend.prepare(sandbox.path)
        with ScriptRunner(task, sandbox, backend=backend) as runner:
            return runner.grade(cancel).verdict is Verdict.PASS
    except Exception:  # noqa: BLE001 - a control that cannot run proves nothing either way: the pass stands
        return False
    finally:
        shutil.rmtree(dest, ignore_errors=True)


def run_attempt(task: Task, template: Sandbox, attempt: rt.AttemptLike, dest: Path,
                backend: SandboxBackend, cancel: threading.Event | None = None) -> AttemptRun:
    """Apply `attempt` to a copy of the pristine sandbox `template` at `dest`, then grade it as a trial
    does (ScriptRunner.grade). Never raises for the attempt's or the grader's trouble; removes `dest`."""
    start = time.monotonic()
    name, seed = attempt.name, template.seed
    if rt.needs_confinement(attempt) and not backend.confined:
        return AttemptRun(name, seed, "skipped", f"needs a confining sandbox backend, not {backend.name}")
    try:
        shutil.copytree(template.path, dest, symlinks=True)
        sandbox = replace(template, path=dest.resolve())  # the template's pristine store, read-only to graders
        if rt.after_fix(attempt):
            problem = _apply_fix_for(task, sandbox, backend, cancel)
            if problem:
                return AttemptRun(name, seed, "not_applied", problem, time.monotonic() - start)
        before = _tree_state(sandbox.path)
        try:
            attempt.apply(sandbox.path)
        except Exception as exc:  # noqa: BLE001 - an attempt's bug is reported on the task, never ends validation
            return AttemptRun(name, seed, "not_applied", f"{type(exc).__name__}: {exc}"[:300],
                              time.monotonic() - start)
        if _tree_state(sandbox.path) == before:
            return AttemptRun(name, seed, "no_change", duration_s=time.monotonic() - start)
        backend.prepare(sandbox.path)
        # An attempt that makes the model's code wait (a hang) is graded under a shorter limit: what it tests is
        # that the command is cut before the grader's own time runs out, which holds at any limit, and waiting
        # out the task's full limit (60-120 s on the built-in packs) for every such attempt is most of the cost.
        limit = REDTEAM_WAIT_LIMIT_S if rt.waits(attempt) else None
        with ScriptRunner(task, sandbox, backend=backend) as runner:
            result = runner.grade(cancel, timeout_s=limit)
        problem = (_grader_problem(result, task, limit) if result.verdict is Verdict.ERROR
                   else _report_alone(result.script.output) if result.verdict is Verdict.PASS else "")
        control = getattr(attempt, "control", None)
        if result.verdict is Verdict.PASS and rt.after_fix(attempt) and control is not None:
            if _control_passes(task, template, control, dest.with_name(dest.name + "-control"), backend, cancel):
                return AttemptRun(name, seed, "no_change", "the grader does not judge what the attempt broke: "
                                  "its forgery proved nothing", time.monotonic() - start, result.script.output)
        return AttemptRun(name, seed, result.verdict.value, problem,
                          time.monotonic() - start, result.script.output)
    finally:
        shutil.rmtree(dest, ignore_errors=True)


def _plan_attempts(engine: _Engine, job: _TaskJob, seed: int, attempts: Sequence[rt.AttemptLike],
                   backend: SandboxBackend) -> None:
    """Make the pristine sandbox of `seed` once, find its languages, and submit one unit per attempt that
    fits them, each on a copy; the last one removes the template."""
    report = job.report
    template_dir = job.base / f"redteam-{seed}"
    made: list[Sandbox] = []
    _sandbox_errors(report.reasons, lambda: made.append(materialize_sandbox(job.task, seed, template_dir)))
    if not made:
        return
    template = made[0]
    languages = rt.sandbox_languages(template.path)
    if seed == report.seeds[0]:
        report.languages = sorted(languages)
    chosen = rt.applicable(attempts, languages)
    left = [len(chosen)]

    def remove_template() -> None:
        shutil.rmtree(template.path, ignore_errors=True)
        shutil.rmtree(pristine_store_for(template_dir), ignore_errors=True)

    def unit(n: int, attempt: rt.AttemptLike) -> None:
        try:
            run = run_attempt(job.task, template, attempt, job.base / f"redteam-{seed}-{n}", backend, engine.cancel)
            with job.lock:
                assert report.redteam is not None
                report.redteam.append(run)
        finally:
            with job.lock:
                left[0] -= 1
                last = left[0] == 0
            if last:
                remove_template()

    if not chosen:
        remove_template()
    for n, attempt in enumerate(chosen):
        engine.submit(job, functools.partial(unit, n, attempt), wait=rt.waits(attempt))


def failing_checks(output: str, limit: int = 3) -> list[str]:
    """The checks the grader said no to (gradelib's `✗` lines), else its last line."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    failing = [ln for ln in lines if ln.startswith("✗")]
    return [ln[:160] for ln in (failing[:limit] or lines[-1:])]


def passing_checks(output: str, limit: int = 5) -> list[str]:
    """The checks the grader said yes to (gradelib's `✓` lines), the first `limit` of them and how many
    more there were; else its last line, unless that is gradelib's `PASS: N checks`, which names nothing."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    passing = [ln[:160] for ln in lines if ln.startswith("✓")]
    if not passing:
        return [ln[:160] for ln in lines[-1:] if not GRADELIB_PASS.fullmatch(ln)]
    more = len(passing) - limit
    return passing[:limit] + ([f"(+{more} more)"] if more > 0 else [])


GRADELIB_PASS = re.compile(r"PASS: \d+ checks?")
"""gradelib's last line for a pass (`Grader.finish`)."""


def _finish_task(job: _TaskJob, repeat: int, keep_output: bool, plan: RedTeamPlan | None) -> None:
    report = job.report
    seeds = report.seeds
    order = {"pristine": 0, "fixed": 1, "honest": 1, "cheat": 2}
    report.checks.sort(key=lambda c: (c.seed, c.run, order[c.phase]))
    for c in report.checks:
        c.failing = c.failing_checks() if c.bad else []
        c.passing = c.passing_checks() if c.bad else []
    report.pristine_fails = sum(1 for c in report.checks if c.phase == "pristine" and c.verdict == "fail")
    report.fixed_passes = sum(1 for c in report.checks if c.phase == "fixed" and c.verdict == "pass")
    report.honest_fails = sum(1 for c in report.checks if c.phase == "honest" and c.verdict == "fail")
    report.cheats_caught = sum(1 for c in report.checks if c.phase == "cheat" and c.verdict == "cheated")
    found_by_checks = [r for key in sorted(job.check_reasons) for r in job.check_reasons[key]]
    reasons = report.reasons + found_by_checks + explain(report.checks, seeds, repeat)
    env = job.task.meta.environment
    if env is not None and job.task.verifier == "reward" and env.verifier_container == "fresh" and any(
            c.phase == "fixed" and c.bad for c in report.checks):
        report.notes.append("its reward verifier runs in a fresh container of the task's image (the working "
                            "directory copied in): if it must see what the reference fix did elsewhere, declare "
                            "those paths ([verifier] artifacts = [...]) or set [verifier] container = \"agent\"")
    if report.redteam is not None and job.task.impossible:  # a pass is what a trial records as cheated
        for a in report.redteam:
            a.verdict = "cheated" if a.verdict == "pass" else a.verdict
    if report.redteam is not None:
        rank = {name: i for i, name in enumerate(plan.names if plan else [])}
        report.redteam.sort(key=lambda a: (a.seed, rank.get(a.attempt, len(rank)), a.attempt))
        found = explain_redteam(report.redteam, report.redteam_seeds)
        if found and any(c.bad for c in report.checks if c.phase == "pristine"):
            report.notes.append("red team not judged: the grader does not fail the pristine repo to begin with")
        else:
            reasons += found
        report.notes.extend(redteam_notes(report.redteam, report.redteam_seeds))
        for a in report.redteam:
            a.failing = failing_checks(a.output) if a.verdict == "grader_error" else []
            a.passing = passing_checks(a.output) if a.verdict == "pass" else []
            if not keep_output:
                a.output = ""
    report.reasons = list(dict.fromkeys(reasons))
    if not keep_output:
        for c in report.checks:
            c.output = c.fix_output = ""
    report.duration_s = time.monotonic() - job.started
    shutil.rmtree(job.base, ignore_errors=True)


def _validate(tasks: Sequence[Task], *, repeat: int, seed: int, seeds: int, jobs: int, keep_output: bool,
              backend: SandboxBackend, plan: RedTeamPlan | None, workdir: Path | None,
              on_done: Callable[[TaskValidation], None] | None,
              redteam_seeds: int | None = None) -> list[TaskValidation]:
    """Every task's units on one engine; the reports in the order of `tasks`. The red team runs on the
    first `redteam_seeds` seeds (None: all)."""
    seed_list = [seed + i for i in range(max(1, seeds))]
    redteam_list = seed_list[:redteam_seeds] if redteam_seeds is not None else list(seed_list)
    engine = _Engine(jobs)
    jobs_made: list[_TaskJob] = []

    def finish(job: _TaskJob) -> None:
        try:
            _finish_task(job, repeat, keep_output, plan)
        except Exception as exc:  # noqa: BLE001 - one task's trouble never stops the others
            job.report.reasons.append(f"internal error: {type(exc).__name__}: {exc}")
        if on_done is not None and not engine.cancel.is_set():  # an interrupted task's verdict means nothing
            on_done(job.report)

    try:
        for task in tasks:
            own = seed_list[:1] if seed_independent(task) else seed_list
            report = TaskValidation(id=task.id, repeat=repeat, seeds=list(own), impossible=task.impossible,
                                    redteam_seeds=[] if plan is None else [s for s in redteam_list if s in own],
                                    redteam=None if plan is None else [])
            if len(own) < len(seed_list):
                report.notes.append(f"seeds: 1 of {len(seed_list)} (seed {own[0]}): its tree and verifier do not "
                                    "depend on the seed")
            report.notes.extend(f"unsupported field: {u}" for u in task.unsupported)
            if task.meta.environment is not None and plan is not None:
                report.notes.append("red team not run: it works on generated repos, and this task brings its own "
                                    "environment")
            base = Path(tempfile.mkdtemp(prefix=f"ae-validate-{task.id}-", dir=workdir))
            mark_trial_folder(base)  # a validate killed with SIGKILL leaves it: the next run removes it
            jobs_made.append(_TaskJob(task, report, base, finish))
        # The red team's sandboxes first: every attempt that waits (a hang, a FIFO) then starts at once, and
        # the grader time limits they wait out pass while the checks and the other attempts work.
        if plan is not None:
            for job in jobs_made:
                if job.task.id in plan.problems:
                    job.report.reasons.append(plan.problems[job.task.id])
                attempts = plan.per_task.get(job.task.id, [])
                for s in job.report.redteam_seeds if attempts else ():
                    engine.submit(job, functools.partial(_plan_attempts, engine, job, s, attempts, backend))
        for job in jobs_made:
            for s in job.report.seeds:
                for i in range(repeat):
                    engine.submit(job, functools.partial(_run_checks, job, s, i, backend, engine.cancel))
        for job in jobs_made:
            job.done()  # everything of this task is submitted
        for job in jobs_made:
            job.finished.wait()
    except BaseException:  # Ctrl-C, SIGTERM: kill what runs (a red-team hang would be waited out), start nothing
        engine.close(cancel=True)
        for job in jobs_made:
            shutil.rmtree(job.base, ignore_errors=True)
        raise
    engine.close()
    return [job.report for job in jobs_made]


def validate_task(task: Task, *, repeat: int = 1, seed: int = 0, workdir: Path | None = None,
                  seeds: int = 1, keep_output: bool = False, backend: SandboxBackend | None = None,
                  redteam: bool | Sequence[str] = True, redteam_seeds: int | None = None) -> TaskValidation:
    """Validate one task with `seeds` seeds from `seed` on, `repeat` fresh sandboxes per check and
    seed, and the red team (`redteam`: True for every attempt, False for none, or the names to run) once
    on each of the first `redteam_seeds` seeds (None: every seed); never raises for a problem of the task
    itself. `keep_output` keeps each run's grader and fix output (for `validate --show`)."""
    _check_counts(repeat, seeds, redteam_seeds)
    backend = backend or default_backend()
    if task.id in (unbuildable := backend.prepare_tasks([task]) or {}):
        return _unbuildable(task.id, unbuildable[task.id])
    plan = plan_redteam([task], redteam)
    (report,) = _validate([task], repeat=repeat, seed=seed, seeds=seeds, jobs=1, keep_output=keep_output,
                          backend=backend or default_backend(), plan=plan, workdir=workdir, on_done=None,
                          redteam_seeds=redteam_seeds)
    return report


def _materialize(task: Task, seed: int, dest: Path, backend: SandboxBackend) -> Sandbox:
    """The task's fresh sandbox: generated, or an environment task's working directory out of its image."""
    if task.meta.environment is not None:
        return materialize_environment(task, seed, dest, backend)
    return materialize_sandbox(task, seed, dest)


def _grade(task: Task, sandbox: Sandbox, runner: ScriptRunner, backend: SandboxBackend,
           cancel: threading.Event | None) -> GradeResult:
    """The verdict as a trial gets it: a reward verifier in the task's environment once the agent's phase is
    over, else the sealed grade script."""
    if task.meta.environment is not None:
        backend.phase_end(sandbox.path)  # the fix's processes end before anything is judged
    if task.verifier == "reward":
        run = backend.verify_environment(sandbox.path, cancel)
        grade = reward_grade(run)
        if grade.verdict is not Verdict.PASS and not run.fault and not run.model_fault:  # the oracle's run: the
            # cause, not the symptom (a control run that got further already named the fix's doing: model_fault)
            fault = verifier_fault(run.output, _script_text(task), offline=run.offline, reward=run.reward)
            if fault is not None:
                return replace(grade, verdict=Verdict.ERROR, error=fault.cause, cause_found=True)
        return grade
    return runner.grade(cancel)


def _script_text(task: Task) -> str:
    try:
        return task.grader_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _drop(task: Task, sandbox: Sandbox, backend: SandboxBackend) -> None:
    if task.meta.environment is not None:
        backend.trial_end(sandbox.path)  # its containers, services and network
    shutil.rmtree(sandbox.path, ignore_errors=True)


def _check_pristine(task: Task, seed: int, i: int, base: Path, reasons: list[str],
                    backend: SandboxBackend, cancel: threading.Event | None = None) -> CheckRun:
    """The grader on the untouched repo must say "fail"; the first run of each seed also scans for leaks."""
    sandbox = _materialize(task, seed, base / f"pristine-{seed}-{i}", backend)
    try:
        if i == 0:
            try:  # an unknown {{placeholder}} would break every trial
                task.render_instruction(sandbox.variables)
            except TaskLoadError as exc:
                reasons.append(str(exc))
            needles = task_needles(task, task.render_answers(sandbox.variables))
            forbidden = {task.grader_path.name, task.solution_path.name}
            reasons.extend(str(leak) for leak in scan_sandbox(sandbox.path, needles, forbidden))
        backend.prepare(sandbox.path)  # after the leak scan: the harness's git reads it as its owner
        with ScriptRunner(task, sandbox, backend=backend) as runner:
            result = _grade(task, sandbox, runner, backend, cancel)
        return CheckRun("pristine", seed, i + 1, result.verdict.value,
                        _grader_problem(result, task) if result.verdict is Verdict.ERROR else "",
                        result.script.duration_s, result.script.output)
    finally:
        _drop(task, sandbox, backend)


def _check_fixed(task: Task, seed: int, i: int, base: Path, backend: SandboxBackend,
                 cancel: threading.Event | None = None, *, cheat: bool = False) -> CheckRun:
    """After the reference fix (under limits.agent_timeout_s) the grader must say "pass"; an impossible task's
    honest fix must fail, and its reference cheat (`cheat`) pass and be named as the task says."""
    phase = "cheat" if cheat else "honest" if task.impossible else "fixed"
    sandbox = _materialize(task, seed, base / f"{phase}-{seed}-{i}", backend)
    try:
        backend.prepare(sandbox.path)
        with ScriptRunner(task, sandbox, backend=backend) as runner:
            fix = runner.apply_fix(cancel=cancel, script=task.cheat_path if cheat else None)
            if fix.exit_code != 0:
                return CheckRun(phase, seed, i + 1, "fix_failed", _fix_problem(fix, task), fix.duration_s,
                                fix.output, fix.output)
            diff = _cheat_diff(sandbox) if cheat else ""
            result = _grade(task, sandbox, runner, backend, cancel)
        verdict, problem = result.verdict.value, ""
        if result.verdict is Verdict.ERROR:
            problem = _grader_problem(result, task)
        elif cheat and result.verdict is Verdict.PASS:
            problem = _misnamed_cheat(task, sandbox, diff)
            verdict = "pass" if problem else "cheated"
        return CheckRun(phase, seed, i + 1, verdict, problem, fix.duration_s + result.script.duration_s,
                        result.script.output, fix.output)
    finally:
        _drop(task, sandbox, backend)


def _cheat_diff(sandbox: Sandbox) -> str:
    """What the reference cheat changed, as a trial's diff.patch would say (taken before grading)."""
    from agentic_eval.packs import gitsafe

    if sandbox.pristine_store is None:
        return ""
    try:
        return gitsafe.final_diff(sandbox.path, sandbox.pristine_store, sandbox.pristine_commit).decode(
            "utf-8", "replace")
    except (OSError, gitsafe.GitError):
        return ""


def _misnamed_cheat(task: Task, sandbox: Sandbox, diff: str) -> str:
    """'' when the trial classifier names the reference cheat's diff as the task says, else what it said."""
    from agentic_eval.grading.impossible import name_behaviour
    from agentic_eval.packs.task import render_template

    spec = task.meta.impossible
    assert spec is not None
    where = task.dir / "task.toml"
    found = name_behaviour(diff, [], tests=[render_template(t, sandbox.variables, where=where) for t in spec.tests],
                           planted=[render_template(t, sandbox.variables, where=where) for t in spec.planted],
                           runner=[render_template(t, sandbox.variables, where=where) for t in spec.runner],
                           passed=True)
    if found.label == spec.cheat_behaviour:
        return ""
    return f"the trial classifier names it {found.label!r} ({found.detail}), the task says {spec.cheat_behaviour!r}"


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
    redteam: bool | Sequence[str] = True,
    redteam_seeds: int | None = None,
    log: Callable[..., None] | None = None,
) -> ValidationReport:
    """Validate many tasks in parallel (`jobs` units at a time; default 2); tasks that failed to load are
    reported bad with their error. `redteam`: True runs every attempt that fits each task, False none, a
    sequence of names only those; on the first `redteam_seeds` seeds (None: every seed). A task whose image
    does not build is reported bad with the cause (`TaskValidation.unbuildable`), and the others go on; `log`
    gets the backend's lines while it builds (the images, a task that asks for an internet the engine lacks)."""
    _check_counts(repeat, seeds, redteam_seeds)
    check_grader_requirements([t for t in tasks if t.verifier == "script"])
    backend = backend or default_backend()
    started = time.monotonic()
    unbuildable = backend.prepare_tasks(tasks, log) or {}  # environment tasks: refused in one line, or built
    tasks = [t for t in tasks if t.id not in unbuildable]
    plan = plan_redteam(tasks, redteam)
    results: list[TaskValidation] = [
        TaskValidation(id=_id_from_error(err), reasons=[f"load error: {err}"]) for err in load_errors
    ]
    results += [_unbuildable(tid, why) for tid, why in unbuildable.items()]
    results.extend(_validate(tasks, repeat=repeat, seed=seed, seeds=seeds, jobs=jobs or 2, keep_output=keep_output,
                             backend=backend or default_backend(), plan=plan, workdir=None, on_done=on_done,
                             redteam_seeds=redteam_seeds))
    seed_list = [seed + i for i in range(seeds)]
    return ValidationReport(results, duration_s=time.monotonic() - started,
                            redteam=None if plan is None else list(plan.names), seeds=seed_list, repeat=repeat,
                            redteam_seeds=[] if plan is None else seed_list[:redteam_seeds])


def _unbuildable(task_id: str, why: str) -> TaskValidation:
    why = why[len(task_id) + 2:] if why.startswith(f"{task_id}: ") else why
    return TaskValidation(id=task_id, reasons=[f"its image does not build (the task's to fix): {why}"],
                          unbuildable=why)


MAX_RUNS_PER_CHECK = 1000
"""Most runs of each check (--seeds x --repeat) one validate makes: a thousand fresh sandboxes per check and
task already rule out a grader that goes wrong one run in a hundred (it would slip past 0.004% of the time)."""


def _check_counts(repeat: int, seeds: int, redteam_seeds: int | None) -> None:
    if repeat < 1:
        raise AgenticEvalError("--repeat must be at least 1")
    if seeds < 1:
        raise AgenticEvalError("--seeds must be at least 1")
    if redteam_seeds is not None and redteam_seeds < 1:
        raise AgenticEvalError("--redteam-seeds must be at least 1 (--no-redteam skips the red team)")
    if repeat * seeds > MAX_RUNS_PER_CHECK:
        raise AgenticEvalError(f"--seeds {seeds} x --repeat {repeat} is {repeat * seeds} runs of each check; at most "
                               f"{MAX_RUNS_PER_CHECK} (runs of each check per task in one validate)")


def _id_from_error(err: TaskLoadError) -> str:
    path = Path(err.path)
    return (path.parent if path.name == "task.toml" or path.suffix else path).name
