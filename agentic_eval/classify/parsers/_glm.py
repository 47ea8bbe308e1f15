"""GLM-4.5 / 4.6 / 4.7: `<tool_call>NAME\\n<arg_key>K</arg_key>\\n<arg_value>V</arg_value>...</tool_call>`."""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from agentic_eval.classify.parsers._json_tags import json_objects_calls
from agentic_eval.classify.parsers._types import ParsedCall, Tools, engine_call

__all__ = ["sglang_glm", "vllm_glm"]

_BLOCK = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
# Between key and value: white space, or a written "\n" (GLM-4.6 escaping its own newlines).
_PAIR = re.compile(r"<arg_key>(.*?)</arg_key>(?:\s|\\n)*<arg_value>(.*?)</arg_value>", re.DOTALL)
# The name ends at a newline (GLM-4.5), a written "\n" or the first <arg_key> (GLM-4.7 puts none between).
_NAME = re.compile(r"\s*(.*?)\s*(?:\n|\\n|(?=<arg_key>)|$)", re.DOTALL)


def _is_string(tools: Tools, name: str, key: str) -> bool:
    schema = ((tools.get(name) or {}).get("properties") or {}).get(key)
    kinds = schema.get("type") if isinstance(schema, dict) else None
    return kinds == "string" or (isinstance(kinds, list) and "string" in kinds)


def _value(raw: str, string: bool) -> Any:
    """A value as the engines read it: text for string parameters, else JSON, a Python literal, or JSON
    written with escaped quotes, falling back to the text."""
    if string:
        return raw
    for attempt in (raw, raw.replace('\\"', '"')):
        try:
            return json.loads(attempt)
        except ValueError:
            pass
    try:
        return ast.literal_eval(raw)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return raw


def _calls(text: str, tools: Tools, *, offered_only: bool) -> list[ParsedCall]:
    calls: list[ParsedCall] = []
    for body in _BLOCK.findall(text):
        named = _NAME.match(body)
        name = named.group(1) if named else ""
        if not name or "<" in name:
            continue
        arguments = {key.strip(): _value(value, _is_string(tools, name, key.strip()))
                     for key, value in _PAIR.findall(body[named.end() if named else 0 :])}
        if offered_only:
            calls += json_objects_calls({"name": name, "arguments": arguments}, tools)
        elif (call := engine_call(name, arguments)) is not None:
            calls.append(call)
    return calls


def vllm_glm(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """vLLM `glm45` / `glm47`: every closed `<tool_call>` block; values converted unless the schema says
    string; tools not checked. An unclosed block reads nothing. Content is the stripped text before
    the first block."""
    calls = _calls(text, tools, offered_only=False)
    if not calls:
        return [], text
    return calls, text[: text.find("<tool_call>")].strip() or None


def sglang_glm(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """SGLang `glm45` / `glm47`: as vLLM's, tools not offered dropped."""
    if "<tool_call>" not in text:
        return [], text
    return _calls(text, tools, offered_only=True), text[: text.find("<tool_call>")].strip()
