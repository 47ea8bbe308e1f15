"""The turn classifier: did the model make a real tool call, or write one as text? No I/O.

    turn         classify_turn and its result: the public face over the detectors.
    _text_calls  Finding tool calls written as text.
    _formats     The text formats of tool calls: one detector per marked family.
    summary      A trial's wire log to its turn statistics.
    diagnosis    Whose fix it is that tool calls came back as text (server config, parser mismatch, the model).
    documented   The tool parser each engine's docs recommend for a model family (data, with its source).
    parsers      The serving engines' tool parsers: which would read a text call, and how.
    emulation    `--emulate-parser`: a reply as an engine's tool parser would have returned it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval._lazy import lazy_face

if TYPE_CHECKING:
    from .diagnosis import Diagnosis as Diagnosis
    from .diagnosis import diagnose as diagnose
    from .summary import WireSummary as WireSummary
    from .summary import summarize_wire_log as summarize_wire_log
    from .turn import TextToolCall as TextToolCall
    from .turn import TurnClassification as TurnClassification
    from .turn import classify_turn as classify_turn
    from .turn import find_text_tool_calls as find_text_tool_calls
    from .turn import is_model_turn as is_model_turn

_EXPORTS = {
    "diagnose": ".diagnosis",
    "Diagnosis": ".diagnosis",
    "classify_turn": ".turn",
    "TurnClassification": ".turn",
    "TextToolCall": ".turn",
    "is_model_turn": ".turn",
    "find_text_tool_calls": ".turn",
    "summarize_wire_log": ".summary",
    "WireSummary": ".summary",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)
