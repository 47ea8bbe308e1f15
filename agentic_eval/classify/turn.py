"""The turn classifier: what did the model do with its turn? Pure functions, no I/O.

`classify_turn(request, response)` reads one exchange (chat completions, Responses API or Anthropic
Messages API, a non-streamed body or a stream the wire recorder reassembled) and returns a `TurnClassification`:

label (exactly one)
    `tool_call`       the structured tool-call list (Messages: the `tool_use` blocks) is non-empty
                      (finish_reason / stop_reason is not trusted);
    `text_tool_call`  no structured call, but the content or the reasoning holds a tool call
                      written as text, complete or cut short;
    `prose`           visible text that is no tool call;
    `empty`           no visible text and no call (maybe reasoning only).
flags (any)
    `unterminated_think`  `<think>` without `</think>`, or a lone `</think>`, in the content;
    `reasoning_only`      reasoning but no visible text and no structured call;
    `truncated`           a text call opened but never closed, or the server stopped on its length limit;
    `unknown_tool`        a call names a tool the request did not offer;
    `bad_arguments`       a structured call's arguments are not a JSON object, or break the tool's schema;
    `call_in_reasoning`   the text call sits in `reasoning_content` / `reasoning` (it never reaches the client).
family (of the first text call found; also set beside a structured call if the text holds one)
    hermes, qwen3_xml, seed_oss, glm, minimax, anthropic_xml, minicpm, functionary, invented_xml,
    deepseek, kimi, harmony, mistral, llama_json, pythonic, json, granite, granite_fc, internlm,
    jamba, nemotron, lfm2, command_r, phi4_mini, function_gemma. See shared/reference/toolcall-formats.md.

The text calls found are returned with their arguments where they could be read, so a lenient
runner can execute them.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import jsonschema
from jsonschema.protocols import Validator
from pydantic import BaseModel, Field

from agentic_eval.classify._text_calls import FoundCall, ToolCatalog, find_text_calls
from agentic_eval.classify.diagnosis import attach_readers, turn_diagnosis
from agentic_eval.wire.messages import message_parts, message_problem

__all__ = [
    "FAMILIES",
    "FLAGS",
    "LABELS",
    "AssistantTurn",
    "NotAModelTurn",
    "TextToolCall",
    "ToolCatalog",
    "TurnClassification",
    "arguments_problem",
    "classify_turn",
    "find_text_tool_calls",
    "is_model_turn",
    "offered_tools",
    "read_turn",
]

Label = Literal["tool_call", "text_tool_call", "prose", "empty"]
Flag = Literal["unterminated_think", "reasoning_only", "truncated", "unknown_tool", "bad_arguments",
               "call_in_reasoning"]
LABELS: tuple[Label, ...] = ("tool_call", "text_tool_call", "prose", "empty")
FLAGS: tuple[Flag, ...] = (
    "unterminated_think", "reasoning_only", "truncated", "unknown_tool", "bad_arguments", "call_in_reasoning"
)
FAMILIES: tuple[str, ...] = (
    "hermes", "qwen3_xml", "seed_oss", "glm", "minimax", "anthropic_xml", "minicpm", "functionary", "invented_xml",
    "deepseek", "kimi", "harmony", "mistral", "llama_json", "pythonic", "json", "granite", "granite_fc", "internlm",
    "jamba", "nemotron", "lfm2", "command_r", "phi4_mini", "function_gemma",
)


class NotAModelTurn(ValueError):
    """The response is not an assistant turn (a model list, an error body, nothing at all)."""


class TextToolCall(BaseModel):
    """A tool call written as text."""

    family: str = Field(description="The format family it is written in.")
    name: str | None = Field(description="The offered tool it names (offered spelling), else the name as written; "
                             "None when cut off before the name.")
    arguments: dict[str, Any] | None = Field(description="Its arguments, when they could be read.")
    offered: bool = Field(description="The name is one of the offered tools.")
    truncated: bool = Field(description="Opened but never closed.")
    in_reasoning: bool = Field(description="Found in the reasoning, not the content.")
    parsers: list[str] = Field(default_factory=list, description="The serving engines' tool parsers ('vllm:hermes', "
                               "'sglang:qwen25', 'llama.cpp:hermes_2_pro', 'ollama:qwen3', ...) that extract this call "
                               "from the turn's text under the same name (agentic_eval.classify.parsers).")
    parsers_other_arguments: list[str] = Field(default_factory=list, description="Of `parsers`, those whose "
                                               "extracted arguments differ from `arguments`.")
    arguments_problem: str | None = Field(default=None, description="Why the arguments cannot be used: unread, not "
                                          "an object, or against the offered tool's schema; None when they pass "
                                          "(or the tool is not offered: see `offered`).")


class TurnClassification(BaseModel):
    """What the model did with one turn."""

    label: Label
    flags: list[Flag] = Field(default_factory=list, description="In the order of FLAGS.")
    family: str | None = Field(default=None, description="Family of the first text call, if any.")
    tool_names: list[str] = Field(
        default_factory=list, description="Tools called: the structured calls' names, else the text calls'."
    )
    text_calls: list[TextToolCall] = Field(default_factory=list)
    diagnosis: str | None = Field(default=None, description="For a turn with calls written as text: whose fix it "
                                  "is, 'server_config' (an engine parser reads them all, cleanly: enable it), "
                                  "'parser_mismatch' (the server parsed a call and left another as text), or "
                                  "'model' (a call no parser reads, a tool not offered, bad arguments, a call in "
                                  "the reasoning). agentic_eval.classify.diagnosis.")
    diagnosis_note: str = Field(default="", description="The diagnosis in words, naming what it rests on.")
    call_id_styles: list[str] = Field(default_factory=list, exclude=True, description="Per structured call, what "
                                      "its id shows of the engine (agentic_eval.classify.documented.call_id_style).")


@dataclass
class AssistantTurn:
    """The parts of one assistant turn, whichever API it came from."""

    content: str = ""
    reasoning: str = ""
    structured_calls: list[tuple[str, Any]] = field(default_factory=list)
    """(name, arguments as sent: a JSON string, or already an object)."""
    hit_length_limit: bool = False


# ---------------------------------------------------------------- reading bodies


def is_model_turn(response: object) -> bool:
    """True for a chat completion, a Responses API body or a Messages API `message` (what `classify_turn` reads)."""
    return isinstance(response, Mapping) and (
        isinstance(response.get("choices"), list) or isinstance(response.get("output"), list)
        or (response.get("type") == "message" and isinstance(response.get("content"), list))
    )


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text") or part.get("refusal") or "")
                       for part in content if isinstance(part, Mapping))
    return ""


def reply_shape_problem(response: Mapping[str, Any]) -> str | None:
    """What makes a model turn's body unreadable (a part of the wrong type), or None. An endpoint
    can send anything; `read_turn` reads only what passes this."""

    def not_object(value: object) -> bool:
        return value is not None and not isinstance(value, Mapping)

    if isinstance(response.get("choices"), list):
        choice = response["choices"][0] if response["choices"] else {}
        if not isinstance(choice, Mapping):
            return "choices[0] is not an object"
        message = choice.get("message")
        if not_object(message):
            return "choices[0].message is not an object"
        calls = (message or {}).get("tool_calls")
        if calls is not None and not isinstance(calls, list):
            return "choices[0].message.tool_calls is not a list"
        for number, call in enumerate(calls or ()):
            if not isinstance(call, Mapping) or not_object(call.get("function")) or not_object(call.get("custom")):
                return f"choices[0].message.tool_calls[{number}] is not a tool call object"
        return None
    if not isinstance(response.get("output"), list) and isinstance(response.get("content"), list):
        return message_problem(response, strict=False)
    for number, item in enumerate(response.get("output") or ()):
        if not isinstance(item, Mapping):
            return f"output[{number}] is not an object"
    if not_object(response.get("incomplete_details")):
        return "incomplete_details is not an object"
    return None


def read_turn(response: Mapping[str, Any]) -> AssistantTurn:
    """The assistant turn of a chat completion (first choice) or of a Responses API body."""
    if not is_model_turn(response):
        raise NotAModelTurn("not a chat completion or Responses API body")
    if problem := reply_shape_problem(response):
        raise NotAModelTurn(f"malformed reply: {problem}")
    if isinstance(response.get("choices"), list):
        choice = response["choices"][0] if response["choices"] else {}
        message = choice.get("message") or {}
        reasoning = [message.get(key) for key in ("reasoning_content", "reasoning")]
        calls = [
            (str(((call.get("function") or call.get("custom") or {}).get("name")) or ""),
             (call.get("function") or {}).get("arguments", (call.get("custom") or {}).get("input")))
            for call in message.get("tool_calls") or ()
        ]
        if isinstance(message.get("function_call"), Mapping):
            calls.append((str(message["function_call"].get("name") or ""), message["function_call"].get("arguments")))
        return AssistantTurn(
            content=_text_of(message.get("content")) or _text_of(message.get("refusal")),
            reasoning="\n".join(dict.fromkeys(r for r in reasoning if isinstance(r, str) and r)),
            structured_calls=calls,
            hit_length_limit=choice.get("finish_reason") == "length",
        )
    if not isinstance(response.get("output"), list):
        return _messages_turn(response)
    turn = AssistantTurn()
    for item in response["output"]:
        kind = item.get("type")
        if kind == "message":
            turn.content += _text_of(item.get("content"))
        elif kind == "reasoning":
            turn.reasoning += _text_of(item.get("content")) or _text_of(item.get("summary"))
        elif kind in ("function_call", "custom_tool_call"):
            turn.structured_calls.append((str(item.get("name") or ""), item.get("arguments", item.get("input"))))
    details = response.get("incomplete_details") or {}
    turn.hit_length_limit = response.get("status") == "incomplete" and details.get("reason") == "max_output_tokens"
    return turn


def _messages_turn(response: Mapping[str, Any]) -> AssistantTurn:
    """A Messages API `message`, read by `wire.messages`: text blocks are the content, thinking blocks the
    reasoning, tool_use blocks the structured calls (a translated call whose arguments were not JSON keeps them
    as text: bad arguments)."""
    parts = message_parts(response)
    return AssistantTurn(content=parts.text, reasoning=parts.reasoning,
                         structured_calls=[(name, arguments) for _, name, arguments in parts.calls],
                         hit_length_limit=parts.stop_reason == "max_tokens")


def offered_tools(request: Mapping[str, Any] | None) -> ToolCatalog:
    """The function tools a request offers, in chat (`{"type": "function", "function": {...}}`),
    Responses (`{"type": "function", "name": ..., "parameters": ...}`, custom tools), Messages
    (`{"name": ..., "input_schema": ...}`) or legacy `functions` form."""
    schemas: dict[str, dict[str, Any] | None] = {}
    if not isinstance(request, Mapping):
        return ToolCatalog(schemas)
    listed = [request.get("tools"), request.get("functions")]
    for tool in [item for value in listed if isinstance(value, list) for item in value]:
        if not isinstance(tool, Mapping):
            continue
        spec: Mapping[str, Any] = tool["function"] if isinstance(tool.get("function"), Mapping) else tool
        if isinstance(spec.get("name"), str):
            parameters = spec.get("parameters", spec.get("input_schema"))
            schemas[spec["name"]] = parameters if isinstance(parameters, dict) else None
    return ToolCatalog(schemas)


# ---------------------------------------------------------------- checks


_THINK_TAG = re.compile(r"<(/?)(?:think|thinking|seed:think)>")
_INLINE_CODE = re.compile(r"`+[^`\n]*`+")


def _split_think(content: str) -> tuple[str, str, bool]:
    """(visible text, reasoning written in the content, unterminated?). Text after an unclosed
    `<think>`, or before a lone `</think>`, counts as reasoning."""
    scan = _INLINE_CODE.sub(lambda m: " " * len(m.group()), content)
    visible: list[str] = []
    reasoning: list[str] = []
    unterminated = False
    depth, position = 0, 0
    for tag in _THINK_TAG.finditer(scan):
        piece = content[position : tag.start()]
        closing = bool(tag.group(1))
        if depth == 0 and closing:
            reasoning.append(piece)  # everything so far was reasoning whose <think> sat in the prompt
            unterminated = True
        else:
            (reasoning if depth else visible).append(piece)
            depth = depth - 1 if closing else depth + 1
        position = tag.end()
    (reasoning if depth else visible).append(content[position:])
    return "".join(visible), "".join(reasoning), unterminated or depth > 0


@functools.lru_cache(maxsize=1024)
def _validator(schema_json: str) -> Validator | None:
    schema = json.loads(schema_json)
    validator_class = jsonschema.validators.validator_for(schema)
    try:
        validator_class.check_schema(schema)
    except jsonschema.SchemaError:
        return None  # the request's schema is itself broken: nothing to check against
    return validator_class(schema)


def arguments_problem(arguments: object, schema: dict[str, Any] | None) -> str | None:
    """Why a structured call's arguments are bad (not JSON, not an object, against the schema), or None."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError as exc:
            return f"not JSON: {exc}"
        except RecursionError:
            return "not JSON: nested too deep"
    if not isinstance(arguments, dict):
        return "not a JSON object"
    validator = _validator(json.dumps(schema, sort_keys=True)) if schema else None
    if validator is not None:
        error = next(iter(validator.iter_errors(arguments)), None)
        if error is not None:
            return f"against the schema: {error.message}"
    return None


