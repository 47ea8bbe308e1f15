"""The text formats of tool calls: one detector per marked family, and the small parsers they share.

Each detector takes a text and the offered tools and yields the calls it finds, complete or cut
short. Pure functions; `_text_calls.find_text_calls` decides where each may fire.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

_DECODER = json.JSONDecoder()
_NAME = r"[A-Za-z_][\w.\-]*"


@dataclass(frozen=True)
class ToolCatalog:
    """The tools a request offered: name -> JSON Schema of the parameters (None when it has none)."""

    schemas: dict[str, dict[str, Any] | None] = field(default_factory=dict)

    def canonical(self, name: str) -> str | None:
        """The offered name `name` refers to: exact, else ignoring case, `_` and `-`, and a
        `functions.` / `default_api.` prefix. None when no offered tool matches."""
        if name in self.schemas:
            return name
        bare = re.sub(r"^(?:functions|default_api|tools)\.", "", name)
        key = re.sub(r"[_\-]", "", bare).lower()
        for offered in self.schemas:
            if re.sub(r"[_\-]", "", offered).lower() == key:
                return offered
        return None

    def parameter_schema(self, tool: str | None, parameter: str) -> dict[str, Any]:
        schema = self.schemas.get(tool or "") or {}
        found = (schema.get("properties") or {}).get(parameter)
        return found if isinstance(found, dict) else {}


@dataclass
class FoundCall:
    """One call found in a text: `name` as written (None when cut off before it), `arguments`
    when they could be read, and where it stands (`start`, `end`)."""

    family: str
    name: str | None
    arguments: dict[str, Any] | None
    start: int
    end: int
    truncated: bool = False


# ---------------------------------------------------------------- small parsers


def skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position].isspace():
        position += 1
    return position


def decode_json_at(text: str, position: int) -> tuple[Any, int] | None:
    try:
        return _DECODER.raw_decode(text, position)
    except ValueError:
        return None


_GUESSED_NAME = re.compile(r'"(?:name|tool_name|tool|function)"\s*:\s*"([^"]+)"')


def call_from_json(obj: Any) -> tuple[str, dict[str, Any] | None] | None:
    """Read a JSON call object in any of the usual spellings; None when it is not one."""
    if not isinstance(obj, dict):
        return None
    inner = obj.get("function")
    if isinstance(inner, dict):
        return call_from_json({**inner, **{k: v for k, v in obj.items() if k != "function"}})
    name = next((obj[k] for k in ("name", "tool_name", "tool", "function") if isinstance(obj.get(k), str)), None)
    if name is None:
        return None
    arguments: Any = next((obj[k] for k in ("arguments", "parameters", "args", "input") if k in obj), {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return name, None
    return name, arguments if isinstance(arguments, dict) else None


Calls = list[tuple[str | None, dict[str, Any] | None]]


def json_calls(text: str, position: int) -> tuple[Calls, int, bool] | None:
    """JSON call(s) starting at `position`: (calls, end, complete), or None when there is no JSON there.
    JSON cut off before its brackets close gives one call named from what was written so far."""
    position = skip_space(text, position)
    if position >= len(text) or text[position] not in "{[":
        return None
    decoded = decode_json_at(text, position)
    if decoded is None:
        end = balanced_end(text, position)
        if end is not None:  # brackets that close but hold no JSON: a pythonic list, prose, or...
            return _template_escaped_calls(text, position, end)
        guessed = _GUESSED_NAME.search(text, position, position + 200)
        return [(guessed.group(1) if guessed else None, None)], len(text), False
    value, end = decoded
    items = value if isinstance(value, list) else [value]
    calls: Calls = [call for item in items if (call := call_from_json(item))]
    return (calls, end, True) if calls else None


def _template_escaped_calls(text: str, position: int, end: int) -> tuple[Calls, int, bool] | None:
    """...a call written with a chat template's escaped braces, as Qwen2.5-Coder did behind
    llama.cpp: `{{"name": "edit_file", "arguments": {...}}}}`. None when it is not one."""
    if not text.startswith("{{", position):
        return None
    while end < len(text) and text[end] == "}":  # the extra closers the escaping added
        end += 1
    decoded = decode_json_at(text[position:end].replace("{{", "{").replace("}}", "}"), 0)
    if decoded is None:
        return None
    value = decoded[0]
    calls: Calls = [call for item in (value if isinstance(value, list) else [value]) if (call := call_from_json(item))]
    return (calls, end, True) if calls else None


def balanced_end(text: str, start: int) -> int | None:
    """Index after the bracket closing the one at `start`, skipping quoted strings; None if unclosed."""
    closing = {"(": ")", "[": "]", "{": "}"}
    stack: list[str] = []
    position, quote = start, ""
    while position < len(text):
        char = text[position]
        if quote:
            if char == "\\":
                position += 1
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in closing:
            stack.append(closing[char])
        elif char in ")]}":
            if not stack or stack.pop() != char:
                return None
            if not stack:
                return position + 1
        position += 1
    return None


def _dotted_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted_name(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def python_calls(source: str, tools: ToolCatalog) -> list[tuple[str, dict[str, Any] | None]] | None:
    """Calls written in Python: `f(a=1)`, `[f(), g(x=2)]`, `print(f())`, one per line or in a list;
    None if the source is anything else."""
    try:
        statements = ast.parse(source.strip()).body
    except (SyntaxError, ValueError):
        return None
    nodes: list[ast.expr] = []
    for statement in statements:
        if not isinstance(statement, ast.Expr):
            return None
        value = statement.value
        nodes += value.elts if isinstance(value, ast.List | ast.Tuple) else [value]
    if not nodes:
        return None
    calls: list[tuple[str, dict[str, Any] | None]] = []
    for node in nodes:
        if isinstance(node, ast.Call) and _dotted_name(node.func) == "print" and len(node.args) == 1:
            node = node.args[0]  # Gemma's tool_code: print(default_api.f(...))
        if not isinstance(node, ast.Call) or (name := _dotted_name(node.func)) is None:
            return None
        name = name.removesuffix(".call")  # Llama's built-ins: brave_search.call(query=...)
        arguments: dict[str, Any] = {}
        positional = list((tools.schemas.get(tools.canonical(name) or "") or {}).get("properties") or {})
        for index, value in enumerate(node.args):
            if index < len(positional):
                arguments[positional[index]] = _literal(value)
        for keyword in node.keywords:
            if keyword.arg is not None:
                arguments[keyword.arg] = _literal(keyword.value)
        calls.append((name, arguments))
    return calls


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        return ast.unparse(node)


def typed_value(raw: str, schema: dict[str, Any]) -> Any:
    """An XML-carried value, converted when the parameter's schema says it is not a string."""
    value = raw.removeprefix("\n").removesuffix("\n")
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "string" in kinds or kinds == [None]:
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def single_parameter(tools: ToolCatalog, name: str | None) -> str:
    schema = tools.schemas.get(name or "") or {}
    required = schema.get("required") or []
    properties = list(schema.get("properties") or {})
    return str(required[0] if required else properties[0] if properties else "input")


