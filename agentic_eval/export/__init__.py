"""Exports of a run for the field's tools: trajectories in ATIF (Harbor's Agent Trajectory Interchange Format)
and the run as an Inspect AI eval log (`inspect view`). docs/export.md says what each field holds.

    trials       a run's trials read back as steps, from their wire logs (shared by both formats)
    _messages    the three API shapes on the wire (chat, Responses, Messages) read into one neutral form
    atif         one ATIF trajectory per trial
    inspect_log  one Inspect eval log per run (needs the [inspect] extra)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval._lazy import lazy_face

if TYPE_CHECKING:
    from .atif import export_atif as export_atif
    from .atif import trajectory as trajectory
    from .atif import write_trial_trajectory as write_trial_trajectory
    from .inspect_log import eval_log as eval_log
    from .inspect_log import export_inspect as export_inspect
    from .trials import RunView as RunView
    from .trials import TrialView as TrialView
    from .trials import read_run as read_run
    from .trials import read_trial as read_trial

_EXPORTS = {
    "read_run": ".trials",
    "read_trial": ".trials",
    "RunView": ".trials",
    "TrialView": ".trials",
    "trajectory": ".atif",
    "export_atif": ".atif",
    "write_trial_trajectory": ".atif",
    "eval_log": ".inspect_log",
    "export_inspect": ".inspect_log",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)
