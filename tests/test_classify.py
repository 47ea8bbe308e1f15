"""The turn classifier: one case per family, truncations, think tags, false-positive traps,
structured calls, Responses API bodies, and the `classify` command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.classify.turn import (
    FAMILIES,
    NotAModelTurn,
    classify_turn,
    find_text_tool_calls,
    is_model_turn,
    offered_tools,
)
from agentic_eval.cli import main

DATA = Path(__file__).parent / "data"


def _tool(name: str, properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema = {"type": "object", "properties": properties, "required": required or list(properties)}
    return {"type": "function", "function": {"name": name, "description": name, "parameters": schema}}


STRING = {"type": "string"}
TOOLS = [
    _tool("read", {"filePath": STRING}),
    _tool("grep", {"pattern": STRING}),
    _tool("bash", {"command": STRING}),
    _tool("write_file", {"path": STRING, "content": STRING}),
    _tool("list_mailboxes", {}),
    _tool("add", {"a": {"type": "number"}, "b": {"type": "number"}}),
]
REQUEST = {"model": "m", "messages": [{"role": "user", "content": "fix the bug"}], "tools": TOOLS}
RESPONSES_REQUEST = {
    "model": "m",
    "input": "fix the bug",
    "tools": [{"type": "function", **tool["function"]} for tool in TOOLS],
}


def chat(content: str | None, *, reasoning: str | None = None, tool_calls: list[Any] | None = None,
         finish_reason: str = "stop") -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return {"object": "chat.completion", "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}]}


def call(name: str, arguments: str) -> dict[str, Any]:
    return {"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}


SEED_INVENTED_XML = (
    'Let me read the relevant files...\n<think>\n<read filePath=".../config/settings.json" />\ngrep\n<think>\n'
    "<Grep>\n  <pattern>LEGACY_RATE_TOKEN\\s*=</pattern>\n</Grep>"
)
READ_JSON = '{"name": "read", "arguments": {"filePath": "/x"}}'

# (case id, content, family, tool names, flags)
TEXT_CALLS = [
    ("hermes", f"<tool_call>\n{READ_JSON}\n</tool_call>", "hermes", ["read"], []),
    ("hermes_after_preamble", f"I'll look at it.\n\n<tool_call>\n{READ_JSON}\n</tool_call>", "hermes", ["read"], []),
    ("hermes_two_calls", (f"<tool_call>\n{READ_JSON}\n</tool_call>\n<tool_call>\n"
     '{"name": "grep", "arguments": {"pattern": "x"}}\n</tool_call>'), "hermes", ["read", "grep"], []),
    ("qwen3_xml", "<tool_call>\n<function=read>\n<parameter=filePath>\n/x\n</parameter>\n</function>\n</tool_call>",
     "qwen3_xml", ["read"], []),
    ("qwen3_xml_opener_dropped", ("I'll read the file first.\n<function=read>\n<parameter=filePath>\n/x\n"
     "</parameter>\n</function>\n</tool_call>"), "qwen3_xml", ["read"], []),
    ("seed_oss", ("<seed:tool_call>\n<function=read>\n<parameter=filePath>/x</parameter>\n</function>\n"
     "</seed:tool_call>"), "seed_oss", ["read"], []),
    ("glm", "<tool_call>grep\n<arg_key>pattern</arg_key>\n<arg_value>TODO</arg_value>\n</tool_call>", "glm",
     ["grep"], []),
    ("glm_no_arguments", "<tool_call>list_mailboxes</tool_call>", "glm", ["list_mailboxes"], []),
    ("minimax", ('<minimax:tool_call>\n<invoke name="read">\n<parameter name="filePath">/x</parameter>\n</invoke>\n'
     "</minimax:tool_call>"), "minimax", ["read"], []),
    ("anthropic_xml", ('<function_calls>\n<invoke name="grep">\n<parameter name="pattern">x</parameter>\n</invoke>\n'
     "</function_calls>"), "anthropic_xml", ["grep"], []),
    ("minicpm", '<function name="read"><param name="filePath">/x</param></function>', "minicpm", ["read"], []),
    ("functionary_v31", '<function=read>{"filePath": "/x"}</function>', "functionary", ["read"], []),
    ("functionary_v32", '>>>read\n{"filePath": "/x"}', "functionary", ["read"], []),
    ("invented_xml_seed", SEED_INVENTED_XML, "invented_xml", ["read", "grep"], ["unterminated_think"]),
    ("invented_xml_body", "<bash>ls -la</bash>", "invented_xml", ["bash"], []),
    ("invented_xml_children", "<write_file>\n<path>a.py</path>\n<content>print(1)</content>\n</write_file>",
     "invented_xml", ["write_file"], []),
    ("deepseek_v3", ('<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read\n'
                     '```json\n{"filePath": "/x"}\n'
     "```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"), "deepseek", ["read"], []),
    ("deepseek_v31", ('<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read<｜tool▁sep｜>{"filePath": "/x"}'
                      '<｜tool▁call▁end｜>'
     "<｜tool▁calls▁end｜>"), "deepseek", ["read"], []),
    ("deepseek_underscores", ('<｜tool_calls_begin｜><｜tool_call_begin｜>read<｜tool_sep｜>{"filePath": "/x"}'
     "<｜tool_call_end｜><｜tool_calls_end｜>"), "deepseek", ["read"], []),
    ("kimi", ('<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>'
     '{"filePath": "/x"}<|tool_call_end|><|tool_calls_section_end|>'), "kimi", ["read"], []),
    ("harmony", ('<|start|>assistant<|channel|>commentary to=functions.grep <|constrain|>json<|message|>'
     '{"pattern": "x"}<|call|>'), "harmony", ["grep"], []),
    ("harmony_tokens_stripped", 'analysisNeed to search.commentary to=functions.grep json{"pattern": "x"}',
     "harmony", ["grep"], []),
    ("mistral_list", f"[TOOL_CALLS][{READ_JSON}]", "mistral", ["read"], []),
    ("mistral_name_then_json", '[TOOL_CALLS]read{"filePath": "/x"}', "mistral", ["read"], []),
    ("mistral_args_marker", '[TOOL_CALLS]read[ARGS]{"filePath": "/x"}', "mistral", ["read"], []),
    ("llama_json_bare", '{"name": "read", "parameters": {"filePath": "/x"}}', "llama_json", ["read"], []),
    ("llama_json_python_tag", '<|python_tag|>{"name": "read", "parameters": {"filePath": "/x"}}', "llama_json",
     ["read"], []),
    ("llama_builtin", '<|python_tag|>brave_search.call(query="vllm")', "pythonic", ["brave_search"], ["unknown_tool"]),
    ("pythonic_list", "[read(filePath='/x'), grep(pattern='y')]", "pythonic", ["read", "grep"], []),
    ("pythonic_llama4", "<|python_start|>[read(filePath='/x')]<|python_end|>", "pythonic", ["read"], []),
    ("pythonic_gemma_tool_code", "```tool_code\nprint(default_api.read(filePath='/x'))\n```", "pythonic", ["read"], []),
    ("json_fenced", f"Here is the call:\n```json\n{READ_JSON}\n```", "json", ["read"], []),
    ("granite", f"<|tool_call|>[{READ_JSON}]", "granite", ["read"], []),
    ("granite_fc", f"<function_call> {READ_JSON}", "granite_fc", ["read"], []),
    ("internlm", '<|action_start|><|plugin|>\n{"name": "read", "parameters": {"filePath": "/x"}}<|action_end|>',
     "internlm", ["read"], []),
    ("jamba", f"<tool_calls>[{READ_JSON}]</tool_calls>", "jamba", ["read"], []),
    ("nemotron", f"<TOOLCALL>[{READ_JSON}]</TOOLCALL>", "nemotron", ["read"], []),
    ("lfm2", "<|tool_call_start|>[read(filePath='/x')]<|tool_call_end|>", "lfm2", ["read"], []),
    ("command_r", '<|START_ACTION|>[{"tool_name": "read", "parameters": {"filePath": "/x"}}]<|END_ACTION|>',
     "command_r", ["read"], []),
    ("phi4_mini", f"functools[{READ_JSON}]", "phi4_mini", ["read"], []),
    ("function_gemma", "<start_function_call>call:read{filePath:<escape>/x<escape>}<end_function_call>",
     "function_gemma", ["read"], []),
    # Cut short, or half missing.
    ("hermes_truncated", '<tool_call>\n{"name": "read", "arguments": {"filePath": "/x', "hermes", ["read"],
     ["truncated"]),
    ("hermes_no_close_tag", f"<tool_call>\n{READ_JSON}", "hermes", ["read"], ["truncated"]),
    ("qwen3_xml_truncated", "<tool_call>\n<function=read>\n<parameter=filePath>\n/x", "qwen3_xml", ["read"],
     ["truncated"]),
    ("minimax_truncated", '<minimax:tool_call><invoke name="read"><parameter name="filePath">/x', "minimax", ["read"],
     ["truncated"]),
    ("marker_cut_at_end", "Let me check the config.\n<tool_ca", "hermes", [], ["truncated"]),
    ("marker_alone_at_end", "Let me check the config.\n<tool_call>", "hermes", [], ["truncated"]),
    ("orphan_close_tag", "Reading it now.\n</tool_call>", "hermes", [], []),
    ("pythonic_truncated", "[read(filePath='/x", "pythonic", ["read"], ["truncated"]),
    ("bare_json_truncated", '{"name": "read", "arguments": {"filePath": "/x', "llama_json", ["read"], ["truncated"]),
    # Qwen2.5-Coder-1.5B behind llama.cpp wrote its call with a template's escaped braces (seen in a real run)
    ("json_template_escaped", '{{"name": "write_file", "arguments": {"path": "a.json", "content": "x"}}}}',
     "llama_json", ["write_file"], []),
    ("json_template_escaped_no_args", '{{"name": "list_mailboxes", "arguments": {}}}', "llama_json",
     ["list_mailboxes"], []),
    ("invented_xml_unclosed", "<bash>\n<command>ls", "invented_xml", ["bash"], ["truncated"]),
    ("hermes_unknown_tool", '<tool_call>\n{"name": "deploy", "arguments": {}}\n</tool_call>', "hermes", ["deploy"],
     ["unknown_tool"]),
    # A reply that is only a JSON call names an invented tool: a call all the same.
    ("bare_json_whole_reply_unknown_tool", '{"name": "deploy", "arguments": {"env": "prod"}}\n', "llama_json",
     ["deploy"], ["unknown_tool"]),
    ("json_fence_whole_reply_unknown_tool", '```json\n{"name": "deploy", "parameters": {"env": "prod"}}\n```',
     "json", ["deploy"], ["unknown_tool"]),
    ("json_whole_reply_after_think", '<think>Deploy it.</think>\n\n{"type": "function", "name": "deploy", '
     '"arguments": "{}"}', "llama_json", ["deploy"], ["unknown_tool"]),
    ("json_list_whole_reply_one_unknown", f'[{{"name": "deploy", "arguments": {{}}}}, {READ_JSON}]', "llama_json",
     ["deploy", "read"], ["unknown_tool"]),
]


@pytest.mark.parametrize(("content", "family", "names", "flags"), [case[1:] for case in TEXT_CALLS],
                         ids=[case[0] for case in TEXT_CALLS])
def test_text_tool_calls(content: str, family: str, names: list[str], flags: list[str]) -> None:
    result = classify_turn(REQUEST, chat(content))
    assert (result.label, result.family, result.tool_names, result.flags) == ("text_tool_call", family, names, flags)


def test_every_family_has_a_case() -> None:
    assert set(FAMILIES) <= {case[2] for case in TEXT_CALLS}


def test_seed_invented_xml_arguments_are_read() -> None:
    calls = classify_turn(REQUEST, chat(SEED_INVENTED_XML)).text_calls
    assert [(c.name, c.arguments) for c in calls] == [
        ("read", {"filePath": ".../config/settings.json"}),
        ("grep", {"pattern": "LEGACY_RATE_TOKEN\\s*="}),
    ]


@pytest.mark.parametrize(
    ("content", "arguments"),
    [
        (("<tool_call>\n<function=add>\n<parameter=a>\n3.5\n</parameter>\n<parameter=b>\n2\n</parameter>\n</function>\n"
         "</tool_call>"), {"a": 3.5, "b": 2}),
        ("<tool_call>add\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>", {"a": 1}),
        ("<bash>ls -la</bash>", {"command": "ls -la"}),
        ("[add(1, b=2)]", {"a": 1, "b": 2}),
        ('[TOOL_CALLS]add{"a": 3.5, "b": 1}', {"a": 3.5, "b": 1}),
    ],
)
def test_text_call_arguments_are_typed_by_the_schema(content: str, arguments: dict[str, Any]) -> None:
    assert [call.arguments for call in find_text_tool_calls(content, REQUEST)] == [arguments]


# (case id, content, label) -- text that must not be taken for a tool call
NOT_CALLS = [
    ("tag_in_backticks", "Wrap each call in `<tool_call>` tags, e.g. `<tool_call>{\"name\": \"read\"}</tool_call>`.",
     "prose"),
    ("explains_the_format", "Hermes-style models wrap calls in <tool_call> tags, and the server parses them.", "prose"),
    ("format_in_a_fence_unoffered_name", ("The format is:\n```\n<tool_call>\n"
     '{"name": "function_name", "arguments": {"arg": "value"}}\n</tool_call>\n```'), "prose"),
    ("json_block_naming_no_tool", '```json\n{"name": "my-package", "version": "1.0.0"}\n```', "prose"),
    ("bare_json_unoffered", 'Call it as {"name": "deploy", "arguments": {}} later.', "prose"),
    ("json_fence_unoffered_after_prose", 'An example request:\n```json\n{"name": "deploy", "arguments": {}}\n```',
     "prose"),
    ("whole_reply_function_definition", ('{"name": "deploy", "parameters": {"type": "object", "properties": '
     '{"env": {"type": "string"}}}}'), "prose"),
    ("whole_reply_config_with_other_keys", '{"name": "my-app", "version": "1.0", "arguments": {}}', "prose"),
    ("whole_reply_python_fence", '```python\n{"name": "deploy", "arguments": {}}\n```', "prose"),
    ("json_dict_in_prose", 'Set the config to {"timeout": 30} and restart.', "prose"),
    ("python_in_prose", "Count them with `print(len(x))`, or:\n```python\nprint(len(x))\n```", "prose"),
    ("python_call_of_a_tool_name_in_prose", "Then read(path) returns the bytes.", "prose"),
    ("markdown", "# Summary\n\n- **read** the file\n- [x] done\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n> note", "prose"),
    ("html_in_prose", "Use <b>bold</b> and <br/> sparingly.", "prose"),
    ("tool_word_in_angle_brackets", "First <read> the docs, then decide.", "prose"),
    ("word_naming_a_tool", "I will read the file and grep for the token.", "prose"),
    ("closed_think_then_answer", "<think>\nThe user wants a fix.\n</think>\n\nThe fix is in config.py.", "prose"),
    ("empty_string", "", "empty"),
    ("whitespace_only", "\n\n", "empty"),
]


@pytest.mark.parametrize(("content", "label"), [case[1:] for case in NOT_CALLS], ids=[case[0] for case in NOT_CALLS])
def test_false_positive_traps(content: str, label: str) -> None:
    result = classify_turn(REQUEST, chat(content))
    assert (result.label, result.family, result.flags) == (label, None, [])


@pytest.mark.parametrize(
    ("response", "label", "flags"),
    [
        (chat("<think>\nI need to look at the config first"), "empty", ["unterminated_think", "reasoning_only"]),
        (chat("The user wants X.</think>\n\nDone: the answer is 4."), "prose", ["unterminated_think"]),
        (chat("<think>\n\n</think>", tool_calls=[call("read", '{"filePath": "/x"}')]), "tool_call", []),
        (chat("", reasoning="Let me think about which file to open."), "empty", ["reasoning_only"]),
        (chat(None, reasoning=f"I'll call it: <tool_call>\n{READ_JSON}\n</tool_call>"), "text_tool_call",
         ["reasoning_only", "call_in_reasoning"]),
        (chat("I will read it.", reasoning=f"<tool_call>\n{READ_JSON}\n</tool_call>"), "text_tool_call",
         ["call_in_reasoning"]),
        (chat("The answer is", finish_reason="length"), "prose", ["truncated"]),
    ],
    ids=["unterminated_think_only", "lone_close_think", "empty_think_beside_call", "reasoning_only",
         "call_only_in_reasoning", "call_in_reasoning_beside_prose", "length_limit"],
)
def test_think_reasoning_and_limits(response: dict[str, Any], label: str, flags: list[str]) -> None:
    result = classify_turn(REQUEST, response)
    assert (result.label, result.flags) == (label, flags)


@pytest.mark.parametrize(
    ("tool_calls", "finish_reason", "flags"),
    [
        ([call("read", '{"filePath": "/x"}')], "tool_calls", []),
        ([call("read", '{"filePath": "/x"}')], "stop", []),
        ([call("read", '{"filePath": "/x"}'), call("grep", '{"pattern": "y"}')], "tool_calls", []),
        ([call("deploy", "{}")], "tool_calls", ["unknown_tool"]),
        ([call("read", '{"filePath": "/x"')], "tool_calls", ["bad_arguments"]),
        ([call("read", "")], "tool_calls", ["bad_arguments"]),
        ([call("read", '["/x"]')], "tool_calls", ["bad_arguments"]),
        ([call("read", '{"path": "/x"}')], "tool_calls", ["bad_arguments"]),
        ([call("add", '{"a": "three", "b": 1}')], "tool_calls", ["bad_arguments"]),
    ],
    ids=["good", "finish_reason_stop", "parallel", "unknown_tool", "bad_json", "empty_string_arguments",
         "not_an_object", "missing_required", "wrong_type"],
)
def test_structured_calls(tool_calls: list[Any], finish_reason: str, flags: list[str]) -> None:
    result = classify_turn(REQUEST, chat("\n\n", tool_calls=tool_calls, finish_reason=finish_reason))
    assert (result.label, result.flags) == ("tool_call", flags)
    assert result.tool_names == [c["function"]["name"] for c in tool_calls]


def test_finish_reason_tool_calls_with_no_calls_is_not_a_call() -> None:
    assert classify_turn(REQUEST, chat("", tool_calls=[], finish_reason="tool_calls")).label == "empty"


def test_unknown_request_skips_name_and_schema_checks() -> None:
    result = classify_turn(None, chat(None, tool_calls=[call("deploy", "not json")]))
    assert (result.label, result.flags) == ("tool_call", [])


def _response(*items: dict[str, Any], status: str = "completed", **extra: Any) -> dict[str, Any]:
    return {"object": "response", "status": status, "output": list(items), **extra}


def _message(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}


REASONING_ITEM = {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "Need the file."}]}


@pytest.mark.parametrize(
    ("response", "label", "family", "flags"),
    [
        (_response(REASONING_ITEM, {"type": "function_call", "call_id": "c1", "name": "read",
                                    "arguments": '{"filePath": "/x"}'}), "tool_call", None, []),
        (_response({"type": "function_call", "name": "deploy", "arguments": "{}"}), "tool_call", None,
         ["unknown_tool"]),
        (_response({"type": "function_call", "name": "grep", "arguments": "{}"}), "tool_call", None, ["bad_arguments"]),
        (_response(_message(f"<tool_call>\n{READ_JSON}\n</tool_call>")), "text_tool_call", "hermes", []),
        (_response(_message("The bug is in config.py.")), "prose", None, []),
        (_response(REASONING_ITEM), "empty", None, ["reasoning_only"]),
        (_response(_message("Partial"), status="incomplete", incomplete_details={"reason": "max_output_tokens"}),
         "prose", None, ["truncated"]),
    ],
    ids=["function_call", "unknown_tool", "schema_violation", "hermes_in_output_text", "prose", "reasoning_only",
         "incomplete"],
)
def test_responses_api_bodies(response: dict[str, Any], label: str, family: str | None, flags: list[str]) -> None:
    result = classify_turn(RESPONSES_REQUEST, response)
    assert (result.label, result.family, result.flags) == (label, family, flags)


def test_custom_tool_takes_free_text() -> None:
    request = {"tools": [{"type": "custom", "name": "apply_patch"}]}
    response = _response({"type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin Patch"})
    assert classify_turn(request, response).flags == []


def test_offered_tools_reads_every_shape() -> None:
    legacy = {"functions": [{"name": "old", "parameters": {"type": "object"}}]}
    assert set(offered_tools(REQUEST).schemas) == set(offered_tools(RESPONSES_REQUEST).schemas)
    assert set(offered_tools(legacy).schemas) == {"old"}


def test_not_a_model_turn() -> None:
    models = {"object": "list", "data": [{"id": "m"}]}
    assert not is_model_turn(models) and not is_model_turn(None)
    with pytest.raises(NotAModelTurn):
        classify_turn(REQUEST, models)


# ---------------------------------------------------------------- the command


def test_cli_labels_each_example(capsys: pytest.CaptureFixture[str]) -> None:
    path = DATA / "wire_examples.jsonl"
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert main(["classify", "--json", str(path)]) == 0
    outputs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(o["id"], o["label"], o["family"], o["flags"]) for o in outputs] == [
        (line["id"], line["expect"]["label"], line["expect"]["family"], line["expect"]["flags"]) for line in lines
    ]


def test_cli_bad_lines_are_reported_and_the_rest_classified(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "wire.jsonl"
    good = {"id": "a", "request": REQUEST, "response": chat("Done.")}
    models = {"id": "m", "method": "GET", "path": "/v1/models", "request": None, "response": {"object": "list"}}
    path.write_text("\n".join([json.dumps(good), "{not json", json.dumps({"id": "b", "request": {}}),
                               json.dumps(models), json.dumps({**good, "id": "c"})]) + "\n")
    assert main(["classify", "--json", str(path)]) == 1
    captured = capsys.readouterr()
    outputs = [json.loads(line) for line in captured.out.splitlines()]
    assert [o["id"] for o in outputs] == ["a", None, "b", "m", "c"]
    assert [o.get("label") for o in outputs] == ["prose", None, None, None, "prose"]
    assert "error" in outputs[1] and "error" in outputs[2] and "skipped" in outputs[3]
    assert ":2: not JSON" in captured.err and ":3: missing key(s): response" in captured.err

    assert main(["classify", str(path)]) == 1
    table = capsys.readouterr().out
    assert "prose" in table and "2 bad lines" in table


def test_cli_table_counts_families(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["classify", str(DATA / "wire_examples.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "invented_xml" in out and "text_tool_call" in out


def test_cli_missing_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["classify", str(tmp_path / "nope.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such file" in err


def test_a_reply_of_unclosed_braces_is_read_in_linear_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """100 KB of `{` cost the square of its length to read from each brace (1.4 s at 12 KB, minutes at 100 KB):
    the bare-JSON search scans within a budget, so a long reply cannot stall classification or the lenient
    agent. Counted in characters the bracket matcher scans, not seconds (the machine is shared)."""
    import importlib

    formats = importlib.import_module("agentic_eval.classify._formats")  # the matcher, a private detail
    scanned = [0]
    real = formats.balanced_end

    def counting(text: str, start: int) -> int | None:
        scanned[0] += len(text) - start
        return real(text, start)

    monkeypatch.setattr(formats, "balanced_end", counting)
    find_text_tool_calls("{" * 100_000, {"tools": [{"type": "function", "function": {"name": "read_file"}}]})
    assert 0 < scanned[0] < 10_000_000  # quadratic: 5e9
