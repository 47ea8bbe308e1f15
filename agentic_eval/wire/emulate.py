"""`--emulate-parser`: the wire recorder does what a serving engine's tool parser would have done.

A what-if run: the endpoint returned the model's tool calls as text (no tool parser enabled, or the wrong
one); the recorder hands the agent the reply that engine parser would have made of it, the calls it reads
as structured `tool_calls` and the rest of the text as content, so a user measures "if I fixed the server,
would this model pass under this agent?" with any agent. The rewriting itself is the parser's
(agentic_eval.classify.emulation builds a `ReplyRewriter`); here is what the relays (recorder.py,
translate.py) need around it: the rewritten reply as a stream, and its part of the wire record, which keeps
the endpoint's reply as it was (`response`) and the rewritten one beside it (`emulated`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ReplyRewriter", "emulated_record", "responses_stream_bytes", "stream_bytes"]


@dataclass(frozen=True)
class ReplyRewriter:
    """What the recorder emulates: a name for the record ('vllm:hermes') and the rewrite, (the request, the
    endpoint's chat completion or Responses API response) -> the reply the agent gets, or None to pass the
    endpoint's on unchanged."""

    name: str
    rewrite: Callable[[Any, Any], dict[str, Any] | None]


def _chunk(reply: Mapping[str, Any], choices: list[dict[str, Any]], **extra: Any) -> bytes:
    payload = {"id": reply.get("id", ""), "object": "chat.completion.chunk", "created": reply.get("created", 0),
               "model": reply.get("model", ""), "choices": choices, **extra}
    return b"data: " + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n"


def stream_bytes(reply: Mapping[str, Any]) -> bytes:
    """A chat completion as the stream an OpenAI-compatible server sends for it: per choice the role with any
    reasoning and content, then each tool call whole, then the finish; the usage (if any) in a last chunk with
    no choices; then `[DONE]`. A Responses API `response` (no `choices`): `responses_stream_bytes`."""
    if not isinstance(reply.get("choices"), list) and isinstance(reply.get("output"), list):
        return responses_stream_bytes(reply)
    out = []
    for position, choice in enumerate(reply.get("choices") or ()):
        message = choice.get("message") or {}
        delta: dict[str, Any] = {"role": "assistant"}
        for key in ("reasoning_content", "reasoning"):
            if isinstance(message.get(key), str) and message[key]:
                delta[key] = message[key]
        if message.get("content"):
            delta["content"] = message["content"]
        out.append(_chunk(reply, [{"index": position, "delta": delta, "finish_reason": None}]))
        for number, call in enumerate(message.get("tool_calls") or ()):
            piece = {"index": number, "id": call.get("id"), "type": "function", "function": call.get("function")}
            out.append(_chunk(reply, [{"index": position, "delta": {"tool_calls": [piece]}, "finish_reason": None}]))
        out.append(_chunk(reply, [{"index": position, "delta": {}, "finish_reason": choice.get("finish_reason")}]))
    if isinstance(reply.get("usage"), Mapping):
        out.append(_chunk(reply, [], usage=reply["usage"]))
    out.append(b"data: [DONE]\n\n")
    return b"".join(out)


def _item_events(position: int, item: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One output item's events between `output_item.added` and `output_item.done`: each text part or the
    arguments whole, in one delta."""
    where = {"output_index": position, "item_id": item.get("id", "")}
    if item.get("type") == "function_call":
        arguments = item.get("arguments") if isinstance(item.get("arguments"), str) else ""
        return [{"type": "response.function_call_arguments.delta", **where, "delta": arguments},
                {"type": "response.function_call_arguments.done", **where, "arguments": arguments}]
    if item.get("type") != "message" or not isinstance(item.get("content"), list):
        return []  # reasoning and the rest: whole in `output_item.done`
    events: list[dict[str, Any]] = []
    for number, part in enumerate(item["content"]):
        if not isinstance(part, Mapping) or part.get("type") != "output_text" or not isinstance(part.get("text"), str):
            continue
        at = {**where, "content_index": number}
        events += [{"type": "response.content_part.added", **at, "part": {**part, "text": ""}},
                   {"type": "response.output_text.delta", **at, "delta": part["text"]},
                   {"type": "response.output_text.done", **at, "text": part["text"]},
                   {"type": "response.content_part.done", **at, "part": dict(part)}]
    return events


def responses_stream_bytes(reply: Mapping[str, Any]) -> bytes:
    """A Responses API `response` as the stream an OpenAI-compatible server sends for it: `response.created`
    (no output yet), per output item `output_item.added`, its text or arguments, `output_item.done`, then
    `response.completed` with the whole response; named events, numbered."""
    started = {**reply, "status": "in_progress", "output": [], "usage": None}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": started},
                                    {"type": "response.in_progress", "response": started}]
    for position, item in enumerate(reply.get("output") or ()):
        if not isinstance(item, Mapping):
            continue
        opened = {**item, "content": []} if item.get("type") == "message" else dict(item)
        if item.get("type") == "function_call":
            opened["arguments"] = ""
        events.append({"type": "response.output_item.added", "output_index": position, "item": opened})
        events += _item_events(position, item)
        events.append({"type": "response.output_item.done", "output_index": position, "item": dict(item)})
    events.append({"type": "response.completed", "response": dict(reply)})
    return b"".join(f"event: {event['type']}\ndata: ".encode()
                    + json.dumps({**event, "sequence_number": number}, ensure_ascii=False).encode() + b"\n\n"
                    for number, event in enumerate(events))


def emulated_record(parser: str, rewritten: dict[str, Any] | None) -> dict[str, Any]:
    """The wire record's `emulated` part: the parser, and the reply the agent got (None: the endpoint's own,
    nothing to rewrite)."""
    return {"parser": parser, "rewritten": rewritten is not None, "response": rewritten}
