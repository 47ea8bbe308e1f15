"""Special-token formats: DeepSeek V3 / V3.1 (`<｜tool▁calls▁begin｜>`) and Kimi-K2
(`<|tool_calls_section_begin|>`). Both engines pass the model's argument text through unparsed."""

from __future__ import annotations

import json
import re

from agentic_eval.classify.parsers._json_tags import json_objects_calls
from agentic_eval.classify.parsers._scan import blocks
from agentic_eval.classify.parsers._types import ParsedCall, Tools, engine_call

__all__ = ["sglang_deepseek_v3", "sglang_deepseek_v31", "sglang_kimi_k2", "vllm_deepseek_v3", "vllm_deepseek_v31",
           "vllm_kimi_k2"]

_DS_CALLS = "<｜tool▁calls▁begin｜>"
_DS_V3 = re.compile(
    r"<｜tool▁call▁begin｜>(?P<type>.*)<｜tool▁sep｜>(?P<name>.*)\n```json\n(?P<arguments>.*)\n```"
    r"<｜tool▁call▁end｜>")
_DS_CALL_BEGIN, _DS_CALL_END, _DS_SEP = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"


def _v31_calls(text: str) -> list[tuple[str, str]]:
    """(name, argument text) of each `NAME<｜tool▁sep｜>ARGUMENTS` between call tokens."""
    return [(body[: body.find(_DS_SEP)], body[body.find(_DS_SEP) + len(_DS_SEP) :])
            for body in blocks(text, _DS_CALL_BEGIN, _DS_CALL_END) if _DS_SEP in body]


def passed_through(name: str, arguments: str) -> ParsedCall:
    """A call whose argument text the engine hands on as it is: a client reads it as JSON; text that
    is no JSON object reads as {} here (the engine still returns the call)."""
    return engine_call(name, arguments, raw=True) or ParsedCall(name, {})


def vllm_deepseek_v3(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """vLLM `deepseek_v3`: `<｜tool▁call▁begin｜>TYPE<｜tool▁sep｜>NAME` then a ```json fence holding the
    arguments on one line; each read as is, tools not checked. Content is the text before
    `<｜tool▁calls▁begin｜>` (calls it cannot read are dropped with the rest)."""
    if _DS_CALLS not in text:
        return [], text
    calls = [passed_through(match["name"], match["arguments"]) for match in _DS_V3.finditer(text)]
    return calls, text[: text.find(_DS_CALLS)] or None


def vllm_deepseek_v31(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """vLLM `deepseek_v31`: `<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>ARGUMENTS<｜tool▁call▁end｜>` (no type,
    no fence); arguments passed through. Content is the text before `<｜tool▁calls▁begin｜>`."""
    if _DS_CALLS not in text:
        return [], text
    calls = [passed_through(name, arguments) for name, arguments in _v31_calls(text)]
    return calls, text[: text.find(_DS_CALLS)] or None


_SG_DS_V3 = re.compile(r"(.*)<｜tool▁sep｜>(.*)\n```json\n(.*)\n```", re.DOTALL)


def sglang_deepseek_v3(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """SGLang `deepseekv3`: as vLLM's, the fenced JSON may span lines; it must parse (else the whole
    output is content) and the tool must be offered. Content is the stripped text before the calls."""
    start = text.find(_DS_CALLS)
    if start == -1:
        return [], text
    calls: list[ParsedCall] = []
    for body in blocks(text, _DS_CALL_BEGIN, _DS_CALL_END):
        detail = _SG_DS_V3.search(body)
        if detail is None:
            continue
        try:
            arguments = json.loads(detail.group(3))
        except ValueError:
            return [], text
        calls += json_objects_calls({"name": detail.group(2).strip(), "parameters": arguments}, tools)
    return calls, text[:start].strip()


def sglang_deepseek_v31(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """SGLang `deepseekv31`: NAME<｜tool▁sep｜>JSON between call tokens; the JSON must parse, the tool
    must be offered. Content is the stripped text before the calls."""
    start = text.find(_DS_CALLS)
    if start == -1:
        return [], text
    calls: list[ParsedCall] = []
    for name, argument_text in _v31_calls(text):
        try:
            arguments = json.loads(argument_text)
        except ValueError:
            return [], text
        calls += json_objects_calls({"name": name.strip(), "parameters": arguments}, tools)
    return calls, text[:start].strip()


_KIMI_SECTION = "<|tool_calls_section_begin|>"
_VLLM_KIMI = re.compile(
    r"<\|tool_call_begin\|>\s*(?P<id>[^<]+:\d+)\s*<\|tool_call_argument_begin\|>\s*"
    r"(?P<arguments>(?:(?!<\|tool_call_begin\|>).)*?)\s*<\|tool_call_end\|>",
    re.DOTALL,
)
_SGLANG_KIMI = re.compile(
    r"<\|tool_call_begin\|>\s*(?P<id>[\w\.]+:\d+)\s*<\|tool_call_argument_begin\|>\s*(?P<arguments>\{.*?\})\s*"
    r"<\|tool_call_end\|>",
    re.DOTALL,
)


def vllm_kimi_k2(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """vLLM `kimi_k2`: inside `<|tool_calls_section_begin|>`, each `<|tool_call_begin|>functions.NAME:N
    <|tool_call_argument_begin|>ARGS<|tool_call_end|>` (an id without `:N` is skipped); the name is the
    id's last dotted part; arguments passed through. Content is the text before the section."""
    if _KIMI_SECTION not in text:
        return [], text
    calls = [passed_through(match["id"].split(":")[0].split(".")[-1].strip(), match["arguments"])
             for match in _VLLM_KIMI.finditer(text)]
    return calls, text[: text.find(_KIMI_SECTION)] or None


def sglang_kimi_k2(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """SGLang `kimi_k2`: as vLLM's, with ids `word.NAME:N` and `{...}` arguments only."""
    if _KIMI_SECTION not in text:
        return [], text
    calls = []
    for match in _SGLANG_KIMI.finditer(text):
        parts = match["id"].split(".")
        name = (parts[1] if len(parts) > 1 else parts[0]).split(":")[0]
        calls.append(passed_through(name, match["arguments"]))
    return calls, text[: text.find(_KIMI_SECTION)]
