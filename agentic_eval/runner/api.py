"""The Python API: start or resume a campaign with the rules the `run` command follows.

    from agentic_eval.runner import RunSettings, resume_run, start_run

    done = start_run(model="qwen3-coder", base_url="http://localhost:8000/v1", tasks=["packs/mine"],
                     attempts=3, jobs=4)                 # or start_run(RunSettings(...))
    print(done.run_dir, done.passed, done.scored, done.outcomes)   # a RunOutcome
    if done.interrupted or done.scored < sum(done.outcomes.values()):
        resume_run(done.run_dir, base_url="http://localhost:8001/v1")  # unscored trials again

Bad input raises AgenticEvalError with one line saying how to fix it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentic_eval.results.records import SCORED_OUTCOMES, TrialResult, latest_by_trial
from agentic_eval.results.trial_log import read_trials
from agentic_eval.runner.planning import Campaign, Log, plan_resume, plan_start
from agentic_eval.runner.settings import RunSettings

if TYPE_CHECKING:
    from agentic_eval.local.server import LocalServer


@dataclass(frozen=True)
class RunOutcome:
    """Where a run is and how it ended: `outcomes` counts every trial of the run (its latest record),
    not only those of this session; `interrupted` when Ctrl-C stopped it (resume it with `resume_run`)."""

    run_dir: Path
    run_id: str
    trials_run: list[TrialResult] = field(repr=False)  # every record in full: too long to print
    skipped: int
    interrupted: bool
    outcomes: dict[str, int]

    @property
    def scored(self) -> int:
        return sum(self.outcomes.get(o, 0) for o in SCORED_OUTCOMES)

    @property
    def passed(self) -> int:
        return self.outcomes.get("pass", 0)


def _finish(campaign: Campaign, on_result: Callable[[TrialResult], None] | None) -> RunOutcome:
    """Execute the campaign; Ctrl-C ends it as an interrupted outcome (finished trials are kept)."""
    from collections import Counter

    results: list[TrialResult] = []

    def collect(result: TrialResult) -> None:
        results.append(result)
        if on_result is not None:
            on_result(result)

    interrupted = False
    try:
        campaign.execute(on_result=collect)
    except KeyboardInterrupt:
        interrupted = True
    latest = latest_by_trial(read_trials(campaign.run_dir)[0])
    return RunOutcome(run_dir=campaign.run_dir, run_id=campaign.config.run_id, trials_run=results,
                      skipped=campaign.plan.skipped, interrupted=interrupted,
                      outcomes=dict(Counter(r.outcome for r in latest.values())))


def start_run(settings: RunSettings | None = None, /, *, local_server: LocalServer | None = None,
              log: Log | None = None,
              on_result: Callable[[TrialResult], None] | None = None, **keywords: Any) -> RunOutcome:
    """Start a new run and run all its trials (`plan_start` then `Campaign.execute`); `on_result` sees
    each trial's record once it is on disk. Ctrl-C ends it early: `interrupted`, resumable.

    The run's settings: a `RunSettings`, or its keywords (`RunSettings.of`: model, agent, base_url, api_key,
    tasks, task_ids, seed, attempts, jobs, runs_root, system_prompt_tokens, lenient_text_calls, stream,
    emulate_parser, agent_options, sandbox, docker_hosts, image, keep_sandboxes, ray_address)."""
    if settings is None:
        settings = RunSettings.of(**keywords)
    elif keywords:
        raise TypeError("give a RunSettings or its keywords, not both")
    return _finish(plan_start(settings, local_server=local_server, log=log), on_result)


def resume_run(run: str | Path, /, *, local_server: LocalServer | None = None, log: Log | None = None,
               on_result: Callable[[TrialResult], None] | None = None, **given: Any) -> RunOutcome:
    """Resume a run (its folder, or its id under `runs_root`): rerun its unscored and missing trials,
    keep its scored ones (`plan_resume` then `Campaign.execute`). `given`: `RunSettings.of` keywords; how
    it runs (base_url, api_key, jobs, tasks, docker_hosts, ray_address, ...) may change, what it measures may not."""
    return _finish(plan_resume(run, given, local_server=local_server, log=log), on_result)
