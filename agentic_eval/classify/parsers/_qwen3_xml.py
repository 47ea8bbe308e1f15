"""Qwen3-Coder XML: `<tool_call><function=NAME><parameter=KEY>value</parameter></function></tool_call>`.

Values are text; the engines convert them by the offered tool's parameter schema.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from agentic_eval.classify.parsers._types import ParsedCall, Tools, engine_call

__all__ = ["convert_by_schema", "sglang_qwen3_coder", "vllm_qwen3_coder", "vllm_seed_oss"]

_TOOL_CALL = re.compile(r"<tool_call>(.*?)</tool_call>|<tool_call>(.*?)$", re.DOTALL)
_FUNCTION = re.compile(r"<function=(.*?)</function>|<function=(.*)$", re.DOTALL)
_PARAMETER = re.compile(r"<parameter=(.*?)(?:</parameter>|(?=<parameter=)|(?=</function>)|$)", re.DOTALL)


def convert_by_schema(value: str, schema: dict[str, Any] | None) -> Any:
    """vLLM's reading of one XML parameter value by its JSON Schema: `null` is None; strings stay;
    integers, numbers and booleans are converted when they read as such; objects and arrays are
    parsed as JSON, else as a Python literal; anything unreadable, or a parameter the schema does
    not list (`schema` None), stays a string."""
    if value.lower() == "null":
        return None
    if schema is None:
        return value
    kind = schema.get("type", "string")
    kind = str(kind[0] if isinstance(kind, list) and kind else kind).strip().lower()
    if kind in ("string", "str", "text", "varchar", "char", "enum"):
        return value
    if kind.startswith(("int", "uint", "long", "short", "unsigned")):
        try:
            return int(value)
        except ValueError:
            return value
    if kind.startswith(("num", "float")):
        try:
            number = float(value)
        except ValueError:
            return value
        return number if number - int(number) != 0 else int(number)
    if kind in ("boolean", "bool", "binary"):
        return value.lower() == "true"
    try:
        return json.loads(value)
    except ValueError:
        pass
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return value


def _function_call(body: str, tools: Tools) -> ParsedCall | None:
    """One `<function=` body (the text after `<function=`), as vLLM reads it."""
    end_of_name = body.find(">")
    if end_of_name == -1:
        return None
    name = body[:end_of_name]
    properties = (tools.get(name) or {}).get("properties") or {}
    arguments: dict[str, Any] = {}
    for match in _PARAMETER.findall(body[end_of_name + 1 :]):
        split = match.find(">")
        if split == -1:
            continue
        key, value = match[:split], match[split + 1 :]
        value = value.removeprefix("\n").removesuffix("\n")
        schema = properties.get(key)
        arguments[key] = convert_by_schema(value, schema if isinstance(schema, dict) else None)
    return engine_call(name, arguments)


def vllm_qwen3_coder(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """vLLM `qwen3_coder`: needs `<function=`; reads every `<function=...>` inside `<tool_call>` blocks
    (the last may be unclosed), or in the whole output when there is no block. Tools not offered are
    read too (their values stay strings). Content is the text before the first `<tool_call>` (or
    `<function=`), None when empty or when the output is all calls."""
    if "<function=" not in text:
        return [], text
    blocks = [closed or unclosed for closed, unclosed in _TOOL_CALL.findall(text)] or [text]
    calls = [
        call
        for block in blocks
        for closed, unclosed in _FUNCTION.findall(block)
        if (call := _function_call(closed or unclosed, tools)) is not None
    ]
    if not calls:
        return [], text
    start = text.find("<tool_call>")
    start = start if start != -1 else text.find("<function=")
    content = text[:start]
    return calls, content or None


_SG_BLOCK = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
_SG_FUNCTION = re.compile(r"<function=([^>]*)>(.*?)</function>", re.DOTALL)
_SG_PARAMETER = re.compile(r"<parameter=([^>]*)>(.*?)</parameter>", re.DOTALL)


def sglang_qwen3_coder(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """SGLang `qwen3_coder`: closed `<tool_call>` blocks with closed `<function=...>` and `<parameter=...>`;
    tools not offered are dropped; values by the schema. Content is the text outside the blocks."""
    if "<tool_call>" not in text:
        return [], text
    calls: list[ParsedCall] = []
    for block in _SG_BLOCK.findall(text):
        for name, body in _SG_FUNCTION.findall(block):
            name = name.strip()
            if name not in tools:
                continue
            properties = tools[name].get("properties") or {}
            arguments = {}
            for key, value in _SG_PARAMETER.findall(body):
                key = key.strip()
                schema = properties.get(key)
                arguments[key] = convert_by_schema(value.strip("\n"), schema if isinstance(schema, dict) else None)
            if (call := engine_call(name, arguments)) is not None:
                calls.append(call)
    return calls, _SG_BLOCK.sub("", text)


_SEED_CALL = re.compile(r"<seed:tool_call>(.*?)</seed:tool_call>|<seed:tool_call>(.*?)$", re.DOTALL)


def vllm_seed_oss(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """vLLM `seed_oss`: Qwen3-Coder XML inside `<seed:tool_call>`, read after the thinking
    (`</seed:think>`; a call quoted inside the thinking is not one); values by the schema. Content is
    everything before the first call."""
    think_end = text.find("</seed:think>")
    start = text.find("<seed:tool_call>", think_end + 1 if think_end != -1 else 0)
    if start == -1:
        return [], text
    calls = [
        call
        for closed, unclosed in _SEED_CALL.findall(text, start)
        for function_closed, function_unclosed in _FUNCTION.findall(closed or unclosed)
        if (call := _function_call(function_closed or function_unclosed, tools)) is not None
    ]
    if not calls:
        return [], text
    return calls, text[:start] or None
