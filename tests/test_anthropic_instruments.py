"""`probe` and `forms` on the Anthropic Messages API: a scripted Anthropic-speaking server of this file's own
on 127.0.0.1 (POST /v1/messages, whole and streamed), one that lacks the route, and one that breaks the
protocol in the ways a half-done server does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.cli import main
from agentic_eval.endpoint import resolve_endpoint
from agentic_eval.instruments import anthropic
from agentic_eval.instruments.probe import SHAPES, run_probe, verdict
from agentic_eval.testing import ScriptedReply, chat_body, chat_stream, responses_body, responses_stream, tool_call
from tests.helpers import WITNESS, ResponderEndpoint, anthropic_events, anthropic_message, anthropic_reply

MESSAGES_SHAPES = tuple(s for s in SHAPES if s.api == "messages")


def claude_like(path: str, body: dict[str, Any]) -> ScriptedReply:
    """An Anthropic-speaking server (and an OpenAI one beside it): on /v1/messages it thinks, says a word and
    calls the one tool offered with the arguments the probe or the form matrix wants; with tool_choice any or
    a named tool it calls at once. Anything it is asked that is not the Messages API's shape is a 400."""
    if not path.endswith("/messages"):
        return openai_call(path, body)
    tools = body.get("tools") or []
    if not all(set(t) == {"name", "description", "input_schema"} for t in tools) or body.get("max_tokens") is None:
        return ScriptedReply(status=400, body={"type": "error", "error": {"type": "invalid_request_error",
                                                                           "message": "bad tools or no max_tokens"}})
    names = {t["name"] for t in tools}
    name, args = ("read_file", {"path": "src/main.py"}) if "read_file" in names else ("get_forecast", WITNESS)
    forced = body["tool_choice"]["type"] in ("any", "tool")
    message = anthropic_message(None if forced else "Let me look.", [(name, args)],
                                thinking=None if forced else "The user wants a tool call.")
    return anthropic_reply(body, message)


def openai_call(path: str, body: dict[str, Any]) -> ScriptedReply:
    """The probe's call, in chat completions or Responses form, streamed if asked."""
    call = ("read_file", {"path": "src/main.py"})
    if path.endswith("/responses"):
        if body.get("stream"):
            return ScriptedReply(events=responses_stream(function_calls=[call]), named_events=True)
        return ScriptedReply(body=responses_body(function_calls=[call]))
    calls = [tool_call(*call)]
    return ScriptedReply(events=chat_stream(tool_calls=calls)) if body.get("stream") else \
        ScriptedReply(body=chat_body(None, tool_calls=calls))


def no_messages_route(status: int) -> Any:
    def respond(path: str, body: dict[str, Any]) -> ScriptedReply:
        if path.endswith("/messages"):
            return ScriptedReply(status=status, body={"detail": "Not Found" if status == 404 else "Method Not Allowed"})
        return openai_call(path, body)

    return respond


def test_probe_checks_an_anthropic_endpoint_as_it_checks_an_openai_one(capsys: pytest.CaptureFixture[str]) -> None:
    with ResponderEndpoint(claude_like) as fake:
        report = run_probe(resolve_endpoint(fake.base_url, "k"), "fake-model", shapes=MESSAGES_SHAPES)
        sent = list(fake.requests)
        assert main(["probe", "--base-url", fake.base_url, "--model", "fake-model"]) == 0
    rows = {r.shape: r for r in report.shapes}
    assert set(rows) == {"messages auto", "messages any", "messages named", "messages auto stream"}
    for row in report.shapes:
        assert (row.status, row.label, row.tool, row.arguments_ok, row.error) == \
            (200, "tool_call", "read_file", True, None), row
    assert "4 of 4 shapes got a structured tool call" in verdict(report)
    assert [p for p, _ in sent] == ["/v1/messages"] * 4
    assert [b["stream"] for _, b in sent] == [False, False, False, True]
    table = capsys.readouterr().out
    assert "messages auto stream" in table and "10 of 10 shapes got a structured tool call" in table


