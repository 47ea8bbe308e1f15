"""The one home of "1 trial" / "2 trials" (agentic_eval/plural.py)."""

from __future__ import annotations

import pytest

from agentic_eval.plural import counted


@pytest.mark.parametrize(("n", "word", "plural", "text"), [
    (1, "trial", "", "1 trial"),
    (0, "trial", "", "0 trials"),
    (2, "attempt", "", "2 attempts"),
    (1, "prose reply", "prose replies", "1 prose reply"),
    (3, "prose reply", "prose replies", "3 prose replies"),
])
def test_counted(n: int, word: str, plural: str, text: str) -> None:
    assert counted(n, word, plural) == text
