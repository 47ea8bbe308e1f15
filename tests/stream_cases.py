"""Chat-stream edge cases shared by the chat-stream and Messages-protocol tests: each is the chunks a
server sends, the calls they join into as decided, and the expected content and finish reason."""

from __future__ import annotations

from typing import Any


def piece(index: int | None = None, id: str | None = None, name: str | None = None, args: str | None = None,
          type: str | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {key: value for key, value in (("index", index), ("id", id), ("type", type))
                            if value is not None}
    function = {key: value for key, value in (("name", name), ("arguments", args)) if value is not None}
    if function:
        call["function"] = function
    return call


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def calls(*pieces: dict[str, Any], finish: str = "tool_calls") -> list[dict[str, Any]]:
    """One chunk per tool-call piece, the last with the finish reason."""
    return [chunk({"tool_calls": [p]}, finish if n == len(pieces) - 1 else None) for n, p in enumerate(pieces)]


# name: (chunks, [(id, name, arguments)] expected, content expected, finish_reason expected)
CASES: dict[str, tuple[list[dict[str, Any]], list[tuple[str, str, str]], str | None, str | None]] = {
    "arguments before the name": (
        calls(piece(0, args='{"a"'), piece(0, "c1", "bash"), piece(0, args=": 1}")),
        [("c1", "bash", '{"a": 1}')], None, "tool_calls"),
    "a new id at a used index is a new call": (
        calls(piece(0, "c1", "bash", '{"a":1}', "function"), piece(0, "c2", "read", '{"b":2}', "function")),
        [("c1", "bash", '{"a":1}'), ("c2", "read", '{"b":2}')], None, "tool_calls"),
    "two whole calls at index 0 without ids": (
        calls(piece(0, name="bash", args='{"a":1}'), piece(0, name="read", args='{"b":2}')),
        [("", "bash", '{"a":1}'), ("", "read", '{"b":2}')], None, "tool_calls"),
    "a skipped index": (
        calls(piece(0, "c1", "bash", "{}"), piece(2, "c2", "read", "{}")),
        [("c1", "bash", "{}"), ("c2", "read", "{}")], None, "tool_calls"),
    "indexes going back keep the order of arrival": (
        calls(piece(1, "c1", "bash", "{}"), piece(0, "c2", "read", "{}")),
        [("c1", "bash", "{}"), ("c2", "read", "{}")], None, "tool_calls"),
    "the id only in a later piece": (
        calls(piece(0, name="bash", args='{"a"'), piece(0, "c9", args=":1}")),
        [("c9", "bash", '{"a":1}')], None, "tool_calls"),
    "the id repeated in every piece": (
        calls(piece(0, "c1", "bash", '{"a"'), piece(0, "c1", args=":1}"), piece(0, "c1", args="")),
        [("c1", "bash", '{"a":1}')], None, "tool_calls"),
    "an empty id in later pieces": (
        calls(piece(0, "c1", "bash", "{"), piece(0, "", args="}")),
        [("c1", "bash", "{}")], None, "tool_calls"),
    "the name repeated in every piece": (
        calls(piece(0, "c1", "bash", '{"a"'), piece(0, name="bash", args=":1}")),
        [("c1", "bash", '{"a":1}')], None, "tool_calls"),
    "a name in pieces": (
        calls(piece(0, "c1", "re"), piece(0, name="ad_file", args="{}")),
        [("c1", "read_file", "{}")], None, "tool_calls"),
    "two pieces of one call at one index in one chunk (vLLM speculative decoding)": (
        [chunk({"tool_calls": [piece(0, "c1", "bash", '{"cmd": '), piece(0, args='"ls"')]}),
         chunk({"tool_calls": [piece(0, args="}")]}, "tool_calls")],
        [("c1", "bash", '{"cmd": "ls"}')], None, "tool_calls"),
    "two calls in one chunk": (
        [chunk({"tool_calls": [piece(0, "c1", "bash", "{}"), piece(1, "c2", "read", "{}")]}, "tool_calls")],
        [("c1", "bash", "{}"), ("c2", "read", "{}")], None, "tool_calls"),
    "arguments split mid-escape": (
        calls(piece(0, "c1", "write", '{"s": "a\\'), piece(0, args="n\\u00"), piece(0, args='e9"}'), finish="stop"),
        [("c1", "write", '{"s": "a\\n\\u00e9"}')], None, "stop"),
    "content after the tool calls": (
        [*calls(piece(0, "c1", "bash", "{}"), finish=""), chunk({"content": "done"}, "tool_calls")],
        [("c1", "bash", "{}")], "done", "tool_calls"),
    "finish_reason tool_calls without calls": (
        [chunk({"role": "assistant", "content": "hi"}), chunk({}, "tool_calls")], [], "hi", "tool_calls"),
    "the role in every chunk": (
        [chunk({"role": "assistant", "content": "a"}), chunk({"role": "assistant", "content": "b"}, "stop")],
        [], "ab", "stop"),
    "a null finish_reason after the real one": (
        [chunk({"content": "x"}, "stop"), chunk({}, None)], [], "x", "stop"),
}
