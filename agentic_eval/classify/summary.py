"""From a trial's wire log to its turn statistics: every model response classified, then counted."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentic_eval.results.records import TextCallFigures, TurnCounts

MODEL_CALL_SUFFIXES = ("/chat/completions", "/responses", "/messages")
"""Model calls: chat completions, the Responses API, the Anthropic Messages API."""


@dataclass
class WireSummary:
    turns: TurnCounts
    families: dict[str, int] = field(default_factory=dict)
    flags: dict[str, int] = field(default_factory=dict)
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    errors: list[str] = field(default_factory=list)
    """Exchanges that failed (upstream status >= 400, unreachable, cut short), one line each."""
    text_calls: TextCallFigures = field(default_factory=TextCallFigures)
    """The text-written calls with the engine parsers that read them (agentic_eval.classify.diagnosis)."""


def is_model_call(method: str, path: str) -> bool:
    return method.upper() == "POST" and path.split("?", 1)[0].rstrip("/").endswith(MODEL_CALL_SUFFIXES)


def _usage_tokens(usage: dict[str, Any] | None) -> tuple[int, int]:
    if not isinstance(usage, dict):
        return 0, 0
    prompt = usage.get("prompt_tokens", usage.get("input_tokens", 0)) or 0
    completion = usage.get("completion_tokens", usage.get("output_tokens", 0)) or 0
    try:
        return int(prompt), int(completion)
    except (TypeError, ValueError):
        return 0, 0


def summarize_wire_log(path: Path) -> WireSummary:
    """Classify every model turn of a wire log and count labels, families and flags."""
    from agentic_eval.classify.diagnosis import call_figures
    from agentic_eval.classify.turn import TurnClassification, classify_turn, is_model_turn
    from agentic_eval.wire.recorder import read_wire_log

    classified: list[TurnClassification] = []
    counts: Counter[str] = Counter()
    families: Counter[str] = Counter()
    flags: Counter[str] = Counter()
    summary = WireSummary(turns=TurnCounts())
    try:
        records = read_wire_log(path, summary.errors)  # a torn or foreign line is named there and skipped
    except (OSError, ValueError) as exc:
        summary.errors.append(f"unreadable wire log: {exc}")
        return summary
    for rec in records:
        if not is_model_call(rec.method, rec.path):
            continue
        summary.requests += 1
        p, c = _usage_tokens(rec.usage)
        summary.prompt_tokens += p
        summary.completion_tokens += c
        if rec.error or rec.status is None or rec.status >= 400 or not isinstance(rec.response, dict):
            counts["unclassified"] += 1
            summary.errors.append(rec.error or (f"HTTP {rec.status}" if rec.status is None or rec.status >= 400
                                                else f"HTTP {rec.status} with a reply that is not a JSON object"))
            continue
        if not is_model_turn(rec.response):
            counts["unclassified"] += 1
            summary.errors.append("response is not a model turn (no choices, output or message content)")
            continue
        request, response = rec.request, rec.response
        if rec.emulated and isinstance(rec.upstream, dict) and isinstance(rec.upstream.get("response"), dict):
            request, response = rec.upstream.get("request"), rec.upstream["response"]  # what the endpoint said
        try:
            result = classify_turn(request if isinstance(request, dict) else None, response)
        except Exception as exc:  # noqa: BLE001 - a response the classifier cannot read is data, not a crash
            counts["unclassified"] += 1
            summary.errors.append(f"unclassifiable response: {exc}")
            continue
        counts[result.label] += 1
        classified.append(result)
        if result.family:
            families[result.family] += 1
        flags.update(result.flags)
    summary.turns = TurnCounts(**{k: counts.get(k, 0) for k in TurnCounts.model_fields})
    summary.families = dict(families)
    summary.flags = dict(flags)
    summary.text_calls = call_figures(classified)
    return summary


def model_messages(wire_path: Path) -> list[str]:
    """The text of every model turn in a wire log that made no tool call (what the model said to the user), in
    order; [] for a missing or unreadable log."""
    from agentic_eval.classify.turn import NotAModelTurn, read_turn
    from agentic_eval.wire.recorder import read_wire_log

    try:
        records = read_wire_log(wire_path, errors=[])
    except (OSError, ValueError):
        return []
    texts = []
    for rec in records:
        if not is_model_call(rec.method, rec.path) or not isinstance(rec.response, dict):
            continue
        try:
            turn = read_turn(rec.response)
        except NotAModelTurn:
            continue
        if turn.content.strip() and not turn.structured_calls:
            texts.append(turn.content)
    return texts
