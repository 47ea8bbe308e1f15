"""`--emulate-parser`: a chat completion, or a Responses API response, as a serving engine's tool parser would
have returned it.

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

__all__ = ["parser_rewriter", "rewrite_reply", "rewrite_response"]


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
    (finish_reason `tool_calls`) and what the parser leaves as `content`. A Responses API `response` (an `output`
    list, no `choices`): see `rewrite_response`. None when nothing changes (no call read, already structured,
    neither shape, no tools offered or `tool_choice: "none"`)."""
    from agentic_eval.classify.parsers import extract

    if not isinstance(reply, Mapping):
        return None
    tools = _tools(request)
    if not tools or (isinstance(request, Mapping) and request.get("tool_choice") == "none"):
        return None  # an engine parses tool calls only when the request offers tools and allows them
    if not isinstance(reply.get("choices"), list):
        return rewrite_response(parser, tools, reply) if isinstance(reply.get("output"), list) else None
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


def _message_text(item: Mapping[str, Any]) -> str | None:
    """The text of a Responses API assistant `message` item made only of `output_text` parts, or None."""
    parts = item.get("content")
    if item.get("role", "assistant") != "assistant" or not isinstance(parts, list) or not parts:
        return None
    if not all(isinstance(p, Mapping) and p.get("type") == "output_text" and isinstance(p.get("text"), str)
               for p in parts):
        return None
    return "".join(p["text"] for p in parts)


def rewrite_response(parser: str, tools: list[Mapping[str, Any]], reply: Mapping[str, Any]) -> dict[str, Any] | None:
    """A Responses API `response` as the engine parser would have returned it (vLLM and SGLang serve
    `/v1/responses` through the same tool parsers): each assistant `message` item whose text the parser reads
    calls from becomes a message with what the parser leaves (dropped when nothing is left) followed by one
    `function_call` item per call. None when the response already holds a `function_call` item or no text is
    read as a call."""
    from agentic_eval.classify.parsers import extract

    output = reply["output"]
    if any(isinstance(item, Mapping) and item.get("type") == "function_call" for item in output):
        return None
    reply_id = str(reply.get("id", ""))
    items: list[Any] = []
    changed = False
    for position, item in enumerate(output):
        text = _message_text(item) if isinstance(item, Mapping) and item.get("type") == "message" else None
        extraction = extract(parser, text, tools) if text is not None else None
        if extraction is None or not extraction.calls:
            items.append(copy.deepcopy(item))
            continue
        assert isinstance(item, Mapping)
        changed = True
        if extraction.content and extraction.content.strip():
            items.append({**copy.deepcopy(dict(item)),
                          "content": [{"type": "output_text", "text": extraction.content, "annotations": []}]})
        for number, call in enumerate(extraction.calls):
            call_id = _call_id(reply_id, position, number)
            items.append({"id": "fc_" + call_id.removeprefix("call_"), "type": "function_call", "call_id": call_id,
                          "name": call.name, "arguments": json.dumps(call.arguments, ensure_ascii=False),
                          "status": "completed"})
    return {**copy.deepcopy(dict(reply)), "output": items} if changed else None
