"""The built-in agent's real loop, against a scripted endpoint on 127.0.0.1 and a real sandbox."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.agents.base import AgentOutcome, load_agent
from agentic_eval.agents.builtin.prompts import (
    BASE_SYSTEM_PROMPT,
    GUIDANCE_SECTIONS,
    estimate_tokens,
    guidance_tokens,
    pad_system_prompt,
)
from agentic_eval.grading.grader import Verdict, grade_sandbox
from agentic_eval.packs.sandbox import Sandbox
from agentic_eval.packs.task import Task
from agentic_eval.testing import FakeEndpoint, ScriptedReply, chat_stream, tool_call
from tests.helpers import RunAgent, reply


def transcript_lines(outcome: AgentOutcome) -> list[dict[str, Any]]:
    assert outcome.transcript is not None
    return [json.loads(line) for line in outcome.transcript.read_text().splitlines()]


def test_registered_under_its_name() -> None:
    agent = load_agent("builtin")
    assert (agent.name, agent.uses_model) == ("builtin", True)


@pytest.mark.parametrize("stream", [False, True])
def test_solves_the_task_with_structured_calls(
    stream: bool, run_agent: RunAgent, fake: FakeEndpoint, task: Task, sandbox: Sandbox
) -> None:
    port = sandbox.variables["port"]
    fake.enqueue(
        reply(stream, "Reading.", calls=(tool_call("read_file", {"path": "config/settings.ini"}),)),
        reply(stream, calls=(
            tool_call("write_file", {"path": "answer.txt", "content": f"port is {port}\n"}, "c2"),
            tool_call("read_file", {"path": "../outside"}, "c3"),  # refused; the loop goes on
        )),
        reply(stream, "Wrote the port into answer.txt."),
    )
    outcome = run_agent(stream=stream)
    assert (outcome.status, outcome.stop_reason, outcome.turns) == ("completed", "no_tool_call", 3)
    assert grade_sandbox(task, sandbox).verdict is Verdict.PASS

    bodies = [r.body for r in fake.requests]
    assert all(b["tool_choice"] == "auto" and len(b["tools"]) == 6 for b in bodies)
    assert all(b.get("stream", False) is stream for b in bodies)
    second = bodies[1]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool"]
    assert second[3]["tool_call_id"] == "call_read_file" and f"port = {port}" in second[3]["content"]
    third = bodies[2]["messages"]
    assert [(m.get("tool_call_id"), m["content"][:5]) for m in third[-2:]] == [
        ("c2", "wrote"), ("c3", "error")]

    lines = transcript_lines(outcome)
    assert lines[-1]["kind"] == "end" and lines[-1]["status"] == "completed"
    assert sum(1 for line in lines if line["kind"] == "reply") == 3


TEXT_REPLIES = {
    "invented_xml": '<think>\nLet me read the config.\n\n<read_file path="config/settings.ini" />',
    "hermes_json": '<tool_call>\n{"name": "write_file", "arguments": {"path": "answer.txt", '
                   '"content": "port is PORT"}}\n</tool_call>',
}


@pytest.mark.parametrize("kind", sorted(TEXT_REPLIES))
def test_text_calls_end_the_run_when_strict(
    kind: str, run_agent: RunAgent, fake: FakeEndpoint, task: Task, sandbox: Sandbox
) -> None:
    fake.enqueue(reply(False, TEXT_REPLIES[kind].replace("PORT", str(sandbox.variables["port"]))))
    outcome = run_agent()
    assert (outcome.status, outcome.stop_reason, outcome.turns) == ("completed", "no_tool_call", 1)
    assert not (sandbox.path / "answer.txt").exists()
    assert grade_sandbox(task, sandbox).verdict is Verdict.FAIL


def test_lenient_mode_executes_text_calls(
    run_agent: RunAgent, fake: FakeEndpoint, task: Task, sandbox: Sandbox
) -> None:
    port = sandbox.variables["port"]
    fake.enqueue(
        reply(False, TEXT_REPLIES["invented_xml"]),
        reply(False, TEXT_REPLIES["hermes_json"].replace("PORT", str(port))),
        reply(False, "Done."),
    )
    outcome = run_agent(lenient_text_calls=True)
    assert (outcome.status, outcome.stop_reason, outcome.turns) == ("completed", "no_tool_call", 3)
    assert grade_sandbox(task, sandbox).verdict is Verdict.PASS
    fed_back = fake.requests[1].body["messages"][-1]
    assert fed_back["role"] == "user" and "as text" in fed_back["content"]
    assert f"port = {port}" in fed_back["content"]
    assert [line["name"] for line in transcript_lines(outcome) if line["kind"] == "text_call"] == [
        "read_file", "write_file"]


def test_stops_at_max_turns(run_agent: RunAgent, fake: FakeEndpoint) -> None:
    fake.enqueue(*[reply(False, calls=(tool_call("list_dir", {}),)) for _ in range(5)])
    outcome = run_agent(max_turns=2)
    assert (outcome.status, outcome.stop_reason, outcome.turns) == ("completed", "max_turns", 2)
    assert len(fake.requests) == 2


@pytest.mark.parametrize("stream", [False, True])
def test_deadline_while_the_endpoint_is_slow(stream: bool, run_agent: RunAgent, fake: FakeEndpoint) -> None:
    # The first event comes after 5 s: headers arrive at once, the body is slow (streamed or not).
    fake.enqueue(ScriptedReply(events=chat_stream("late"), chunk_delay_s=5))
    started = time.monotonic()
    outcome = run_agent(timeout_s=0.8, stream=stream)
    assert time.monotonic() - started < 3
    assert outcome.status == "timeout" and "0.8s" in outcome.detail and outcome.turns == 1


def test_cancel_stops_a_waiting_request(run_agent: RunAgent, fake: FakeEndpoint) -> None:
    fake.enqueue(ScriptedReply(events=chat_stream("late"), chunk_delay_s=5))
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    started = time.monotonic()
    outcome = run_agent(cancel=cancel, stream=True)
    assert time.monotonic() - started < 3
    assert (outcome.status, outcome.turns) == ("cancelled", 1)


def test_cancel_before_start(run_agent: RunAgent, fake: FakeEndpoint) -> None:
    cancel = threading.Event()
    cancel.set()
    assert run_agent(cancel=cancel).status == "cancelled" and not fake.requests


def test_endpoint_down(run_agent: RunAgent) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed when the block ends: nothing listens there
    outcome = run_agent(base_url=f"http://127.0.0.1:{port}/v1")
    assert outcome.status == "endpoint_error" and "cannot reach the endpoint" in outcome.detail


BAD_REPLIES = {
    "http_500": (ScriptedReply(status=500, body={"error": {"message": "engine dead"}}),
                 "HTTP 500 from the endpoint (after 0 retries): engine dead"),
    "redirect": (ScriptedReply(status=307, body={"error": {"message": "moved"}}),
                 "HTTP 307 from the endpoint: moved"),  # followed by no one: the URL is wrong
    "garbage": (ScriptedReply(body="<html>oops</html>"), "reply is not JSON"),
    "not_a_completion": (ScriptedReply(body={"foo": 1}), "reply is not a chat completion"),
    "no_choices": (ScriptedReply(body={"object": "chat.completion", "choices": []}), "it has no choices"),
    "bad_message": (ScriptedReply(body={"choices": [{"message": {"content": 3}}]}),
                    "not a valid chat completion: message.content"),
    "context_length": (ScriptedReply(status=400, body={"error": {
        "message": "This model's maximum context length is 4096 tokens. You requested 9000 tokens."}}),
        "context length exceeded (HTTP 400)"),
    "stream_cut": (ScriptedReply(events=chat_stream("x" * 40), close_after_events=3),
                   "dropped the connection mid-reply"),
    "stream_garbage": (ScriptedReply(events=["not json"]), "broken reply"),
    "stream_unfinished": (ScriptedReply(events=chat_stream("hi")[:-3]), "without a finish_reason"),
}


@pytest.mark.parametrize("case", sorted(BAD_REPLIES))
def test_endpoint_errors(case: str, run_agent: RunAgent, fake: FakeEndpoint) -> None:
    scripted, expected = BAD_REPLIES[case]
    fake.enqueue(scripted)
    outcome = run_agent(stream=scripted.events is not None)
    assert outcome.status == "endpoint_error" and outcome.turns == 1
    assert expected in outcome.detail and "\n" not in outcome.detail


def test_5xx_is_retried_by_the_client(run_agent: RunAgent, fake: FakeEndpoint) -> None:
    fake.enqueue(ScriptedReply(status=503, body={"error": {"message": "warming up"}}), reply(False, "Hello."))
    outcome = run_agent(extra={"max_retries": 1})
    assert (outcome.status, outcome.turns, len(fake.requests)) == ("completed", 1, 2)


@pytest.mark.parametrize("tokens", [None, 1000, 9300])
def test_the_padded_prompt_reaches_the_endpoint(
    tokens: int | None, run_agent: RunAgent, fake: FakeEndpoint
) -> None:
    fake.enqueue(reply(False, "Nothing to do."))
    run_agent(system_prompt_tokens=tokens)
    system = fake.requests[0].body["messages"][0]
    assert system["role"] == "system" and system["content"].startswith(BASE_SYSTEM_PROMPT)
    expected = tokens * 4 if tokens else len(BASE_SYSTEM_PROMPT)
    assert abs(len(system["content"]) - expected) <= expected * 0.1


def test_options_reach_the_request(run_agent: RunAgent, fake: FakeEndpoint) -> None:
    fake.enqueue(reply(False, "Hi."))
    run_agent(extra={"max_retries": "0", "temperature": "0.2", "max_tokens": "256"})
    body = fake.requests[0].body
    assert (body["temperature"], body["max_tokens"], body["model"]) == (0.2, 256, "fake-model")
    assert fake.requests[0].headers["authorization"] == "Bearer test-key"


@pytest.mark.parametrize("tokens", [500, 800, 1500, 3000, 6000, 9300, 12000, 16000, 20000])
def test_padding_lands_within_ten_percent(tokens: int) -> None:
    prompt = pad_system_prompt(BASE_SYSTEM_PROMPT, tokens)
    assert abs(estimate_tokens(prompt) - tokens) <= tokens * 0.1
    assert prompt == pad_system_prompt(BASE_SYSTEM_PROMPT, tokens)  # deterministic
    assert prompt.count("\n# Tone and style\n") == 1  # up to 20,000 tokens nothing repeats
    assert prompt.count("```") % 2 == 0  # never cut inside a code block


def test_guidance_is_many_distinct_sections() -> None:
    titles = [title for title, _ in GUIDANCE_SECTIONS]
    assert len(titles) == len(set(titles)) >= 30
    assert guidance_tokens() + estimate_tokens(BASE_SYSTEM_PROMPT) > 20_000
    assert pad_system_prompt("x" * 4000, 500) == "x" * 4000  # never shortens the base


def test_prompt_prose_is_package_data() -> None:
    """The prose ships as Markdown inside the package (so in the wheel) and is read through importlib.resources,
    one `## Title` section of guidance.md per guidance section."""
    from importlib import resources

    folder = resources.files("agentic_eval.agents.builtin") / "prompt_text"
    base, guidance = (folder / "base.md").read_text("utf-8"), (folder / "guidance.md").read_text("utf-8")
    assert base == BASE_SYSTEM_PROMPT + "\n"
    headings = [line[3:] for line in guidance.split("\n") if line.startswith("## ")]
    assert headings == [title for title, _ in GUIDANCE_SECTIONS]
    for title, body in GUIDANCE_SECTIONS:
        assert f"## {title}\n\n{body.strip(chr(10))}\n" in guidance


def test_a_bug_of_ours_is_an_agent_error(run_agent: RunAgent, tmp_path: Path) -> None:
    (tmp_path / "trial").write_text("a file where the trial folder should be")
    outcome = run_agent()
    assert outcome.status == "agent_error" and "cannot start" in outcome.detail


def test_a_streamed_reply_cut_at_the_token_limit_is_a_turn_not_an_endpoint_error(
        run_agent: RunAgent, fake: FakeEndpoint) -> None:
    fake.enqueue(ScriptedReply(events=chat_stream("I will read the config and then", finish_reason="length")))
    outcome = run_agent(stream=True)
    assert (outcome.status, outcome.stop_reason) == ("completed", "no_tool_call")
