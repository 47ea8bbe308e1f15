"""`--emulate-parser`: the wire recorder does what a serving engine's tool parser would have done.

A what-if run: the endpoint returned the model's tool calls as text (no tool parser enabled, or the wrong
one); the recorder hands the agent the reply that engine parser would have made of it, the calls it reads
as structured `tool_calls` and the rest of the text as content, so a user measures "if I fixed the server,
would this model pass under this agent?" with any agent. Pure functions here; the relays (recorder.py,
translate.py) call them, and the wire log keeps the endpoint's reply as it was (`response`) and the
rewritten one beside it (`emulated`).
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["emulated_record", "rewrite_reply", "stream_bytes"]


def _tools(request: Any) -> list[Mapping[str, Any]] | None:
    tools = request.get("tools") if isinstance(request, Mapping) else None
    return [t for t in tools if isinstance(t, Mapping)] if isinstance(tools, list) else None


def _call_id(reply_id: str, choice: int, number: int) -> str:
    digest = hashlib.sha256(f"{reply_id}/{choice}/{number}".encode()).hexdigest()[:24]
    return f"call_{digest}"


def rewrite_reply(parser: str, request: Any, reply: Any) -> dict[str, Any] | None:
    """The chat completion `reply` as the engine parser `parser` would have returned it: in each choice whose
    message has no structured call and whose content the parser reads calls from, those calls as `tool_calls`
    (finish_reason `tool_calls`) and what the parser leaves as `content`. None when nothing changes (no call
    read, already structured, not a chat completion)."""
    from agentic_eval.classify.parsers import extract

    if not isinstance(reply, Mapping) or not isinstance(reply.get("choices"), list):
        return None
    tools = _tools(request)
    out = copy.deepcopy(dict(reply))
    changed = False
    for position, choice in enumerate(out["choices"]):
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict) or message.get("tool_calls") or not isinstance(message.get("content"), str):
            continue
        extraction = extract(parser, message["content"], tools)
        if not extraction.calls:
            continue
        message["content"] = extraction.content if extraction.content and extraction.content.strip() else None
        message["tool_calls"] = [
            {"id": _call_id(str(reply.get("id", "")), position, number), "type": "function",
             "function": {"name": call.name, "arguments": json.dumps(call.arguments, ensure_ascii=False)}}
            for number, call in enumerate(extraction.calls)]
        choice["finish_reason"] = "tool_calls"
        changed = True
    return out if changed else None


def _chunk(reply: Mapping[str, Any], choices: list[dict[str, Any]], **extra: Any) -> bytes:
    payload = {"id": reply.get("id", ""), "object": "chat.completion.chunk", "created": reply.get("created", 0),
               "model": reply.get("model", ""), "choices": choices, **extra}
    return b"data: " + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n"


def stream_bytes(reply: Mapping[str, Any]) -> bytes:
    """A chat completion as the stream an OpenAI-compatible server sends for it: per choice the role with any
    reasoning and content, then each tool call whole, then the finish; the usage (if any) in a last chunk with
    no choices; then `[DONE]`."""
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


def emulated_record(parser: str, rewritten: dict[str, Any] | None) -> dict[str, Any]:
    """The wire record's `emulated` part: the parser, and the reply the agent got (None: the endpoint's own,
    nothing to rewrite)."""
    return {"parser": parser, "rewritten": rewritten is not None, "response": rewritten}
