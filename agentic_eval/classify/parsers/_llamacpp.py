"""llama.cpp's chat-format parsers (`llama-server --jinja`): the format is picked from the model's chat
template; each reads calls from the whole output. Formats that match a vLLM parser's reuse its reader
(see _registry)."""

from __future__ import annotations

import json
import re
from typing import Any

from agentic_eval.classify.parsers._types import ParsedCall, Tools, engine_call

__all__ = ["llamacpp_command_r7b", "llamacpp_generic", "llamacpp_hermes_2_pro", "llamacpp_llama_3_x",
           "llamacpp_mistral_nemo"]

_DECODER = json.JSONDecoder()
Result = tuple[list[ParsedCall], str | None]

# Hermes 2 Pro accepts many wrappers: an optional ```json / ```xml fence, then <tool_call>, <function_call>,
# <tool>, <tools>, <response>, <json>, <xml> or <JSON> (or nothing) before `{"name"`; or <function=NAME>
# / <function name="NAME"> followed by the JSON arguments.
_HERMES_OPEN = re.compile(
    r"(?:(?P<fence>```(?:xml|json)?\n\s*)?(?P<tag><tool_call>|<function_call>|<tool>|<tools>|<response>|<json>|<xml>|"
    r"<JSON>)?(?P<named>\s*\{\s*\"name\"))|<function=(?P<function>[^>]+)>|<function name=\"(?P<quoted>[^\"]+)\">"
)


def _object_at(text: str, position: int) -> tuple[Any, int]:
    position = len(text) - len(text[position:].lstrip())
    return _DECODER.raw_decode(text, position)


def llamacpp_hermes_2_pro(text: str, tools: Tools) -> Result:
    """llama.cpp "Hermes 2 Pro" (Hermes, Qwen2.5, Qwen3, QwQ templates): every opener above, anywhere; the
    JSON needs a `name` (arguments default to {}); the wrapper's closing tag and fence are consumed. A call
    whose JSON does not read makes the whole output content. Tools are not checked."""
    calls: list[ParsedCall] = []
    content, position = [], 0
    try:
        while (opener := _HERMES_OPEN.search(text, position)) is not None:
            content.append(text[position : opener.start()])
            if opener["named"] is not None:
                value, end = _object_at(text, opener.start("named"))
                call = engine_call(value["name"], value.get("arguments", {}))
                if opener["tag"]:
                    closing = re.compile(r"\s*</" + re.escape(opener["tag"][1:]))
                    end = closed.end() if (closed := closing.match(text, end)) else end
                if opener["fence"]:
                    end = fenced.end() if (fenced := re.compile(r"\s*```\s*").match(text, end)) else end
            else:
                value, end = _object_at(text, opener.end())
                call = engine_call(opener["function"] or opener["quoted"], value)
                end = closed.end() if (closed := re.compile(r"\s*</function>").match(text, end)) else end
            if call is None:
                raise ValueError("arguments are no object")
            calls.append(call)
            position = end
    except (ValueError, KeyError, TypeError):
        return [], text
    if not calls:
        return [], text
    return calls, "".join(content) + text[position:] or None


_LLAMA_JSON = re.compile(
    r"\s*\{\s*(?:\"type\"\s*:\s*\"function\"\s*,\s*)?\"name\"\s*:\s*\"([^\"]+)\"\s*,\s*\"parameters\"\s*:")
_BUILTIN = re.compile(r"<\|python_tag\|>\s*(\w+)\.call\(")


def llamacpp_llama_3_x(text: str, tools: Tools) -> Result:
    """llama.cpp "Llama 3.x" (and "with builtin tools"): `{"name": ..., "parameters": {...}}` objects
    (`"type": "function"` allowed first), and `<|python_tag|>TOOL.call(key=value, ...)` for the built-in
    tools. Content is the text around them."""
    builtin = _BUILTIN.search(text)
    if builtin is not None:
        arguments = {}
        for key, raw in re.findall(r"(\w+)\s*=\s*(\"(?:[^\"\\]|\\.)*\"|[^,)]+)", text[builtin.end() :]):
            try:
                arguments[key] = json.loads(raw)
            except ValueError:
                arguments[key] = raw.strip()
        call = engine_call(builtin.group(1), arguments)
        return ([call], text[: builtin.start()] or None) if call else ([], text)
    calls: list[ParsedCall] = []
    content, position = [], 0
    while (opener := _LLAMA_JSON.search(text, position)) is not None:
        try:
            value, end = _object_at(text, opener.start())
        except ValueError:
            break
        call = engine_call(value.get("name"), value.get("parameters", {}))
        if call is None:
            break
        content.append(text[position : opener.start()])
        calls.append(call)
        position = end
    if not calls:
        return [], text
    return calls, "".join(content) + text[position:] or None


def llamacpp_mistral_nemo(text: str, tools: Tools) -> Result:
    """llama.cpp "Mistral Nemo": `[TOOL_CALLS]` then a JSON list of `{name, arguments, id}`."""
    start = text.find("[TOOL_CALLS]")
    if start == -1:
        return [], text
    try:
        value, _ = _object_at(text, start + len("[TOOL_CALLS]"))
        calls = [engine_call(item["name"], item.get("arguments", {})) for item in value]
    except (ValueError, KeyError, TypeError):
        return [], text
    if not calls or any(call is None for call in calls):
        return [], text
    return [call for call in calls if call is not None], text[:start] or None


def llamacpp_command_r7b(text: str, tools: Tools) -> Result:
    """llama.cpp "Command R7B": `<|START_ACTION|>[{tool_call_id, tool_name, parameters}]<|END_ACTION|>`;
    the reply is what stands in `<|START_RESPONSE|>...<|END_RESPONSE|>`."""
    response = re.search(r"<\|START_RESPONSE\|>(.*?)(?:<\|END_RESPONSE\|>|$)", text, re.DOTALL)
    action = re.search(r"<\|START_ACTION\|>(.*?)(?:<\|END_ACTION\|>|$)", text, re.DOTALL)
    if action is None:
        return [], response.group(1) if response else text
    try:
        value = json.loads(action.group(1))
        calls = [engine_call(item["tool_name"], item.get("parameters", {})) for item in value]
    except (ValueError, KeyError, TypeError):
        return [], text
    if not calls or any(call is None for call in calls):
        return [], text
    return [call for call in calls if call is not None], response.group(1) if response else None


def llamacpp_generic(text: str, tools: Tools) -> Result:
    """llama.cpp "Generic" (templates with no tool syntax of their own): the whole output is one JSON object,
    `{"tool_call": {name, arguments}}`, `{"tool_calls": [...]}` or `{"response": "..."}`."""
    try:
        value = json.loads(text)
    except ValueError:
        return [], text
    if not isinstance(value, dict):
        return [], text
    if "response" in value and isinstance(value["response"], str):
        return [], value["response"]
    items: Any = value.get("tool_calls") if "tool_calls" in value else [value.get("tool_call")]
    try:
        calls = [engine_call(item["name"], item.get("arguments", {})) for item in items or []]
    except (KeyError, TypeError, AttributeError):
        return [], text
    if not calls or any(call is None for call in calls):
        return [], text
    return [call for call in calls if call is not None], value.get("content") or None
