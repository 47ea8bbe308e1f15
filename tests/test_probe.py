"""`probe` against the scripted fake endpoint: one row per shape, errors as rows, metrics families."""

from __future__ import annotations

import json
import socket

import pytest

from agentic_eval.cli import main
from agentic_eval.endpoint import not_served, resolve_endpoint
from agentic_eval.errors import EndpointError
from agentic_eval.instruments.probe import SHAPES, run_probe, verdict
from agentic_eval.testing import (
    FakeEndpoint,
    ScriptedReply,
    chat_body,
    chat_stream,
    responses_body,
    responses_stream,
    tool_call,
)
from tests.helpers import anthropic_events, anthropic_message

HERMES = '<tool_call>\n{"name": "read_file", "arguments": {"path": "src/main.py"}}\n</tool_call>'
VLLM_METRICS = (
    "# HELP vllm:num_requests_running Number of requests running.\n"
    "# TYPE vllm:num_requests_running gauge\n"
    'vllm:num_requests_running{model_name="m"} 0.0\n'
    "# HELP vllm:prompt_tokens_total Prompt tokens.\n"
    "# TYPE vllm:prompt_tokens_total counter\n"
    'vllm:prompt_tokens_total{model_name="m"} 12.0\n'
    "# HELP process_cpu_seconds_total CPU time.\n"
    "# TYPE process_cpu_seconds_total counter\n"
    "process_cpu_seconds_total 1.5\n"
)


def one_of_each() -> list[ScriptedReply]:
    """Replies for the ten shapes in order (the last four in the Anthropic Messages API's form), then the
    /metrics answer."""
    return [
        ScriptedReply(body=chat_body(tool_calls=[tool_call("read_file", {"path": "src/main.py"})])),
        ScriptedReply(body=chat_body(HERMES)),
        ScriptedReply(status=500, body={"error": {"message": "tool_choice named is not supported"}}),
        ScriptedReply(events=chat_stream(tool_calls=[tool_call("read_file", {"path": "README.md"})])),
        ScriptedReply(body=responses_body("I cannot read files, but src/main.py is probably the entry point.")),
        ScriptedReply(events=responses_stream(function_calls=[("read_file", {"path": "./src/main.py"})]),
                      named_events=True),
        ScriptedReply(body=anthropic_message("Reading it.", [("read_file", {"path": "src/main.py"})])),
        ScriptedReply(body=anthropic_message(HERMES, thinking="The user wants the file.")),
        ScriptedReply(body=anthropic_message(None, [("read_file", {"path": "src/main.py"})])),
        ScriptedReply(events=anthropic_events(anthropic_message(None, [("read_file", {"path": "src/main.py"})])),
                      named_events=True),
        ScriptedReply(body=VLLM_METRICS),
    ]


def test_every_shape_is_a_row_classified_from_the_real_answer() -> None:
    with FakeEndpoint(one_of_each()) as fake:
        report = run_probe(resolve_endpoint(fake.base_url, "k"), "fake-model")
        sent = [(r.method, r.path, r.body) for r in fake.requests]

    rows = {r.shape: r for r in report.shapes}
    assert [r.shape for r in report.shapes] == [s.name for s in SHAPES]
    assert (rows["chat auto"].label, rows["chat auto"].tool, rows["chat auto"].arguments_ok) == \
        ("tool_call", "read_file", True)
    assert (rows["chat required"].label, rows["chat required"].family, rows["chat required"].arguments_ok) == \
        ("text_tool_call", "hermes", True)
    named = rows["chat named"]
    assert (named.label, named.status) == ("error", 500) and "not supported" in (named.error or "")
    assert (rows["chat auto stream"].label, rows["chat auto stream"].arguments_ok) == ("tool_call", False)
    assert (rows["responses auto"].label, rows["responses auto"].tool) == ("prose", None)
    assert (rows["responses auto stream"].label, rows["responses auto stream"].arguments_ok) == ("tool_call", True)
    for name in ("messages auto", "messages named", "messages auto stream"):
        assert (rows[name].label, rows[name].tool, rows[name].arguments_ok, rows[name].status) == \
            ("tool_call", "read_file", True, 200), rows[name]
    assert (rows["messages any"].label, rows["messages any"].family) == ("text_tool_call", "hermes")
    assert rows["messages auto"].usage == {"input_tokens": 12, "output_tokens": 7}
    assert all(r.latency_s >= 0 for r in report.shapes)

    # what went over the wire: the model list first, each shape's request, /metrics last
    assert sent[0][:2] == ("GET", "/v1/models")
    posts = sent[1:7]
    assert [p[1] for p in posts] == ["/v1/chat/completions"] * 4 + ["/v1/responses"] * 2
    assert [p[2]["tool_choice"] for p in posts[:3]] == ["auto", "required",
                                                        {"type": "function", "function": {"name": "read_file"}}]
    assert [bool(p[2].get("stream")) for p in posts] == [False, False, False, True, False, True]
    assert all(p[2]["model"] == "fake-model" and len(p[2]["tools"]) == 1 for p in posts)
    messages = sent[7:11]
    assert [p[1] for p in messages] == ["/v1/messages"] * 4
    assert [p[2]["tool_choice"] for p in messages] == [{"type": "auto"}, {"type": "any"},
                                                       {"type": "tool", "name": "read_file"}, {"type": "auto"}]
    assert [p[2]["stream"] for p in messages] == [False, False, False, True]
    assert all(p[2]["tools"][0]["input_schema"]["required"] == ["path"] for p in messages)
    assert sent[11][:2] == ("GET", "/metrics")

    assert report.models == ["fake-model"]
    assert report.metrics.prefixes == ["vllm:"]
    assert "vllm:num_requests_running" in report.metrics.families
    assert "6 of 10 shapes got a structured tool call" in verdict(report)
    assert "hermes" in verdict(report) and "1 failed" in verdict(report)


