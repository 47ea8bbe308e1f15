"""Steps from wire records of each API shape (issue 44), table-driven, no run needed: chat completions with a
CLI's side request, the Responses API with reasoning, the Anthropic Messages API with a failed tool result and
moved cache marks, arguments that are not JSON, an endpoint error. Each becomes an ATIF trajectory that
Harbor's own model accepts (when Harbor is installed: see tests/test_export.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.export import TrialView, trajectory
from agentic_eval.export.trials import Step, build_steps
from agentic_eval.results.records import TrialResult
from agentic_eval.wire.exchange import WireRecord, WireTimings
from tests.helpers import needed_tool as _needed

TOOLS = [{"type": "function", "function": {"name": "shell", "parameters": {"type": "object"}}}]


def record(seq: int, path: str, request: dict[str, Any], response: Any, status: int = 200) -> WireRecord:
    return WireRecord(id=f"x{seq}", seq=seq, method="POST", path=path, request=request, status=status,
                      response=response, stream=False, timings=WireTimings(started_at=1.8e9 + seq, end_s=0.25))


def chat(content: str | None = None, calls: tuple[tuple[str, str, str], ...] = ()) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                                 for i, n, a in calls]
    return {"object": "chat.completion", "model": "m", "choices": [{"message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 3}}


SYSTEM, USER = {"role": "system", "content": "be an agent"}, {"role": "user", "content": "fix it"}
CALL = chat(None, (("c1", "shell", '{"cmd": "ls"}'),))["choices"][0]["message"]


def chat_with_side_request() -> list[WireRecord]:
    """A CLI's title request between two turns of the main conversation."""
    return [
        record(0, "/v1/chat/completions", {"messages": [SYSTEM, USER], "tools": TOOLS},
               chat(None, (("c1", "shell", '{"cmd": "ls"}'),))),
        record(1, "/v1/chat/completions", {"messages": [{"role": "system", "content": "title it"}, USER]},
               chat("Fix title")),
        record(2, "/v1/chat/completions", {"messages": [SYSTEM, USER, CALL, {"role": "tool", "tool_call_id": "c1",
                                                                            "content": "a.txt"}], "tools": TOOLS},
               chat("done")),
    ]


def responses_with_reasoning() -> list[WireRecord]:
    call = {"type": "function_call", "call_id": "call_1", "name": "shell", "arguments": '{"cmd": "ls"}'}
    reasoning = {"type": "reasoning", "summary": [{"type": "summary_text", "text": "look first"}]}
    first = {"object": "response", "output": [reasoning, call],
             "usage": {"input_tokens": 100, "output_tokens": 7, "input_tokens_details": {"cached_tokens": 40}}}
    done = {"object": "response", "output": [{"type": "message", "role": "assistant",
                                              "content": [{"type": "output_text", "text": "done"}]}]}
    tools = [{"type": "function", "name": "shell", "parameters": {"type": "object"}}]
    user = {"role": "user", "content": "fix it"}
    return [
        record(0, "/v1/responses", {"instructions": "be an agent", "input": [user], "tools": tools}, first),
        record(1, "/v1/responses", {"instructions": "be an agent", "tools": tools, "input": [
            user, reasoning, call, {"type": "function_call_output", "call_id": "call_1", "output": "a.txt"}]}, done),
    ]


def messages_with_failed_tool() -> list[WireRecord]:
    """Anthropic Messages: a thinking block, a tool_use whose result is an error, text beside the result,
    and the cache mark moved between the two requests (as Claude Code does)."""
    system = [{"type": "text", "text": "billing"}, {"type": "text", "text": "be an agent"}]
    user = {"role": "user", "content": [{"type": "text", "text": "fix it", "cache_control": {"type": "ephemeral"}}]}
    user_again = {"role": "user", "content": [{"type": "text", "text": "fix it"}]}
    blocks = [{"type": "thinking", "thinking": "look first"}, {"type": "text", "text": "Running it."},
              {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}]
    first = {"type": "message", "role": "assistant", "content": blocks, "stop_reason": "tool_use",
             "usage": {"input_tokens": 5, "cache_read_input_tokens": 100, "output_tokens": 9}}
    done = {"type": "message", "role": "assistant", "content": [{"type": "text", "text": "done"}]}
    results = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": True,
         "content": [{"type": "text", "text": "boom"}]},
        {"type": "text", "text": "keep going"}]}
    tools = [{"name": "Bash", "input_schema": {"type": "object"}}]
    return [
        record(0, "/v1/messages?beta=true", {"system": system, "messages": [user], "tools": tools}, first),
        record(1, "/v1/messages?beta=true", {"system": system, "tools": tools, "messages": [
            user_again, {"role": "assistant", "content": blocks}, results]}, done),
    ]


