"""Requests stored by reference in a wire log: what a request repeats from an earlier one is left out.

An agent resends its whole history with every request, so a log that stored each request whole
would grow with the square of the conversation (six 5 MB `write_file` calls: 135 MB). A request
is instead stored against an earlier record of the same log (its *base*, the recent request it
shares the longest history prefix with):

    "request": {"model": "m", "messages": [<only the new messages>], "stream": true},
    "request_ref": {"base": "<id of the earlier record>", "key": "messages", "prefix": 12,
                    "same": ["tools"]}

reads as: `messages` is the base request's first 12 messages followed by the stored ones, and
`tools` is the base request's. A long string of the new messages that the base's *reply* holds
(the model's own tool call arguments, sent back in the history) is stored as "" and listed in
`from_response`: [[path in the stored messages, path in the base record's response], ...].
`RequestResolver` puts whole requests back, line by line, in file order. Pure functions on plain
data; the wire recorder and every reader of a log use them.
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
LONG_STRING = 4096
"""A string of a new message at least this long, found in the base's reply, is stored by reference."""

Path_ = list[str | int]
Base = tuple[str, dict[str, Any], Any]
"""An earlier record: its id, its whole request, its response."""


def _long_strings(value: object) -> dict[str, Path_]:
    """Every string of at least LONG_STRING characters in JSON data, with its path (the first one)."""
    found: dict[str, Path_] = {}
    stack: list[tuple[object, Path_]] = [(value, [])]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            if len(item) >= LONG_STRING:
                found.setdefault(item, path)
        elif isinstance(item, dict):
            stack.extend((child, [*path, name]) for name, child in item.items())
        elif isinstance(item, list):
            stack.extend((child, [*path, number]) for number, child in enumerate(item))
    return found


def _blank_known(value: object, known: dict[str, Path_], path: Path_, pairs: list[list[Path_]]) -> object:
    """`value` with every string of `known` replaced by "" (copied where changed; the input is
    left as it is), each replacement listed in `pairs` as [its path, its path in the reply]."""
    if isinstance(value, str):
        if len(value) >= LONG_STRING and value in known:
            pairs.append([path, known[value]])
            return ""
        return value
    if isinstance(value, dict):
        items = {name: _blank_known(child, known, [*path, name], pairs) for name, child in value.items()}
        return items if any(items[name] is not value[name] for name in value) else value
    if isinstance(value, list):
        listed = [_blank_known(child, known, [*path, number], pairs) for number, child in enumerate(value)]
        return listed if any(new is not old for new, old in zip(listed, value, strict=True)) else value
    return value


def _at(value: Any, path: Any) -> tuple[Any, bool]:
    """(the value at `path` inside `value`, whether the path exists)."""
    if not isinstance(path, list):
        return None, False
    for step in path:
        in_object = isinstance(value, dict) and isinstance(step, str) and step in value
        in_list = (isinstance(value, list) and isinstance(step, int) and not isinstance(step, bool)
                   and 0 <= step < len(value))
        if not (in_object or in_list):
            return None, False
        value = value[step]
    return value, True


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


def _large(value: object) -> bool:
    if isinstance(value, str):
        return len(value) >= _SMALL
    return isinstance(value, list | dict) and len(repr(value)) >= _SMALL


def shorten_request(request: Any, bases: Iterable[Base]) -> tuple[Any, dict[str, Any] | None]:
    """(what to store, its `request_ref`): the request less what it repeats from the best of `bases`
    (earlier records). `(request, None)` when nothing is worth a reference."""
    if not isinstance(request, dict):
        return request, None
    key = _history_key(request)
    best: tuple[int, str, dict[str, Any], Any] | None = None
    for base_id, base, response in bases:
        if key is None or _history_key(base) != key:
            continue
        prefix = _common_prefix(request[key], base[key])
        if prefix and (best is None or prefix > best[0]):
            best = (prefix, base_id, base, response)
    if best is None:
        return request, None
    prefix, base_id, base, response = best
    same = sorted(name for name, value in request.items()
                  if name != key and name in base and _large(value) and base[name] == value)
    stored = {name: value for name, value in request.items() if name not in same}
    pairs: list[list[Path_]] = []
    known = _long_strings(response) if isinstance(response, dict | list) else {}
    stored[key] = _blank_known(request[key][prefix:], known, [], pairs) if known else request[key][prefix:]
    ref: dict[str, Any] = {"base": base_id, "key": key, "prefix": prefix, "same": same}
    if pairs:
        ref["from_response"] = pairs
    return stored, ref


def share_base(whole: dict[str, Any], ref: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """`whole` (a request shortened with `ref`) holding its base's items and values where they are
    equal, so a chain of requests holds each message once in memory."""
    shared = dict(whole)
    for name in ref["same"]:
        shared[name] = base[name]
    key = ref["key"]
    shared[key] = base[key][: ref["prefix"]] + whole[key][ref["prefix"]:]
    return shared


class RequestResolver:
    """Whole requests back from a log's records, read in file order. Keeps each whole request (their
    lists share items, so memory grows with what was said, not with its square)."""

    def __init__(self) -> None:
        self._requests: dict[str, Any] = {}
        self._responses: dict[str, object] = {}

    def resolve(self, record_id: object, request: object, ref: object, response: object = None
                ) -> tuple[object, str | None]:
        """(the whole request, None), or (what was stored, why it cannot be made whole)."""
        whole, problem = request, None
        if ref is not None:
            whole, problem = self._apply(request, ref)
        if isinstance(record_id, str) and problem is None:
            self._requests[record_id] = whole
            self._responses[record_id] = response
        return whole, problem

    def _apply(self, request: object, ref: object) -> tuple[object, str | None]:
        if not isinstance(ref, dict) or not isinstance(request, dict):
            return request, "request_ref is not an object, or the request it applies to is not"
        base = self._requests.get(ref.get("base"))  # type: ignore[arg-type]
        key, prefix, same = ref.get("key"), ref.get("prefix"), ref.get("same") or []
        if not isinstance(base, dict):
            return request, (f"request stored by reference to record {ref.get('base')!r}, "
                             "which is not earlier in the log")
        if (key not in HISTORY_KEYS or not isinstance(prefix, int) or not isinstance(same, list)
                or not isinstance(base.get(key), list) or not isinstance(request.get(key), list)
                or not 0 <= prefix <= len(base[key]) or any(name not in base for name in same)):
            return request, "request_ref does not fit its base record"
        pairs = ref.get("from_response") or []
        reply = self._responses.get(ref["base"])
        if not isinstance(pairs, list):
            return request, "request_ref.from_response is not a list"
        for pair in pairs:
            text, found = _at(reply, pair[1] if isinstance(pair, list) and len(pair) == 2 else None)
            path = pair[0] if isinstance(pair, list) and len(pair) == 2 else None
            blank, there = _at(request[key], path)
            if not (found and there and isinstance(text, str) and blank == "" and path):
                return request, "request_ref.from_response does not fit its base record"
            parent, _ = _at(request[key], path[:-1])
            parent[path[-1]] = text
        whole = dict(request)
        for name in same:
            whole[name] = base[name]
        whole[key] = base[key][:prefix] + request[key]
        return whole, None


def bounded_recent() -> deque[Base]:
    """The recorder's list of recent bases: (record id, whole request, response), newest last."""
    return deque(maxlen=RECENT_BASES)


def deeper_than(value: object, limit: int) -> bool:
    """True when JSON data nests more than `limit` levels (checked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return False