def _text_call(found: FoundCall, tools: ToolCatalog, in_reasoning: bool) -> TextToolCall:
    canonical = tools.canonical(found.name) if found.name else None
    problem = None
    if canonical is not None:
        problem = ("unread" if found.arguments is None
                   else arguments_problem(found.arguments, tools.schemas.get(canonical)))
    return TextToolCall(
        family=found.family,
        name=canonical or found.name,
        arguments=found.arguments,
        offered=canonical is not None,
        truncated=found.truncated,
        in_reasoning=in_reasoning,
        arguments_problem=problem,
    )


def find_text_tool_calls(text: str, request: Mapping[str, Any] | None = None) -> list[TextToolCall]:
    """The tool calls written in a text, for the tools `request` offers (names canonicalised to the
    offered spelling, arguments parsed where possible): what a lenient runner would execute."""
    tools = offered_tools(request)
    return [_text_call(found, tools, in_reasoning=False) for found in find_text_calls(text, tools)]


def classify_turn(request: Mapping[str, Any] | None, response: Mapping[str, Any]) -> TurnClassification:
    """Label one model turn. `request` supplies the offered tools (None: unknown, so the name and
    schema checks are skipped). Raises `NotAModelTurn` for a body that is not a model turn."""
    turn = read_turn(response)
    tools = offered_tools(request)
    visible, think_text, unterminated = _split_think(turn.content)
    text_calls = [_text_call(found, tools, False) for found in find_text_calls(turn.content, tools)]
    if text_calls:
        attach_readers(text_calls, turn.content, request)
    text_calls += [_text_call(found, tools, True) for found in find_text_calls(turn.reasoning, tools)]
    flags: set[Flag] = set()
    if unterminated:
        flags.add("unterminated_think")
    if turn.hit_length_limit or any(call.truncated for call in text_calls):
        flags.add("truncated")

    if turn.structured_calls:
        label: Label = "tool_call"
        names = [name for name, _ in turn.structured_calls if name]
        if request is not None:
            for name, arguments in turn.structured_calls:
                if name not in tools.schemas:
                    flags.add("unknown_tool")
                elif not _is_free_text_tool(request, name) and arguments_problem(arguments, tools.schemas[name]):
                    flags.add("bad_arguments")
    elif text_calls:
        label = "text_tool_call"
        names = [call.name for call in text_calls if call.name]
        if request is not None and any(call.name and not call.offered for call in text_calls):
            flags.add("unknown_tool")
        if any(call.in_reasoning for call in text_calls):
            flags.add("call_in_reasoning")
    else:
        label = "prose" if visible.strip() else "empty"
        names = []
    if not visible.strip() and not turn.structured_calls and (turn.reasoning.strip() or think_text.strip()):
        flags.add("reasoning_only")
    diagnosis, note = turn_diagnosis(text_calls, structured=bool(turn.structured_calls))
    return TurnClassification(
        call_id_styles=_call_id_styles(response) if turn.structured_calls else [],
        label=label,
        flags=[flag for flag in FLAGS if flag in flags],
        family=text_calls[0].family if text_calls else None,
        tool_names=list(dict.fromkeys(names)),
        text_calls=text_calls,
        diagnosis=diagnosis,
        diagnosis_note=note,
    )


def _call_id_styles(response: Mapping[str, Any]) -> list[str]:
    """What the structured calls' ids show of the engine (a chat completion's first choice, a Responses body)."""
    from agentic_eval.classify.documented import call_id_style

    if isinstance(response.get("choices"), list):
        choice = response["choices"][0] if response["choices"] else {}
        message = choice.get("message") if isinstance(choice, Mapping) else None
        calls = message.get("tool_calls") if isinstance(message, Mapping) else None
        return [call_id_style(c.get("id")) for c in _listed(calls) if isinstance(c, Mapping)]
    return [call_id_style(item.get("call_id")) for item in _listed(response.get("output"))
            if isinstance(item, Mapping) and item.get("type") == "function_call"]


def _is_free_text_tool(request: Mapping[str, Any], name: str) -> bool:
    """Responses API custom tools take free text, not JSON arguments."""
    return any(
        isinstance(tool, Mapping) and tool.get("type") == "custom" and tool.get("name") == name
        for tool in _listed(request.get("tools"))
    )


def _listed(value: object) -> list[Any]:
    return value if isinstance(value, list) else []
