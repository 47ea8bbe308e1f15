"""Find tool calls written as text. Pure functions; `classify.py` is the public face.

Where a shape may count decides most false positives:

- Strong markers (special tokens, `<tool_call>`, `[TOOL_CALLS]`, `<function=...>`, ...; the
  detectors of `_formats`) count wherever they stand, except inside inline code spans
  (`` `<tool_call>` `` in prose explains a format; it calls nothing). Inside a fenced code block
  they count only when the call names an offered tool.
- Weak shapes count only when they name an offered tool: tags named after a tool (`<read .../>`,
  `<Grep>...</Grep>`; outside code only), bare JSON objects (`llama_json`), JSON in a code fence
  (`json`), pythonic calls as a bracketed list, as the whole reply, or in a `tool_code`/`python` fence.
- Except a reply that is nothing but a JSON call (a closed `<think>` block before it aside), bare or
  alone in a JSON fence: `{"name": X, "arguments": {...}}` (or `"parameters"`, or a list of such), no
  other key but `"type": "function"` and `"id"`. It is a call whatever X is, an unknown tool when X is
  not offered; a function's definition (`"parameters"` holding a schema) is not one.
- An orphan closing tag (`</tool_call>`, `</function>`, ...) is a call cut at both ends; a reply
  ending in the first letters of an opening marker (`<tool_ca`) is a call cut short.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from agentic_eval.classify._formats import (
    STRONG_DETECTORS,
    FoundCall,
    ToolCatalog,
    balanced_end,
    decode_json_at,
    json_calls,
    python_calls,
    single_parameter,
    typed_value,
)

__all__ = ["FoundCall", "ToolCatalog", "find_text_calls"]

_FENCE_OPEN = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})[ \t]*([\w+\-.]*)[^\n]*$", re.MULTILINE)
_INLINE_CODE = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_JSON_FENCES = frozenset({"", "json", "jsonc", "json5", "js", "javascript", "tool_call", "tool_code"})
_PYTHON_FENCES = frozenset({"", "tool_code", "tool_call", "python", "py"})
_NOT_TOOL_TAGS = frozenset({"think", "thinking", "seed:think"})

# Closing markers that mean a call even when their opener is missing.
_ORPHAN_CLOSERS: tuple[tuple[str, str], ...] = (
    (r"</tool_call>", "hermes"),
    (r"</function>", "qwen3_xml"),
    (r"</invoke>", "anthropic_xml"),
    (r"</function_calls>", "anthropic_xml"),
    (r"</minimax:tool_call>", "minimax"),
    (r"<\|tool_calls_section_end\|>|<\|tool_call_end\|>", "kimi"),
    (r"<｜tool[▁_ ]calls?[▁_ ]end｜>|<\|tool[▁ ]calls?[▁ ]end\|>", "deepseek"),
    (r"</tool_calls>", "jamba"),
    (r"</TOOLCALL>", "nemotron"),
    (r"<\|END_ACTION\|>", "command_r"),
    (r"<end_function_call>", "function_gemma"),
    (r"<\|tool_call_end\|>", "lfm2"),
)
# Opening markers whose first letters at the very end of a reply mean a call was cut short.
_OPENERS: tuple[tuple[str, str], ...] = (
    ("<tool_call>", "hermes"), ("<seed:tool_call>", "seed_oss"), ("<function=", "qwen3_xml"),
    ("<minimax:tool_call>", "minimax"), ("<function_calls>", "anthropic_xml"), ("<invoke name=", "anthropic_xml"),
    ("<｜tool▁calls▁begin｜>", "deepseek"), ("<|tool_calls_section_begin|>", "kimi"), ("<|tool_call_begin|>", "kimi"),
    ("[TOOL_CALLS]", "mistral"), ("<|python_tag|>", "llama_json"), ("<|tool_call|>", "granite"),
    ("<|tool_call_start|>", "lfm2"), ("<TOOLCALL>", "nemotron"), ("<tool_calls>", "jamba"),
    ("<|START_ACTION|>", "command_r"), ("<start_function_call>", "function_gemma"), ("<function_call>", "granite_fc"),
)
_MIN_CUT_MARKER = 4
# Every opener's prefixes of at least _MIN_CUT_MARKER characters (longest first), found at the end of a reply.
_CUT_FAMILY = {
    marker[:length]: family
    for marker, family in reversed(_OPENERS)
    for length in range(_MIN_CUT_MARKER, len(marker) + 1)
}
_CUT_MARKER = re.compile("(?:" + "|".join(map(re.escape, sorted(_CUT_FAMILY, key=len, reverse=True))) + r")\Z")
_CUT_WINDOW = max(map(len, _CUT_FAMILY))
_CALL_START = re.compile(r"\s*(?:\[\s*)?[A-Za-z_][\w.]*\s*\(")


@dataclass(frozen=True)
class _Fence:
    language: str
    start: int
    end: int
    body_start: int
    body_end: int


def _spaces(segment: str) -> str:
    """As many spaces as `segment` has characters, its newlines kept (offsets and line starts stay)."""
    return "\n".join(" " * len(line) for line in segment.split("\n"))


def _blank(text: str, start: int, end: int) -> str:
    return text[:start] + _spaces(text[start:end]) + text[end:]


def _fences(text: str) -> list[_Fence]:
    fences: list[_Fence] = []
    position = 0
    while opener := _FENCE_OPEN.search(text, position):
        mark = opener.group(1)
        body_start = min(opener.end() + 1, len(text))
        closer = re.compile(rf"^[ ]{{0,3}}{re.escape(mark[0])}{{{len(mark)},}}[ \t]*$", re.MULTILINE)
        close = closer.search(text, body_start)
        end = close.end() if close else len(text)
        fences.append(_Fence(opener.group(2).lower(), opener.start(), end, body_start, close.start() if close else end))
        position = max(end, opener.end() + 1)
    return fences


def _without_inline_code(text: str) -> str:
    return _INLINE_CODE.sub(lambda m: _spaces(m.group()), text)


def _invented_xml(text: str, tools: ToolCatalog) -> Iterator[FoundCall]:
    """Tags named after an offered tool: `<read filePath="..."/>`, `<Grep><pattern>x</pattern></Grep>`."""
    tag = re.compile(r"<([A-Za-z_][\w\-.:]*)((?:\s+[\w\-.:]+\s*=\s*(?:\"[^\"]*\"|'[^']*'))*)\s*(/?)>")
    for opener in tag.finditer(text):
        name = tools.canonical(opener.group(1))
        if name is None or opener.group(1).lower() in _NOT_TOOL_TAGS:
            continue
        arguments: dict[str, object] = {
            key: typed_value(value_dq or value_sq, tools.parameter_schema(name, key))
            for key, value_dq, value_sq in re.findall(r"([\w\-.:]+)\s*=\s*(?:\"([^\"]*)\"|'([^']*)')", opener.group(2))
        }
        if opener.group(3):
            yield FoundCall("invented_xml", opener.group(1), arguments, opener.start(), opener.end())
            continue
        close = re.compile(rf"</{re.escape(opener.group(1))}\s*>", re.IGNORECASE).search(text, opener.end())
        body = text[opener.end() : close.start() if close else len(text)]
        if close is None and body.strip() and not re.match(r"\s*<[A-Za-z_]", body):
            continue  # "<read> the file": a word in angle brackets, not a call
        children = re.findall(r"<([\w\-.:]+)(?:\s[^<>]*)?>(.*?)</\1\s*>", body, re.DOTALL)
        if children:
            arguments |= {key: typed_value(value.strip(), tools.parameter_schema(name, key)) for key, value in children}
        elif body.strip():
            arguments[single_parameter(tools, name)] = body.strip()
        yield FoundCall("invented_xml", opener.group(1), arguments, opener.start(),
                        close.end() if close else len(text), truncated=close is None)


_SCAN_BUDGET = 4_000_000
"""Characters the bare-JSON search may scan past failed or unclosed starts in one text (a 100 KB reply of unclosed
braces would cost 5e9 otherwise): replies past it are read for the calls found so far."""


def _bare_json(text: str, tools: ToolCatalog, family: str = "llama_json") -> Iterator[FoundCall]:
    """JSON objects (or lists of them) that name offered tools: `{"name": "read", "parameters": {...}}`."""
    resume, budget = 0, _SCAN_BUDGET
    for candidate in re.finditer(r"[\[{]\s*[{\"]", text):
        if candidate.start() < resume:
            continue
        if budget <= 0:  # a reply of unclosed brackets would cost the square of its length to read from each one
            return
        parsed = json_calls(text, candidate.start())
        if parsed is None or not parsed[2]:
            budget -= len(text) - candidate.start()  # what a failed or unclosed read may have scanned
        if parsed is None:
            continue
        calls, end, complete = parsed
        if not all(name and tools.canonical(name) for name, _ in calls):
            continue
        for name, arguments in calls:
            yield FoundCall(family, name, arguments, candidate.start(), end, truncated=not complete)
        resume = end


def _pythonic(text: str, tools: ToolCatalog) -> Iterator[FoundCall]:
    """Pythonic calls naming offered tools: `[get_weather(city='SF'), get_time()]`, or a reply that is only calls."""
    whole = python_calls(text, tools) if _CALL_START.match(text) else None
    if whole and all(tools.canonical(name) for name, _ in whole):
        stripped = len(text) - len(text.lstrip())
        for name, arguments in whole:
            yield FoundCall("pythonic", name, arguments, stripped, len(text.rstrip()))
        return
    for opener in re.finditer(r"\[\s*([A-Za-z_][\w.]*)\s*\(", text):
        if tools.canonical(opener.group(1)) is None:
            continue
        end = balanced_end(text, opener.start())
        if end is None:
            yield FoundCall("pythonic", opener.group(1), None, opener.start(), len(text), truncated=True)
            continue
        calls = python_calls(text[opener.start() : end], tools)
        if calls and all(tools.canonical(name) for name, _ in calls):
            for name, arguments in calls:
                yield FoundCall("pythonic", name, arguments, opener.start(), end)


def _in_fence(text: str, fence: _Fence, tools: ToolCatalog) -> Iterator[FoundCall]:
    """JSON or pythonic calls filling a fenced block, when they name offered tools."""
    body = text[fence.body_start : fence.body_end]
    found: list[FoundCall] = []
    if fence.language in _JSON_FENCES:
        found += _bare_json(body, tools, family="json")
    if fence.language in _PYTHON_FENCES and _CALL_START.match(body) and (calls := python_calls(body, tools)):
        found += [FoundCall("pythonic", name, arguments, 0, len(body)) for name, arguments in calls]
    for call in found:
        if call.name and tools.canonical(call.name):
            call.start, call.end = fence.start, fence.end
            yield call


_LEADING_THINK = re.compile(r"\s*<(think|thinking|seed:think)>.*?</\1>", re.DOTALL)
_CALL_KEYS = frozenset({"name", "arguments", "parameters", "type", "id"})


def _strict_call(item: object) -> tuple[str, dict[str, object]] | None:
    """`{"name": X, "arguments": {...}}` (or "parameters"), nothing else but `"type": "function"` and an id."""
    if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not set(item) <= _CALL_KEYS:
        return None
    if item.get("type", "function") != "function" or ("arguments" in item) == ("parameters" in item):
        return None
    arguments = item.get("arguments", item.get("parameters"))
    if isinstance(arguments, str) and "arguments" in item:  # OpenAI's spelling: the arguments as a JSON string
        decoded = decode_json_at(arguments.strip(), 0) if arguments.strip() else None
        arguments = decoded[0] if decoded and decoded[1] == len(arguments.strip()) else None
    if not isinstance(arguments, dict):
        return None
    if "parameters" in item and arguments.get("type") == "object" and "properties" in arguments:
        return None  # a function's definition: its parameters' JSON Schema
    return item["name"], arguments


def _whole_reply_call(text: str, fences: list[_Fence]) -> Iterator[FoundCall]:
    """A reply that is only a JSON call (or a list of them), bare or alone in a JSON fence, whatever it names."""
    think = _LEADING_THINK.match(text)
    start = think.end() if think else 0
    start += len(text[start:]) - len(text[start:].lstrip())
    end = len(text.rstrip())
    family, body_start, body_end = "llama_json", start, end
    fence = next((f for f in fences if f.start <= start < f.body_start), None)
    if fence is not None:
        if fence.end < end or fence.language not in _JSON_FENCES:
            return
        family, body_start, body_end = "json", fence.body_start, fence.body_end
    body = text[body_start:body_end].strip()
    decoded = decode_json_at(body, 0) if body[:1] in ("{", "[") else None
    if decoded is None or decoded[1] != len(body):
        return
    items = decoded[0] if isinstance(decoded[0], list) else [decoded[0]]
    calls = [_strict_call(item) for item in items]
    if not items or None in calls:
        return
    for call in calls:
        if call is not None:
            yield FoundCall(family, call[0], call[1], start, end)


def _orphan_closers(text: str, found: list[FoundCall]) -> Iterator[FoundCall]:
    for pattern, family in _ORPHAN_CLOSERS:
        for closer in re.finditer(pattern, text):
            if not any(call.start <= closer.start() and closer.end() <= call.end for call in found):
                yield FoundCall(family, None, None, closer.start(), closer.end())


def _cut_marker_at_end(text: str) -> Iterator[FoundCall]:
    tail = text.rstrip()
    window_start = max(0, len(tail) - _CUT_WINDOW)
    cut = _CUT_MARKER.search(tail, window_start)
    if cut is None:
        return
    start = cut.start()
    if start == 0 or tail[start - 1].isspace() or tail[start - 1] == ">":
        yield FoundCall(_CUT_FAMILY[cut.group()], None, None, start, len(text), truncated=True)


def _without_overlaps(found: list[FoundCall]) -> list[FoundCall]:
    """Drop calls lying inside another call's span (a detector re-finding part of a bigger match) and
    exact repeats; calls sharing one span (a list of calls in one block) all stay."""
    kept: list[FoundCall] = []
    seen: set[tuple[int, int, str, str | None, str]] = set()
    for call in sorted(found, key=lambda c: (c.start, c.start - c.end)):
        # The arguments belong to the key: two calls to one tool in one block (a parallel list) both stay.
        key = (call.start, call.end, call.family, call.name, json.dumps(call.arguments, sort_keys=True, default=str))
        inside = any(
            k.start <= call.start and call.end <= k.end and (k.start, k.end) != (call.start, call.end) for k in kept
        )
        if key in seen or inside:
            continue
        seen.add(key)
        kept.append(call)
    return kept


def find_text_calls(text: str, tools: ToolCatalog) -> list[FoundCall]:
    """Every tool call written in `text`, in order of position; spans index into `text`."""
    if not text or not text.strip():
        return []
    fences = _fences(text)
    # Strong markers are searched with fences left in place: DeepSeek V3 puts a ```json fence
    # inside its own markers. A call that starts inside a fence must name an offered tool.
    unquoted = _without_inline_code(text)
    found = [
        call
        for detect in STRONG_DETECTORS
        for call in detect(unquoted, tools)
        if not any(f.start <= call.start < f.end for f in fences) or (call.name and tools.canonical(call.name))
    ]
    outside = unquoted
    for fence in fences:
        outside = _blank(outside, fence.start, fence.end)
    found += _invented_xml(outside, tools)
    found += _bare_json(outside, tools)
    found += _pythonic(outside, tools)
    for fence in fences:
        found += _in_fence(text, fence, tools)
    whole = list(_whole_reply_call(text, fences))
    if not all(call.name and tools.canonical(call.name) for call in whole):  # else found above, as offered calls
        found += whole
    found += _orphan_closers(outside, found)
    found += _cut_marker_at_end(outside)
    return _without_overlaps(found)
