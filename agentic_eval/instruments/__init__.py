"""The instruments that are not agent runs: tool-call battery, form matrix, BFCL, probe, speed,
think-check and cold start. No instrument imports another; what they share lives in `exchange` and `servers`.

    battery       The synthetic tool-calling battery: deterministic cases from a seed, in six phases.
    catalog       The battery's tool catalog: 42 realistic tools in 18 domains.
    toolcheck     Argument checkers for the battery, the form matrix and BFCL.
    forms         The form matrix: one tool-call request in 10 API shapes.
    bfcl          BFCL's single-turn cases played through the wire.
    probe         `probe`: what a server and model do with tools, one request per API shape.
    speed         The speed instrument's measurement loop, gated on an otherwise idle server.
    metrics       Server metrics: Prometheus scraping, metric names per server kind.
    speedstats    Pure statistics for the speed instrument.
    thinkcheck    think-check: does switching reasoning off make answers wrong?
    consistency   Does an answer's own arithmetic hold? A pure checker.
    wordproblems  Deterministic arithmetic word problems with exact answers.
    coldstart     cold-start: from nothing to the first token.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval._lazy import lazy_face

if TYPE_CHECKING:
    from .battery import generate_cases as generate_cases
    from .battery import run_battery as run_battery
    from .coldstart import measure_cold_start as measure_cold_start
    from .forms import run_forms as run_forms
    from .probe import run_probe as run_probe
    from .speed import measure_speed as measure_speed
    from .thinkcheck import run_think_check as run_think_check

_EXPORTS = {
    "generate_cases": ".battery",
    "run_battery": ".battery",
    "run_forms": ".forms",
    "run_probe": ".probe",
    "measure_speed": ".speed",
    "run_think_check": ".thinkcheck",
    "measure_cold_start": ".coldstart",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)
