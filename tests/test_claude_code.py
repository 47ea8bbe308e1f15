"""Claude Code and the Anthropic Messages API on the wire (issue 29).

The real Claude Code (`agentic-eval agents install claude-code`) runs the mini pack's answer-file task through
the runner, confined (bwrap; one scenario under docker), against a scripted endpoint on 127.0.0.1 that either
speaks the Messages API itself (passed through) or only chat completions (the recorder translates): a model
that calls tools and solves the task, one that writes its calls as text, one whose endpoint dies mid-trial.
The translation itself is tested on recorded shapes, streamed and not, without a CLI.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentic_eval.classify.turn import classify_turn
from agentic_eval.cli import main
from agentic_eval.testing import (
    FakeEndpoint,
    ScriptedReply,
    chat_body,
    chat_stream,
    messages_body,
    messages_stream,
    tool_call,
)
from agentic_eval.wire.anthropic import (
    UNPARSED_ARGUMENTS,
    ChatToMessagesStream,
    Untranslatable,
    to_chat_request,
    to_message,
)
from agentic_eval.wire.recorder import WireRecorder, read_wire_log
from agentic_eval.wire.sse import summarize_stream
from tests.helpers import (
    MODEL,
    PLACEHOLDER,
    claude_trial,
    messages_calls,
    require_cli,
    tool_names,
)


@pytest.fixture
def pack(mini_pack: Path) -> Path:
    toml = mini_pack / "answer-file" / "task.toml"
    toml.write_text(toml.read_text().replace("agent_timeout_s = 60", "agent_timeout_s = 240"))
    return mini_pack


# ---------------------------------------------------------------- the real CLI


@pytest.mark.agent_cli
@pytest.mark.parametrize("native", [True, False], ids=["native", "translated"])
def test_claude_code_solves_with_real_tool_calls(native: bool, pack: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    require_cli("claude-code", monkeypatch)
    result = claude_trial("solver", native, pack, tmp_path / "runs")
    assert result.outcome == "pass", result.detail
    assert result.wire_api == ("anthropic-messages" if native else "anthropic-messages->chat-completions")
    assert result.turns.tool_call >= 1 and result.turns.text_tool_call == 0 and result.turns.unclassified == 0
    calls = messages_calls(tmp_path / "runs", result)
    assert calls and result.requests == len(calls) and result.agent_turns == len(calls)
    first = calls[0]
    assert first["stream"] and "Bash" in tool_names(first["request"]) and len(first["request"]["tools"]) >= 5
    assert first["response"]["content"][-1]["type"] == "tool_use"  # the reply reassembled, as the agent got it
    results = json.dumps(calls[-1]["request"]["messages"][-1])  # what the model's command found
    assert "probe-done" in results and not PLACEHOLDER.search(results), results
    assert "relay-403" in results and result.tool_requests == 1, results  # its own request: refused, recorded
    if native:
        assert all(c["upstream"] is None for c in calls)
    else:  # the endpoint's side, chat completions, kept beside it: request, raw events, reassembled reply
        upstream = first["upstream"]
        assert upstream["path"] == "/v1/chat/completions" and upstream["request"]["messages"][0]["role"] == "system"
        assert upstream["events"][-1] == "[DONE]"
        assert upstream["response"]["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "Bash"
        assert any(m["role"] == "tool" for m in calls[-1]["upstream"]["request"]["messages"])


@pytest.mark.agent_cli
def test_claude_code_text_calls_are_counted(pack: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    require_cli("claude-code", monkeypatch)
    result = claude_trial("text", False, pack, tmp_path / "runs", "--agent-opt", "api=translate",
                          "--agent-opt", "max_output=2048")
    assert result.outcome == "fail", result.detail
    (call,) = messages_calls(tmp_path / "runs", result)
    assert call["request"]["max_tokens"] == 2048 and call["upstream"]["request"]["max_tokens"] == 2048
    assert result.turns.text_tool_call >= 1 and result.turns.tool_call == 0
    assert result.text_call_families == {"invented_xml": result.turns.text_tool_call}
    (run,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    assert main(["report", str(run), "--format", "md"]) == 0  # the table counts it, and says it was translated
    row = next(line for line in capsys.readouterr().out.splitlines() if "claude-code [messages->chat]" in line)
    assert "| 0/1" in row and "| 1/1" in row and "| 0/1" in row.split("| 1/1", 1)[1], row


@pytest.mark.agent_cli
def test_claude_code_endpoint_dying_mid_trial_is_unscored(pack: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    require_cli("claude-code", monkeypatch)
    result = claude_trial("dies", True, pack, tmp_path / "runs", "--agent-opt", "api=native")
    assert result.outcome == "endpoint_error", (result.outcome, result.detail)
    assert result.fault == "endpoint"
    assert result.turns.tool_call == 1 and result.turns.unclassified >= 1


# ---------------------------------------------------------------- the translation, on recorded shapes

# What Claude Code 2.1.328 sends (shortened): system blocks, a system message after the first user turn,
# tool results with is_error, thinking and keys chat completions has no counterpart for.
CLAUDE_REQUEST: dict[str, Any] = {
    "model": MODEL, "max_tokens": 32000, "stream": True,
    "system": [{"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.328;"},
               {"type": "text", "text": "You are a Claude agent.", "cache_control": {"type": "ephemeral"}}],
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "<system-reminder>r</system-reminder>"},
                                     {"type": "text", "text": "Fix the port."}]},
        {"role": "system", "content": [{"type": "text", "text": "# Environment\nPlatform: linux"}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "look first", "signature": "s"},
                                          {"type": "text", "text": "Reading."},
                                          {"type": "tool_use", "id": "toolu_1", "name": "Bash",
                                           "input": {"command": "cat config.json"}},
                                          {"type": "tool_use", "id": "toolu_2", "name": "Bash",
                                           "input": {UNPARSED_ARGUMENTS: "{bad"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                      "content": [{"type": "text", "text": "{\"port\": 1}"}]},
                                     {"type": "tool_result", "tool_use_id": "toolu_2", "content": "bad input",
                                      "is_error": True},
                                     {"type": "text", "text": "go on"}]},
    ],
    "tools": [{"name": "Bash", "description": "Run", "defer_loading": False,
               "input_schema": {"type": "object", "properties": {"command": {"type": "string"}},
                                "required": ["command"]}}],
    "tool_choice": {"type": "any", "disable_parallel_tool_use": True},
    "metadata": {"user_id": "u"}, "thinking": {"type": "adaptive"},
    "context_management": {"edits": []}, "output_config": {"effort": "high"},
    "temperature": 0.2, "stop_sequences": ["END"],
}


def test_messages_request_becomes_a_chat_request() -> None:
    chat = to_chat_request(CLAUDE_REQUEST)
    roles = [m["role"] for m in chat["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "tool", "user"]
    assert chat["messages"][0]["content"].endswith("You are a Claude agent.\n\n# Environment\nPlatform: linux")
    assert chat["messages"][1]["content"] == "<system-reminder>r</system-reminder>\n\nFix the port."
    assistant = chat["messages"][2]
    assert assistant["content"] == "Reading." and assistant["reasoning_content"] == "look first"
    assert [c["function"]["arguments"] for c in assistant["tool_calls"]] == ['{"command": "cat config.json"}', "{bad"]
    assert chat["messages"][3] == {"role": "tool", "tool_call_id": "toolu_1", "content": "{\"port\": 1}"}
    assert chat["messages"][4]["content"] == "Error: bad input"
    assert chat["tools"][0]["function"]["parameters"]["required"] == ["command"]
    assert chat["tool_choice"] == "required" and chat["parallel_tool_calls"] is False
    assert chat["stream_options"] == {"include_usage": True} and chat["stop"] == ["END"]
    assert "metadata" not in chat and "thinking" not in chat and chat["max_tokens"] == 32000
    # what the model's own files can put in a turn (a PDF it had read) is a note, never a refusal
    pdf = {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBE"}}
    text = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "plain words"}}
    carried = to_chat_request({**CLAUDE_REQUEST, "messages": [
        {"role": "user", "content": [pdf, text]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Read", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [pdf]}]}]})
    assert "[document block omitted here (messages[0].content[0])" in carried["messages"][1]["content"]
    assert carried["messages"][1]["content"].endswith("plain words")
    assert carried["messages"][3]["content"].startswith("[document block omitted here")
    named = to_chat_request({**CLAUDE_REQUEST, "tool_choice": {"type": "tool", "name": "Bash"}})
    assert named["tool_choice"] == {"type": "function", "function": {"name": "Bash"}}


@pytest.mark.parametrize(("change", "named"), [
    ({"messages": [{"role": "user", "content": [5]}]}, "messages[0].content[0]: block type None"),
    ({"tools": [{"type": "web_search_20250305", "name": "web_search"}]}, "tools[0] (web_search)"),
    ({"tool_choice": {"type": "sometimes"}}, "tool_choice"),
    ({"prefill": True}, "'prefill'"),
    ({"messages": [{"role": "tool", "content": "x"}]}, "messages[0]: role 'tool'"),
])
def test_untranslatable_requests_name_the_part(change: dict[str, Any], named: str) -> None:
    with pytest.raises(Untranslatable, match=named.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        to_chat_request({**CLAUDE_REQUEST, **change})


def test_chat_reply_becomes_a_message_streamed_or_not() -> None:
    calls = [tool_call("Bash", {"command": "ls"}, "call_a"), tool_call("Bash", "{not json", "call_b")]
    whole = to_message(chat_body("Running.", tool_calls=calls, reasoning_content="hmm"), MODEL)
    assert [b["type"] for b in whole["content"]] == ["thinking", "text", "tool_use", "tool_use"]
    assert whole["content"][2]["input"] == {"command": "ls"} and whole["stop_reason"] == "tool_use"
    assert whole["content"][3]["input"] == {UNPARSED_ARGUMENTS: "{not json"}
    assert whole["usage"] == {"input_tokens": 10, "output_tokens": 5}
    assert to_message(chat_body("cut", finish_reason="length"), MODEL)["stop_reason"] == "max_tokens"
    # streamed: chunk by chunk, the same message once the events are reassembled the way the recorder does
    translator = ChatToMessagesStream(model=MODEL)
    events: list[dict[str, Any]] = []
    for chunk in chat_stream("Running.", tool_calls=calls, reasoning_content="hmm", piece_chars=3):
        events += translator.finish() if chunk == "[DONE]" else translator.feed(chunk)
    kinds = [e["type"] for e in events]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    assert kinds.count("content_block_start") == kinds.count("content_block_stop") == 4
    summary = summarize_stream([f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events])
    assert summary.error is None and summary.first_token_chunk is not None
    assert summary.response is not None
    assert [b["type"] for b in summary.response["content"]] == ["thinking", "text", "tool_use", "tool_use"]
    assert summary.response["content"][1]["text"] == "Running." and summary.response["stop_reason"] == "tool_use"
    assert summary.response["usage"]["output_tokens"] == 5
    assert classify_turn(CLAUDE_REQUEST, summary.response).flags == ["bad_arguments"]
    with pytest.raises(Untranslatable, match="delta.content is not text"):
        ChatToMessagesStream(model=MODEL).feed({"choices": [{"index": 0, "delta": {"content": 5}}]})


def test_what_the_translation_makes_is_what_the_official_types_accept() -> None:
    """The Anthropic SDK's own types (pydantic) accept every message and stream event the translation makes."""
    from anthropic.types import Message, RawMessageStreamEvent
    from pydantic import TypeAdapter

    events_type = TypeAdapter(RawMessageStreamEvent)
    calls = [tool_call("Bash", {"command": "ls"}, "call_a"), tool_call("Bash", "{not json", "call_b")]
    for finish in ("stop", "length", "tool_calls", "content_filter"):
        Message.model_validate(to_message(chat_body("Running.", tool_calls=calls, reasoning_content="hmm",
                                                    finish_reason=finish), MODEL))
    translator = ChatToMessagesStream(model=MODEL)
    events: list[dict[str, Any]] = []
    for chunk in chat_stream("Running.", tool_calls=calls, reasoning_content="hmm"):
        events += translator.finish() if chunk == "[DONE]" else translator.feed(chunk)
    events += messages_stream("Hi", tool_uses=[("Bash", {"command": "ls"})], thinking="t")  # the test kit's own
    for event in events:
        events_type.validate_python(event)


