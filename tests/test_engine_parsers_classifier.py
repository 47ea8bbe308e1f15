"""The text-call classifier on formats the engines' parser tests showed it misreading."""

from __future__ import annotations

from typing import Any

import pytest

from agentic_eval.classify.turn import find_text_tool_calls


def _tools(*names: str) -> dict[str, Any]:
    return {"tools": [{"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
                      for name in names]}


@pytest.mark.parametrize(("text", "tools", "expected"), [
    pytest.param(
        '<tool_calls>[{"name": "weather", "arguments": {"city": "Dallas"}}, '
        '{"name": "weather", "arguments": {"city": "Orlando"}}]</tool_calls>',
        ("weather",), [("weather", {"city": "Dallas"}), ("weather", {"city": "Orlando"})],
        id="two calls to one tool in one block both count"),
    pytest.param(
        '<|tool_calls_section_begin|><|tool_call_begin|>functions.weather:0<|tool_call_argument_begin|>'
        '{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>',
        ("weather",), [("weather", {"city": "Paris"})],
        id="kimi: the section end closes the call, it is no second one"),
    pytest.param(
        '<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name="weather">'
        '<steptml:parameter name="city">Tokyo</steptml:parameter></steptml:invoke>'
        '<｜tool_call_end｜><｜tool_calls_end｜>',
        ("weather",), [("weather", {"city": "Tokyo"})],
        id="step3: the invoke is read, the tokens around it are not a DeepSeek call"),
    pytest.param(
        "<function_calls>weather(city='SF')\nclock()</function_calls>",
        ("weather", "clock"), [("weather", {"city": "SF"}), ("clock", {})],
        id="olmo3: pythonic calls inside <function_calls>"),
    pytest.param(
        '<longcat_tool_call>{"name": "weather", "arguments": {"city": "Tokyo"}}</longcat_tool_call>',
        ("weather",), [("weather", {"city": "Tokyo"})], id="longcat"),
    pytest.param(
        'Checking.<|function_call|>{"name": "memory", "arguments": {"id": "prefs"}}',
        ("memory",), [("memory", {"id": "prefs"})], id="gigachat 3.1"),
])
def test_text_calls(text: str, tools: tuple[str, ...], expected: list[tuple[str, dict[str, Any]]]) -> None:
    found = find_text_tool_calls(text, _tools(*tools))
    assert [(call.name, call.arguments) for call in found] == expected


@pytest.mark.parametrize("text", [
    "The <function_calls> wrapper holds invoke blocks; see the docs.",
    "Call the function call API when ready.",
])
def test_the_new_markers_need_their_payload(text: str) -> None:
    assert find_text_tool_calls(text, _tools("weather")) == []
