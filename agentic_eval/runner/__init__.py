"""The campaign runner: every (task, attempt) as a trial, graded by script, recorded durably.

    settings  RunSettings: a run's settings as one frozen object, and what --resume keeps.
    planning  Planning a run and its rules (plan_start, plan_resume, Campaign).
    trial     A trial's life (TrialRunner, in phases) and running a plan's trials concurrently (execute_plan).
    record    A trial's record from its phases' frozen parts: judge the outcome, build the TrialResult once.
    api       The Python API: start_run, resume_run, RunOutcome.
    cluster   `--ray`: a plan's trials as tasks on a Ray cluster's nodes (execute_on_ray), the driver writing the run.
    cluster_probe  Whether a Ray cluster answers at `--ray ADDRESS`, asked in seconds before a run folder is made.

What a run writes (run.json, trials.jsonl) and its plan's plumbing (which trials stand, the run's lock)
live in `agentic_eval.results` (records, trial_log, run_folder).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval._lazy import lazy_face

if TYPE_CHECKING:
    from agentic_eval.grading.remains import repository_damage as repository_damage

    from .api import RunOutcome as RunOutcome
    from .api import resume_run as resume_run
    from .api import start_run as start_run
    from .cluster import execute_on_ray as execute_on_ray
    from .planning import Campaign as Campaign
    from .planning import make_run_config as make_run_config
    from .planning import plan_resume as plan_resume
    from .planning import plan_start as plan_start
    from .settings import RunSettings as RunSettings
    from .settings import SandboxChoice as SandboxChoice
    from .trial import TrialRunner as TrialRunner
    from .trial import execute_plan as execute_plan

_EXPORTS = {
    "start_run": ".api",
    "resume_run": ".api",
    "RunOutcome": ".api",
    "execute_on_ray": ".cluster",
    "RunSettings": ".settings",
    "SandboxChoice": ".settings",
    "plan_start": ".planning",
    "plan_resume": ".planning",
    "Campaign": ".planning",
    "make_run_config": ".planning",
    "TrialRunner": ".trial",
    "execute_plan": ".trial",
    "repository_damage": "agentic_eval.grading.remains",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)
