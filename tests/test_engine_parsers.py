"""The engine parsers' registry and interface; the engines' own cases are in test_engine_parsers_cases.py."""

from __future__ import annotations

import pytest

from agentic_eval.classify.parsers import PARSERS, Extraction, ParsedCall, UnknownParser, extract, readers

WEATHER = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]
HERMES = 'Let me check.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def test_every_row_is_keyed_by_engine_and_name() -> None:
    assert PARSERS
    from agentic_eval.classify.turn import FAMILIES

    for key, parser in PARSERS.items():
        assert parser.engine in ("vllm", "sglang", "llama.cpp", "ollama")
        # llama.cpp names its formats in words ("Hermes 2 Pro"); the key spells them in snake case
        spelled = parser.name.lower().replace(" ", "_").replace("-", "_").replace(".", "_")
        assert key == f"{parser.engine}:{parser.name if parser.engine != 'llama.cpp' else spelled}"
        assert parser.families and set(parser.families) <= set(FAMILIES), key
        assert parser.name in parser.how_to_enable


def test_extract_returns_the_engines_call_and_content() -> None:
    assert extract("vllm:hermes", HERMES, WEATHER) == Extraction(
        "vllm:hermes", (ParsedCall("get_weather", {"city": "Paris"}),), "Let me check.")


def test_a_bare_name_served_by_one_engine_is_enough() -> None:
    assert extract("hermes", HERMES, WEATHER).parser == "vllm:hermes"


@pytest.mark.parametrize(("name", "message"), [
    ("vllm:hermse", "did you mean vllm:hermes"),
    ("mistral", "ambiguous: name one of vllm:mistral, sglang:mistral"),
])
def test_an_unknown_name_says_what_to_use(name: str, message: str) -> None:
    with pytest.raises(UnknownParser, match=message):
        extract(name, HERMES)
    with pytest.raises(KeyError):
        extract(name, HERMES)


def test_readers_names_every_parser_that_reads_a_call_in_registry_order() -> None:
    keys = [found.parser for found in readers(HERMES, WEATHER)]
    assert "vllm:hermes" in keys and "sglang:qwen25" in keys
    assert keys == [key for key in PARSERS if key in keys]
    assert readers("Paris is sunny today.", WEATHER) == []


def test_the_fast_pythonic_pattern_accepts_what_the_engines_pattern_accepts() -> None:
    """The engines' own pattern backtracks exponentially; ours must match the same strings, as a whole
    and by search (same span), on every short string over the characters that matter."""
    import importlib
    import random
    import re

    # A private detail on purpose: the pattern itself, held against the engines' (the layout rule keeps tests
    # off private modules by import statement; this one test needs the pattern, not a reader's result).
    _CALL_LIST = importlib.import_module("agentic_eval.classify.parsers._pythonic")._CALL_LIST

    name = r"[a-zA-Z]+\w*"
    engines = re.compile(rf"\[({name}\(({name}=.*,\s*)*({name}=.*\s)?\),\s*)*"
                         rf"({name}\(({name}=.*,\s*)*({name}=.*\s*)?\)\s*)+\]", re.DOTALL)
    pieces = ["[", "]", "f(", "g(", ")", "a=", "1", ",", " ", "x", "\n"]
    generator = random.Random(38)
    for _ in range(3000):
        text = "".join(generator.choice(pieces) for _ in range(generator.randint(1, 8)))
        assert bool(engines.fullmatch(text)) == bool(_CALL_LIST.fullmatch(text)), text
        theirs, ours = engines.search(text), _CALL_LIST.search(text)
        assert (theirs and theirs.span()) == (ours and ours.span()), text
