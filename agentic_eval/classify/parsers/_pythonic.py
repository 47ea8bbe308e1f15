"""Pythonic calls: `[get_weather(city="SF"), get_time()]` (Llama 3.2 / 4, Olmo 3, ToolACE...)."""

from __future__ import annotations

import ast
import re
from typing import Any

from agentic_eval.classify.parsers._types import ParsedCall, Tools, engine_call

__all__ = ["python_list_calls", "sglang_pythonic", "vllm_llama4_pythonic", "vllm_olmo3", "vllm_pythonic"]

# The engines' pattern for a list of calls with keyword arguments,
#   \[(N\((N=.*,\s*)*(N=.*\s)?\),\s*)*(N\((N=.*,\s*)*(N=.*\s*)?\)\s*)+\]   (DOTALL),
# backtracks exponentially on a few hundred characters. Its `.*` swallows everything after the
# first keyword, so it accepts exactly: calls without arguments, then either one more of those or a
# call with a keyword argument running to the last `)` before the `]`. The same set, matched fast:
_NAME = r"[a-zA-Z]+\w*"
_CALL_LIST = re.compile(
    rf"\[(?:{_NAME}\(\),\s*)*(?:{_NAME}\(\)\s*)*(?:{_NAME}\(\)\s*|{_NAME}\({_NAME}=.*\)\s*)\]", re.DOTALL)
# Where such a list can start.
_LIST_START = re.compile(rf"\[{_NAME}\(")


class _NotACall(ValueError):
    pass


_JSON_LITERALS = {"true": True, "false": False, "null": None}


def _value(node: ast.expr, json_literals: bool = False) -> Any:
    """A literal argument as vLLM reads it: constants, and dicts and lists of them (with `json_literals`,
    also the bare names true/false/null); nothing else."""
    if isinstance(node, ast.Constant):
        return node.value
    if json_literals and isinstance(node, ast.Name) and node.id in _JSON_LITERALS:
        return _JSON_LITERALS[node.id]
    if isinstance(node, ast.Dict):
        if not all(isinstance(key, ast.Constant) for key in node.keys):
            raise _NotACall("dict keys must be constants")
        return {key.value: _value(value, json_literals) for key, value in zip(node.keys, node.values, strict=True)
                if isinstance(key, ast.Constant)}
    if isinstance(node, ast.List):
        return [_value(item, json_literals) for item in node.elts]
    raise _NotACall("not a literal")


def python_list_calls(source: str, json_literals: bool = False) -> list[ParsedCall]:
    """The calls in a Python list of keyword-argument calls; raises ValueError/SyntaxError otherwise."""
    module = ast.parse(source)
    body = module.body[0].value if module.body and isinstance(module.body[0], ast.Expr) else None
    if not isinstance(body, ast.List):
        raise _NotACall("not a list")
    calls: list[ParsedCall] = []
    for element in body.elts:
        if not isinstance(element, ast.Call) or not isinstance(element.func, ast.Name):
            raise _NotACall("not a call")
        arguments = {keyword.arg: _value(keyword.value, json_literals) for keyword in element.keywords if keyword.arg}
        call = engine_call(element.func.id, arguments)
        if call is None:
            raise _NotACall("arguments do not serialise")
        calls.append(call)
    return calls


def vllm_pythonic(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """vLLM `pythonic`: the whole (stripped) output is a list of calls with literal keyword arguments;
    anything else is content. Offered tools are not checked. Content None when it reads."""
    stripped = text.strip()
    if not _LIST_START.match(stripped) or not _CALL_LIST.fullmatch(stripped):
        return [], text
    try:
        calls = python_list_calls(stripped)
    except (ValueError, SyntaxError, RecursionError):
        return [], text
    return (calls, None) if calls else ([], text)


def vllm_llama4_pythonic(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """vLLM `llama4_pythonic`: `pythonic`, the list optionally between `<|python_start|>` and `<|python_end|>`."""
    inner = text.strip()
    if inner.startswith("<|python_start|>"):
        inner = inner.removeprefix("<|python_start|>").removesuffix("<|python_end|>")
    calls, _ = vllm_pythonic(inner, tools)
    return (calls, None) if calls else ([], text)


def sglang_pythonic(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """SGLang `pythonic`: `<|python_start|>`/`<|python_end|>` dropped, the first list of calls found
    anywhere is read; calls to tools not offered are dropped. Content is the text around the list."""
    text = text.replace("<|python_start|>", "").replace("<|python_end|>", "")
    start = _LIST_START.search(text)
    match = _CALL_LIST.search(text, start.start()) if start else None
    if match is None:
        return [], text
    content = text[: match.start()] + text[match.end() :]
    try:
        calls = python_list_calls(match.group())
    except (ValueError, SyntaxError, RecursionError):
        return [], content
    return [call for call in calls if call.name in tools], content


def vllm_olmo3(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """vLLM `olmo3`: `<function_calls>` holding one call per line; `true`/`false`/`null` read as JSON."""
    inner = text.strip()
    if not inner.startswith("<function_calls>"):
        return [], text
    inner = inner.removeprefix("<function_calls>").removesuffix("</function_calls>").strip()
    lines = [line.strip() for line in inner.splitlines() if line.strip()]
    listed = "[" + ", ".join(lines) + "]"
    try:
        calls = python_list_calls(listed, json_literals=True)
    except (ValueError, SyntaxError, RecursionError):
        return [], text
    return (calls, None) if calls else ([], text)
