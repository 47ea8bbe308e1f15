"""Ollama's tool-call parser: the prefix its model template writes before a call (`<tool_call>`,
`[TOOL_CALLS]`, ... or none), then JSON objects naming an offered tool. Ollama parses only when the
request offers tools."""

from __future__ import annotations

import json
from typing import Any

from agentic_eval.classify.parsers._types import ParsedCall, Read, Tools, engine_call

__all__ = ["ollama_template"]

_DECODER = json.JSONDecoder()
_NAME_KEYS = ("name", "tool_name")
_ARGUMENT_KEYS = ("arguments", "parameters")


def _calls_in(value: Any, tools: Tools) -> list[ParsedCall]:
    """Call objects in a JSON value, looked for through lists and wrapper objects (`{"tool_calls": [...]}`)."""
    if isinstance(value, list):
        return [call for item in value for call in _calls_in(item, tools)]
    if not isinstance(value, dict):
        return []
    name = next((value[key] for key in _NAME_KEYS if isinstance(value.get(key), str)), None)
    arguments = next((value[key] for key in _ARGUMENT_KEYS if key in value), None)
    if name is not None and arguments is not None:
        call = engine_call(name, arguments)
        return [call] if call is not None and name in tools else []
    return [call for item in value.values() for call in _calls_in(item, tools)]


def _objects(text: str, tools: Tools) -> tuple[list[ParsedCall], bool]:
    """Every call in the JSON objects of `text` (unreadable stretches skipped), and whether any JSON read."""
    calls: list[ParsedCall] = []
    position, read = 0, False
    while (start := text.find("{", position)) != -1:
        try:
            value, end = _DECODER.raw_decode(text, start)
        except ValueError:
            position = start + 1
            continue
        read = True
        calls += _calls_in(value, tools)
        position = end
    return calls, read


def ollama_template(prefix: str | None) -> Read:
    """The reader for a template whose calls start with `prefix` (None: the JSON itself)."""

    def read(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
        if not tools:
            return [], text
        stripped = text.lstrip()
        starts_json = stripped[:1] in ("{", "[")
        found = text.find(prefix) if prefix else -1
        if found != -1 and (not starts_json or found == len(text) - len(stripped)):
            calls, _ = _objects(text[found + len(prefix or "") :], tools)
            return calls, text[:found].strip()
        if not starts_json:
            return [], text
        try:
            value, end = _DECODER.raw_decode(stripped)
        except ValueError:  # Ollama holds back what may still become a call: it never shows it
            return [], ""
        calls = _calls_in(value, tools)
        if not calls:
            return [], text
        rest = stripped[end:]
        if prefix and prefix in rest:
            more, _ = _objects(rest[rest.find(prefix) + len(prefix) :], tools)
            return calls + more, None
        return calls, rest.strip()

    return read
