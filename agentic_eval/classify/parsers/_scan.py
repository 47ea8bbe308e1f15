"""Finding tagged blocks without the quadratic search of `OPEN(.*?)CLOSE` patterns on outputs full of
openers that never close (models do loop)."""

from __future__ import annotations

import re

__all__ = ["blocks", "tagged"]


def blocks(text: str, opener: str, closer: str, start: int = 0, *, unclosed: bool = False) -> list[str]:
    """The bodies between each `opener` and the next `closer`, as `OPEN(.*?)CLOSE` finds them; with
    `unclosed`, an opener left open adds the rest of the text as a last body (`|OPEN(.*)$`)."""
    bodies: list[str] = []
    while (begin := text.find(opener, start)) != -1:
        end = text.find(closer, begin + len(opener))
        if end == -1:
            if unclosed:
                bodies.append(text[begin + len(opener) :])
            break
        bodies.append(text[begin + len(opener) : end])
        start = end + len(closer)
    return bodies


def tagged(text: str, header: re.Pattern[str], closer: str) -> list[tuple[re.Match[str], str]]:
    """Each `header` match with the body up to the next `closer` (headers without a closer are skipped)."""
    found: list[tuple[re.Match[str], str]] = []
    position = 0
    while (match := header.search(text, position)) is not None:
        end = text.find(closer, match.end())
        if end == -1:
            break
        found.append((match, text[match.end() : end]))
        position = end + len(closer)
    return found
