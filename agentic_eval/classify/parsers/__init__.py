"""The serving engines' tool-call parsers as pure logic: what vLLM, SGLang, llama.cpp and Ollama would
put in `tool_calls` (and leave in `content`) for a complete model output.

Each parser is found by key `engine:name` in `PARSERS`; `extract` runs one, `readers` runs them all.
The semantics are the engine's, failures included (malformed JSON, a tool not offered): they come
from the engines' own parser tests, recorded in tests/data/engine_parsers/.

    _glm         GLM-4.5 / 4.6 / 4.7: ...
    _harmony     gpt-oss Harmony: `<|channel|>commentary to=functions.NAME ...
    _invoke      `<invoke name="...">` XML: MiniMax-M2 (`<minimax:tool_call>`) and Step-3 ...
    _json_lists  JSON calls after a marker: Granite `<|tool_call|>[...]`, Granite-20B-FC `<function_call> ...
    _json_tags   JSON calls between marker tags: Hermes / Qwen2.5 `<tool_call>{...}</tool_call>` and its kin.
    _llama       Llama 3.x / 4 JSON calls: `{"name": ..., "parameters": {...}}`, bare or after `<|python_tag|>`.
    _llamacpp    llama.cpp's chat-format parsers (`llama-server --jinja`): the format is picked from the ...
    _mistral     Mistral: `[TOOL_CALLS][{"name": ..., "arguments": {...}}]` (tokenizers before v11) and
    _ollama      Ollama's tool-call parser: the prefix its model template writes before a call (`<tool_call>`,
    _pythonic    Pythonic calls: `[get_weather(city="SF"), get_time()]` (Llama 3.2 / 4, Olmo 3, ToolACE...).
    _qwen3_xml   Qwen3-Coder XML: ...
    _registry    Every engine parser we read, by key `engine:name`, with the reader that does what it does.
    _scan        Finding tagged blocks without the quadratic search of `OPEN(.*?)CLOSE` patterns on outputs ...
    _tokens      Special-token formats: DeepSeek V3 / V3.1 (`<｜tool▁calls▁begin｜>`) and Kimi-K2
    _types       The shapes every engine parser speaks: the call it extracts, its whole result, its registry ...
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from agentic_eval.classify.parsers._registry import ROWS
from agentic_eval.classify.parsers._types import EngineParser, Extraction, ParsedCall, tool_schemas

__all__ = ["PARSERS", "EngineParser", "Extraction", "ParsedCall", "UnknownParser", "extract", "readers"]

_ROWS = {row.parser.key: row for row in ROWS}
PARSERS: Mapping[str, EngineParser] = MappingProxyType({key: row.parser for key, row in _ROWS.items()})


class UnknownParser(KeyError):
    """A parser key that is not in `PARSERS`."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown parser"


def _row_key(parser: str) -> str:
    if parser in _ROWS:
        return parser
    bare = [key for key in _ROWS if key.split(":", 1)[1] == parser]
    if len(bare) == 1:
        return bare[0]
    names = {key.split(":", 1)[1]: key for key in _ROWS} | {key: key for key in _ROWS}
    close = list(dict.fromkeys(names[name] for name in difflib.get_close_matches(parser, list(names), n=3)))
    hint = f"did you mean {', '.join(close)}?" if close else f"known: {', '.join(_ROWS)}"
    if bare:
        raise UnknownParser(f"tool-call parser '{parser}' is ambiguous: name one of {', '.join(bare)}")
    raise UnknownParser(f"unknown tool-call parser '{parser}' ({hint})")


def extract(parser: str, text: str, tools: Sequence[Mapping[str, Any]] | None = None) -> Extraction:
    """What parser `parser` (a key of PARSERS, e.g. "vllm:hermes"; a bare engine name when only one
    engine has it) returns for the complete model output `text`, `tools` being the request's OpenAI
    `tools` list. Empty content is None. Raises UnknownParser (a KeyError) for a name it does not know."""
    row = _ROWS[_row_key(parser)]
    calls, content = _read(row, text, tool_schemas(tools))
    return _extraction(row.parser, calls, content, text)


def _read(row: Any, text: str, schemas: Any) -> tuple[list[ParsedCall], str | None]:
    """`row.read`, with a text nested deeper than Python's parsers recurse (JSON, Python literals: the model
    wrote it) read as the engines do when their parser raises: no call, the text left as content."""
    try:
        return row.read(text, schemas)
    except (RecursionError, MemoryError):
        return [], text


def _extraction(parser: EngineParser, calls: list[ParsedCall], content: str | None, text: str) -> Extraction:
    if not calls and parser.engine == "sglang":
        content = text  # SGLang returns the full text whenever its detector finds no call
    return Extraction(parser.key, tuple(calls), content or None)


def readers(text: str, tools: Sequence[Mapping[str, Any]] | None = None) -> list[Extraction]:
    """Every parser that extracts at least one call from `text`, in registry order."""
    schemas = tool_schemas(tools)
    found: list[Extraction] = []
    for row in _ROWS.values():
        calls, content = _read(row, text, schemas)
        if calls:
            found.append(_extraction(row.parser, calls, content, text))
    return found
