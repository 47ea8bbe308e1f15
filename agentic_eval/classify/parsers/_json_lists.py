"""JSON calls after a marker: Granite `<|tool_call|>[...]`, Granite-20B-FC `<function_call> {...}`,
InternLM2 `<|action_start|><|plugin|>{...}<|action_end|>`, Jamba `<tool_calls>[...]</tool_calls>`,
MiniMax-M1 `<tool_calls>` JSON lines, Phi-4-mini `functools[...]`, xLAM `[...]`."""

from __future__ import annotations

import json
import re
from typing import Any

from agentic_eval.classify.parsers._json_tags import NoCall, calls_or_fail
from agentic_eval.classify.parsers._types import ParsedCall, Tools

__all__ = ["vllm_granite", "vllm_granite_20b_fc", "vllm_internlm", "vllm_jamba", "vllm_minimax", "vllm_phi4_mini",
           "vllm_xlam"]

_DECODER = json.JSONDecoder()
Result = tuple[list[ParsedCall], str | None]


def _pairs(items: Any, *, parameters: bool = False) -> list[tuple[Any, Any]]:
    """(name, arguments) of each call object; KeyError/TypeError when one lacks them."""
    if not isinstance(items, list):
        raise TypeError("not a list of calls")
    if parameters:
        return [(item["name"], item["arguments"] if "arguments" in item else item["parameters"]) for item in items]
    return [(item["name"], item["arguments"]) for item in items]


def vllm_granite(text: str, tools: Tools) -> Result:
    """vLLM `granite`: the output (stripped, after `<|tool_call|>` or `<tool_call>`) must be a JSON list of
    `{name, arguments}`; text before or after it reads nothing. Content None when it reads."""
    stripped = text.strip().removeprefix("<|tool_call|>").removeprefix("<tool_call>").lstrip()
    if not stripped.startswith("["):
        return [], text
    try:
        return calls_or_fail(_pairs(json.loads(stripped))), None
    except (NoCall, ValueError, KeyError, TypeError):
        return [], text


def vllm_granite_20b_fc(text: str, tools: Tools) -> Result:
    """vLLM `granite-20b-fc`: one JSON object `{name, arguments}` after each `<function_call>`; any that
    does not read fails them all. Content is the text before the first marker."""
    if "<function_call>" not in text:
        return [], text
    markers = list(re.finditer(r"<function_call>\s*", text))
    try:
        raw = []
        for index, marker in enumerate(markers):
            stop = markers[index + 1].start() if index + 1 < len(markers) else len(text)
            value, _ = _DECODER.raw_decode(text[marker.end() : stop])
            raw += _pairs([value])
        calls = calls_or_fail(raw)
    except (NoCall, ValueError, KeyError, TypeError):
        return [], text
    return calls, text[: text.find("<function_call>")] or None


def vllm_internlm(text: str, tools: Tools) -> Result:
    """vLLM `internlm`: one `<|action_start|><|plugin|>` JSON object (`parameters` or `arguments`); a second
    action or unreadable JSON is an error (no call here). Content is the text before the action."""
    marker = "<|action_start|><|plugin|>"
    if marker not in text:
        return [], text
    try:
        before, action = text.split(marker)
        action = action.split("<|action_end|>")[0]
        value = json.loads(action[action.find("{") :])
        arguments = value.get("parameters", value.get("arguments", {}))
        calls = calls_or_fail([(value["name"], arguments)])
    except (NoCall, ValueError, KeyError, TypeError, AttributeError):
        return [], text
    return calls, before or None


def vllm_jamba(text: str, tools: Tools) -> Result:
    """vLLM `jamba`: a JSON list of `{name, arguments}` in the first `<tool_calls>...</tool_calls>`.
    Content is the text before it, None when blank."""
    found = re.search(r"<tool_calls>(.*?)</tool_calls>", text, re.DOTALL)
    if found is None:
        return [], text
    try:
        calls = calls_or_fail(_pairs(json.loads(found.group(1))))
    except (NoCall, ValueError, KeyError, TypeError):
        return [], text
    content = text[: found.start()]
    return calls, content if content.strip() else None


def vllm_phi4_mini(text: str, tools: Tools) -> Result:
    """vLLM `phi4_mini_json`: `functools[...]` up to the FIRST `]` (so arguments holding a list break
    it), a JSON list of `{name, arguments|parameters}`. Content None when it reads."""
    found = re.search(r"functools\[(.*?)\]", text, re.DOTALL)
    if found is None:
        return [], text
    try:
        calls = calls_or_fail(_pairs(json.loads(f"[{found.group(1)}]"), parameters=True))
    except (NoCall, ValueError, KeyError, TypeError):
        return [], text
    return (calls, None) if calls else ([], text)


def vllm_minimax(text: str, tools: Tools) -> Result:
    """vLLM `minimax` (MiniMax-M1): one JSON object per line after `<tool_calls>` (closed or not), calls
    inside `<think>` ignored; lines that do not read, or lack `name`/`arguments`, are skipped. Content is
    the stripped text before the first `<tool_calls>` outside the thinking, None when blank."""
    thinking = [(match.start(), match.end()) for match in re.finditer(r"<think>.*?</think>", text, re.DOTALL)]
    start = next((match.start() for match in re.finditer(r"<tool_calls>", text)
                  if not any(begin <= match.start() < end for begin, end in thinking)), -1)
    if start == -1:
        return [], text
    close = text.find("</tool_calls>", start)
    body = text[start + len("<tool_calls>") : close if close != -1 else len(text)]
    calls: list[ParsedCall] = []
    for line in body.splitlines():
        try:
            value = json.loads(line.strip())
            calls += calls_or_fail([(value["name"], value["arguments"])])
        except (NoCall, ValueError, KeyError, TypeError):
            continue
    content = text[:start].strip() or None
    return (calls, content) if calls else ([], content)


_XLAM_FENCE = re.compile(r"```(?:json)?\s*([\s\S]*?)```")


def vllm_xlam(text: str, tools: Tools) -> Result:
    """vLLM `xlam`: a JSON list of `{name, arguments}` after `</think>`, in a ```json fence, after
    `[TOOL_CALLS]`, inside `<tool_call>...</tool_call>`, or as the whole output. Content is the text
    before it (stripped)."""
    content: str | None
    if "</think>" in text:
        end = text.find("</think>") + len("</think>")
        content, payload = text[:end], text[end:].strip()
    elif fence := _XLAM_FENCE.search(text):
        content, payload = text[: fence.start()].strip(), fence.group(1).strip()
    elif "[TOOL_CALLS]" in text:
        content, _, payload = text.partition("[TOOL_CALLS]")
        content = content.strip()
    elif tagged := re.search(r"<tool_call>(.*?)</tool_call>", text, re.DOTALL):
        content, payload = text[: tagged.start()].strip(), tagged.group(1).strip()
    elif text.strip().startswith("["):
        content, payload = None, text.strip()
    else:
        return [], text
    try:
        value = json.loads(payload)
        calls = calls_or_fail(_pairs(value if isinstance(value, list) else [value]))
    except (NoCall, ValueError, KeyError, TypeError):
        return [], text
    return (calls, content or None) if calls else ([], text)
