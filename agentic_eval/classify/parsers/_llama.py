"""Llama 3.x / 4 JSON calls: `{"name": ..., "parameters": {...}}`, bare or after `<|python_tag|>`."""

from __future__ import annotations

import json
import re

from agentic_eval.classify.parsers._json_tags import json_objects_calls
from agentic_eval.classify.parsers._types import ParsedCall, Tools, engine_call

__all__ = ["sglang_llama3", "vllm_llama3_json"]

_DECODER = json.JSONDecoder()


def vllm_llama3_json(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """vLLM `llama3_json` / `llama4_json`: every `{` outside an object already read must start a JSON
    object with `name` and `arguments` (or `parameters`); one that does not, or JSON that does not
    parse, gives no calls and the whole output as content. Text around the objects is dropped
    (content None). Offered tools are not checked."""
    if "<|python_tag|>" not in text and "{" not in text:
        return [], text
    calls: list[ParsedCall] = []
    end = -1
    for brace in re.finditer(r"\{", text):
        if brace.start() <= end:
            continue
        try:
            value, stop = _DECODER.raw_decode(text, brace.start())
            end = stop
            name = value["name"]
            arguments = value["arguments"] if "arguments" in value else value["parameters"]
        except (ValueError, KeyError, TypeError):
            return [], text
        call = engine_call(name, arguments)
        if call is None:
            return [], text
        calls.append(call)
    return (calls, None) if calls else ([], text)


def sglang_llama3(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """SGLang `llama3`: JSON objects after `<|python_tag|>` (or from the very start), separated by `;`;
    unreadable stretches are skipped to the next `{"name":`; tools not offered are dropped. Content is
    the text before the tag plus what trails the last object."""
    if "<|python_tag|>" in text:
        content, _, actions = text.partition("<|python_tag|>")
    elif text.startswith("{"):
        content, actions = "", text
    else:
        return [], text
    values: list[object] = []
    position = safe = 0
    while position < len(actions):
        try:
            value, end = _DECODER.raw_decode(actions, position)
        except ValueError:
            position = actions.find('{"name":', position + 1)
            if position == -1:
                break
            continue
        values.append(value)
        position = safe = end + 1
    trailing = actions[safe:].strip() if safe < len(actions) else ""
    return json_objects_calls(values, tools), content + trailing
