"""CLI agent adapters: the real CLIs against a scripted endpoint on 127.0.0.1, through the runner.

Tests marked `agent_cli` run each installed CLI (`agentic-eval agents install NAME`) on the mini
pack's answer-file task, with its traffic going through the wire recorder to a fake endpoint that
answers by policy (what the request holds, not the order it came in): one structured tool call
that writes the answer, then a final message. The same with an endpoint that only writes invented
XML: the trial fails and a text tool call is counted. Under CI (CI=true) a missing CLI is a
failure; locally it is a skip. The rest of the file needs no CLI.
"""

from __future__ import annotations

import json
import os
import random
import threading
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.cli import main
from agentic_eval.cli_agents import CLI_TOOLS, tools_dir
from agentic_eval.results import TrialResult, read_trials
from tests.fake_endpoint import (
    FakeEndpoint,
    ReceivedRequest,
    ScriptedReply,
    _Handler,
    chat_body,
    chat_stream,
    responses_stream,
    tool_call,
)

TOOLS_AT_IMPORT = tools_dir()
"""The tools folder of the real HOME: read before the autouse fixture swaps HOME for a temporary one."""
MODEL = "fake-model"
Policy = Callable[[ReceivedRequest], ScriptedReply]


# ---------------------------------------------------------------- a fake endpoint that answers by policy


class PolicyEndpoint(FakeEndpoint):
    """The scripted fake, answering each request with `policy(request)` instead of from a queue: CLIs
    send side requests (titles, retries) whose order is theirs to choose."""

    def __init__(self, policy: Policy) -> None:
        super().__init__(model=MODEL)
        self.policy = policy

    def start(self) -> None:
        fake = self

        class Handler(_Handler):
            endpoint = fake

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                received = ReceivedRequest(self.command, self.path, {k.lower(): v for k, v in self.headers.items()},
                                           self.rfile.read(length) if length else b"")
                with fake._lock:
                    fake.requests.append(received)
                if self.command == "GET" and self.path.rstrip("/").endswith("/models"):
                    self._send_whole(ScriptedReply(body={"object": "list", "data": [{"id": MODEL, "object": "model"}]}))
                    return
                reply = fake.policy(received)
                if reply.events is not None:
                    self._send_stream(reply, received)
                else:
                    self._send_whole(reply)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()


def _port(seed: int = 0) -> int:
    """The port the mini pack's `tiny` generator writes for this seed (what the grader expects)."""
    return random.Random(seed).randint(2000, 9000)


def _tool_names(body: dict[str, Any]) -> list[str]:
    names = []
    for tool in body.get("tools") or []:
        fn = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        if isinstance(fn, dict) and fn.get("name"):
            names.append(str(fn["name"]))
    return names


def _shell_call(names: list[str], command: str) -> tuple[str, dict[str, Any]]:
    """A call of the CLI's own shell tool that runs `command`."""
    if "bash" in names:
        return "bash", {"command": command, "description": "Write the answer file"}
    if "run_shell_command" in names:
        return "run_shell_command", {"command": command, "description": "Write the answer file"}
    if "exec_command" in names:
        return "exec_command", {"cmd": command}
    if "shell" in names:
        return "shell", {"command": ["bash", "-lc", command]}
    raise AssertionError(f"no shell tool among {names}")


def _chat_reply(body: dict[str, Any], **kw: Any) -> ScriptedReply:
    return ScriptedReply(events=chat_stream(**kw)) if body.get("stream") else ScriptedReply(body=chat_body(**kw))


