"""The run folder: `runs/<run-id>/` made, found and locked, its run.json written and read, and a campaign run's
plan (the trials its tasks and attempts make, which of them an earlier session scored).

    runs/<run-id>/run.json          a `RunConfig` (no secrets)
    runs/<run-id>/trials.jsonl      the trial log (agentic_eval.results.trial_log)
    runs/<run-id>/instrument.json   an instrument run instead (agentic_eval.results.instrument_runs)
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING

from pydantic import ValidationError

from agentic_eval.errors import AgenticEvalError
from agentic_eval.results.records import PackInfo, RunConfig, latest_by_trial, trial_id, trial_slot
from agentic_eval.results.trial_log import read_trials

if TYPE_CHECKING:
    from agentic_eval.packs.task import Task

RUN_FILE = "run.json"
INSTRUMENT_FILE = "instrument.json"
RESULT_FILE = "result.json"


def write_run_config(run_dir: Path, config: RunConfig) -> None:
    write_atomic(run_dir / RUN_FILE, config.model_dump_json(indent=2) + "\n")


def read_run_config(run_dir: Path) -> RunConfig:
    path = run_dir / RUN_FILE
    try:
        return RunConfig.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AgenticEvalError(f"{run_dir}: not a run folder (no {RUN_FILE}); pass a folder under runs/") from None
    except ValidationError as exc:
        raise AgenticEvalError(f"{path}: unreadable run config ({exc.errors()[0]['msg']})") from None


RUN_MARKERS = (RUN_FILE, INSTRUMENT_FILE)
"""What a run's folder holds: an agent run's config, or an instrument run's record."""


def is_run(path: Path) -> bool:
    """Whether `path` is a run's folder (an agent run's or an instrument's)."""
    return any((path / m).exists() for m in RUN_MARKERS)


def holds_runs(folder: Path) -> bool:
    """Whether `folder` holds runs directly (a runs folder, a campaign's model folder), not being one."""
    return folder.is_dir() and any(is_run(child) for child in folder.iterdir() if child.is_dir())


def resolve_run_dir(run: str | Path, runs_root: Path | None = None) -> Path:
    """A run given as a folder path, or as a run id under `runs_root` (default ./runs)."""
    path = Path(run)
    if is_run(path):
        return path
    root = runs_root or Path("runs")
    if is_run(root / str(run)):
        return root / str(run)
    if holds_runs(path):
        raise AgenticEvalError(f"{run} holds runs, it is not one: give one of its runs, or all of them with "
                               f"--run-dir {run}")
    if path.exists():
        raise AgenticEvalError(inside_run(path) or _not_a_run(path, root))
    raise AgenticEvalError(f"run {run!r} not found (give its folder, or its id under {root}/)")


def resolve_agent_run(run: str | Path, runs_root: Path, *, to: str) -> Path:
    """`resolve_run_dir`, refusing an instrument's run in one line: it has no trials `to` (export, resume...)."""
    run_dir = resolve_run_dir(run, runs_root)
    if (run_dir / INSTRUMENT_FILE).is_file():
        raise AgenticEvalError(f"{run} is an instrument's run: only agent runs (agentic-eval run) have trials to {to}")
    return run_dir


def _not_a_run(path: Path, root: Path) -> str:
    what = "a folder" if path.is_dir() else "a file"
    return (f"{path} is {what}, not a run (a run's folder holds {' or '.join(RUN_MARKERS)}): give a run's folder, "
            f"or its id under {root}/")


def inside_run(path: Path) -> str | None:
    """The line for a path that lies in a run (a trial's folder, a file in it, up to three levels down), naming
    that run (relative to the working folder where it is under it); None when it lies in none."""
    for parent in list(path.absolute().parents)[:3]:
        if is_run(parent):
            run = parent.relative_to(Path.cwd()) if parent.is_relative_to(Path.cwd()) else parent
            return f"{path} is inside the run {run}: give that folder"
    return None


def versions() -> dict[str, str]:
    import platform
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version(), "platform": platform.platform()}
    for pkg in ("agentic-eval", "openai", "httpx", "pydantic"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    return out


def new_run_id(model: str, kind: str) -> str:
    """A run's id: UTC time to the second, the model (filename-safe), the agent or instrument."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in model)[:40]
    return f"{stamp}-{safe}-{kind}"


def not_a_runs_folder(root: Path) -> str:
    """The one line for a folder of runs (--run-dir) that is a file (mkdir said `File exists`)."""
    return f"{root} is a file, not a folder: give --run-dir the folder that holds runs, or one to make"


def claim_run_dir(root: Path, base_id: str) -> Path:
    """Create a new run folder `root/base_id`, or `base_id-2`, `-3`, ... if taken (two runs started
    in the same second): created atomically, so two processes never share one."""
    if root.exists() and not root.is_dir():
        raise AgenticEvalError(not_a_runs_folder(root))
    root.mkdir(parents=True, exist_ok=True)
    for n in range(1, 10_000):
        candidate = root / (base_id if n == 1 else f"{base_id}-{n}")
        try:
            candidate.mkdir()
        except FileExistsError:
            continue
        return candidate
    raise AgenticEvalError(f"{root}: no free run folder name for {base_id}")


# --------------------------------------------------------------------------- a campaign run's plan
# What a run will do, read from and written to its folder: the trials its tasks and attempts make, which
# of them an earlier session scored, and the lock that keeps a second process off the run.


@dataclass(frozen=True)
class TrialSpec:
    """One trial to run: a task, its attempt number, and its identity."""

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
    lock: IO[str] | None = None
    """The run's lock file, held while this plan lives or until `release`."""

    def release(self) -> None:
        """Let go of the run's lock now (its trials are done here), not when the plan is garbage: a plan kept
        alive by a reference cycle would otherwise refuse a resume of the same run in this process."""
        if self.lock is not None:
            self.lock.close()
            self.lock = None


def plan_trials(tasks: Sequence[Task], agent: str, model: str, seed: int, attempts: int) -> list[TrialSpec]:
    """Every (task, attempt) of a run, in order, with its trial id."""
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
    """The packs `tasks` come from, each with a digest of its tasks' digests (run.json's `packs`)."""
    by_pack: dict[tuple[str, Path], list[Task]] = {}
    for t in tasks:
        by_pack.setdefault((t.pack, t.pack_dir), []).append(t)
    infos = []
    for (name, path), members in sorted(by_pack.items()):
        h = hashlib.sha256("".join(f"{t.id}:{t.digest()}" for t in sorted(members, key=lambda t: t.id)).encode())
        infos.append(PackInfo(name=name, path=str(path), digest=h.hexdigest()[:16], tasks=[t.id for t in members]))
    return infos


def prepare_run(run_dir: Path, config: RunConfig, tasks: Sequence[Task], *, resume: bool) -> RunPlan:
    """Create (or reopen, for resume) the run folder, hold its lock, and list the trials to run."""
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


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