# ---------------------------------------------------------------- detectors

Detector = Callable[[str, ToolCatalog], Iterator[FoundCall]]
_FLAGS = re.DOTALL


def _tool_call_tag(text: str, tools: ToolCatalog) -> Iterator[FoundCall]:
    """`<tool_call>` (and Seed-OSS's `<seed:tool_call>`): Hermes JSON, Qwen3 XML or GLM inside."""
    for opener in re.finditer(r"<(seed:)?tool_call>", text):
        seed = bool(opener.group(1))
        close = re.compile(r"</(?:seed:)?tool_call>").search(text, opener.end())
        body_end = close.start() if close else len(text)
        span_end = close.end() if close else len(text)
        position = skip_space(text, opener.end())
        if position >= len(text):
            yield FoundCall("seed_oss" if seed else "hermes", None, None, opener.start(), len(text), truncated=True)
            continue
        parsed = json_calls(text[:body_end], position)
        if parsed is not None:
            for name, arguments in parsed[0]:
                yield FoundCall("hermes", name, arguments, opener.start(), span_end, truncated=close is None)
            continue
        if text.startswith("<function=", position):
            for call in _function_equals(text[:span_end], tools, position):
                call.start, call.end = opener.start(), span_end
                call.family = "seed_oss" if seed else call.family
                call.truncated = call.truncated or close is None
                yield call
            continue
        glm = re.compile(rf"({_NAME})\s*(?=<arg_key>|</tool_call>|$)").match(text, position)
        if glm:
            body = text[glm.end() : body_end]
            arguments = {
                key.strip(): typed_value(value, tools.parameter_schema(tools.canonical(glm.group(1)), key.strip()))
                for key, value in re.findall(r"<arg_key>(.*?)</arg_key>\s*<arg_value>(.*?)(?:</arg_value>|$)", body,
                                             _FLAGS)
            }
            yield FoundCall("glm", glm.group(1), arguments, opener.start(), span_end, truncated=close is None)


