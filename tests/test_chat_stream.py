"""One chat-stream assembler: the edge cases of joining `chat.completion.chunk` deltas, decided (see
agentic_eval/wire/chat_stream.py), and the same stream read alike by the built-in agent and by the classifier."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentic_eval.agents.builtin.loop import EndpointFailure, _accumulate, read_reply
from agentic_eval.classify.turn import read_turn
from agentic_eval.wire.chat_stream import ChatStreamAssembler
from agentic_eval.wire.sse import summarize_stream


def piece(index: int | None = None, id: str | None = None, name: str | None = None, args: str | None = None,
          type: str | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {key: value for key, value in (("index", index), ("id", id), ("type", type))
                            if value is not None}
    function = {key: value for key, value in (("name", name), ("arguments", args)) if value is not None}
    if function:
        call["function"] = function
    return call


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def calls(*pieces: dict[str, Any], finish: str = "tool_calls") -> list[dict[str, Any]]:
    """One chunk per tool-call piece, the last with the finish reason."""
    return [chunk({"tool_calls": [p]}, finish if n == len(pieces) - 1 else None) for n, p in enumerate(pieces)]


# name: (chunks, [(id, name, arguments)] expected, content expected, finish_reason expected)
CASES: dict[str, tuple[list[dict[str, Any]], list[tuple[str, str, str]], str | None, str | None]] = {
    "arguments before the name": (
        calls(piece(0, args='{"a"'), piece(0, "c1", "bash"), piece(0, args=": 1}")),
        [("c1", "bash", '{"a": 1}')], None, "tool_calls"),
    "a new id at a used index is a new call": (
        calls(piece(0, "c1", "bash", '{"a":1}', "function"), piece(0, "c2", "read", '{"b":2}', "function")),
        [("c1", "bash", '{"a":1}'), ("c2", "read", '{"b":2}')], None, "tool_calls"),
    "two whole calls at index 0 without ids": (
        calls(piece(0, name="bash", args='{"a":1}'), piece(0, name="read", args='{"b":2}')),
        [("", "bash", '{"a":1}'), ("", "read", '{"b":2}')], None, "tool_calls"),
    "a skipped index": (
        calls(piece(0, "c1", "bash", "{}"), piece(2, "c2", "read", "{}")),
        [("c1", "bash", "{}"), ("c2", "read", "{}")], None, "tool_calls"),
    "indexes going back keep the order of arrival": (
        calls(piece(1, "c1", "bash", "{}"), piece(0, "c2", "read", "{}")),
        [("c1", "bash", "{}"), ("c2", "read", "{}")], None, "tool_calls"),
    "the id only in a later piece": (
        calls(piece(0, name="bash", args='{"a"'), piece(0, "c9", args=":1}")),
        [("c9", "bash", '{"a":1}')], None, "tool_calls"),
    "the id repeated in every piece": (
        calls(piece(0, "c1", "bash", '{"a"'), piece(0, "c1", args=":1}"), piece(0, "c1", args="")),
        [("c1", "bash", '{"a":1}')], None, "tool_calls"),
    "an empty id in later pieces": (
        calls(piece(0, "c1", "bash", "{"), piece(0, "", args="}")),
        [("c1", "bash", "{}")], None, "tool_calls"),
    "the name repeated in every piece": (
        calls(piece(0, "c1", "bash", '{"a"'), piece(0, name="bash", args=":1}")),
        [("c1", "bash", '{"a":1}')], None, "tool_calls"),
    "a name in pieces": (
        calls(piece(0, "c1", "re"), piece(0, name="ad_file", args="{}")),
        [("c1", "read_file", "{}")], None, "tool_calls"),
    "two pieces of one call at one index in one chunk (vLLM speculative decoding)": (
        [chunk({"tool_calls": [piece(0, "c1", "bash", '{"cmd": '), piece(0, args='"ls"')]}),
         chunk({"tool_calls": [piece(0, args="}")]}, "tool_calls")],
        [("c1", "bash", '{"cmd": "ls"}')], None, "tool_calls"),
    "two calls in one chunk": (
        [chunk({"tool_calls": [piece(0, "c1", "bash", "{}"), piece(1, "c2", "read", "{}")]}, "tool_calls")],
        [("c1", "bash", "{}"), ("c2", "read", "{}")], None, "tool_calls"),
    "arguments split mid-escape": (
        calls(piece(0, "c1", "write", '{"s": "a\\'), piece(0, args="n\\u00"), piece(0, args='e9"}'), finish="stop"),
        [("c1", "write", '{"s": "a\\n\\u00e9"}')], None, "stop"),
    "content after the tool calls": (
        [*calls(piece(0, "c1", "bash", "{}"), finish=""), chunk({"content": "done"}, "tool_calls")],
        [("c1", "bash", "{}")], "done", "tool_calls"),
    "finish_reason tool_calls without calls": (
        [chunk({"role": "assistant", "content": "hi"}), chunk({}, "tool_calls")], [], "hi", "tool_calls"),
    "the role in every chunk": (
        [chunk({"role": "assistant", "content": "a"}), chunk({"role": "assistant", "content": "b"}, "stop")],
        [], "ab", "stop"),
    "a null finish_reason after the real one": (
        [chunk({"content": "x"}, "stop"), chunk({}, None)], [], "x", "stop"),
}


def sse(chunks: list[dict[str, Any]]) -> bytes:
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


@pytest.mark.parametrize("name", list(CASES))
def test_the_edge_cases_join_as_decided(name: str) -> None:
    chunks, expected_calls, content, finish = CASES[name]
    assembler = ChatStreamAssembler()
    for c in chunks:
        assembler.add(c)
    choice = assembler.result()["choices"][0]
    got = [(c["id"], c["function"]["name"], c["function"]["arguments"])
           for c in choice["message"].get("tool_calls", [])]
    assert got == expected_calls
    assert choice["message"]["content"] == content and choice["message"]["role"] == "assistant"
    assert choice["finish_reason"] == finish


@pytest.mark.parametrize("name", list(CASES))
def test_the_agent_executes_the_calls_the_classifier_sees(name: str) -> None:
    """The built-in loop's stream path and the recorder's reassembly, fed the same stream, agree call for call."""
    chunks = CASES[name][0]
    assembler = ChatStreamAssembler()
    for c in chunks:
        _accumulate(assembler, json.dumps(c), None)
    message, finish, _ = read_reply(assembler.result())
    executed = [(call.function.name, call.function.arguments) for call in message.tool_calls or [] if call.function]
    summary = summarize_stream([sse(chunks)])
    assert summary.error is None and summary.response is not None
    turn = read_turn(summary.response)
    assert executed == turn.structured_calls
    assert (message.content or "") == turn.content
    assert [call.id for call in message.tool_calls or []] == \
        [c["id"] or f"call_{n}" for n, c in enumerate(summary.response["choices"][0]["message"].get("tool_calls", []))]


def test_the_agent_refuses_a_chunk_the_recorder_only_notes() -> None:
    """Strictness stays the loop's: a piece without its index is the endpoint's fault there (openai-python's
    types require it), while the recorder keeps the exchange and names the event."""
    bad = chunk({"tool_calls": [{"id": "c1", "function": {"name": "bash", "arguments": "{}"}}]}, "tool_calls")
    with pytest.raises(EndpointFailure, match="index"):
        _accumulate(ChatStreamAssembler(), json.dumps(bad), None)
    summary = summarize_stream([sse([bad])])
    assert summary.response is not None
    assert read_turn(summary.response).structured_calls == [("bash", "{}")]