def test_messages_turns_are_classified_like_any_other() -> None:
    request = {"tools": CLAUDE_REQUEST["tools"]}
    assert classify_turn(request, messages_body("ok", tool_uses=[("Bash", {"command": "ls"})])).label == "tool_call"
    text = classify_turn(request, messages_body("<Bash>\n<command>ls</command>\n</Bash>"))
    assert text.label == "text_tool_call" and text.family == "invented_xml" and text.tool_names == ["Bash"]
    thinking = classify_turn(request, messages_body(None, thinking="I should call Bash"))
    assert thinking.label == "empty" and thinking.flags == ["reasoning_only"]
    unknown = classify_turn(request, messages_body(None, tool_uses=[("Nope", {})]))
    assert unknown.flags == ["unknown_tool"]


def test_recorder_translates_and_keeps_both_sides(tmp_path: Path) -> None:
    """Through the real recorder: a streamed and a whole exchange, count_tokens, an untranslatable request, an
    endpoint error, a stream cut short: each recorded with what the agent got and what the endpoint sent."""
    replies = [ScriptedReply(events=chat_stream("Hi.", tool_calls=[tool_call("Bash", {"command": "ls"}, "c1")])),
               ScriptedReply(body=chat_body("Whole.")),
               ScriptedReply(status=503, body={"error": {"message": "overloaded"}}),
               ScriptedReply(events=chat_stream("Cut", done=False), close_after_events=2),
               ScriptedReply(events=[*chat_stream("Bad")[:2], {"choices": [{"index": 0, "delta": {"content": 5}}]}])]
    log = tmp_path / "wire.jsonl"
    with FakeEndpoint(replies) as fake, WireRecorder(fake.base_url, log, translate_messages=True) as recorder:
        post = lambda path, body: httpx.post(recorder.base_url + path, json=body, timeout=30)  # noqa: E731
        streamed = post("/messages?beta=true", CLAUDE_REQUEST)
        whole = post("/messages", {**CLAUDE_REQUEST, "stream": False})
        counted = post("/messages/count_tokens", CLAUDE_REQUEST)
        refused = post("/messages", {**CLAUDE_REQUEST, "tools": [{"type": "bash_20250124", "name": "bash"}]})
        failed = post("/messages", {**CLAUDE_REQUEST, "stream": False})
        cut = post("/messages", CLAUDE_REQUEST)
        bad = post("/messages", CLAUDE_REQUEST)
    assert streamed.status_code == 200 and "event: message_stop" in streamed.text
    assert whole.json()["content"] == [{"type": "text", "text": "Whole."}]
    assert counted.status_code == 404 and counted.json()["type"] == "error"
    assert refused.status_code == 400 and "tools[0] (bash)" in refused.json()["error"]["message"]
    assert failed.status_code == 503 and "overloaded" in failed.json()["error"]["message"]
    assert cut.status_code == 200 and "event: error" in cut.text
    assert "event: error" in bad.text and '"text": "Bad"' in bad.text  # what came before the bad chunk, then why
    assert len(fake.requests) == 5 and all(r.path == "/v1/chat/completions" for r in fake.requests)
    records = read_wire_log(log)
    assert [r.status for r in records] == [200, 200, 404, 400, 503, 200, 200]
    first = records[0]
    assert first.stream and first.events[0].startswith('{"type": "message_start"')
    assert first.response["content"][1] == {"type": "tool_use", "id": "c1", "name": "Bash", "input": {"command": "ls"}}
    assert first.usage == {"input_tokens": 10, "output_tokens": 5} and first.error is None
    assert first.upstream is not None and first.upstream["events"][-1] == "[DONE]"
    assert first.upstream["request"]["tool_choice"] == "required"
    assert records[1].upstream is not None and records[1].upstream["response"]["object"] == "chat.completion"
    # the upstream request of a later exchange is stored by reference to an earlier one's, and read back whole
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert lines[1]["upstream"]["request_ref"]["base"] == lines[0]["id"]
    assert not lines[1]["upstream"]["request"]["messages"]
    assert records[1].upstream["request"]["messages"] == first.upstream["request"]["messages"]
    assert "request_ref" not in records[1].upstream
    assert records[3].error is not None and "tools[0] (bash)" in records[3].error and records[3].upstream is None
    assert records[5].error is not None and "closed the response early" in records[5].error
    assert records[6].error is not None and "delta.content is not text" in records[6].error
    assert records[6].response["content"] == [{"type": "text", "text": "Bad"}]