def _function_equals(text: str, tools: ToolCatalog, start: int = 0) -> Iterator[FoundCall]:
    """`<function=NAME>`: Qwen3-Coder XML parameters, or Functionary v3.1 JSON; a trailing orphan
    `</tool_call>` (the opener dropped) belongs to the call."""
    for opener in re.compile(rf"<function=({_NAME})>").finditer(text, start):
        name = opener.group(1)
        close = re.compile(r"</function>").search(text, opener.end())
        body = text[opener.end() : close.start() if close else len(text)]
        end = close.end() if close else len(text)
        orphan = re.compile(r"\s*</tool_call>").match(text, end)
        end = orphan.end() if orphan else end
        if body.strip().startswith("{"):
            decoded = decode_json_at(body, skip_space(body, 0))
            arguments = decoded[0] if decoded and isinstance(decoded[0], dict) else None
            yield FoundCall("functionary", name, arguments, opener.start(), end, truncated=close is None)
            continue
        parameters = re.findall(r"<parameter=([^>\s]+)>(.*?)(?:</parameter>|(?=<parameter=)|$)", body, _FLAGS)
        if parameters or close or tools.canonical(name):
            canonical = tools.canonical(name)
            arguments = {key: typed_value(value, tools.parameter_schema(canonical, key)) for key, value in parameters}
            yield FoundCall("qwen3_xml", name, arguments, opener.start(), end, truncated=close is None)


def _invoke_blocks(text: str, tools: ToolCatalog) -> Iterator[FoundCall]:
    """MiniMax-M2 `<minimax:tool_call>` and Anthropic-style `<function_calls>` around `<invoke name=...>`."""
    wrapper = re.compile(r"<(minimax:tool_call|(?:\w+:)?function_calls)>")
    covered_until = 0
    for opener in wrapper.finditer(text):
        family = "minimax" if opener.group(1).startswith("minimax") else "anthropic_xml"
        close = re.compile(rf"</{re.escape(opener.group(1))}>").search(text, opener.end())
        end = close.end() if close else len(text)
        calls = list(_invokes(text[: close.start() if close else len(text)], tools, opener.end(), family))
        body = text[opener.end() : close.start() if close else len(text)]
        if not calls and family == "anthropic_xml" and (python := _olmo_calls(body, tools)):
            for name, arguments in python:  # OLMo 3: one pythonic call per line inside <function_calls>
                yield FoundCall("pythonic", name, arguments, opener.start(), end, truncated=close is None)
            covered_until = end
            continue
        if not calls and (close or text[opener.end() :].strip()):
            continue
        for call in calls or [FoundCall(family, None, None, opener.start(), end)]:
            call.start, call.end, call.truncated = opener.start(), end, close is None
            yield call
        covered_until = end
    for call in _invokes(text, tools, 0, "anthropic_xml"):
        if call.start >= covered_until:
            yield call


_STEP3_CLOSERS = re.compile(r"(?:\s*<｜tool_call_end｜>)(?:\s*<｜tool_calls_end｜>)?")


def _olmo_calls(body: str, tools: ToolCatalog) -> list[tuple[str, dict[str, Any] | None]] | None:
    lines = [line.strip() for line in body.strip().splitlines() if line.strip()]
    if not lines or not re.match(rf"{_NAME}\(", lines[0]):
        return None
    return python_calls("\n".join(lines), tools)


