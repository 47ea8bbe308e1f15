"""`--emulate-parser`: a chat completion as a serving engine's tool parser would have returned it.

Pure functions on the engine parsers (agentic_eval.classify.parsers); the wire recorder applies them through
a `ReplyRewriter` (agentic_eval.wire.emulate) and keeps both replies in the wire log.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from agentic_eval.wire.emulate import ReplyRewriter

__all__ = ["parser_rewriter", "rewrite_reply"]


def parser_rewriter(parser: str) -> ReplyRewriter:
    """The wire recorder's rewriter for an engine parser key ('vllm:hermes'; see diagnosis.resolve_parser)."""
    return ReplyRewriter(parser, functools.partial(rewrite_reply, parser))


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
    read, already structured, not a chat completion, no tools offered or `tool_choice: "none"`)."""
    from agentic_eval.classify.parsers import extract

    if not isinstance(reply, Mapping) or not isinstance(reply.get("choices"), list):
        return None
    tools = _tools(request)
    if not tools or (isinstance(request, Mapping) and request.get("tool_choice") == "none"):
        return None  # an engine parses tool calls only when the request offers tools and allows them
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
