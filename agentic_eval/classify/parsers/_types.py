"""The shapes every engine parser speaks: the call it extracts, its whole result, its registry row."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["EngineParser", "Extraction", "ParsedCall", "Read", "Tools", "engine_call", "tool_schemas"]


@dataclass(frozen=True)
class ParsedCall:
    """One call as the engine puts it in `tool_calls`: `arguments` is `json.loads` of the string the
    engine writes into `function.arguments`."""

    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Extraction:
    """What one engine parser makes of a complete (non-streaming) model output."""

    parser: str
    calls: tuple[ParsedCall, ...]
    content: str | None


@dataclass(frozen=True)
class EngineParser:
    """One tool-call parser a serving engine ships, as its user would enable it."""

    key: str
    engine: str
    name: str
    families: tuple[str, ...]
    how_to_enable: str


Tools = Mapping[str, dict[str, Any]]
"""The offered tools: name -> JSON Schema of the parameters ({} when it has none)."""

Read = Callable[[str, Tools], tuple[list[ParsedCall], str | None]]
"""A format's reader: (model output, offered tools) -> (calls, content left in the message)."""


def tool_schemas(tools: Sequence[Mapping[str, Any]] | None) -> dict[str, dict[str, Any]]:
    """The request's OpenAI `tools` list as name -> parameters schema (tools without a name are skipped)."""
    schemas: dict[str, dict[str, Any]] = {}
    for tool in tools or ():
        if not isinstance(tool, Mapping):
            continue
        spec = tool.get("function") if isinstance(tool.get("function"), Mapping) else tool
        if isinstance(spec, Mapping) and isinstance(spec.get("name"), str):
            parameters = spec.get("parameters", spec.get("input_schema"))
            schemas[spec["name"]] = dict(parameters) if isinstance(parameters, Mapping) else {}
    return schemas


def engine_call(name: Any, arguments: Any, *, raw: bool = False) -> ParsedCall | None:
    """The call as a client reads it back: the engine serialises `arguments` with `json.dumps` (or,
    `raw`, passes the string it was given through), the client parses that string. None when the name
    is no string or the arguments do not come back as a JSON object."""
    if not isinstance(name, str):
        return None
    try:
        text = arguments if raw else json.dumps(arguments, ensure_ascii=False)
        value = json.loads(text)
    except (TypeError, ValueError):
        return None
    return ParsedCall(name, value) if isinstance(value, dict) else None