def _invokes(text: str, tools: ToolCatalog, start: int, family: str) -> Iterator[FoundCall]:
    for opener in re.compile(r"<(?:\w+:)?invoke(?:\s+name=\"([^\"]*)\")?\s*>").finditer(text, start):
        close = re.compile(r"</(?:\w+:)?invoke>").search(text, opener.end())
        body = text[opener.end() : close.start() if close else len(text)]
        name = opener.group(1)
        if name is None:
            old_style = re.search(r"<tool_name>(.*?)</tool_name>", body, _FLAGS)
            name = old_style.group(1).strip() if old_style else None
        if name is None or not (close or "<parameter" in body or tools.canonical(name)):
            continue
        canonical = tools.canonical(name)
        pairs = re.findall(r"<(?:\w+:)?parameter\s+name=\"([^\"]*)\"\s*>(.*?)(?:</(?:\w+:)?parameter>|$)", body, _FLAGS)
        if not pairs:  # older style: <parameters><key>value</key></parameters>
            inner = re.search(r"<parameters>(.*?)(?:</parameters>|$)", body, _FLAGS)
            pairs = re.findall(r"<(\w+)>(.*?)</\1>", inner.group(1), _FLAGS) if inner else []
        arguments = {key: typed_value(value, tools.parameter_schema(canonical, key)) for key, value in pairs}
        end = close.end() if close else len(text)
        step_end = _STEP3_CLOSERS.match(text, end)  # Step-3 puts its invokes between call tokens
        yield FoundCall(family, name, arguments, opener.start(), step_end.end() if step_end else end, close is None)


def _minicpm(text: str, tools: ToolCatalog) -> Iterator[FoundCall]:
    """MiniCPM: `<function name="read"><param name="path">...</param></function>`."""
    for opener in re.finditer(r"<function\s+name=\"([^\"]+)\"\s*>", text):
        close = re.compile(r"</function>").search(text, opener.end())
        body = text[opener.end() : close.start() if close else len(text)]
        canonical = tools.canonical(opener.group(1))
        pairs = re.findall(r"<param\s+name=\"([^\"]*)\"\s*>(.*?)(?:</param>|$)", body, _FLAGS)
        arguments = {key: typed_value(value, tools.parameter_schema(canonical, key)) for key, value in pairs}
        yield FoundCall("minicpm", opener.group(1), arguments, opener.start(), close.end() if close else len(text),
                        close is None)


def _deepseek_token(words: str) -> str:
    # Fullwidth bars with any separator; ASCII bars only with "▁" or spaces (with "_" they are Kimi's tokens).
    fullwidth, ascii_bars = r"[▁_ ]".join(words.split()), r"[▁ ]".join(words.split())
    return rf"(?:<｜\s*{fullwidth}\s*｜>|<\|\s*{ascii_bars}\s*\|>)"


_DS_CALLS_BEGIN = re.compile(_deepseek_token("tool calls begin"))
_DS_CALLS_END = re.compile(_deepseek_token("tool calls end"))
_DS_CALL_BEGIN = re.compile(_deepseek_token("tool call begin"))
_DS_CALL_END = re.compile(_deepseek_token("tool call end"))
_DS_SEP = re.compile(_deepseek_token("tool sep"))


def _deepseek(text: str, tools: ToolCatalog) -> Iterator[FoundCall]:
    """DeepSeek V3 / R1 / V3.1 special tokens, with `▁`, `_` or spaces between the words."""
    for section in _DS_CALLS_BEGIN.finditer(text):
        section_end = _DS_CALLS_END.search(text, section.end())
        stop = section_end.start() if section_end else len(text)
        calls = list(_deepseek_calls(text[:stop], section.end()))
        if not calls and not _DS_CALL_BEGIN.search(text, section.end(), stop):  # cut before its first call
            yield FoundCall("deepseek", None, None, section.start(), len(text), truncated=True)
        for call in calls:
            call.start, call.end = section.start(), section_end.end() if section_end else len(text)
            call.truncated = call.truncated or section_end is None
            yield call
    yield from _deepseek_calls(text, 0)


def _deepseek_calls(text: str, start: int) -> Iterator[FoundCall]:
    for opener in _DS_CALL_BEGIN.finditer(text, start):
        close = _DS_CALL_END.search(text, opener.end())
        body = text[opener.end() : close.start() if close else len(text)]
        separated = _DS_SEP.search(body)
        if separated:
            head, rest = body[: separated.start()], body[separated.end() :]
        else:
            head, rest = body, ""
        if head.strip() in ("function", ""):
            name, _, rest = rest.partition("\n")
        else:
            name = head
        if "<" in name:  # markup, not a name: Step-3's <steptml:invoke> between the same tokens
            continue
        rest = re.sub(r"^\s*```(?:json)?\s*|\s*```\s*$", "", rest)
        decoded = decode_json_at(rest, skip_space(rest, 0)) if rest.strip() else None
        arguments = decoded[0] if decoded and isinstance(decoded[0], dict) else ({} if not rest.strip() else None)
        yield FoundCall("deepseek", name.strip() or None, arguments, opener.start(),
                        close.end() if close else len(text), truncated=close is None)


