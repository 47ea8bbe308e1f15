"""The serving engines' tool-call parsers as pure logic: what vLLM, SGLang, llama.cpp and Ollama would
put in `tool_calls` (and leave in `content`) for a complete model output.

Each parser is found by key `engine:name` in `PARSERS`; `extract` runs one, `readers` runs them all.
The semantics are the engine's, failures included (malformed JSON, a tool not offered): they come
from the engines' own parser tests, recorded in tests/data/engine_parsers/.
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
    calls, content = row.read(text, tool_schemas(tools))
    return _extraction(row.parser, calls, content, text)


def _extraction(parser: EngineParser, calls: list[ParsedCall], content: str | None, text: str) -> Extraction:
    if not calls and parser.engine == "sglang":
        content = text  # SGLang returns the full text whenever its detector finds no call
    return Extraction(parser.key, tuple(calls), content or None)


def readers(text: str, tools: Sequence[Mapping[str, Any]] | None = None) -> list[Extraction]:
    """Every parser that extracts at least one call from `text`, in registry order."""
    schemas = tool_schemas(tools)
    found: list[Extraction] = []
    for row in _ROWS.values():
        calls, content = row.read(text, schemas)
        if calls:
            found.append(_extraction(row.parser, calls, content, text))
    return found
