"""One home for the Messages API (agentic_eval/wire/messages.py): the recorder, the instruments, the classifier and
the translation read a message and its stream the same way; strict and lenient differ only in stopping."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from agentic_eval.classify.turn import classify_turn, read_turn
from agentic_eval.wire.anthropic import ChatToMessagesStream, to_message
from agentic_eval.wire.messages import (
    UNPARSED_ARGUMENTS,
    as_chat_completion,
    assemble,
    message_parts,
    message_problem,
)
from agentic_eval.wire.sse import summarize_stream
from tests.helpers import anthropic_events, anthropic_message
from tests.stream_cases import CASES


def sse(events: list[dict[str, Any]]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


MESSAGE = anthropic_message("Looking.", [("read_file", {"path": "src/main.py"}), ("grep", {"q": "é\\n" * 9})],
                            thinking="Which file?")


def test_a_stream_reads_alike_in_the_recorder_the_instruments_and_the_classifier() -> None:
    events = anthropic_events(MESSAGE, pieces=5)
    strict = assemble(events)
    assert strict.done and strict.problem is None and strict.error is None
    recorded = summarize_stream([sse(events)])
    assert recorded.error is None
    assert strict.result() == recorded.response
    assert message_problem(recorded.response) is None
    # the classifier reads the message itself, the instruments its chat completion: the same turn
    assert recorded.response is not None
    direct, via_chat = read_turn(recorded.response), read_turn(as_chat_completion(recorded.response))
    assert (direct.content, direct.reasoning) == (via_chat.content, via_chat.reasoning) == ("Looking.", "Which file?")
    assert [(name, json.loads(args) if isinstance(args, str) else args) for name, args in via_chat.structured_calls] \
        == direct.structured_calls == [("read_file", {"path": "src/main.py"}), ("grep", {"q": "é\\n" * 9})]


def _broken(kind: str) -> list[dict[str, Any]]:
    events = anthropic_events(MESSAGE, pieces=3)
    tool_deltas = [n for n, e in enumerate(events) if e.get("delta", {}).get("type") == "input_json_delta"]
    if kind == "bad json":
        events[tool_deltas[0]] = {**events[tool_deltas[0]], "delta": {"type": "input_json_delta", "partial_json": "{x"}}
    elif kind == "input not an object":
        events = [e for n, e in enumerate(events) if n not in tool_deltas[1:3]]
        events[tool_deltas[0]] = {**events[tool_deltas[0]],
                                  "delta": {"type": "input_json_delta", "partial_json": "[1]"}}
    elif kind == "delta in the wrong block":
        events.insert(3, {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x"}})
    elif kind == "delta before message_start":
        events.insert(0, {"type": "message_delta", "delta": {"stop_reason": "end_turn"}})
    elif kind == "event after message_stop":
        events.append({"type": "message_delta", "delta": {"stop_reason": "max_tokens"}})
    elif kind == "block out of order":
        events = [{**e, "index": e["index"] + 1} if "index" in e and e["index"] >= 2 else e for e in events]
    return events


@pytest.mark.parametrize("kind, words", [
    ("bad json", "pieces are not JSON"),
    ("input not an object", "input is not an object"),
    ("delta in the wrong block", "a text_delta in a thinking block"),
    ("delta before message_start", "before message_start"),
    ("event after message_stop", "after message_stop"),
    ("block out of order", "out of order"),
])
def test_strict_stops_at_the_first_break_and_lenient_reads_on(kind: str, words: str) -> None:
    events = _broken(kind)
    strict, lenient = assemble(copy.deepcopy(events)), assemble(copy.deepcopy(events), strict=False)
    assert strict.problem is not None and words in strict.problem
    assert lenient.problem == strict.problem  # the same break is named; only what follows differs
    message = lenient.result()
    assert message is not None and message_problem(message, strict=False) is None
    calls = read_turn(message).structured_calls
    if kind == "bad json":
        assert calls[0][0] == "read_file" and isinstance(calls[0][1], str) and calls[0][1].startswith("{x")
        assert set(message["content"][2]["input"]) == {UNPARSED_ARGUMENTS}
    elif kind == "event after message_stop":
        stopped = strict.result()
        assert message["stop_reason"] == "max_tokens" and stopped is not None and stopped["stop_reason"] == "tool_use"
    else:
        assert [name for name, _ in calls] == ["read_file", "grep"]


def test_an_error_event_and_a_cut_stream() -> None:
    events = anthropic_events(MESSAGE)
    strict = assemble([*events[:4], {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}])
    assert strict.error == "Overloaded" and not strict.done
    cut = assemble(events[:-1])
    assert cut.problem is None and not cut.done and cut.result() is not None
    assert assemble([]).result() is None and assemble([], strict=False).result() == \
        {"type": "message", "role": "assistant", "content": []}


def test_the_lenient_checker_is_what_the_classifier_reads() -> None:
    odd = {**MESSAGE, "content": [{"type": "server_tool_result", "x": 1}, {"type": "text", "text": "hi"}]}
    assert message_problem(odd) is not None and message_problem(odd, strict=False) is None
    assert classify_turn(None, odd).label == "prose"
    nameless = {**MESSAGE, "content": [{"type": "tool_use", "id": "t", "input": {}}]}
    assert message_problem(nameless, strict=False) == "content[0] is a tool_use block without a name"
    assert message_parts({"content": [1, {"type": "text", "text": "a"}, {"type": "tool_use", "name": "x"}]}).calls \
        == [("", "x", None)]


@pytest.mark.parametrize("name", [n for n in CASES if CASES[n][1]])
def test_the_translated_stream_carries_the_calls_the_agent_would_run(name: str) -> None:
    """A chat stream translated to Messages events (an agent like Claude Code against a chat endpoint) holds the
    same calls the one chat assembler joins; the whole reply translated holds them too."""
    chunks, expected, _, _ = CASES[name]
    translator = ChatToMessagesStream(model="m")
    events = [event for c in chunks for event in translator.feed(c)] + translator.finish()
    message = assemble(events).result()
    assert message is not None
    calls = [(b["name"], b["input"]) for b in message["content"] if b["type"] == "tool_use"]
    assert calls == [(call_name, json.loads(args)) for _, call_name, args in expected]
    tool_calls = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in expected]
    whole = to_message({"model": "m", "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": None, "tool_calls": tool_calls}}]}, "m")
    assert [(b["name"], b["input"]) for b in whole["content"] if b["type"] == "tool_use"] == calls

