"""The parser each engine's docs recommend for a model family (agentic_eval.classify.documented), and what the
serving diagnosis makes of it (issue 38, parser_mismatch's second clause): text calls of a family the model's
documented parser does not read, beside structured ones, are a parser mismatch naming both parsers; the documented
parser comes first in the fix when it reads the calls; the structured calls' ids name the engine (vLLM's
`chatcmpl-tool-`) and Kimi-K2 (`functions.NAME:INDEX`). Pure functions, and two runs on the scripted endpoint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.classify.diagnosis import call_figures, diagnose
from agentic_eval.classify.documented import DOCUMENTED, call_id_style, documented_for
from agentic_eval.classify.parsers import PARSERS
from agentic_eval.classify.turn import classify_turn
from agentic_eval.results.records import TextCallFigures, TurnCounts
from agentic_eval.testing import FakeEndpoint, ReceivedRequest, ScriptedReply, tool_call
from tests.helpers import answer, make_pack, run_cli, tool_results

TOOLS = [{"type": "function", "function": {"name": "read_file", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}]


def hermes(name: str, arguments: dict[str, Any]) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


def test_every_documented_parser_is_one_we_read() -> None:
    for row in DOCUMENTED:
        assert row.parsers and all(key in PARSERS for key in row.parsers), row
        assert row.parsers[0].startswith(("vllm:", "sglang:")) and row.source


@pytest.mark.parametrize(("served", "first"), [
    ("Qwen/Qwen2.5-7B-Instruct", "vllm:hermes"),
    ("qwen2.5-coder:7b", "vllm:hermes"),  # an Ollama tag
    ("qwen2.5-coder-1.5b-instruct-q4_k_m", "vllm:hermes"),  # the packaged small model, behind llama.cpp
    ("Qwen/QwQ-32B", "vllm:hermes"),
    ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "vllm:qwen3_xml"),
    ("Qwen/Qwen3-8B", "vllm:hermes"),
    ("meta-llama/Llama-3.1-8B-Instruct", "vllm:llama3_json"),
    ("llama3.2:3b", "vllm:llama3_json"),
    ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "vllm:llama4_pythonic"),
    ("NousResearch/Hermes-3-Llama-3.1-8B", "vllm:hermes"),
    ("Salesforce/Llama-xLAM-2-8b-fc-r", "vllm:xlam"),
    ("mistralai/Mistral-7B-Instruct-v0.3", "vllm:mistral"),
    ("deepseek-ai/DeepSeek-V3-0324", "vllm:deepseek_v3"),
    ("deepseek-ai/DeepSeek-V3.1", "vllm:deepseek_v31"),
    ("moonshotai/Kimi-K2-Instruct", "vllm:kimi_k2"),
    ("zai-org/GLM-4.5-Air", "vllm:glm45"),
    ("openai/gpt-oss-20b", "vllm:openai"),
    ("ibm-granite/granite-3.1-8b-instruct", "vllm:granite"),
])
def test_a_served_name_finds_its_documented_parser(served: str, first: str) -> None:
    row = documented_for(served)
    assert row is not None and row.parsers[0] == first, row


def test_an_unknown_name_finds_none() -> None:
    assert documented_for("fake-model") is None and documented_for(None) is None and documented_for("") is None


def test_call_ids_name_the_engine() -> None:
    assert call_id_style("functions.read_file:0") == "kimi_k2"
    assert call_id_style("chatcmpl-tool-3f2a9c") == "vllm"
    assert [call_id_style(x) for x in ("call_abc", None, 7, "functions.read_file")] == ["other"] * 4


def test_the_documented_parser_comes_first_when_it_reads_the_calls() -> None:
    figures = TextCallFigures(calls=10, readers={"vllm:llama3_json": 10, "vllm:xlam": 10, "sglang:llama3": 10},
                              same_arguments={"vllm:llama3_json": 10, "vllm:xlam": 10})
    plain = diagnose(figures, TurnCounts(text_tool_call=10), {"json": 10})
    llama = diagnose(figures, TurnCounts(text_tool_call=10), {"json": 10}, model="meta-llama/Llama-3.1-8B-Instruct")
    assert plain is not None and plain.parser == "vllm:xlam" and not plain.documented  # xlam's family: json
    assert llama is not None and llama.kind == "server_config" and llama.parser == "vllm:llama3_json"
    assert "--tool-call-parser llama3_json" in llama.enable[0] and "--tool-call-parser llama3 " in llama.enable[1]
    assert llama.documented == ["vllm:llama3_json", "sglang:llama3"] and llama.documented_reads == 10
    assert "the parser documented for Llama 3.1 / 3.2 / 3.3" in llama.text
    assert any("documented parser for Llama 3.1 / 3.2 / 3.3 (vLLM docs, Tool Calling: Llama Models; SGLang docs, "
               "Tool Parser: llama3): vllm:llama3_json 10/10, sglang:llama3 10/10" in r for r in llama.rests_on)


def test_the_small_models_fenced_json_is_not_what_its_documented_parser_reads() -> None:
    """The packaged Qwen2.5-Coder writes fenced JSON (recorded): the docs' parser for Qwen2.5, hermes, reads none of
    it, so a server set up by the book returns it as text too; the fix names a parser that reads it."""
    text = '```json\n{\n  "name": "read_file",\n  "arguments": {\n    "path": "src/main.py"\n  }\n}\n```'
    reply = {"id": "r1", "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                      "finish_reason": "stop"}]}
    figures = call_figures([classify_turn({"tools": TOOLS}, reply)])
    found = diagnose(figures, TurnCounts(text_tool_call=1), {"json": 1}, model="qwen2.5-coder-1.5b-instruct-q4_k_m")
    assert found is not None and found.kind == "server_config" and found.parser != "vllm:hermes"
    assert found.documented == ["vllm:hermes", "sglang:qwen25"] and found.documented_reads == 0
    assert "not vllm:hermes, the parser documented for Qwen2.5 / QwQ, which reads 0/1" in found.text


def test_kimi_ids_imply_the_kimi_parser_without_a_model_name() -> None:
    structured = {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [
        tool_call("read_file", {"path": "a.py"}, "functions.read_file:0")]}}]}
    text = {"choices": [{"message": {"role": "assistant", "content": hermes("read_file", {"path": "b.py"})}}]}
    turns = [classify_turn({"tools": TOOLS}, structured), classify_turn({"tools": TOOLS}, text)]
    figures = call_figures(turns)
    assert figures.structured_ids == {"kimi_k2": 1}
    found = diagnose(figures, TurnCounts(tool_call=1, text_tool_call=1), {"hermes": 1}, model="served-model")
    assert found is not None and found.kind == "parser_mismatch" and found.documented[0] == "vllm:kimi_k2"
    assert "vllm:kimi_k2, the parser documented for Kimi-K2, reads 0/1" in found.text
    assert any("Kimi-K2's (functions.NAME:INDEX) 1 of 1" in r for r in found.rests_on)


# --------------------------------------------------------------- runs on the scripted endpoint


def _run(pack: Path, runs: Path, model: str, *extra: str) -> dict[str, Any]:
    with FakeEndpoint(model=model, responder=parsed_then_hermes) as fake:
        code, data = run_cli("run", "--model", model, "--base-url", fake.base_url, "--api-key", "sk-x", "--tasks",
                             str(pack), "--run-dir", str(runs), "--json", "--agent-opt", "max_retries=0", *extra)
    assert code == 0
    return data


def parsed_then_hermes(request: ReceivedRequest) -> ScriptedReply:
    """vLLM parsed the first call (its id says vLLM); the model writes the second as Hermes JSON in the text."""
    results = tool_results(request)
    if not results:
        return answer(tool_calls=[tool_call("read_file", {"path": "config/settings.ini"}, "chatcmpl-tool-9a1f")])
    if len(results) == 1:
        port = results[0].split("port = ")[1].split()[0]
        return answer(hermes("write_file", {"path": "answer.txt", "content": f"port is {port}"}))
    return answer("Done.")


def test_qwen3_coder_writing_hermes_beside_parsed_calls_is_a_mismatch_naming_both(mini_pack: Path,
                                                                                   tmp_path: Path) -> None:
    data = _run(make_pack(mini_pack, 1), tmp_path / "runs", "Qwen/Qwen3-Coder-30B-A3B-Instruct")
    found = data["diagnosis"]
    assert found["kind"] == "parser_mismatch", found
    assert found["documented"][0] == "vllm:qwen3_xml" and found["documented_reads"] == 0
    assert found["parser"] == "vllm:hermes"
    assert "vllm:qwen3_xml, the parser documented for Qwen3-Coder, reads 0/1" in found["text"]
    assert "a family other than its documented one" in found["text"]
    assert any("structured call ids: vLLM's (chatcmpl-tool-...) 1 of 1" in r for r in found["rests_on"])
    assert any("documented parser for Qwen3-Coder" in r and "vllm:qwen3_xml 0/1" in r for r in found["rests_on"])


def test_qwen25_text_its_documented_parser_reads_means_the_server_runs_another(mini_pack: Path,
                                                                               tmp_path: Path) -> None:
    data = _run(make_pack(mini_pack, 1), tmp_path / "runs", "Qwen/Qwen2.5-7B-Instruct")
    found = data["diagnosis"]
    assert found["kind"] == "parser_mismatch", found
    assert found["parser"] == "vllm:hermes" and found["documented_reads"] == 1
    assert "the server runs another parser, not the documented one" in found["text"]
    assert "--tool-call-parser hermes" in found["enable"][0]


def test_a_what_if_with_a_parser_that_reads_nothing_says_so(mini_pack: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The real small model under opencode wrote a reply `--emulate-parser xlam` does not read: the run was a plain
    one in all but name, and the report says so rather than let it pass for a what-if."""
    from agentic_eval.cli import main

    data = _run(make_pack(mini_pack, 1), tmp_path / "runs", "Qwen/Qwen2.5-7B-Instruct", "--emulate-parser", "pythonic")
    capsys.readouterr()
    assert main(["report", str(tmp_path / "runs" / data["run_id"]), "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert "vllm:pythonic reads 0 of its 1 text calls: the what-if tested nothing" in md
