"""A count and its noun, in the plural unless the count is one: "1 trial", "2 trials", "2 replies"."""

from __future__ import annotations


def counted(n: int, word: str, plural: str = "") -> str:
    """`n` and `word`, or `plural` (default: `word` + "s") unless `n` is 1."""
    return f"{n} {word if n == 1 else plural or word + 's'}"