def test_garbage_timeouts_and_cut_streams_are_rows_not_crashes() -> None:
    shapes = (SHAPES[0], SHAPES[3], SHAPES[5], SHAPES[1])
    replies = [
        ScriptedReply(body="<html>502 Bad Gateway</html>"),
        ScriptedReply(events=chat_stream("slow"), chunk_delay_s=2.0),
        ScriptedReply(events=responses_stream("cut short"), named_events=True, close_after_events=2),
        ScriptedReply(body={"object": "list", "data": []}),
    ]
    with FakeEndpoint(replies) as fake:
        report = run_probe(resolve_endpoint(fake.base_url, "k"), "fake-model", shapes=shapes, timeout_s=0.5)
    garbage, slow, cut, not_a_turn = report.shapes
    assert (garbage.label, garbage.status) == ("error", 200) and "not a model turn" in (garbage.error or "")
    assert slow.label == "error" and "no answer within" in (slow.error or "")
    assert cut.label == "error" and cut.error
    assert not_a_turn.label == "error" and "not a model turn" in (not_a_turn.error or "")
    # nothing left in the queue: the fake answers /metrics with a 500
    assert report.metrics.families == [] and report.metrics.error == "HTTP 500"


def test_a_model_the_endpoint_does_not_list_is_one_error_naming_the_listed_ones() -> None:
    with FakeEndpoint() as fake, pytest.raises(EndpointError, match="fake-model"):
        run_probe(resolve_endpoint(fake.base_url, "k"), "other-model")


def test_cli_json_and_table(capsys: pytest.CaptureFixture[str]) -> None:
    with FakeEndpoint(one_of_each()) as fake:
        assert main(["probe", "--base-url", fake.base_url, "--model", "fake-model", "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        fake.enqueue(*one_of_each())
        assert main(["probe", "--base-url", fake.base_url, "--model", "fake-model"]) == 0
        table = capsys.readouterr().out
    assert [s["label"] for s in data["shapes"]] == ["tool_call", "text_tool_call", "error", "tool_call", "prose",
                                                    "tool_call", "tool_call", "text_tool_call", "tool_call",
                                                    "tool_call"]
    assert data["metrics"]["prefixes"] == ["vllm:"] and data["model"] == "fake-model"
    for text in ("chat auto stream", "responses auto", "text_tool_call", "hermes", "vllm:", "HTTP 500"):
        assert text in table
    assert "6 of 10 shapes got a structured tool call" in table
    # some shapes parsed, others left as hermes text: the server's parser is not the model's (issue 38)
    assert "vllm:hermes" in data["shapes"][1]["parsers"]
    assert data["diagnosis"]["kind"] == "parser_mismatch" and data["diagnosis"]["parser"] == "vllm:hermes"
    assert "diagnosis: parser mismatch" in table and "--tool-call-parser hermes" in table


def test_cli_unreachable_endpoint_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert main(["probe", "--base-url", f"http://127.0.0.1:{port}/v1", "--model", "m"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("agentic-eval: error: cannot reach")


def test_a_streamed_reply_cut_at_the_token_limit_is_a_truncated_row_not_an_error() -> None:
    from agentic_eval.instruments.probe import probe_shape

    cut = '```json\n{"name": "read_file", "arguments": {"path": "src/ma'
    shape = next(s for s in SHAPES if s.name == "chat auto stream")
    with FakeEndpoint([ScriptedReply(events=chat_stream(cut, finish_reason="length"))]) as fake:
        row = probe_shape(resolve_endpoint(fake.base_url, "k"), "fake-model", shape)
    assert row.error is None, row.error
    assert (row.label, row.family, row.tool) == ("text_tool_call", "json", "read_file")
    assert "truncated" in row.flags


def test_the_summary_does_not_count_a_call_to_the_wrong_tool_as_a_success() -> None:
    wrong = chat_body(None, tool_calls=[tool_call("get_forecast", {"city": "Lisbon"})])
    with FakeEndpoint([ScriptedReply(body=wrong)]) as fake:
        report = run_probe(resolve_endpoint(fake.base_url, "k"), "fake-model", shapes=SHAPES[:1])
    assert "1 of 1 shapes got a structured tool call, but none to the right tool" in verdict(report)


@pytest.mark.parametrize(("model", "models", "expected"), [
    ("qwen3-codr", ["qwen3-coder", "llama"], "(did you mean 'qwen3-coder'?); it lists: qwen3-coder, llama"),
    ("qwen3-coder", ["qwen3-coder:30b"], "(did you mean 'qwen3-coder:30b'?); it lists: qwen3-coder:30b"),
    ("Qwen", ["qwen"], "(did you mean 'qwen'?); it lists: qwen"),
    ("x", [], "; it lists: none"),
    ("zzz", [f"model-{i:03}" for i in range(25)], "; it lists: model-000, model-001, model-002, model-003, "
     "model-004, model-005, model-006, model-007, model-008, model-009 and 15 more"),
])
def test_a_model_not_served_gets_the_nearest_name_and_at_most_ten_listed(model: str, models: list[str],
                                                                       expected: str) -> None:
    line = not_served(resolve_endpoint("http://127.0.0.1:9/v1", None), model, models)
    assert line.startswith(f"model {model!r} is not served by http://127.0.0.1:9/v1") and line.endswith(expected)
