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
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from agentic_eval.confine.backend import SandboxBackend
from agentic_eval.confine.registry import default_backend
from agentic_eval.confine.verifier_cause import verifier_fault
from agentic_eval.errors import AgenticEvalError
from agentic_eval.grading.grader import (
    CodeHostStats,
    GradeResult,
    ScriptResult,
    ScriptRunner,
    Verdict,
    check_grader_requirements,
    reward_grade,
)
from agentic_eval.grading.remains import repository_damage
from agentic_eval.leftovers import mark_trial_folder
from agentic_eval.packs.environment import seed_independent
from agentic_eval.packs.sandbox import Sandbox, materialize_environment, materialize_sandbox, pristine_store_for
from agentic_eval.packs.task import Task, TaskLoadError, environment_tasks
from agentic_eval.trees import remove_tree, walk
from agentic_eval.validation import redteam as rt
from agentic_eval.validation.leaks import scan_sandbox, task_needles
from agentic_eval.validation.report import (
    AttemptRun,
    CheckRun,
    TaskValidation,
    ValidationReport,
    explain,
    explain_redteam,
    failing_checks,
    fix_problem,
    grader_problem,
    passing_checks,
    redteam_notes,
    report_alone,
)
from agentic_eval.validation.schedule import Engine, RedTeamPlan, TaskJob, plan_redteam
from agentic_eval.validation.survey import sandbox_languages

MAX_RUNS_PER_CHECK = 1000
"""Most runs of each check (--seeds x --repeat) one validate makes: a thousand fresh sandboxes per check and
task already rule out a grader that goes wrong one run in a hundred (it would slip past 0.004% of the time)."""


@dataclass(frozen=True)
class ValidateOptions:
    """How much `validate` does, checked when made (a bad count is a one-line AgenticEvalError naming the CLI
    flag). The defaults are what a library caller that asks for nothing more gets: one seed, one run of each
    check, every red-team attempt on every seed; the CLI asks for more (cli/validate.py)."""

    repeat: int = 1
    """Fresh sandboxes per check and seed."""
    seed: int = 0
    """The first seed."""
    seeds: int = 1
    """How many seeds, from `seed` on."""
    jobs: int = 2
    """Units that work at once; the attempts that only make the grader wait run beside them."""
    redteam: bool | Sequence[str] = True
    """True: every attempt that fits a task; False: none; names: only those."""
    redteam_seeds: int | None = None
    """The red team runs on the first this many seeds (None: every seed)."""
    keep_output: bool = False
    """Keep each run's grader and fix output (`validate --show`)."""

    def __post_init__(self) -> None:
        if not isinstance(self.redteam, bool):
            object.__setattr__(self, "redteam", tuple(self.redteam))
        if self.repeat < 1:
            raise AgenticEvalError("--repeat must be at least 1")
        if self.seeds < 1:
            raise AgenticEvalError("--seeds must be at least 1")
        if self.redteam_seeds is not None and self.redteam_seeds < 1:
            raise AgenticEvalError("--redteam-seeds must be at least 1 (--no-redteam skips the red team)")
        if self.repeat * self.seeds > MAX_RUNS_PER_CHECK:
            raise AgenticEvalError(f"--seeds {self.seeds} x --repeat {self.repeat} is {self.repeat * self.seeds} runs "
                                   f"of each check; at most {MAX_RUNS_PER_CHECK} (runs of each check per task in one "
                                   "validate)")

    @property
    def seed_list(self) -> list[int]:
        return [self.seed + i for i in range(self.seeds)]

    @property
    def redteam_seed_list(self) -> list[int]:
        """The seeds the red team runs on (whether it runs at all is `redteam`'s)."""
        return self.seed_list[:self.redteam_seeds]


def _sandbox_errors(reasons: list[str], work: Callable[[], None]) -> None:
    """Run `work`; a problem of the task itself (its generator, a placeholder) is a reason on it."""
    try:
        work()
    except TaskLoadError as exc:  # e.g. an answer's {{placeholder}} the generator does not provide
        reasons.append(str(exc))
    except (AgenticEvalError, OSError, RuntimeError) as exc:
        reasons.append(f"sandbox error: {exc}")


