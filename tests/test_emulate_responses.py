"""`--emulate-parser` on the Responses API (issue 38): the wire recorder rewrites a `/v1/responses` reply, plain
and streamed, as the engine parser would have returned it (text calls -> `function_call` output items), and the
wire log keeps the endpoint's reply as it was beside the rewritten one. The agent side is the openai SDK, the
endpoint the scripted one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.classify.emulation import parser_rewriter, rewrite_reply
from agentic_eval.testing import FakeEndpoint, ScriptedReply, responses_body, responses_stream
from agentic_eval.wire.recorder import WireRecorder, read_wire_log

openai = pytest.importorskip("openai")

TOOL = {"type": "function", "name": "read_file", "description": "read a file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}
TEXT = 'Let me look.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>'


def _client(recorder: WireRecorder) -> Any:
    return openai.OpenAI(base_url=recorder.base_url, api_key="sk-x", max_retries=0, timeout=30)


@pytest.mark.parametrize("streamed", [False, True], ids=["plain", "streamed"])
def test_a_responses_reply_is_rewritten_for_the_agent_and_kept_as_it_was(tmp_path: Path, streamed: bool) -> None:
    reply = (ScriptedReply(events=responses_stream(TEXT, reasoning="think"), named_events=True) if streamed
             else ScriptedReply(body=responses_body(TEXT, reasoning="think")))
    with FakeEndpoint([reply]) as fake, \
            WireRecorder(fake.base_url, tmp_path / "wire.jsonl", emulate=parser_rewriter("vllm:hermes")) as recorder:
        client = _client(recorder)
        if streamed:
            with client.responses.stream(model=fake.model, input="show a.py", tools=[TOOL]) as stream:
                got = stream.get_final_response()
        else:
            got = client.responses.create(model=fake.model, input="show a.py", tools=[TOOL])
    assert [item.type for item in got.output] == ["reasoning", "message", "function_call"]
    assert got.output[1].content[0].text.strip() == "Let me look."
    call = got.output[2]
    assert call.name == "read_file" and json.loads(call.arguments) == {"path": "a.py"}
    assert call.call_id.startswith("call_") and call.id.startswith("fc_")
    (record,) = read_wire_log(tmp_path / "wire.jsonl")
    assert record.stream is streamed and record.error is None
    assert record.emulated is not None and record.emulated["parser"] == "vllm:hermes" and record.emulated["rewritten"]
    kept = [item["type"] for item in record.response["output"]]
    assert kept == ["reasoning", "message"] and "<tool_call>" in record.response["output"][1]["content"][0]["text"]
    assert [item["type"] for item in record.emulated["response"]["output"]] == ["reasoning", "message",
                                                                                 "function_call"]


def test_a_responses_reply_without_a_call_the_parser_reads_passes_unchanged(tmp_path: Path) -> None:
    fenced = '```json\n{"name": "read_file", "arguments": {"path": "a.py"}}\n```'  # hermes reads no fenced JSON
    events = responses_stream(fenced)
    with FakeEndpoint([ScriptedReply(events=events, named_events=True)]) as fake, \
            WireRecorder(fake.base_url, tmp_path / "wire.jsonl", emulate=parser_rewriter("vllm:hermes")) as recorder:
        with _client(recorder).responses.stream(model=fake.model, input="a.py?", tools=[TOOL]) as stream:
            got = stream.get_final_response()
    assert [item.type for item in got.output] == ["message"] and "```json" in got.output[0].content[0].text
    (record,) = read_wire_log(tmp_path / "wire.jsonl")
    assert record.emulated == {"parser": "vllm:hermes", "rewritten": False, "response": None}
    assert len(record.events) == len(events)  # the endpoint's own stream, passed on as it was


def test_what_the_responses_rewrite_leaves_alone() -> None:
    request = {"tools": [TOOL]}
    bare = responses_body('{"name": "read_file", "arguments": {"path": "a.py"}}')
    rewritten = rewrite_reply("vllm:llama3_json", request, bare)
    assert rewritten is not None and [i["type"] for i in rewritten["output"]] == ["function_call"]  # no text left
    structured = responses_body(TEXT, function_calls=[("read_file", {"path": "b.py"})])
    assert rewrite_reply("vllm:hermes", request, structured) is None  # the server already parsed a call
    assert rewrite_reply("vllm:hermes", {"tools": [TOOL], "tool_choice": "none"}, responses_body(TEXT)) is None
    assert rewrite_reply("vllm:hermes", {}, responses_body(TEXT)) is None  # no tools offered
