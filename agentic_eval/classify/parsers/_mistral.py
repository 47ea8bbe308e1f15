"""Mistral: `[TOOL_CALLS][{"name": ..., "arguments": {...}}]` (tokenizers before v11) and
`[TOOL_CALLS]name{...}` / `[TOOL_CALLS]name[ARGS]{...}` (v11 and later)."""

from __future__ import annotations

import json
import re

from agentic_eval.classify.parsers._json_tags import json_objects_calls
from agentic_eval.classify.parsers._types import ParsedCall, Tools, engine_call

__all__ = ["sglang_mistral", "vllm_mistral"]

_BOT = "[TOOL_CALLS]"
_DECODER = json.JSONDecoder()


def _v11_calls(text: str) -> list[ParsedCall]:
    """`name{arguments}` after each `[TOOL_CALLS]` (`[ARGS]` between them allowed); the argument text is
    handed on even when it is no complete JSON (read as {} here)."""
    calls: list[ParsedCall] = []
    for part in text.split(_BOT)[1:]:
        if "{" not in part:
            continue
        brace = part.find("{")
        name = part[:brace].strip().removesuffix("[ARGS]").strip()
        try:
            arguments = _DECODER.raw_decode(part, brace)[0]
        except ValueError:
            arguments = None
        calls.append((arguments is not None and engine_call(name, arguments)) or ParsedCall(name, {}))
    return calls


def vllm_mistral(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """vLLM `mistral`: after `[TOOL_CALLS]` a JSON list of `{name, arguments}` (old tokenizers), else
    `name{arguments}` per marker (v11+). Offered tools are not checked. Content is the text before the
    first marker; on failure no calls and the output without its markers, stripped."""
    if _BOT not in text:
        return [], text
    payload = text.replace(_BOT, "").strip()
    try:
        if payload.startswith("["):
            try:
                listed = json.loads(payload)
            except ValueError:
                found = re.findall(r"\[{.*}\]", payload, re.DOTALL)
                listed = json.loads(found[0]) if found else None
            if not isinstance(listed, list):
                raise ValueError("not a list of calls")
            calls = [engine_call(item["name"], item["arguments"]) for item in listed]
            if any(call is None for call in calls):
                raise ValueError("unreadable call")
            parsed = [call for call in calls if call is not None]
        else:
            parsed = _v11_calls(text)
    except (ValueError, KeyError, TypeError, IndexError):
        return [], payload
    if not parsed:
        return [], payload
    content = text.split(_BOT)[0]
    return parsed, content or None


def sglang_mistral(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """SGLang `mistral`: `[TOOL_CALLS] [...]` JSON list (bracket-matched), or the compact
    `[TOOL_CALLS]name[ARGS]{...}`; tools not offered are dropped. Content is the stripped text before
    the marker."""
    start = text.find(_BOT)
    if start == -1:
        return [], text
    content = text[:start].strip()
    rest = text[start + len(_BOT) :].lstrip()
    if rest.startswith("["):
        try:
            value, _ = _DECODER.raw_decode(rest)
        except ValueError:
            return [], content
        return json_objects_calls(value, tools), content
    calls: list[ParsedCall] = []
    for match in re.finditer(r"\[TOOL_CALLS\]\s*([\w.\-]+)\s*(?:\[ARGS\])?\s*(?=\{)", text):
        try:
            arguments, _ = _DECODER.raw_decode(text, match.end())
        except ValueError:
            continue
        if match.group(1) in tools and (call := engine_call(match.group(1), arguments)) is not None:
            calls.append(call)
    return calls, content