def _run_checks(job: TaskJob, seed: int, i: int, backend: SandboxBackend, cancel: threading.Event) -> None:
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
    for dirpath, dirnames, filenames in walk(root):  # any depth (os.walk recursed once per level)
        for name in (*dirnames, *filenames):
            path = os.path.join(dirpath, name)
            try:
                st = os.lstat(path)
            except OSError:  # a path too long for the kernel
                continue
            state[path] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return state


REDTEAM_WAIT_LIMIT_S = 15.0
"""The grader's time limit for a red-team attempt that waits (at most the task's own)."""


def grade_attempt(task: Task, sandbox: Sandbox, backend: SandboxBackend, cancel: threading.Event | None,
                  limit: float | None) -> tuple[GradeResult, str]:
    """An attempt's sandbox graded as a trial's is (`limit`: a shorter time limit than the task's), and why the
    verdict is undecided ('' when it is decided).

    A grader stopped by its wall clock after its model's code was cut at its deadline (`CodeHostStats.late`) was
    not left waiting by that code: it was answered and ran out of the time it had left for its own work, which on
    a loaded machine (many attempts at once) says nothing of the grader. So that is undecided, and the grading
    runs once more, under the task's own limit with half of it left once the model's code is cut; stopped so
    again, the machine is too loaded to decide. A grader stopped while it waited itself (on the model's code in
    its own process, no code host to cut it) is a grader error at once, as in a trial."""
    if sandbox.pristine_commit and (damage := repository_damage(sandbox.path, sandbox.pristine_commit)):
        # a trial with this repository ends before its grader runs: the model's scored fail (grading/remains.py)
        return GradeResult(Verdict.FAIL, ScriptResult(1, f"agentic-eval: not graded: {damage}\n", 0.0)), ""
    full = task.meta.limits.grader_timeout_s
    with ScriptRunner(task, sandbox, backend=backend) as runner:
        result = runner.grade(cancel, timeout_s=limit)
        if not _stopped_after_answer(result, runner.last_host):
            return result, ""
        first = min(limit, full) if limit is not None else full
        result = runner.grade(cancel, reserve_s=full / 2)
        if not _stopped_after_answer(result, runner.last_host):
            return result, ""
    return result, (f"the machine is too loaded to decide: twice the model's code was cut at the grader's deadline "
                    f"and the grader did not answer in the time left ({first:g}s limit, then {full:g}s with "
                    f"{full / 2:g}s left): run validate again with fewer jobs (-j)")


def _stopped_after_answer(result: GradeResult, host: CodeHostStats | None) -> bool:
    return (result.verdict is Verdict.ERROR and result.script.timed_out and not result.script.cancelled
            and host is not None and host.late)


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
        remove_tree(dest)  # any depth (the red team's deep folders)


def run_attempt(task: Task, template: Sandbox, attempt: rt.AttemptLike, dest: Path,
                backend: SandboxBackend, cancel: threading.Event | None = None) -> AttemptRun:
    """Apply `attempt` to a copy of the pristine sandbox `template` at `dest`, then grade it as a trial
    does (ScriptRunner.grade). Never raises for the attempt's or the grader's trouble; removes `dest`."""
    start = time.monotonic()
    name, seed = attempt.name, template.seed
    if rt.needs_confinement(attempt) and not backend.confined:
        return AttemptRun(name, seed, "skipped", f"needs a confining sandbox backend, not {backend.name}")
    if not rt.fits(attempt, task):
        return AttemptRun(name, seed, "no_change", "it does not fit this task")
    try:
        shutil.copytree(template.path, dest, symlinks=True)
        sandbox = replace(template, path=dest.resolve())  # the template's pristine store, read-only to graders
        if rt.after_fix(attempt):
            problem = _apply_fix_for(task, sandbox, backend, cancel)
            if problem:
                return AttemptRun(name, seed, "not_applied", problem, time.monotonic() - start)
        before = _tree_state(sandbox.path)
        try:
            rt.apply(attempt, task, sandbox)
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
        result, undecided = grade_attempt(task, sandbox, backend, cancel, limit)
        if undecided:  # never reported as the grader's unscored verdict: the machine's load decided nothing
            return AttemptRun(name, seed, "undecided", undecided, time.monotonic() - start, result.script.output)
        problem = (grader_problem(result, task, limit) if result.verdict is Verdict.ERROR
                   else report_alone(result.script.output) if result.verdict is Verdict.PASS else "")
        control = getattr(attempt, "control", None)
        if result.verdict is Verdict.PASS and rt.after_fix(attempt) and control is not None:
            if _control_passes(task, template, control, dest.with_name(dest.name + "-control"), backend, cancel):
                return AttemptRun(name, seed, "no_change", "the grader does not judge what the attempt broke: "
                                  "its forgery proved nothing", time.monotonic() - start, result.script.output)
        return AttemptRun(name, seed, result.verdict.value, problem,
                          time.monotonic() - start, result.script.output)
    finally:
        remove_tree(dest)  # any depth (the red team's deep folders)


