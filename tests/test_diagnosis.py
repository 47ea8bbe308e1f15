"""The serving diagnosis (issue 38): whose fix it is that tool calls came back as text, and the what-if run.

Scripted endpoints on 127.0.0.1 play each kind of server and model through the real runner, built-in agent and
wire recorder: a server without a tool parser (the model writes Hermes calls as text: server config), a server
whose parser reads one format while the model also writes another (parser mismatch), a model that invents XML
or calls a tool nobody offered (the model). Then `--emulate-parser hermes` turns the first server's text calls
into structured ones on the wire, and the task passes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.classify.diagnosis import ShortPrompt, diagnose, resolve_parser
from agentic_eval.classify.turn import classify_turn
from agentic_eval.errors import AgenticEvalError
from agentic_eval.results.records import TextCallFigures, TurnCounts
from agentic_eval.testing import ReceivedRequest, ScriptedReply, tool_call
from agentic_eval.wire.recorder import read_wire_log
from tests.helpers import SEED_XML, answer, make_pack, run_cli, tool_results

FAST = ("--agent-opt", "max_retries=0")
TOOLS = [{"type": "function", "function": {"name": "read_file", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}]


def hermes(name: str, arguments: dict[str, Any]) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


def qwen3_coder(name: str, arguments: dict[str, Any]) -> str:
    params = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in arguments.items())
    return f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>"


def _steps(request: ReceivedRequest) -> tuple[int, str]:
    results = tool_results(request)
    if len(results) == 1:
        port = results[0].split("port = ")[1].split()[0]
        return 1, port
    return len(results), ""


def text_solver(request: ReceivedRequest) -> ScriptedReply:
    """The solver's calls, written as Hermes text in the content (a server with no tool parser)."""
    stream = bool(request.body.get("stream"))
    step, port = _steps(request)
    if step == 0:
        return answer("Let me read the config.\n" + hermes("read_file", {"path": "config/settings.ini"}), stream=stream)
    if step == 1:
        return answer(hermes("write_file", {"path": "answer.txt", "content": f"port is {port}\n"}), stream=stream)
    return answer("Done: answer.txt holds the port.", stream=stream)


def mismatched_solver(request: ReceivedRequest) -> ScriptedReply:
    """The server parses the first call (structured); the model writes the second in Qwen3-Coder XML, which the
    server's parser does not read."""
    step, port = _steps(request)
    if step == 0:
        return answer(tool_calls=[tool_call("read_file", {"path": "config/settings.ini"}, "c1")])
    if step == 1:
        return answer(qwen3_coder("write_file", {"path": "answer.txt", "content": f"port is {port}"}))
    return answer("Done.")


def _run(fake: Any, pack: Path, runs: Path, *extra: str) -> dict[str, Any]:
    code, data = run_cli("run", "--model", "fake-model", "--base-url", fake.base_url, "--api-key", "sk-x",
                         "--tasks", str(pack), "--run-dir", str(runs), "--json", *FAST, *extra)
    assert code == 0
    return data


