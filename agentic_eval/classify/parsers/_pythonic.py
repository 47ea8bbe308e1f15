"""Pythonic calls: `[get_weather(city="SF"), get_time()]` (Llama 3.2 / 4, Olmo 3, ToolACE...)."""

from __future__ import annotations

import ast
import re
from typing import Any

from agentic_eval.classify.parsers._types import ParsedCall, Tools, engine_call

__all__ = ["python_list_calls", "vllm_llama4_pythonic", "vllm_pythonic"]

# A list of one or more calls with keyword arguments, as vLLM recognises it before parsing.
_NAME = r"[a-zA-Z]+\w*"
_CALL_LIST = re.compile(
    rf"\[({_NAME}\(({_NAME}=.*,\s*)*({_NAME}=.*\s)?\),\s*)*({_NAME}\(({_NAME}=.*,\s*)*({_NAME}=.*\s*)?\)\s*)+\]",
    re.DOTALL,
)


class _NotACall(ValueError):
    pass


def _value(node: ast.expr) -> Any:
    """A literal argument as vLLM reads it: constants, and dicts and lists of them; nothing else."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Dict):
        if not all(isinstance(key, ast.Constant) for key in node.keys):
            raise _NotACall("dict keys must be constants")
        return {key.value: _value(value) for key, value in zip(node.keys, node.values, strict=True)
                if isinstance(key, ast.Constant)}
    if isinstance(node, ast.List):
        return [_value(item) for item in node.elts]
    raise _NotACall("not a literal")


def python_list_calls(source: str) -> list[ParsedCall]:
    """The calls in a Python list of keyword-argument calls; raises ValueError/SyntaxError otherwise."""
    module = ast.parse(source)
    body = module.body[0].value if module.body and isinstance(module.body[0], ast.Expr) else None
    if not isinstance(body, ast.List):
        raise _NotACall("not a list")
    calls: list[ParsedCall] = []
    for element in body.elts:
        if not isinstance(element, ast.Call) or not isinstance(element.func, ast.Name):
            raise _NotACall("not a call")
        arguments = {keyword.arg: _value(keyword.value) for keyword in element.keywords if keyword.arg}
        call = engine_call(element.func.id, arguments)
        if call is None:
            raise _NotACall("arguments do not serialise")
        calls.append(call)
    return calls


def vllm_pythonic(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """vLLM `pythonic`: the whole (stripped) output is a list of calls with literal keyword arguments;
    anything else is content. Offered tools are not checked. Content None when it reads."""
    stripped = text.strip()
    if not _CALL_LIST.fullmatch(stripped):
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
