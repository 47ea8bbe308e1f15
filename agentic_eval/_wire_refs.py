"""Requests stored by reference in a wire log: what a request repeats from an earlier one is left out.

An agent resends its whole history with every request, so a log that stored each request whole
would grow with the square of the conversation (six 5 MB `write_file` calls: 135 MB). A request
is instead stored against an earlier record of the same log (its *base*, the recent request it
shares the longest history prefix with):

    "request": {"model": "m", "messages": [<only the new messages>], "stream": true},
    "request_ref": {"base": "<id of the earlier record>", "key": "messages", "prefix": 12,
                    "same": ["tools"]}

reads as: `messages` is the base request's first 12 messages followed by the stored ones, and
`tools` is the base request's. `RequestResolver` puts whole requests back, line by line, in file
order. Pure functions on plain data; the wire recorder and every reader of a log use them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any

HISTORY_KEYS = ("messages", "input")
"""The request field that holds the conversation: chat completions' `messages`, Responses' `input`."""
RECENT_BASES = 8
"""How many earlier requests are tried as a base (agents that run sub-conversations interleave them)."""
_SMALL = 256
"""A top-level value shorter than this (as text) is stored again rather than by reference."""


def _history_key(request: dict[str, Any]) -> str | None:
    for key in HISTORY_KEYS:
        if isinstance(request.get(key), list):
            return key
    return None


def _common_prefix(a: list[Any], b: list[Any]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _large(value: Any) -> bool:
    if isinstance(value, str):
        return len(value) >= _SMALL
    return isinstance(value, list | dict) and len(repr(value)) >= _SMALL


def shorten_request(request: Any, bases: Iterable[tuple[str, dict[str, Any]]]) -> tuple[Any, dict[str, Any] | None]:
    """(what to store, its `request_ref`): the request less what it repeats from the best of `bases`
    (earlier records' ids and whole requests). `(request, None)` when nothing is worth a reference."""
    if not isinstance(request, dict):
        return request, None
    key = _history_key(request)
    best: tuple[int, str, dict[str, Any]] | None = None
    for base_id, base in bases:
        if key is None or _history_key(base) != key:
            continue
        prefix = _common_prefix(request[key], base[key])
        if prefix and (best is None or prefix > best[0]):
            best = (prefix, base_id, base)
    if best is None:
        return request, None
    prefix, base_id, base = best
    same = sorted(name for name, value in request.items()
                  if name != key and name in base and _large(value) and base[name] == value)
    stored = {name: value for name, value in request.items() if name not in same}
    stored[key] = request[key][prefix:]
    return stored, {"base": base_id, "key": key, "prefix": prefix, "same": same}


class RequestResolver:
    """Whole requests back from a log's records, read in file order. Keeps each whole request (their
    lists share items, so memory grows with what was said, not with its square)."""

    def __init__(self) -> None:
        self._requests: dict[str, Any] = {}

    def resolve(self, record_id: Any, request: Any, ref: Any) -> tuple[Any, str | None]:
        """(the whole request, None), or (what was stored, why it cannot be made whole)."""
        whole, problem = request, None
        if ref is not None:
            whole, problem = self._apply(request, ref)
        if isinstance(record_id, str) and problem is None:
            self._requests[record_id] = whole
        return whole, problem

    def _apply(self, request: Any, ref: Any) -> tuple[Any, str | None]:
        if not isinstance(ref, dict) or not isinstance(request, dict):
            return request, "request_ref is not an object, or the request it applies to is not"
        base = self._requests.get(ref.get("base"))  # type: ignore[arg-type]
        key, prefix, same = ref.get("key"), ref.get("prefix"), ref.get("same") or []
        if not isinstance(base, dict):
            return request, f"request stored by reference to record {ref.get('base')!r}, which is not earlier in the log"
        if (key not in HISTORY_KEYS or not isinstance(prefix, int) or not isinstance(same, list)
                or not isinstance(base.get(key), list) or not isinstance(request.get(key), list)
                or not 0 <= prefix <= len(base[key]) or any(name not in base for name in same)):
            return request, "request_ref does not fit its base record"
        return rebuild(request, ref, base), None


def rebuild(stored: dict[str, Any], ref: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """The whole request from what was stored, its `request_ref` and its base's whole request. The
    result shares the base's items, so a chain of requests holds each message once in memory."""
    whole = dict(stored)
    for name in ref["same"]:
        whole[name] = base[name]
    key = ref["key"]
    whole[key] = base[key][: ref["prefix"]] + stored[key]
    return whole


def bounded_recent() -> deque[tuple[str, dict[str, Any]]]:
    """The recorder's list of recent bases: (record id, whole request), newest last."""
    return deque(maxlen=RECENT_BASES)


def deeper_than(value: Any, limit: int) -> bool:
    """True when JSON data nests more than `limit` levels (checked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return False