def test_hermes_text_without_a_parser_is_server_config(scripted: Any, mini_pack: Path, tmp_path: Path) -> None:
    data = _run(scripted(text_solver), make_pack(mini_pack, 1), tmp_path / "runs")
    assert data["passed"] == 0 and data["text_tool_call_tasks"] == 1
    found = data["diagnosis"]
    assert found["kind"] == "server_config", found
    assert found["parser"] == "vllm:hermes" and found["reads"] == found["calls"] == 1
    assert any("--enable-auto-tool-choice --tool-call-parser hermes" in line for line in found["enable"])
    assert any(line.startswith("SGLang: ") for line in found["enable"])
    assert any(line.startswith("llama.cpp: ") and "--jinja" in line for line in found["enable"])
    assert any("read by vllm:hermes: 1/1" in figure for figure in found["rests_on"])
    (trial,) = data["trials"]
    assert trial["text_calls"]["readers"]["vllm:hermes"] == 1 and trial["emulate_parser"] is None
    run_dir = str(tmp_path / "runs" / data["run_id"])
    code, _ = run_cli("report", run_dir, "--html", str(tmp_path / "r.html"))
    page = (tmp_path / "r.html").read_text()
    assert code == 0 and "diagnosis: server config" in page and "[server_config: read by vllm:hermes" in page


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_emulated_hermes_parser_makes_the_text_calls_real(scripted: Any, mini_pack: Path, tmp_path: Path,
                                                          stream: bool, capsys: pytest.CaptureFixture[str]) -> None:
    fake = scripted(text_solver)
    data = _run(fake, make_pack(mini_pack, 1), tmp_path / "runs", "--emulate-parser", "hermes",
                *(["--stream"] if stream else []))
    assert data["passed"] == 1 and data["emulate_parser"] == "vllm:hermes"
    (trial,) = data["trials"]
    assert trial["emulate_parser"] == "vllm:hermes" and trial["outcome"] == "pass"
    assert data["diagnosis"]["kind"] == "server_config"  # the figures are the endpoint's replies, as they were
    wire = read_wire_log(tmp_path / "runs" / data["run_id"] / trial["files"]["wire"])
    model_calls = [r for r in wire if r.path == "/v1/chat/completions"]
    first = model_calls[0]
    assert first.stream is stream
    assert "<tool_call>" in first.response["choices"][0]["message"]["content"]  # the endpoint's reply, kept
    assert first.emulated is not None and first.emulated["parser"] == "vllm:hermes" and first.emulated["rewritten"]
    got = first.emulated["response"]["choices"][0]
    assert got["finish_reason"] == "tool_calls"
    assert got["message"]["content"].strip() == "Let me read the config."
    (call,) = got["message"]["tool_calls"]
    assert call["function"]["name"] == "read_file"
    assert json.loads(call["function"]["arguments"]) == {"path": "config/settings.ini"}
    assert model_calls[-1].emulated == {"parser": "vllm:hermes", "rewritten": False, "response": None}
    # the agent sent the structured call back: it was a real call to it
    second = [r for r in fake.requests if r.method == "POST"][1].body["messages"]
    assert any(m["role"] == "assistant" and m.get("tool_calls") for m in second)
    if stream:
        return
    # the report says it in words; the run records it, and resume keeps it (another parser is another run)
    from agentic_eval.cli import main

    capsys.readouterr()
    assert main(["report", str(tmp_path / "runs" / data["run_id"]), "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert "[parser emulated: hermes]" in md and "parser emulated: hermes: a what-if run" in md
    assert "vllm:hermes reads 2 of its 2 text calls" in md and "tested nothing" not in md
    assert "diagnosis: server config" in md and "--tool-call-parser hermes" in md
    config = json.loads((tmp_path / "runs" / data["run_id"] / "run.json").read_text())
    assert config["emulate_parser"] == "vllm:hermes"
    code, _ = run_cli("run", "--resume", str(tmp_path / "runs" / data["run_id"]), "--emulate-parser", "pythonic")
    assert code == 2 and "--emulate-parser" in capsys.readouterr().err


def test_a_parser_that_reads_another_format_is_a_mismatch(scripted: Any, mini_pack: Path, tmp_path: Path) -> None:
    data = _run(scripted(mismatched_solver), make_pack(mini_pack, 1), tmp_path / "runs")
    found = data["diagnosis"]
    assert found["kind"] == "parser_mismatch", found
    assert found["parser"] in ("vllm:qwen3_coder", "vllm:qwen3_xml")
    assert "qwen3_coder" in " ".join(found["enable"])
    (trial,) = data["trials"]
    assert trial["turns"]["tool_call"] == 1 and trial["turns"]["text_tool_call"] == 1


def test_invented_xml_is_the_model(scripted: Any, mini_pack: Path, tmp_path: Path) -> None:
    data = _run(scripted(lambda request: answer(SEED_XML)), make_pack(mini_pack, 1), tmp_path / "runs")
    found = data["diagnosis"]
    assert found["kind"] == "model", found
    assert "no server flag fixes this" in found["text"]
    assert any("no engine parser reads them" in figure for figure in found["rests_on"])


def test_a_call_to_a_tool_not_offered_is_the_model() -> None:
    reply = {"choices": [{"message": {"role": "assistant", "content": hermes("delete_repo", {"path": "."})}}]}
    turn = classify_turn({"tools": TOOLS}, reply)
    assert turn.diagnosis == "model" and "did not offer" in turn.diagnosis_note
    (call,) = turn.text_calls
    assert "vllm:hermes" in call.parsers and not call.offered


def test_arguments_against_the_schema_are_the_model() -> None:
    reply = {"choices": [{"message": {"role": "assistant", "content": hermes("read_file", {"file": "a.py"})}}]}
    turn = classify_turn({"tools": TOOLS}, reply)
    assert turn.diagnosis == "model" and "schema" in turn.diagnosis_note
    from agentic_eval.classify.diagnosis import call_figures

    figures = call_figures([turn])
    assert figures.bad_arguments == 1
    found = diagnose(figures, TurnCounts(text_tool_call=1), {"hermes": 1})
    assert found is not None and found.kind == "model" and "1 fail the schema" in found.text


def test_a_format_lost_under_the_agents_prompt_is_the_model() -> None:
    figures = TextCallFigures(calls=10, readers={"vllm:hermes": 10}, same_arguments={"vllm:hermes": 10})
    plain = diagnose(figures, TurnCounts(text_tool_call=10), {"hermes": 10})
    assert plain is not None and plain.kind == "server_config"
    lost = diagnose(figures, TurnCounts(text_tool_call=10), {"hermes": 10},
                    ShortPrompt(source="probe", tool_call=4, text_tool_call=0))
    assert lost is not None and lost.kind == "model"
    assert "no server flag fixes this" in lost.text and any("short prompt (probe)" in r for r in lost.rests_on)
    assert diagnose(TextCallFigures(), TurnCounts(tool_call=5)) is None


def test_classify_json_names_the_readers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agentic_eval.cli import main

    wire = tmp_path / "wire.jsonl"
    reply = {"choices": [{"message": {"role": "assistant", "content": hermes("read_file", {"path": "a.py"})}}]}
    wire.write_text(json.dumps({"request": {"tools": TOOLS}, "response": reply}) + "\n")
    assert main(["classify", str(wire), "--json"]) == 0
    line = json.loads(capsys.readouterr().out)
    (call,) = line["text_tool_calls"]
    assert (call["name"], call["arguments"], call["family"]) == ("read_file", {"path": "a.py"}, "hermes")
    assert "vllm:hermes" in call["parsers"] and "sglang:qwen25" in call["parsers"]
    assert line["diagnosis"] == "server_config"
    assert main(["classify", str(wire)]) == 0
    words = capsys.readouterr().out
    assert "read by vllm:hermes" in words and "diagnosis: server config" in words


def test_an_unknown_parser_name_is_one_line_naming_close_ones() -> None:
    assert resolve_parser("hermes") == "vllm:hermes"
    assert resolve_parser("sglang:qwen25") == "sglang:qwen25"
    with pytest.raises(AgenticEvalError, match=r"did you mean .*hermes") as caught:
        resolve_parser("hermez")
    assert "\n" not in str(caught.value)
    code, _ = run_cli("run", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--emulate-parser", "hermez")
    assert code != 0


def test_a_campaign_runs_the_what_if_beside_the_plain_run_and_cites_both(mini_pack: Path, tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from agentic_eval.cli import main
    from agentic_eval.testing import FakeEndpoint

    pack = make_pack(mini_pack, 1)
    file = tmp_path / "c.toml"
    with FakeEndpoint(model="text-model", responder=text_solver) as fake:
        file.write_text(f'packs = ["{pack}"]\nagents = ["builtin"]\ninstruments = []\nemulate_parser = "hermes"\n'
                        f'[agent_options.builtin]\nmax_retries = 0\n'
                        f'[[models]]\nname = "text-model"\nbase_url = "{fake.base_url}"\n')
        assert main(["campaign", str(file), "--run-dir", str(tmp_path / "runs"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    rows = {r["emulate_parser"]: r for r in report["rows"]}
    assert (rows[None]["tasks_passed"], rows[None]["text_tool_call_tasks"]) == (0, 1)
    assert rows["vllm:hermes"]["tasks_passed"] == 1
    verdict = report["verdicts"]["text-model"]
    assert "with parser emulated: hermes, 1/1 tasks passed under builtin (plain: 0/1)" in verdict["text"]
    assert "serving diagnosis: server config" in verdict["text"]
    assert "agentic tasks passed with the parser emulated" in verdict["rests_on"]
    assert report["diagnoses"]["text-model"]["kind"] == "server_config"
    assert report["pick"].endswith("no pick.")  # a what-if row (1/1) is never the pick
    file.write_text(file.read_text().replace('"hermes"', '"hermez"'))
    assert main(["campaign", str(file), "--run-dir", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "emulate_parser" in err and "hermes" in err


@pytest.mark.agent_cli
def test_opencode_gets_the_emulated_calls_and_passes(mini_pack: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The what-if run under a real CLI: opencode (streaming) against a server that returns its shell call as
    Hermes text; with `--emulate-parser hermes` the call reaches opencode structured, it runs it, the task
    passes; the wire log keeps the endpoint's text beside the rewritten stream."""
    from tests.helpers import PolicyEndpoint, chat_reply, require_cli, run_trial, shell_call, tiny_port, tool_names

    require_cli("opencode", monkeypatch)
    toml = mini_pack / "answer-file" / "task.toml"
    toml.write_text(toml.read_text().replace("agent_timeout_s = 60", "agent_timeout_s = 240"))
    command = f"echo 'port is {tiny_port()}' > answer.txt"

    def policy(req: ReceivedRequest) -> ScriptedReply:
        body = req.body or {}
        names = tool_names(body)
        if not names:
            return chat_reply(body, content="Answer file")  # a title request
        if any(m.get("role") == "tool" for m in body.get("messages", [])):
            return chat_reply(body, content="Done: answer.txt holds the port.")
        name, args = shell_call(names, command)
        return chat_reply(body, content="Writing the answer.\n" + hermes(name, args))

    with PolicyEndpoint(policy) as fake:
        result = run_trial("opencode", fake, mini_pack, tmp_path / "runs", "--emulate-parser", "hermes")
    assert result.outcome == "pass", result.detail
    assert result.emulate_parser == "vllm:hermes" and result.turns.text_tool_call >= 1
    wire = read_wire_log(tmp_path / "runs" / result.run_id / result.files["wire"])
    rewritten = [r for r in wire if r.emulated and r.emulated["rewritten"]]
    assert rewritten and all(r.stream for r in rewritten)
    assert "<tool_call>" in rewritten[0].response["choices"][0]["message"]["content"]
    assert rewritten[0].emulated["response"]["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "bash"


REAL_REPLY = '```json\n{\n  "name": "read_file",\n  "arguments": {\n    "path": "src/main.py"\n  }\n}\n```'
"""What the packaged Qwen2.5-Coder-1.5B answered behind llama.cpp (no --jinja parsing) to `probe`'s request,
recorded verbatim: its call as fenced JSON in the content."""


def test_the_small_models_recorded_reply_is_read_and_rewritten() -> None:
    from agentic_eval.classify.emulation import rewrite_reply

    request = {"tools": TOOLS}
    reply = {"id": "r1", "choices": [{"index": 0, "message": {"role": "assistant", "content": REAL_REPLY},
                                      "finish_reason": "stop"}]}
    turn = classify_turn(request, reply)
    (call,) = turn.text_calls
    assert (turn.family, call.name, call.arguments) == ("json", "read_file", {"path": "src/main.py"})
    assert "vllm:llama3_json" in call.parsers and turn.diagnosis == "server_config"
    rewritten = rewrite_reply("vllm:llama3_json", request, reply)
    assert rewritten is not None and rewritten["choices"][0]["finish_reason"] == "tool_calls"
    (structured,) = rewritten["choices"][0]["message"]["tool_calls"]
    assert json.loads(structured["function"]["arguments"]) == {"path": "src/main.py"}
    assert rewrite_reply("vllm:hermes", request, reply) is None  # hermes reads no fenced JSON: left as it was
    assert rewrite_reply("vllm:llama3_json", {}, reply) is None  # no tools offered: no engine parses calls
    assert rewrite_reply("vllm:llama3_json", {"tools": TOOLS, "tool_choice": "none"}, reply) is None


def test_a_translated_messages_exchange_is_emulated_too(tmp_path: Path) -> None:
    """claude-code's Messages API translated to chat completions: the endpoint's chat reply is rewritten before
    translation, so the agent gets a tool_use block; the classifier still reads the endpoint's text."""
    import httpx

    from agentic_eval.classify.emulation import parser_rewriter
    from agentic_eval.classify.summary import summarize_wire_log
    from agentic_eval.testing import FakeEndpoint, chat_body
    from agentic_eval.wire.recorder import WireRecorder

    body = {"model": "fake-model", "max_tokens": 64, "messages": [{"role": "user", "content": "show a.py"}],
            "tools": [{"name": "read_file", "input_schema": TOOLS[0]["function"]["parameters"]}]}
    with FakeEndpoint([ScriptedReply(body=chat_body(hermes("read_file", {"path": "a.py"})))]) as fake, \
            WireRecorder(fake.base_url, tmp_path / "wire.jsonl", translate_messages=True,
                         emulate=parser_rewriter("vllm:hermes")) as recorder:
        reply = httpx.post(recorder.base_url + "/messages", json=body, timeout=30).json()
    assert [b["type"] for b in reply["content"]] == ["tool_use"] and reply["content"][0]["input"] == {"path": "a.py"}
    (record,) = read_wire_log(tmp_path / "wire.jsonl")
    assert record.emulated is not None and record.emulated["rewritten"]
    summary = summarize_wire_log(tmp_path / "wire.jsonl")
    assert summary.turns.text_tool_call == 1 and summary.text_calls.readers["vllm:hermes"] == 1


def test_a_slow_emulated_stream_is_kept_alive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While the recorder reads a stream whole, the agent gets SSE comments (a CLI whose stream times out on
    silence keeps waiting), then the rewritten stream."""
    import httpx

    from agentic_eval.classify.emulation import parser_rewriter
    from agentic_eval.testing import FakeEndpoint, chat_stream
    from agentic_eval.wire import recorder as recorder_module
    from agentic_eval.wire.recorder import WireRecorder

    monkeypatch.setattr(recorder_module, "KEEPALIVE_S", 0.1)
    events = chat_stream(hermes("read_file", {"path": "a.py"}))
    body = {"model": "fake-model", "stream": True, "tools": TOOLS, "messages": [{"role": "user", "content": "a.py?"}]}
    with FakeEndpoint([ScriptedReply(events=events, chunk_delay_s=[0.5] + [0.0] * (len(events) - 1))]) as fake, \
            WireRecorder(fake.base_url, tmp_path / "wire.jsonl", emulate=parser_rewriter("vllm:hermes")) as recorder:
        text = httpx.post(recorder.base_url + "/chat/completions", json=body, timeout=30).text
    assert text.startswith(": agentic-eval") and '"tool_calls"' in text and text.endswith("data: [DONE]\n\n")
    (record,) = read_wire_log(tmp_path / "wire.jsonl")
    assert record.stream and record.emulated is not None and record.emulated["rewritten"]
    assert not any("agentic-eval" in event for event in record.events)  # the endpoint's events, as they were
