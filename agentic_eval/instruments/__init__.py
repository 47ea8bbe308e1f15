"""The instruments that are not agent runs: tool-call battery, form matrix, BFCL, probe, speed,
think-check and cold start, and the helpers they share.

The rule (guarded by tests/test_instrument_layout.py): an instrument module (battery, forms, bfcl,
probe, speed, think_check, cold_start) imports no other instrument module; a helper module (exchange,
anthropic, servers, cases, catalog, toolcheck, metrics, speedstats, consistency, wordproblems, registry) imports
no instrument module. What two instruments share lives in a helper.

Every instrument but probe records its runs itself: its module has `KIND`, `headline(result)` and
`record(result, runs_root, ...)`, which writes the run folder `agentic-eval report` reads,
and `registry.INSTRUMENTS` lists them (one name each, report column, module, CLI module, whether it runs in a
campaign) for the CLI, the report and the campaign, which name no instrument themselves. A new instrument,
campaign support included, is 3 files: its module (with `OPTIONS`, `measure` and `figures` for a campaign), its
CLI module (agentic_eval/cli/) and a row in that table.

Instruments:

    battery       The synthetic tool-calling battery: deterministic cases from a seed, in six phases.
    forms         The form matrix: one tool-call request in 15 API shapes.
    bfcl          BFCL's single-turn cases played through the wire (as battery cases).
    probe         `probe`: what a server and model do with tools, one request per API shape.
    speed         The speed instrument's measurement loop, gated on an otherwise idle server.
    think_check   think-check: does switching reasoning off make answers wrong?
    cold_start    cold-start: from nothing to the first token.

Helpers:

    exchange      Talking to the endpoint: Exchange, post_json, make_client, stream_chat over SSEDecoder.
    anthropic     The Anthropic Messages API: request bodies, replies checked, streams put together (probe, forms).
    servers       Which server it is (one ServerKind, detect_server) and Ollama's native /api/chat stream.
    cases         A tool-call case and its result: what the battery generates and BFCL's cases become.
    catalog       The battery's tool catalog: 42 realistic tools in 18 domains.
    toolcheck     Argument checkers for the battery, the form matrix and BFCL.
    metrics       Server metrics: Prometheus scraping, metric names per server kind, the contention gate.
    speedstats    Pure statistics for the speed instrument.
    consistency   Does an answer's own arithmetic hold? A pure checker.
    wordproblems  Deterministic arithmetic word problems with exact answers.
    registry      The table of instruments whose runs are recorded, and what each offers (Instrument,
                  CampaignInstrument).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval._lazy import lazy_face

if TYPE_CHECKING:
    from .battery import generate_cases as generate_cases
    from .battery import run_battery as run_battery
    from .cold_start import measure_cold_start as measure_cold_start
    from .cold_start import measure_ollama_unload as measure_ollama_unload
    from .consistency import check_consistency as check_consistency
    from .exchange import Exchange as Exchange
    from .exchange import StreamedReply as StreamedReply
    from .exchange import make_client as make_client
    from .exchange import post_json as post_json
    from .exchange import stream_chat as stream_chat
    from .forms import run_forms as run_forms
    from .probe import run_probe as run_probe
    from .registry import INSTRUMENTS as INSTRUMENTS
    from .registry import Headline as Headline
    from .registry import Instrument as Instrument
    from .servers import ServerInfo as ServerInfo
    from .servers import ServerKind as ServerKind
    from .servers import detect_server as detect_server
    from .servers import stream_ollama_chat as stream_ollama_chat
    from .speed import measure_speed as measure_speed
    from .think_check import run_think_check as run_think_check

_EXPORTS = {
    "generate_cases": ".battery",
    "run_battery": ".battery",
    "run_forms": ".forms",
    "run_probe": ".probe",
    "measure_speed": ".speed",
    "run_think_check": ".think_check",
    "measure_cold_start": ".cold_start",
    "measure_ollama_unload": ".cold_start",
    "check_consistency": ".consistency",
    "Exchange": ".exchange",
    "post_json": ".exchange",
    "make_client": ".exchange",
    "stream_chat": ".exchange",
    "StreamedReply": ".exchange",
    "ServerKind": ".servers",
    "ServerInfo": ".servers",
    "detect_server": ".servers",
    "stream_ollama_chat": ".servers",
    "INSTRUMENTS": ".registry",
    "Instrument": ".registry",
    "Headline": ".registry",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)