def _kimi(text: str, tools: ToolCatalog) -> Iterator[FoundCall]:
    """Kimi-K2: `<|tool_call_begin|>functions.ls:0<|tool_call_argument_begin|>{...}<|tool_call_end|>`."""
    for opener in re.finditer(r"<\|tool_calls?_section_begin\|>|<\|tool_call_begin\|>", text):
        if "section" in opener.group():
            rest = text[opener.end() :]
            if not rest.strip():
                yield FoundCall("kimi", None, None, opener.start(), len(text), truncated=True)
            continue
        close = re.compile(r"<\|tool_call_end\|>").search(text, opener.end())
        body = text[opener.end() : close.start() if close else len(text)]
        call_id, _, arguments_text = body.partition("<|tool_call_argument_begin|>")
        name = re.sub(r"^functions\.|:\d+$", "", call_id.strip()) or None
        decoded = decode_json_at(arguments_text, skip_space(arguments_text, 0))
        arguments = decoded[0] if decoded and isinstance(decoded[0], dict) else None
        end = close.end() if close else len(text)
        section_end = re.compile(r"\s*<\|tool_calls_section_end\|>").match(text, end)  # the section closes with it
        yield FoundCall("kimi", name, arguments, opener.start(), section_end.end() if section_end else end,
                        close is None)


def _harmony(text: str, tools: ToolCatalog) -> Iterator[FoundCall]:
    """gpt-oss Harmony: `<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...}<|call|>`,
    also with the special tokens stripped."""
    header = re.compile(r"(?:<\|start\|>assistant)?(?:<\|channel\|>\s*\w+\s*)?\Z")
    for opener in re.finditer(r"\bto=functions\.([\w\-]+)", text):
        before = header.search(text, max(0, opener.start() - 60), opener.start())
        start = before.start() if before else opener.start()
        message = re.compile(r"<\|message\|>|\{").search(text, opener.end(), opener.end() + 80)
        if message is None:
            yield FoundCall("harmony", opener.group(1), None, start, len(text), truncated=True)
            continue
        start = message.end() if message.group() != "{" else message.start()
        decoded = decode_json_at(text, skip_space(text, start))
        call_end = re.compile(r"<\|call\|>").match(text, decoded[1]) if decoded else None
        end = call_end.end() if call_end else decoded[1] if decoded else len(text)
        arguments = decoded[0] if decoded and isinstance(decoded[0], dict) else None
        yield FoundCall("harmony", opener.group(1), arguments, start, end, truncated=decoded is None)


def _mistral(text: str, tools: ToolCatalog) -> Iterator[FoundCall]:
    """Mistral `[TOOL_CALLS][{...}]`, and the newer `[TOOL_CALLS]name{...}` / `name[ARGS]{...}`."""
    for opener in re.finditer(r"\[TOOL_CALLS\]", text):
        parsed = json_calls(text, opener.end())
        if parsed is not None:
            calls, end, complete = parsed
            for name, arguments in calls:
                yield FoundCall("mistral", name, arguments, opener.start(), end, truncated=not complete)
            continue
        named = re.compile(rf"\s*((?:{_NAME})?)(?:\[CALL_ID\][\w\-]*)?(?:\[ARGS\])?").match(text, opener.end())
        assert named is not None  # every part of the pattern is optional
        decoded = decode_json_at(text, skip_space(text, named.end()))
        arguments = decoded[0] if decoded and isinstance(decoded[0], dict) else None
        end = decoded[1] if decoded else len(text)
        yield FoundCall("mistral", named.group(1) or None, arguments, opener.start(), end, truncated=decoded is None)


def _marker_then_payload(family: str, opener: str, closer: str | None, pythonic: bool = False) -> Detector:
    """A family written as OPENER payload [CLOSER], the payload JSON call(s) (or a pythonic list)."""
    open_pattern, close_pattern = re.compile(opener), re.compile(closer) if closer else None

    def detect(text: str, tools: ToolCatalog) -> Iterator[FoundCall]:
        for match in open_pattern.finditer(text):
            close = close_pattern.search(text, match.end()) if close_pattern else None
            stop = close.start() if close else len(text)
            parsed = json_calls(text[:stop], match.end())
            if parsed is not None:
                calls, end, complete = parsed
                for name, arguments in calls:
                    yield FoundCall(family, name, arguments, match.start(), close.end() if close else end,
                                    truncated=not complete or bool(close_pattern and close is None))
                continue
            python = python_calls(text[match.end() : stop], tools) if pythonic else None
            if python:
                for name, arguments in python:
                    yield FoundCall(family, name, arguments, match.start(), close.end() if close else stop)
            elif not text[match.end() :].strip():
                yield FoundCall(family, None, None, match.start(), len(text), truncated=True)

    return detect


