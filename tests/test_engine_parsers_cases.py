"""The engines' own parser test cases (tests/data/engine_parsers/*.jsonl, written from what vLLM's,
SGLang's and llama.cpp's public parser tests assert; each case names its source): our parser gives
the engine's calls, and the engine's content where the test asserts it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.classify.parsers import extract

DATA = Path(__file__).parent / "data" / "engine_parsers"


def load_cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    for path in sorted(DATA.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                cases.append({**json.loads(line), "id": f"{path.stem}:{number}"})
    return cases


CASES = load_cases()


@pytest.mark.parametrize("case", CASES, ids=[f"{case['id']}:{case['parser']}" for case in CASES])
def test_the_engines_case(case: dict[str, Any]) -> None:
    found = extract(case["parser"], case["text"], case["tools"])
    assert [call.name for call in found.calls] == [call["name"] for call in case["calls"]], case["source"]
    for got, expected in zip(found.calls, case["calls"], strict=True):
        if expected["arguments"] is not None:  # None: the engine's test asserts the name only
            assert got.arguments == expected["arguments"], case["source"]
    if "content" in case:
        assert found.content == (case["content"] or None), case["source"]


def test_the_corpus_has_the_issues_scale() -> None:
    positives = [case for case in CASES if case["calls"]]
    assert len(positives) >= 200 and len(CASES) - len(positives) >= 40
    assert all(case["source"]["repo"] and case["source"]["test"] for case in CASES)
