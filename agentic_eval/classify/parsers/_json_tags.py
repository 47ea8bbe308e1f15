"""JSON calls between marker tags: Hermes / Qwen2.5 `<tool_call>{...}</tool_call>` and its kin.

Each reader follows one engine's non-streaming parser: which text it accepts, which failures make it
return the whole output as content, and what content it leaves.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentic_eval.classify.parsers._types import ParsedCall, Tools, engine_call

__all__ = ["sglang_qwen25", "vllm_hermes"]

_HERMES = re.compile(r"<tool_call>(.*?)</tool_call>|<tool_call>(.*)", re.DOTALL)


class NoCall(Exception):
    """The engine's parser gave up: it returns the model output as content."""


def calls_or_fail(raw: list[tuple[Any, Any]], *, raw_arguments: bool = False) -> list[ParsedCall]:
    """Engine calls from (name, arguments) pairs; any that the client could not read fails them all."""
    calls = [engine_call(name, arguments, raw=raw_arguments) for name, arguments in raw]
    if any(call is None for call in calls):
        raise NoCall
    return [call for call in calls if call is not None]


def vllm_hermes(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """vLLM `hermes`: every `<tool_call>` block (the last may be unclosed) must hold a JSON object with
    `name` and `arguments` (an object, or a string holding one); any failure gives no calls and the whole
    output as content. Offered tools are not checked. Content is the text before the first block."""
    if "<tool_call>" not in text:
        return [], text
    try:
        raw = []
        for closed, unclosed in _HERMES.findall(text):
            call = json.loads(closed or unclosed)
            arguments = call["arguments"]
            if isinstance(arguments, str):
                arguments = json.loads(arguments)
            raw.append((call["name"], arguments))
        calls = calls_or_fail(raw)
    except (NoCall, ValueError, KeyError, TypeError):
        return [], text
    content = text[: text.find("<tool_call>")]
    return calls, content or None


_QWEN25 = re.compile(r"<tool_call>\n(.*?)\n</tool_call>", re.DOTALL)


def json_objects_calls(value: Any, tools: Tools) -> list[ParsedCall]:
    """SGLang's `parse_base_json`: an object or a list of them; each needs a `name` among the offered
    tools (others are dropped) and takes `parameters`, else `arguments`, else {}."""
    calls: list[ParsedCall] = []
    for item in value if isinstance(value, list) else [value]:
        if not isinstance(item, dict):
            continue
        name = item.get("name")
        if not isinstance(name, str) or name not in tools:
            continue
        arguments = item.get("parameters") or item.get("arguments", {})
        call = engine_call(name, arguments)
        if call is not None:
            calls.append(call)
    return calls


def sglang_qwen25(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """SGLang `qwen25` (and `qwen`): `<tool_call>\\n{...}\\n</tool_call>` blocks, newlines included;
    unreadable JSON and tools not offered are skipped one by one. Content is the stripped text before
    the first `<tool_call>\\n` (the blocks are gone even when none could be read); without that newline
    the parser reads nothing."""
    start = text.find("<tool_call>\n")
    if start == -1:
        return [], text
    calls: list[ParsedCall] = []
    for body in _QWEN25.findall(text):
        try:
            value = json.loads(body.strip())
        except ValueError:
            continue
        calls += json_objects_calls(value, tools)
    return calls, text[:start].strip()
