"""`<invoke name="...">` XML: MiniMax-M2 (`<minimax:tool_call>`) and Step-3 (`<steptml:invoke>` between
`<｜tool_call_begin｜>` tokens). Values are text, converted by the offered tool's schema."""

from __future__ import annotations

import re
from typing import Any

from agentic_eval.classify.parsers._qwen3_xml import convert_by_schema
from agentic_eval.classify.parsers._scan import blocks, tagged
from agentic_eval.classify.parsers._types import ParsedCall, Tools, engine_call

__all__ = ["sglang_minimax_m2", "sglang_step3", "vllm_minimax_m2", "vllm_step3"]

_M2_INVOKE = re.compile(r"<invoke\s+name=\"?([^\">]+)\"?\s*>")
_M2_PARAMETER = re.compile(r"<parameter\s+name=\"?([^\">]+)\"?\s*>(.*?)</parameter>", re.DOTALL)


def _arguments(pairs: list[tuple[str, str]], tools: Tools, name: str) -> dict[str, Any]:
    properties = (tools.get(name) or {}).get("properties") or {}
    arguments: dict[str, Any] = {}
    for key, value in pairs:
        schema = properties.get(key)
        value = value.removeprefix("\n").removesuffix("\n")
        arguments[key] = _by_schema(value, schema) if isinstance(schema, dict) else value
    return arguments


def _by_schema(value: str, schema: dict[str, Any]) -> Any:
    """As `convert_by_schema`, `anyOf`/`oneOf` read by their first non-null type."""
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            typed = [option for option in options if isinstance(option, dict) and option.get("type") != "null"]
            if value.lower() == "null":
                return None
            return convert_by_schema(value, typed[0] if typed else {"type": "string"})
    return convert_by_schema(value, schema)


def _m2(text: str, tools: Tools, *, offered_only: bool) -> tuple[list[ParsedCall], str | None]:
    start = text.find("<minimax:tool_call>")
    if start == -1:
        return [], text
    calls: list[ParsedCall] = []
    for block in blocks(text, "<minimax:tool_call>", "</minimax:tool_call>", unclosed=True):
        for invoke, body in tagged(block, _M2_INVOKE, "</invoke>"):
            name = invoke.group(1).strip()
            if offered_only and name not in tools:
                continue
            call = engine_call(name, _arguments(_M2_PARAMETER.findall(body), tools, name))
            if call is not None:
                calls.append(call)
    if not calls:
        return [], text
    return calls, text[:start] or None


def vllm_minimax_m2(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """vLLM `minimax_m2`: every closed `<invoke>` in `<minimax:tool_call>` blocks; values by the schema
    (strings without one); tools not checked. Content is the text before the first block."""
    return _m2(text, tools, offered_only=False)


def sglang_minimax_m2(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """SGLang `minimax-m2`: as vLLM's; tools not offered are dropped."""
    return _m2(text, tools, offered_only=True)


_STEP_CALLS = "<｜tool_calls_begin｜>"
_STEP_INVOKE = re.compile(r"<steptml:invoke\s+name=\"([^\"]+)\"\s*>(.*?)</steptml:invoke>", re.DOTALL)
_STEP_PARAMETER = re.compile(r"<steptml:parameter\s+name=\"([^\"]+)\"\s*>(.*?)</steptml:parameter>", re.DOTALL)


def _step3(text: str, tools: Tools, *, offered_only: bool) -> tuple[list[ParsedCall], str | None]:
    start = text.find(_STEP_CALLS)
    if start == -1:
        return [], text
    calls: list[ParsedCall] = []
    for body in blocks(text, "<｜tool_call_begin｜>", "<｜tool_call_end｜>", start):
        invoke = _STEP_INVOKE.search(body)
        if invoke is None or (offered_only and invoke.group(1) not in tools):
            continue
        name = invoke.group(1)
        call = engine_call(name, _arguments(_STEP_PARAMETER.findall(invoke.group(2)), tools, name))
        if call is not None:
            calls.append(call)
    if not calls:
        return [], text
    return calls, text[:start] or None


def vllm_step3(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """vLLM `step3`, as its streaming path reads (its non-streaming path is a known failure in vLLM's
    own tests): each `<steptml:invoke>` between call tokens; values by the schema, strings without."""
    return _step3(text, tools, offered_only=False)


def sglang_step3(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """SGLang `step3`: as vLLM's; tools not offered are dropped."""
    return _step3(text, tools, offered_only=True)