def _function_gemma(text: str, tools: ToolCatalog) -> Iterator[FoundCall]:
    """FunctionGemma: `<start_function_call>call:f{k:<escape>v<escape>}<end_function_call>`."""
    for opener in re.finditer(rf"<start_function_call>\s*(?:call:)?({_NAME})?", text):
        close = re.compile(r"<end_function_call>").search(text, opener.end())
        body = text[opener.end() : close.start() if close else len(text)]
        pairs = re.findall(r"(\w+):(?:<escape>(.*?)<escape>|([^,}]*))", body, _FLAGS)
        arguments = {key: escaped if escaped or not plain else typed_value(plain, {"type": "number"})
                     for key, escaped, plain in pairs}
        yield FoundCall("function_gemma", opener.group(1), arguments, opener.start(),
                        close.end() if close else len(text), truncated=close is None)


def _functionary_v32(text: str, tools: ToolCatalog) -> Iterator[FoundCall]:
    """Functionary v3.2: `>>>NAME` on its own line, then the JSON arguments (`>>>all` is plain text)."""
    for opener in re.finditer(rf"(?m)^>>>\s*({_NAME})[ \t]*\n", text):
        if opener.group(1) == "all":
            continue
        position = skip_space(text, opener.end())
        if not text.startswith("{", position):
            continue
        decoded = decode_json_at(text, position)
        arguments = decoded[0] if decoded and isinstance(decoded[0], dict) else None
        yield FoundCall("functionary", opener.group(1), arguments, opener.start(), decoded[1] if decoded else len(text),
                        truncated=decoded is None)


def _python_tag(text: str, tools: ToolCatalog) -> Iterator[FoundCall]:
    """Llama 3.x `<|python_tag|>` (JSON or a built-in `name.call(...)`) and Llama 4 `<|python_start|>`."""
    for opener in re.finditer(r"<\|python_tag\|>|<\|python_start\|>", text):
        close = re.compile(r"<\|python_end\|>|<\|eom_id\|>|<\|eot_id\|>").search(text, opener.end())
        stop = close.start() if close else len(text)
        parsed = json_calls(text[:stop], opener.end())
        if parsed is not None:
            for name, arguments in parsed[0]:
                yield FoundCall("llama_json", name, arguments, opener.start(), close.end() if close else parsed[1],
                                truncated=not parsed[2])
        elif (calls := python_calls(text[opener.end() : stop], tools)) is not None:
            for name, arguments in calls:
                yield FoundCall("pythonic", name, arguments, opener.start(), close.end() if close else stop)
        else:
            yield FoundCall("pythonic", None, None, opener.start(), len(text), truncated=True)


STRONG_DETECTORS: tuple[Detector, ...] = (
    _tool_call_tag,
    _function_equals,
    _invoke_blocks,
    _minicpm,
    _deepseek,
    _kimi,
    _harmony,
    _mistral,
    _python_tag,
    _function_gemma,
    _functionary_v32,
    _marker_then_payload("granite", r"<\|tool_call\|>", None),
    _marker_then_payload("granite_fc", r"<function_call>", None),
    _marker_then_payload("internlm", r"<\|action_start\|>\s*<\|plugin\|>", r"<\|action_end\|>"),
    _marker_then_payload("jamba", r"<tool_calls>", r"</tool_calls>"),
    _marker_then_payload("nemotron", r"<TOOLCALL>", r"</TOOLCALL>"),
    _marker_then_payload("lfm2", r"<\|tool_call_start\|>", r"<\|tool_call_end\|>", pythonic=True),
    _marker_then_payload("command_r", r"<\|START_ACTION\|>", r"<\|END_ACTION\|>"),
    _marker_then_payload("phi4_mini", r"functools(?=\s*\[)", None),
    _marker_then_payload("hermes", r"<longcat_tool_call>", r"</longcat_tool_call>"),
    _marker_then_payload("json", r"<\|function_call\|>|function call<\|role_sep\|>", None),
)
