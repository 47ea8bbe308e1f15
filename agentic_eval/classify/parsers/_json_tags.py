"""JSON calls between marker tags: Hermes / Qwen2.5 `<tool_call>{...}</tool_call>` and its kin.

Each reader follows one engine's non-streaming parser: which text it accepts, which failures make it
return the whole output as content, and what content it leaves.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentic_eval.classify.parsers._scan import blocks
from agentic_eval.classify.parsers._types import ParsedCall, Read, Tools, engine_call

__all__ = ["hermes_like", "sglang_qwen25", "vllm_ernie45", "vllm_functiongemma", "vllm_gigachat3", "vllm_hermes",
           "vllm_hunyuan_a13b", "vllm_longcat"]

def hermes_like(opener: str, closer: str, *, strip: bool = False) -> Read:
    """vLLM's Hermes reading for another pair of tags (LongCat's `<longcat_tool_call>`, ...); `strip`: the
    content before the first call is stripped (ERNIE 4.5)."""
    pattern = re.compile(f"{re.escape(opener)}(.*?){re.escape(closer)}|{re.escape(opener)}(.*)", re.DOTALL)

    def read(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
        if opener not in text:
            return [], text
        try:
            raw = []
            for closed, unclosed in pattern.findall(text):
                call = json.loads(closed or unclosed)
                arguments = call["arguments"]
                if isinstance(arguments, str):
                    arguments = json.loads(arguments)
                raw.append((call["name"], arguments))
            calls = calls_or_fail(raw)
        except (NoCall, ValueError, KeyError, TypeError):
            return [], text
        content = text[: text.find(opener)]
        return calls, (content.strip() if strip else content) or None

    return read


class NoCall(Exception):
    """The engine's parser gave up: it returns the model output as content."""


def calls_or_fail(raw: list[tuple[Any, Any]], *, raw_arguments: bool = False) -> list[ParsedCall]:
    """Engine calls from (name, arguments) pairs; any that the client could not read fails them all."""
    calls = [engine_call(name, arguments, raw=raw_arguments) for name, arguments in raw]
    if any(call is None for call in calls):
        raise NoCall
    return [call for call in calls if call is not None]


# vLLM `hermes`: every `<tool_call>` block (the last may be unclosed) must hold a JSON object with `name`
# and `arguments` (an object, or a string holding one); any failure gives no calls and the whole output
# as content. Offered tools are not checked. Content is the text before the first block.
vllm_hermes = hermes_like("<tool_call>", "</tool_call>")


_DECODER = json.JSONDecoder()
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


vllm_longcat = hermes_like("<longcat_tool_call>", "</longcat_tool_call>")
vllm_ernie45 = hermes_like("<tool_call>", "</tool_call>", strip=True)
_GEMMA_CALL = re.compile(r"\s*call:([\w.\-]+)\{(.*)\}\s*\Z", re.DOTALL)
_GEMMA_ARGUMENT = re.compile(r"(\w+):(?:<escape>(.*?)<escape>|([^,}]*))", re.DOTALL)


def _gemma_value(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def vllm_functiongemma(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """vLLM `functiongemma`: `<start_function_call>call:NAME{key:<escape>value<escape>,...}<end_function_call>`;
    a value that reads as JSON (a number, true/false) is converted. Content is the stripped text before."""
    calls = []
    for block in blocks(text, "<start_function_call>", "<end_function_call>"):
        if (call_text := _GEMMA_CALL.match(block)) is None:
            continue
        name, body = call_text.groups()
        arguments = {key: _gemma_value(escaped if escaped else plain.strip())
                     for key, escaped, plain in _GEMMA_ARGUMENT.findall(body)}
        if (call := engine_call(name, arguments)) is not None:
            calls.append(call)
    if not calls:
        return [], text
    return calls, text[: text.find("<start_function_call>")].strip() or None


def vllm_hunyuan_a13b(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """vLLM `hunyuan_a13b`: a JSON list of `{name, arguments}` in `<tool_calls>...</tool_calls>`; the text
    before it is the content, the text after it is dropped."""
    found = re.search(r"<tool_calls>(.*?)</tool_calls>", text, re.DOTALL)
    if found is None:
        return [], text
    try:
        value = json.loads(found.group(1))
        calls = calls_or_fail([(item["name"], item["arguments"]) for item in value])
    except (NoCall, ValueError, KeyError, TypeError):
        return [], text
    return calls, text[: found.start()] or None


_GIGACHAT_HEADER = re.compile(r"(?:<\|message_sep\|>\s*)?(?:function call<\|role_sep\|>\s*|<\|function_call\|>)")


def vllm_gigachat3(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """vLLM `gigachat3`: `function call<|role_sep|>` (GigaChat 3) or `<|function_call|>` (3.1), then one
    JSON object `{name, arguments}`. Content is the text before the header."""
    header = _GIGACHAT_HEADER.search(text)
    if header is None:
        return [], text
    try:
        value, _ = _DECODER.raw_decode(text, header.end())
        calls = calls_or_fail([(value["name"], value["arguments"])])
    except (NoCall, ValueError, KeyError, TypeError):
        return [], text
    return calls, text[: header.start()] or None