def _plan_attempts(engine: Engine, job: TaskJob, seed: int, attempts: Sequence[rt.AttemptLike],
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
    languages = sandbox_languages(template.path)
    if seed == report.seeds[0]:
        report.languages = sorted(languages)
    chosen = rt.applicable(attempts, languages)
    left = [len(chosen)]

    def remove_template() -> None:
        remove_tree(template.path)
        remove_tree(pristine_store_for(template_dir))

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




def _finish_task(job: TaskJob, options: ValidateOptions, plan: RedTeamPlan | None) -> None:
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
    reasons = report.reasons + found_by_checks + explain(report.checks, seeds, options.repeat)
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
            if not options.keep_output:
                a.output = ""
    report.reasons = list(dict.fromkeys(reasons))
    if not options.keep_output:
        for c in report.checks:
            c.output = c.fix_output = ""
    report.duration_s = time.monotonic() - job.started
    remove_tree(job.base)


def _validate(tasks: Sequence[Task], options: ValidateOptions, *, backend: SandboxBackend,
              plan: RedTeamPlan | None, workdir: Path | None = None,
              on_done: Callable[[TaskValidation], None] | None = None) -> list[TaskValidation]:
    """Every task's units on one engine; the reports in the order of `tasks`."""
    seed_list, redteam_list, repeat = options.seed_list, options.redteam_seed_list, options.repeat
    engine = Engine(options.jobs)
    jobs_made: list[TaskJob] = []

    def finish(job: TaskJob) -> None:
        try:
            _finish_task(job, options, plan)
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
            jobs_made.append(TaskJob(task, report, base, finish))
        # The red team's sandboxes first: every attempt that waits (a hang, a FIFO) then starts at once, and
        # the grader time limits they wait out pass while the checks and the other attempts work.
        if plan is not None:
            for job in jobs_made:
                if job.task.id in plan.problems:
                    job.report.reasons.append(plan.problems[job.task.id])
                attempts = plan.per_task.get(job.task.id, [])
                for s in job.report.redteam_seeds if attempts else ():
                    engine.submit(job, functools.partial(_plan_attempts, engine, job, s, attempts, backend))
        # every seed's first run before any seed's second: the units that work at once then make different seeds'
        # sandboxes (a generator that searches per seed, as realpy's, searches for two seeds at once, not for one
        # twice), and the repeats find every seed's sandbox decided and cached
        for job in jobs_made:
            for i in range(repeat):
                for s in job.report.seeds:
                    engine.submit(job, functools.partial(_run_checks, job, s, i, backend, engine.cancel))
        for job in jobs_made:
            job.done()  # everything of this task is submitted
        for job in jobs_made:
            job.finished.wait()
    except BaseException:  # Ctrl-C, SIGTERM: kill what runs (a red-team hang would be waited out), start nothing
        engine.close(cancel=True)
        for job in jobs_made:
            remove_tree(job.base)
        raise
    engine.close()
    return [job.report for job in jobs_made]


def validate_task(task: Task, options: ValidateOptions | None = None, *, workdir: Path | None = None,
                  backend: SandboxBackend | None = None) -> TaskValidation:
    """Validate one task as `options` say (one unit at a time: `jobs` is not read); never raises for a problem
    of the task itself."""
    options = options or ValidateOptions()
    backend = backend or default_backend()
    if task.id in (unbuildable := backend.prepare_tasks(environment_tasks([task])) or {}):
        return _unbuildable(task.id, unbuildable[task.id])
    plan = plan_redteam([task], options.redteam)
    (report,) = _validate([task], replace(options, jobs=1), backend=backend, plan=plan, workdir=workdir)
    return report


def _materialize(task: Task, seed: int, dest: Path, backend: SandboxBackend) -> Sandbox:
    """The task's fresh sandbox: generated, or an environment task's working directory out of its image."""
    env = task.environment_task()
    if env is not None:
        backend.environment_start(env, dest)
        return materialize_environment(task, seed, dest)
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
    remove_tree(sandbox.path)  # any depth (the red team's deep folders)


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
                        grader_problem(result, task) if result.verdict is Verdict.ERROR else "",
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
                return CheckRun(phase, seed, i + 1, "fix_failed", fix_problem(fix, task), fix.duration_s,
                                fix.output, fix.output)
            diff = _cheat_diff(sandbox) if cheat else ""
            result = _grade(task, sandbox, runner, backend, cancel)
        verdict, problem = result.verdict.value, ""
        if result.verdict is Verdict.ERROR:
            problem = grader_problem(result, task)
        elif cheat and result.verdict is Verdict.PASS:
            problem = _misnamed_cheat(task, sandbox, diff)
            verdict = "pass" if problem else "cheated"
        return CheckRun(phase, seed, i + 1, verdict, problem, fix.duration_s + result.script.duration_s,
                        result.script.output, fix.output)
    finally:
        _drop(task, sandbox, backend)


def _cheat_diff(sandbox: Sandbox) -> str:
    """What the reference cheat changed, as a trial's diff.patch would say (taken before grading)."""
    from agentic_eval.grading import gitsafe

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


def validate_tasks(tasks: Sequence[Task], options: ValidateOptions | None = None, *,
                   load_errors: Sequence[TaskLoadError] = (), on_done: Callable[[TaskValidation], None] | None = None,
                   backend: SandboxBackend | None = None, log: Callable[..., None] | None = None) -> ValidationReport:
    """Validate many tasks in parallel, as `options` say; tasks that failed to load are reported bad with their
    error. A task whose image does not build is reported bad with the cause (`TaskValidation.unbuildable`), and
    the others go on; `log` gets the backend's lines while it builds (the images, a task that asks for an
    internet the engine lacks). `on_done` gets each task's validation as it finishes."""
    options = options or ValidateOptions()
    check_grader_requirements([t for t in tasks if t.verifier == "script"])
    backend = backend or default_backend()
    started = time.monotonic()
    # environment tasks: refused in one line, or built
    unbuildable = backend.prepare_tasks(environment_tasks(tasks), log) or {}
    tasks = [t for t in tasks if t.id not in unbuildable]
    plan = plan_redteam(tasks, options.redteam)
    results: list[TaskValidation] = [
        TaskValidation(id=_id_from_error(err), reasons=[f"load error: {err}"]) for err in load_errors
    ]
    results += [_unbuildable(tid, why) for tid, why in unbuildable.items()]
    results.extend(_validate(tasks, options, backend=backend, plan=plan, on_done=on_done))
    return ValidationReport(results, duration_s=time.monotonic() - started,
                            redteam=None if plan is None else list(plan.names), seeds=options.seed_list,
                            repeat=options.repeat, redteam_seeds=[] if plan is None else options.redteam_seed_list)


def _unbuildable(task_id: str, why: str) -> TaskValidation:
    why = why[len(task_id) + 2:] if why.startswith(f"{task_id}: ") else why
    return TaskValidation(id=task_id, reasons=[f"its image does not build (the task's to fix): {why}"],
                          unbuildable=why)


def _id_from_error(err: TaskLoadError) -> str:
    path = Path(err.path)
    return (path.parent if path.name == "task.toml" or path.suffix else path).name
