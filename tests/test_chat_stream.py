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
from tests.stream_cases import CASES, chunk


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