def bad_arguments_then_error() -> list[WireRecord]:
    return [
        record(0, "/v1/chat/completions", {"messages": [SYSTEM, USER], "tools": TOOLS},
               chat(None, (("c1", "shell", "{not json"),))),
        record(1, "/v1/chat/completions", {"messages": [SYSTEM, USER, {"role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "shell", "arguments": "{not json"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "bad arguments"}], "tools": TOOLS},
               {"error": {"message": "CUDA out of memory"}}, status=500),
    ]


def responses_custom_tool() -> list[WireRecord]:
    """A Responses custom tool (codex's apply_patch): free-text input, not JSON arguments."""
    call = {"type": "custom_tool_call", "call_id": "call_p", "name": "apply_patch", "input": "*** Begin Patch"}
    tools = [{"type": "custom", "name": "apply_patch", "description": "patch files"}]
    user = {"role": "user", "content": "fix it"}
    return [
        record(0, "/v1/responses", {"input": [user], "tools": tools}, {"object": "response", "output": [call]}),
        record(1, "/v1/responses", {"tools": tools, "input": [
            user, call, {"type": "custom_tool_call_output", "call_id": "call_p", "output": "patched"}]},
               {"object": "response", "output": [{"type": "message", "content": [{"type": "output_text",
                                                                                   "text": "done"}]}]}),
    ]


def reused_call_ids() -> list[WireRecord]:
    """A server that numbers tool calls per turn: every turn's call is `call_0`."""
    first, second = [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_0", "type": "function", "function": {"name": "shell", "arguments": f'{{"cmd": "{cmd}"}}'}}]}
        for cmd in ("ls", "pwd")]
    history = [SYSTEM, USER, first, {"role": "tool", "tool_call_id": "call_0", "content": "a.txt"}]
    return [
        record(0, "/v1/chat/completions", {"messages": [SYSTEM, USER], "tools": TOOLS},
               chat(None, (("call_0", "shell", '{"cmd": "ls"}'),))),
        record(1, "/v1/chat/completions", {"messages": history, "tools": TOOLS},
               chat(None, (("call_0", "shell", '{"cmd": "pwd"}'),))),
        record(2, "/v1/chat/completions", {"messages": [*history, second, {"role": "tool", "tool_call_id": "call_0",
                                                                          "content": "/repo"}], "tools": TOOLS},
               chat("done")),
    ]


def shape(steps: list[Step]) -> list[tuple[Any, ...]]:
    return [(s.source, s.text, s.reasoning, [(c.id, c.name, c.arguments) for c in s.calls],
             [(r.call_id, r.text, r.is_error) for r in s.results], s.thread) for s in steps]


CASES = {
    "chat_side_request": (chat_with_side_request, [
        ("system", "be an agent", "", [], [], 0), ("user", "fix it", "", [], [], 0),
        ("agent", "", "", [("c1", "shell", {"cmd": "ls"})], [("c1", "a.txt", False)], 0),
        ("system", "title it", "", [], [], 1), ("user", "fix it", "", [], [], 1),
        ("agent", "Fix title", "", [], [], 1), ("agent", "done", "", [], [], 0)]),
    "responses_reasoning": (responses_with_reasoning, [
        ("system", "be an agent", "", [], [], 0), ("user", "fix it", "", [], [], 0),
        ("agent", "", "look first", [("call_1", "shell", {"cmd": "ls"})], [("call_1", "a.txt", False)], 0),
        ("agent", "done", "", [], [], 0)]),
    "messages_failed_tool": (messages_with_failed_tool, [
        ("system", "billing\nbe an agent", "", [], [], 0), ("user", "fix it", "", [], [], 0),
        ("agent", "Running it.", "look first", [("toolu_1", "Bash", {"command": "ls"})], [("toolu_1", "boom", True)],
         0),
        ("user", "keep going", "", [], [], 0), ("agent", "done", "", [], [], 0)]),
    "responses_custom_tool": (responses_custom_tool, [
        ("user", "fix it", "", [], [], 0),
        ("agent", "", "", [("call_p", "apply_patch", {"input": "*** Begin Patch"})], [("call_p", "patched", False)],
         0),
        ("agent", "done", "", [], [], 0)]),
    "reused_call_ids": (reused_call_ids, [
        ("system", "be an agent", "", [], [], 0), ("user", "fix it", "", [], [], 0),
        ("agent", "", "", [("call_0", "shell", {"cmd": "ls"})], [("call_0", "a.txt", False)], 0),
        ("agent", "", "", [("call_0", "shell", {"cmd": "pwd"})], [("call_0", "/repo", False)], 0),
        ("agent", "done", "", [], [], 0)]),
    "bad_arguments_then_error": (bad_arguments_then_error, [
        ("system", "be an agent", "", [], [], 0), ("user", "fix it", "", [], [], 0),
        ("agent", "", "", [("c1", "shell", {})], [("c1", "bad arguments", False)], 0),
        ("system", '[/v1/chat/completions: status 500] {"error": {"message": "CUDA out of memory"}}', "", [], [], 0)]),
}


def trial_of(steps: list[Step], tools: list[dict[str, Any]]) -> TrialView:
    result = TrialResult(trial_id="t" * 20, run_id="run", task_id="task", task_digest="d" * 16, agent="builtin",
                         model="m", seed=0, attempt=1, outcome="fail", started_at="2026-12-06T00:00:00+00:00",
                         ended_at="2026-12-06T00:01:00+00:00", duration_s=60.0)
    return TrialView(record=result, folder=Path("."), steps=steps, tools=tools, instruction="fix it")


@pytest.mark.parametrize("case", CASES)
def test_each_shape_becomes_steps_and_a_valid_trajectory(case: str) -> None:
    make, expected = CASES[case]
    steps, tools = build_steps(make())
    assert shape(steps) == expected
    assert not any(s.copied for s in steps)  # every request continued one the log had seen
    assert tools and all(set(t) == {"type", "function"} and t["function"]["name"] for t in tools)
    data = trajectory(trial_of(steps, tools))
    models = _needed("harbor.models.trajectories", "Harbor's ATIF models")
    models.Trajectory.model_validate(json.loads(json.dumps(data)))
    agent = [s for s in data["steps"] if s["source"] == "agent"]
    assert all(s["extra"]["agentic_eval"]["label"] in ("tool_call", "prose") for s in agent)


def test_usage_of_each_api_is_counted_with_cached_tokens() -> None:
    metrics = {case: [s["metrics"] for s in trajectory(trial_of(*build_steps(CASES[case][0]())))["steps"]
                      if "metrics" in s][0] for case in ("responses_reasoning", "messages_failed_tool")}
    assert metrics["responses_reasoning"] | {"extra": None} == {"prompt_tokens": 100, "completion_tokens": 7,
                                                               "cached_tokens": 40, "extra": None}
    assert metrics["messages_failed_tool"] | {"extra": None} == {"prompt_tokens": 105, "completion_tokens": 9,
                                                                "cached_tokens": 100, "extra": None}


def test_arguments_that_are_not_json_are_kept_as_sent() -> None:
    data = trajectory(trial_of(*build_steps(bad_arguments_then_error())))
    (call,) = next(s for s in data["steps"] if s["source"] == "agent")["tool_calls"]
    assert call["arguments"] == {} and call["extra"]["arguments_as_sent"] == "{not json"
    assert call["extra"]["problem"].startswith("not JSON")



def test_messages_arguments_the_recorder_wrapped_are_exported_as_the_model_wrote_them() -> None:
    """A chat tool call whose arguments were not JSON reaches an Anthropic agent as a tool_use whose input holds the
    text under the recorder's key (wire/messages.UNPARSED_ARGUMENTS): exported, it is the text the model wrote."""
    from agentic_eval.wire.messages import UNPARSED_ARGUMENTS

    tools = [{"name": "bash", "input_schema": {"type": "object"}}]
    block = {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {UNPARSED_ARGUMENTS: "{ls -la"}}
    user = {"role": "user", "content": "fix it"}
    log = [record(0, "/v1/messages", {"messages": [user], "tools": tools},
                  {"type": "message", "role": "assistant", "content": [block], "stop_reason": "tool_use"}),
           record(1, "/v1/messages", {"messages": [user, {"role": "assistant", "content": [block]}, {
               "role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "bad input"}]}],
               "tools": tools}, {"type": "message", "role": "assistant", "content": [{"type": "text", "text": "ok"}]})]
    data = trajectory(trial_of(*build_steps(log)))
    (call,) = next(s for s in data["steps"] if s["source"] == "agent")["tool_calls"]
    assert call["arguments"] == {} and call["extra"]["arguments_as_sent"] == "{ls -la"
    assert call["extra"]["problem"].startswith("not JSON")
