"""What `validate` found, and how it says it: the report model (a check's run, a red-team attempt's run, a
task's validation, the whole report) and the wording of its reasons, worded by the evidence (`evidence`,
`how_often`). Pure data and pure functions of it: validate.py runs the checks that fill it in.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from agentic_eval.grading.grader import GradeResult, ScriptResult, Verdict
from agentic_eval.packs.task import Task
from agentic_eval.plural import counted


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
    'skipped' (it needs a confining sandbox backend and the run has none); or 'undecided' (graded twice, the
    grader was stopped by its wall clock each time after it was answered: the machine was too loaded to tell)."""
    problem: str = ""
    """For 'grader_error', 'not_applied', 'skipped' and 'undecided': what happened."""
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
        return [f"{counted(len(ids), 'task')} ({', '.join(ids[:3])}{' ...' if len(ids) > 3 else ''}): "
                f"{evidence(n, self.repeat)}" for n, ids in groups.items()]

    def ran(self) -> str:
        """What ran, as it ran: the seeds x runs of the tasks' checks and the red-team attempts actually made
        (`seeds 0-2 x 2 runs, 14 red-team attempts on seed 0`; for tasks no seed reaches and no red team works
        on, `seed 0 x 2 runs, no red team (not run on environment tasks)`)."""
        groups = self.seed_groups()
        runs = counted(self.repeat, "run")
        if len(groups) <= 1:
            count = next(iter(groups), len(self.seeds))
            checks = f"{_seeds_range(self.seeds[:count])} x {runs}"
        else:
            checks = "; ".join(f"{counted(len(ids), 'task')} {_seeds_range(self.seeds[:n])} x {runs}"
                               for n, ids in groups.items())
        attempts = len({a.attempt for t in self.tasks for a in t.redteam or () if a.verdict != "skipped"})
        if self.redteam is None:
            team = "no red team"
        elif not attempts:
            team = "no red team on environment tasks" if groups else "no red team"
        else:
            on, ran = sum(1 for t in self.tasks if t.redteam), sum(map(len, groups.values()))
            team = (f"{counted(attempts, 'red-team attempt')} on {_seeds_range(self.redteam_seeds)}"
                    + (f" ({on} of {ran} tasks)" if on < ran else "") + self._ungraded())
        return f"{checks}, {team}"

    def _ungraded(self) -> str:
        """The attempts the grader never judged, which the table's `held/graded` leaves out, in words
        (`, 3 of which changed nothing`), so that the footer's count and the table's agree."""
        runs: dict[str, set[str]] = {}
        for a in (a for t in self.tasks for a in t.redteam or () if a.verdict != "skipped"):
            runs.setdefault(a.attempt, set()).add(a.verdict)
        counts: dict[str, int] = {}
        for verdicts in runs.values():
            if not verdicts & set(GRADED):
                why = ("could not be applied" if "not_applied" in verdicts
                       else "undecided" if "undecided" in verdicts else "changed nothing")
                counts[why] = counts.get(why, 0) + 1
        return "".join(f", {n} of which {why}" if not i else f", {n} {why}"
                       for i, (why, n) in enumerate(sorted(counts.items(), key=lambda kv: -kv[1])))

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
    text = (f"{counted(runs, 'run')} of each check ({counted(seeds, 'seed')} x {repeat}): a grader that goes wrong "
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


def grader_problem(result: GradeResult, task: Task, limit: float | None = None) -> str:
    if result.script.timed_out:
        full = task.meta.limits.grader_timeout_s
        if limit is not None and limit < full:
            return f"timed out after {limit:g}s (the red team's limit for an attempt that waits)"
        return f"timed out after {full:g}s (limits.grader_timeout_s)"
    if result.cause_found:
        return result.reason
    return _exit_and_last_line(result.reason, result.script.output)


def report_alone(output: str) -> str:
    """The passed checks of a grader's output that rest on a test run's report alone (gradelib marks them):
    what a forgery that passed got past."""
    marker = "(from the run's report alone)"
    lines = [line.removeprefix("✓ ").replace(marker, "").strip() for line in output.splitlines()
             if line.startswith("✓ ") and marker in line]
    return ("forgeable: it rests on a test report alone: " + "; ".join(lines[:3])) if lines else ""


def fix_problem(fix: ScriptResult, task: Task) -> str:
    if fix.timed_out:
        return f"exceeded limits.agent_timeout_s ({task.meta.limits.agent_timeout_s:g}s), which the fix runs under"
    return _exit_and_last_line(fix.start_error or f"exit {fix.exit_code}", fix.output)


def _seeds_range(seeds: Sequence[int]) -> str:
    return f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {seeds[0]}-{seeds[-1]}" if seeds else "no seed"


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
    """The red team's reasons: the attempts that passed the grader or turned it unscored, or that the machine's
    load left undecided, those with the same outcome in one reason, naming the seeds when there were several."""
    groups: dict[tuple[str, str], dict[str, set[int]]] = {}
    for a in runs:
        if a.bad or a.verdict == "undecided":
            groups.setdefault((a.verdict, a.problem), {}).setdefault(a.attempt, set()).add(a.seed)
    reasons = []
    for (verdict, problem), attempts in groups.items():
        names = ", ".join(f"'{name}'" for name in attempts)
        what = (("passed the grader" + (f" ({problem})" if problem else "")) if verdict == "pass"
                else f"undecided: {problem}" if verdict == "undecided"
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