def test_recorder_passes_messages_through_with_the_real_key(tmp_path: Path) -> None:
    """Native: the agent's placeholder never reaches the endpoint; the real key does, as x-api-key too."""
    reply = ScriptedReply(events=messages_stream("Hi.", tool_uses=[("Bash", {"command": "ls"})], thinking="t"),
                          named_events=True)
    log = tmp_path / "wire.jsonl"
    with FakeEndpoint([reply]) as fake, WireRecorder(fake.base_url, log, client_key="placeholder",
                                                     upstream_headers={"Authorization": "Bearer real"}) as recorder:
        answer = httpx.post(recorder.base_url + "/messages?beta=true", json=CLAUDE_REQUEST, timeout=30,
                            headers={"x-api-key": "placeholder", "anthropic-version": "2023-06-01"})
    assert answer.status_code == 200
    sent = fake.requests[0]
    assert sent.path == "/v1/messages?beta=true" and sent.headers["x-api-key"] == "real"
    assert sent.headers["authorization"] == "Bearer real" and sent.headers["anthropic-version"] == "2023-06-01"
    (record,) = read_wire_log(log)
    assert [b["type"] for b in record.response["content"]] == ["thinking", "text", "tool_use"]
    assert record.response["content"][2]["input"] == {"command": "ls"} and record.upstream is None
    assert classify_turn(record.request, record.response).label == "tool_call"


def test_claude_code_options_are_checked() -> None:
    from agentic_eval.agents.adapters.claude_code import ClaudeCodeAgent
    from agentic_eval.errors import AgenticEvalError

    agent = ClaudeCodeAgent()
    agent.check_options({"api": "translate", "max_output": "4096"})
    with pytest.raises(AgenticEvalError, match="max_output=0: expected a whole number"):
        agent.check_options({"max_output": "0"})
    with pytest.raises(AgenticEvalError, match="api=sometimes: expected one of auto, native, translate"):
        agent.check_options({"api": "sometimes"})
    with pytest.raises(AgenticEvalError, match="--agent-opt context"):
        agent.check_options({"context": "5"})