def tool_call_policy(port: int) -> Policy:
    """Chat and Responses: one shell call writing the answer, then a final message (for mini-swe-agent,
    its submit command). A request without tools (a title, or aider) gets a whole-file edit block."""
    command = f"echo 'port is {port}' > answer.txt"

    def policy(req: ReceivedRequest) -> ScriptedReply:
        body = req.body or {}
        names = _tool_names(body)
        if req.path.rstrip("/").endswith("/responses"):
            done = any(isinstance(i, dict) and i.get("type") == "function_call_output" for i in body.get("input", []))
            events = responses_stream("Done.") if done else responses_stream(function_calls=[_shell_call(names, command)])
            return ScriptedReply(events=events, named_events=True)
        if not names:
            return _chat_reply(body, content=f"I will write it.\n\nanswer.txt\n```\nport is {port}\n```\n")
        results = sum(1 for m in body.get("messages", []) if m.get("role") == "tool")
        if results == 0:
            name, args = _shell_call(names, command)
            return _chat_reply(body, content="Writing the answer.", tool_calls=[tool_call(name, args, "call_1")])
        if names == ["bash"]:  # mini-swe-agent: it ends when the model submits
            submit = tool_call("bash", {"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}, f"call_{results + 1}")
            return _chat_reply(body, content="Submitting.", tool_calls=[submit])
        return _chat_reply(body, content="Done: answer.txt holds the port.")

    return policy


def invented_xml_policy(port: int) -> Policy:
    """Every turn is prose holding a tool call written as invented XML (named after an offered shell
    tool), the collapse the published campaign saw; without tools, a Hermes `<tool_call>` block."""

    def policy(req: ReceivedRequest) -> ScriptedReply:
        body = req.body or {}
        names = _tool_names(body)
        if names:
            name, args = _shell_call(names, f"echo 'port is {port}' > answer.txt")
            key, value = next((k, v) for k, v in args.items() if k in ("command", "cmd"))
            value = value[-1] if isinstance(value, list) else value
            text = f"I will write the file now.\n<{name}>\n<{key}>{value}</{key}>\n</{name}>"
        else:
            call = {"name": "write_file", "arguments": {"path": "answer.txt", "content": f"port is {port}"}}
            text = f"I will write the file now.\n<tool_call>\n{json.dumps(call)}\n</tool_call>"
        if req.path.rstrip("/").endswith("/responses"):
            return ScriptedReply(events=responses_stream(text), named_events=True)
        return _chat_reply(body, content=text)

    return policy


def no_responses_policy(req: ReceivedRequest) -> ScriptedReply:
    """A chat-only server: /v1/responses does not exist."""
    return ScriptedReply(status=404, body={"error": {"message": "Not Found", "type": "not_found"}})


# ---------------------------------------------------------------- running one trial through the CLI


@pytest.fixture(autouse=True)
def _classifier_entry() -> None:
    """turns.py asks the classifier for `classify_exchange`; until the two agree on a name, give it one."""
    from agentic_eval import classify

    if not hasattr(classify, "classify_exchange"):
        classify.classify_exchange = classify.classify_turn  # type: ignore[attr-defined]


@pytest.fixture
def pack(mini_pack: Path) -> Path:
    """The mini pack with a time limit that leaves room for a CLI's start-up on a slow machine."""
    toml = mini_pack / "answer-file" / "task.toml"
    toml.write_text(toml.read_text().replace("agent_timeout_s = 60", "agent_timeout_s = 240"))
    return mini_pack


def require_cli(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point the adapters at the real tools folder; skip (fail under CI) when the CLI is not installed."""
    monkeypatch.setenv("AGENTIC_EVAL_TOOLS", str(TOOLS_AT_IMPORT))
    tool = CLI_TOOLS[name]
    if tool.installed():
        return
    message = f"{name} CLI is not installed in {TOOLS_AT_IMPORT}; install it with: {tool.install_command}"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(message)
    pytest.skip(message)


def run_trial(agent: str, fake: FakeEndpoint, pack: Path, run_dir: Path, *extra: str) -> TrialResult:
    """`agentic-eval run --agent AGENT` on answer-file; returns the trial's record."""
    code = main(["run", "--agent", agent, "--model", MODEL, "--base-url", fake.base_url, "--api-key", "sk-test",
                 "--tasks", str(pack), "--task", "answer-file", "--run-dir", str(run_dir), "--json", *extra])
    assert code == 0
    (run,) = [p for p in run_dir.iterdir() if p.is_dir()]
    records, _ = read_trials(run)
    assert len(records) == 1
    return records[0]


def trial_dir(run_dir: Path, result: TrialResult) -> Path:
    return run_dir / result.run_id / "trials" / f"{result.task_id}.a{result.attempt}"


def wire_requests(run_dir: Path, result: TrialResult) -> list[dict[str, Any]]:
    """The model calls recorded on the wire."""
    lines = (trial_dir(run_dir, result) / "wire.jsonl").read_text().splitlines()
    records = [json.loads(ln) for ln in lines if ln.strip()]
    return [r for r in records if r["method"] == "POST" and r["path"].split("?")[0].endswith(("/completions", "/responses"))]


def describe(run_dir: Path, result: TrialResult) -> str:
    """What went over the wire, for the test log: request sizes and tools offered."""
    parts = []
    for rec in wire_requests(run_dir, result):
        body = rec["request"] if isinstance(rec["request"], dict) else {}
        parts.append(f"{rec['path']} {len(json.dumps(body))} B, tools {_tool_names(body)}, stream {body.get('stream')}")
    return "; ".join(parts)


CLI_NAMES = list(CLI_TOOLS)


# ---------------------------------------------------------------- the real CLIs


@pytest.mark.agent_cli
@pytest.mark.parametrize("agent", CLI_NAMES)
def test_cli_carries_out_a_structured_tool_call(agent: str, pack: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    require_cli(agent, monkeypatch)
    with PolicyEndpoint(tool_call_policy(_port())) as fake:
        result = run_trial(agent, fake, pack, tmp_path / "runs")
    print(f"{agent}: {result.outcome} in {result.agent_duration_s:.1f}s; {describe(tmp_path / 'runs', result)}")
    folder = trial_dir(tmp_path / "runs", result)
    assert result.outcome == "pass", (result.detail, (folder / "agent_stderr.txt").read_text()[-2000:])
    assert result.agent_status == "completed"
    assert (folder / "agent_version.txt").read_text().split()[-1] == CLI_TOOLS[agent].version
    assert "sk-test" not in (folder / "agent_command.txt").read_text()
    requests = wire_requests(tmp_path / "runs", result)
    assert requests and result.requests == len(requests)
    assert result.agent_turns == len(requests)
    if agent == "aider":
        assert result.stop_reason == "no_tool_calls_by_design"
        assert result.turns.prose >= 1 and result.turns.tool_call == 0
        assert "tools" not in requests[0]["request"]
    else:
        assert result.turns.tool_call >= 1 and result.turns.text_tool_call == 0
        assert _tool_names(requests[0]["request"]), "the CLI offered no tools"
    if agent == "codex":
        assert all(r["path"].endswith("/responses") for r in requests)
    else:
        assert all(r["path"].endswith("/chat/completions") for r in requests)
    assert all(r["stream"] == (agent != "mini-swe-agent") for r in requests)
    assert result.files.get("transcript")


@pytest.mark.agent_cli
@pytest.mark.parametrize("agent", CLI_NAMES)
def test_cli_trial_fails_on_invented_xml_and_counts_text_calls(agent: str, pack: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    require_cli(agent, monkeypatch)
    with PolicyEndpoint(invented_xml_policy(_port())) as fake:
        result = run_trial(agent, fake, pack, tmp_path / "runs")
    print(f"{agent}: {result.outcome} ({result.detail}); turns {result.turns}; families {result.text_call_families}")
    assert result.outcome == "fail", result.detail
    assert result.turns.text_tool_call >= 1 and result.turns.tool_call == 0
    assert result.text_call_families
    (run,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    assert main(["report", str(run), "--json"]) == 0


@pytest.mark.agent_cli
def test_codex_without_responses_api_is_an_agent_error(pack: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    require_cli("codex", monkeypatch)
    with PolicyEndpoint(no_responses_policy) as fake:
        result = run_trial("codex", fake, pack, tmp_path / "runs")
    assert result.outcome == "agent_error"
    assert "/v1/responses" in result.detail and "Responses API" in result.detail
