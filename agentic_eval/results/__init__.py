"""Durable results: everything written under runs/, one folder per run.

    records          the record schemas: TrialResult (a line of trials.jsonl), RunConfig (run.json), outcomes.
    trial_log        the torn-line-safe trial log: TrialLog appends and fsyncs, read_trials reads line by line.
    run_folder       the run folder (made, found, locked, run.json) and a campaign run's plan (TrialSpec, RunPlan).
    instrument_runs  an instrument run's folder: instrument.json (InstrumentRun) and result.json.

Each layer imports only those above it in this list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval._lazy import lazy_face

if TYPE_CHECKING:
    from .instrument_runs import InstrumentRun as InstrumentRun
    from .instrument_runs import read_instrument_run as read_instrument_run
    from .instrument_runs import save_instrument_run as save_instrument_run
    from .records import RunConfig as RunConfig
    from .records import TrialResult as TrialResult
    from .run_folder import RunPlan as RunPlan
    from .run_folder import TrialSpec as TrialSpec
    from .run_folder import read_run_config as read_run_config
    from .run_folder import resolve_run_dir as resolve_run_dir
    from .trial_log import TrialLog as TrialLog
    from .trial_log import read_trials as read_trials

_EXPORTS = {
    "TrialResult": ".records",
    "RunConfig": ".records",
    "TrialLog": ".trial_log",
    "read_trials": ".trial_log",
    "RunPlan": ".run_folder",
    "TrialSpec": ".run_folder",
    "read_run_config": ".run_folder",
    "resolve_run_dir": ".run_folder",
    "InstrumentRun": ".instrument_runs",
    "save_instrument_run": ".instrument_runs",
    "read_instrument_run": ".instrument_runs",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)
