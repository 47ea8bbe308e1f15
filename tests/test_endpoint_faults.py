"""Endpoint faults (issue 20): every byte an endpoint sends ends in a recorded, classified, correctly
attributed outcome. Driven by the scripted endpoint on 127.0.0.1, the real agent loop, the real recorder."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.agent import AgentContext, AgentOptions, AgentOutcome
from agentic_eval.builtin_agent import BuiltinAgent
from agentic_eval.errors import AgenticEvalError
from agentic_eval.sandbox import materialize_sandbox
from agentic_eval.task import load_task
from tests.fake_endpoint import FakeEndpoint, ScriptedReply, chat_body, chat_stream, tool_call

MINI_TASK = Path(__file__).parent / "packs" / "mini" / "answer-file"


@pytest.fixture
def fake() -> Iterator[FakeEndpoint]:
    with FakeEndpoint() as endpoint:
        yield endpoint


def run_builtin(fake: FakeEndpoint, tmp_path: Path, *, stream: bool, max_turns: int = 3,
                base_url: str | None = None) -> AgentOutcome:
    task = load_task(MINI_TASK)
    sandbox = materialize_sandbox(task, 7, tmp_path / "sandbox")
    ctx = AgentContext(task=task, sandbox=sandbox, instruction=task.render_instruction(sandbox.variables),
                       base_url=base_url or fake.base_url, api_key="k", model="fake-model", timeout_s=20,
                       max_turns=max_turns, trial_dir=tmp_path / "trial",
                       options=AgentOptions(stream=stream, extra={"max_retries": 0}), cancel=threading.Event())
    return BuiltinAgent().run(ctx)


def chunk(**fields: Any) -> dict[str, Any]:
    return {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "fake-model", **fields}


# ---------------------------------------------------------------- 1, 2: the built-in agent


def test_a_whole_completion_where_a_stream_was_asked_for_is_accepted(
        fake: FakeEndpoint, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    path = "notes.txt"
    fake.enqueue(ScriptedReply(body=chat_body(tool_calls=[tool_call("write_file", {"path": path, "content": "x"})])),
                 ScriptedReply(body=chat_body("Done.")))
    outcome = run_builtin(fake, tmp_path, stream=True)
    assert (outcome.status, outcome.stop_reason, outcome.turns) == ("completed", "no_tool_call", 2)
    assert all(request.body["stream"] is True for request in fake.requests)
    notes = [line for line in capfd.readouterr().err.splitlines() if "server ignored stream: true" in line]
    assert len(notes) <= 1  # once per process: an earlier test may have printed it already
    transcript = [json.loads(line) for line in (tmp_path / "trial" / "transcript.jsonl").read_text().splitlines()]
    assert sum(entry["kind"] == "note" for entry in transcript) == 2


BAD_STREAM_REPLIES = {
    "json_but_not_a_completion": (ScriptedReply(body={"error": "nope"}), True,
                                  "not an event stream (application/json)"),
    "text_for_a_stream": (ScriptedReply(body="hello"), True, "the body is not JSON either"),
    "message_is_a_string": (ScriptedReply(body={"choices": [{"message": "hello"}]}), False,
                            "message is not an object"),
    "tool_calls_is_a_number": (ScriptedReply(body={"choices": [{"message": {"content": "x", "tool_calls": 5}}]}),
                               False, "message.tool_calls is not a list"),
    "finish_reason_is_a_number": (ScriptedReply(body={"choices": [{"message": {"content": "x"},
                                                                  "finish_reason": 3}]}), False,
                                  "finish_reason is not a string"),
    "choices_is_a_string": (ScriptedReply(events=[chunk(choices="x"), "[DONE]"]), True,
                            "malformed stream chunk: choices"),
    "delta_is_a_string": (ScriptedReply(events=[chunk(choices=[{"index": 0, "delta": "x"}]), "[DONE]"]), True,
                          "malformed stream chunk: choices.0.delta"),
    "tool_calls_chunk_is_a_number": (ScriptedReply(events=[chunk(choices=[{"index": 0, "delta": {"tool_calls": 5}}]),
                                                           "[DONE]"]), True, "choices.0.delta.tool_calls"),
    "content_is_a_number": (ScriptedReply(events=[chunk(choices=[{"index": 0, "delta": {"content": 5},
                                                                  "finish_reason": "stop"}]), "[DONE]"]), True,
                            "choices.0.delta.content"),
    "chunk_is_a_list": (ScriptedReply(events=["[1, 2]", "[DONE]"]), True, "not a JSON object"),
    "no_chunk_at_all": (ScriptedReply(events=["[DONE]"]), True, "without any completion chunk"),
    "error_inside_the_stream": (ScriptedReply(events=[{"error": {"message": "engine overloaded"}}]), True,
                                "error in the stream: engine overloaded"),
    "deep_json_chunk": (ScriptedReply(events=["[" * 100_000 + "]" * 100_000]), True, "a stream event is not JSON"),
}


@pytest.mark.parametrize("case", sorted(BAD_STREAM_REPLIES))
def test_a_reply_of_the_wrong_shape_is_an_endpoint_error(case: str, fake: FakeEndpoint, tmp_path: Path) -> None:
    scripted, stream, expected = BAD_STREAM_REPLIES[case]
    fake.enqueue(scripted)
    outcome = run_builtin(fake, tmp_path, stream=stream)
    assert outcome.status == "endpoint_error", outcome.detail
    assert expected in outcome.detail and "\n" not in outcome.detail


def test_an_unknown_finish_reason_in_a_stream_is_kept(fake: FakeEndpoint, tmp_path: Path) -> None:
    events = chat_stream("All done.", finish_reason="abort")
    fake.enqueue(ScriptedReply(events=events))
    outcome = run_builtin(fake, tmp_path, stream=True)
    assert (outcome.status, outcome.stop_reason) == ("completed", "no_tool_call")


# ---------------------------------------------------------------- 7: options


def test_max_tokens_zero_is_refused_before_any_trial() -> None:
    with pytest.raises(AgenticEvalError, match="max_tokens=0: expected at least 1"):
        BuiltinAgent.check_options({"max_tokens": "0"})
    BuiltinAgent.check_options({"max_tokens": "1"})