@pytest.mark.parametrize("status", [404, 405])
def test_a_server_without_the_messages_api_gets_not_supported_rows(status: int, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    with ResponderEndpoint(no_messages_route(status)) as fake:
        report = run_probe(resolve_endpoint(fake.base_url, "k"), "fake-model", shapes=SHAPES)
        assert main(["probe", "--base-url", fake.base_url, "--model", "fake-model"]) == 0
        table = capsys.readouterr().out
        assert main(["forms", "--base-url", fake.base_url, "--model", "fake-model", "--tools", "20",
                     "--run-dir", str(tmp_path), "--json"]) == 0
        forms = json.loads(capsys.readouterr().out)
    unsupported = [r for r in report.shapes if r.label == "unsupported"]
    assert [r.shape for r in unsupported] == [s.name for s in MESSAGES_SHAPES]
    assert all(r.status == status and "does not speak the Anthropic Messages API" in (r.error or "")
               for r in unsupported)
    assert "4 not supported" in verdict(report) and "failed" not in verdict(report)
    assert table.count("not supported") >= 4 and "no /v1/messages" in table
    reasons = {s["name"]: s["reason"] for s in forms["shapes"] if s["name"].startswith("messages-")}
    assert reasons == dict.fromkeys(("messages-auto", "messages-any", "messages-named", "messages-auto-stream",
                                     "messages-named-stream"), "unsupported")


def broken(kind: str) -> ScriptedReply:
    """A reply that breaks the Messages API in one way."""
    call = anthropic_message(None, [("read_file", {"path": "src/main.py"})])
    if kind == "unknown_block":
        return ScriptedReply(body={**call, "content": [{"type": "server_tool_result", "x": 1}]})
    if kind == "input_not_object":
        return ScriptedReply(body={**call, "content": [{"type": "tool_use", "id": "t", "name": "read_file",
                                                        "input": '{"path": "src/main.py"}'}]})
    if kind == "chat_body":
        return ScriptedReply(body=chat_body("hello"))
    events = anthropic_events(call)
    if kind == "delta_in_wrong_block":
        events.insert(3, {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x"}})
    elif kind == "bad_json":
        events = [e if e.get("delta", {}).get("type") != "input_json_delta" else
                  {**e, "delta": {"type": "input_json_delta", "partial_json": "{oops"}} for e in events]
    elif kind == "error_event":
        events = events[:3] + [{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}]
    elif kind == "no_stop":
        events = events[:-1]
    return ScriptedReply(events=events, named_events=True)


@pytest.mark.parametrize("kind, shape, reason, words", [
    ("unknown_block", "messages auto", "http_error", "unknown type 'server_tool_result'"),
    ("input_not_object", "messages auto", "http_error", "input is not an object"),
    ("chat_body", "messages auto", "http_error", "type is None, not 'message'"),
    ("delta_in_wrong_block", "messages auto stream", "http_error", "a text_delta in a tool_use block"),
    ("bad_json", "messages auto stream", "http_error", "pieces are not JSON"),
    ("error_event", "messages auto stream", "http_error", "Overloaded"),
    ("no_stop", "messages auto stream", "stream_incomplete", "message_stop"),
])
def test_replies_that_break_the_protocol_are_rows_naming_what_was_wrong(kind: str, shape: str, reason: str,
                                                                         words: str) -> None:
    from agentic_eval.instruments import forms
    from agentic_eval.instruments.exchange import make_client
    from agentic_eval.instruments.probe import probe_shape

    shapes = {s.name: s for s in SHAPES}
    with ResponderEndpoint(lambda path, body: broken(kind)) as fake:
        endpoint = resolve_endpoint(fake.base_url, "k")
        row = probe_shape(endpoint, "fake-model", shapes[shape])
        with make_client(endpoint, 1) as client:
            form = forms.run_shape(client, "fake-model", {s.name.replace(" ", "-"): s for s in forms.SHAPES}[
                shape.replace(" ", "-")], forms.form_catalog(5), 30.0, "k")
    if kind == "no_stop":  # all there but the end: probe classifies it, the form matrix fails it
        assert row.label == "tool_call" and row.error is None
    else:
        assert row.label == "error" and words in (row.error or ""), row.error
    assert not form.passed and form.reason.startswith(reason) and words in form.detail, (form.reason, form.detail)


def test_a_stream_put_together_and_read_like_a_chat_completion() -> None:
    message = anthropic_message("Looking.", [("read_file", {"path": "src/main.py"}), ("grep", {"q": "é" * 40})],
                                thinking="Which file? src/main.py.")
    assembler = anthropic.assemble(anthropic_events(message, pieces=7))
    assert assembler.done and assembler.problem is None and assembler.error is None
    assembled = assembler.result()
    assert assembled is not None
    assert anthropic.message_problem(assembled) is None
    assert [b["type"] for b in assembled["content"]] == ["thinking", "text", "tool_use", "tool_use"]
    assert assembled["content"][3]["input"] == {"q": "é" * 40}
    assert assembled["stop_reason"] == "tool_use" and assembled["usage"]["output_tokens"] == 7
    chat = anthropic.as_chat_completion(assembled)
    choice = chat["choices"][0]
    assert choice["finish_reason"] == "tool_calls" and choice["message"]["content"] == "Looking."
    assert choice["message"]["reasoning_content"] == "Which file? src/main.py."
    assert [json.loads(c["function"]["arguments"]) for c in choice["message"]["tool_calls"]] == \
        [{"path": "src/main.py"}, {"q": "é" * 40}]
    assert chat["usage"] == {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}


def test_thinking_is_reasoning_not_prose() -> None:
    """A turn that only thinks is empty, not prose; a call written in a thinking block is still found."""
    from agentic_eval.classify.turn import classify_turn

    request = anthropic.chat_request(anthropic.messages_body(
        "m", "s", "u", [anthropic.anthropic_tool("read_file", "Read.", {"type": "object"})], anthropic.choice("auto"),
        stream=False, max_tokens=64))
    only_thought = anthropic.as_chat_completion(anthropic_message("", thinking="I should read src/main.py first."))
    assert classify_turn(request, only_thought).label == "empty"
    hermes = '<tool_call>\n{"name": "read_file", "arguments": {"path": "a"}}\n</tool_call>'
    in_thought = anthropic.as_chat_completion(anthropic_message("", thinking=hermes))
    assert classify_turn(request, in_thought).label == "text_tool_call"
