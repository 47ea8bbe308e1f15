"""The Anthropic Messages API for the instruments: request bodies, replies read and checked, streams put together.

    body = messages_body(model, SYSTEM, USER, [anthropic_tool(name, description, schema)], choice("any"))
    reply = send_messages(client, body, timeout_s=180)   # never raises: reply.error, reply.message
    as_chat_completion(reply.message)                     # what the turn classifier and the judges read

`POST /v1/messages` takes `tools` as `{name, description, input_schema}` and `tool_choice` as
`{"type": "auto"}`, `{"type": "any"}` (a call is required) or `{"type": "tool", "name": ...}`. What a
reply and its stream look like, the strict check of a reply (`message_problem`), the stream put together
(`assemble`, strict) and the chat-completion reading (`as_chat_completion`) live with the API's other shapes
in `agentic_eval.wire.messages`, which the recorder and the classifier read too; they are named here as well.

A reply that breaks the API's rules (a block of an unknown type, a tool_use input that is not an object,
a stream whose deltas do not fit their blocks) is an error naming what was wrong. A server without the
route (HTTP 404 or 405) is `unsupported`, so the instruments can say "not supported" instead of failing.

The instruments judge a reply through its chat-completion equivalent (`as_chat_completion`): text blocks
are the content, thinking blocks the reasoning (never prose), tool_use blocks structured calls; the
Anthropic body itself is what they record.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentic_eval.wire.messages import MessagesStreamAssembler, as_chat_completion, assemble, message_problem

if TYPE_CHECKING:
    import httpx

__all__ = [
    "MessagesReply",
    "anthropic_headers",
    "anthropic_tool",
    "as_chat_completion",
    "assemble",
    "chat_request",
    "choice",
    "message_problem",
    "messages_body",
    "send_messages",
]

MESSAGES_PATH = "/messages"
"""Under the base URL (which ends in /v1)."""
ANTHROPIC_VERSION = "2023-06-01"
UNSUPPORTED_STATUSES = (404, 405)


def anthropic_headers(api_key: str) -> dict[str, str]:
    """The key the way Anthropic servers take it (`x-api-key`) and the API version they require; the
    Bearer header the client already sends covers the servers that read that instead."""
    return {"x-api-key": api_key, "anthropic-version": ANTHROPIC_VERSION}


def anthropic_tool(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    """One tool in the Messages API's form."""
    return {"name": name, "description": description, "input_schema": schema}


def choice(kind: str, name: str | None = None) -> dict[str, Any]:
    """`tool_choice`: "auto", "any" (some call is required) or "tool" (the call of `name`)."""
    if kind == "tool":
        return {"type": "tool", "name": name}
    return {"type": kind}


def messages_body(model: str, system: str, user: str, tools: list[dict[str, Any]], tool_choice: dict[str, Any],
                  *, stream: bool, max_tokens: int) -> dict[str, Any]:
    """A one-turn Messages API request."""
    return {"model": model, "system": system, "messages": [{"role": "user", "content": user}], "tools": tools,
            "tool_choice": tool_choice, "max_tokens": max_tokens, "temperature": 0, "stream": stream}


def chat_request(body: dict[str, Any]) -> dict[str, Any]:
    """The chat-completion request equivalent to a Messages API one (its tools in chat form), for the
    classifier's tool-name and schema checks."""
    tools = [{"type": "function", "function": {"name": t.get("name"), "description": t.get("description", ""),
                                               "parameters": t.get("input_schema")}}
             for t in body.get("tools") or [] if isinstance(t, dict)]
    return {"model": body.get("model"), "messages": body.get("messages"), "tools": tools}


# ---------------------------------------------------------------- one exchange


@dataclass
class MessagesReply:
    """One Messages API request and what came back."""

    status: int | None = None
    body: object = None
    """The reply as it came: the JSON body, or the message a stream added up to (the raw text when it was not
    JSON)."""
    message: dict[str, Any] | None = None
    """The reply, checked: set only when it is a well-formed Messages API message."""
    error: str | None = None
    unsupported: bool = False
    """The server has no Messages API at this path (HTTP 404 / 405)."""
    stream_done: bool = True
    """Streamed: whether message_stop came."""
    elapsed_s: float = 0.0

    @property
    def chat(self) -> dict[str, Any] | None:
        """The reply as a chat completion (None without a checked message)."""
        return as_chat_completion(self.message) if self.message is not None else None


def _http_error(reply: MessagesReply, status: int, text: str) -> MessagesReply:
    reply.status = status
    reply.unsupported = status in UNSUPPORTED_STATUSES
    shown = " ".join(text.split())[:200]
    reply.error = (f"HTTP {status}: the server does not speak the Anthropic Messages API at /v1/messages ({shown})"
                   if reply.unsupported else f"HTTP {status}: {shown}")
    try:
        reply.body = json.loads(text)
    except ValueError:
        reply.body = text[:2000]
    return reply


def _take(assembler: MessagesStreamAssembler, data: str, payload: dict[str, Any] | None) -> None:
    if payload is not None:
        assembler.add(payload)
    elif data.strip() and assembler.problem is None:  # an empty data line is a keep-alive
        assembler.problem = f"an event that is not a JSON object: {data[:80]!r}"


def send_messages(client: httpx.Client, body: dict[str, Any], timeout_s: float, api_key: str) -> MessagesReply:
    """POST a Messages API request with an httpx client whose base URL is the endpoint's (streamed when the
    body says so) and check what comes back. Never raises for the server's behaviour."""
    import httpx

    from agentic_eval.wire.sse import MAX_LINE_BYTES, SSEDecoder, StreamUnreadable, parse_event_json

    reply, start = MessagesReply(), time.perf_counter()
    headers = anthropic_headers(api_key)
    try:
        if not body.get("stream"):
            resp = client.post(MESSAGES_PATH, json=body, headers=headers, timeout=timeout_s)
            if resp.status_code >= 400:
                return _http_error(reply, resp.status_code, resp.text)
            reply.status = resp.status_code
            try:
                reply.body = resp.json()
            except ValueError:
                reply.body, reply.error = resp.text[:2000], "the body is not JSON"
                return reply
        else:
            assembler = MessagesStreamAssembler(strict=True)
            with client.stream("POST", MESSAGES_PATH, json=body, headers=headers, timeout=timeout_s) as resp:
                if resp.status_code >= 400:
                    return _http_error(reply, resp.status_code, resp.read().decode("utf-8", "replace"))
                reply.status = resp.status_code
                decoder = SSEDecoder(max_line=MAX_LINE_BYTES)
                for chunk in resp.iter_bytes():
                    for event in decoder.feed(chunk):
                        _take(assembler, event.data, parse_event_json(event.data))
                    if time.perf_counter() - start > timeout_s:
                        reply.error = f"timeout after {timeout_s:g} s"
                        return reply
                for event in decoder.close():
                    _take(assembler, event.data, parse_event_json(event.data))
            reply.body, reply.stream_done = assembler.result(), assembler.done
            if assembler.error is not None:
                reply.error = f"error inside the stream: {assembler.error}"
                return reply
            if assembler.problem is not None:
                reply.error = f"malformed stream: {assembler.problem}"
                return reply
            if reply.body is None:
                reply.error = "the stream held no message_start event"
                return reply
    except httpx.TimeoutException:
        reply.error = f"timeout after {timeout_s:g} s"
        return reply
    except (httpx.HTTPError, StreamUnreadable) as exc:
        reply.error = f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
        return reply
    finally:
        reply.elapsed_s = time.perf_counter() - start
    problem = message_problem(reply.body)
    if problem is not None or not isinstance(reply.body, dict):
        reply.error = f"not a Messages API reply: {problem}"
        return reply
    reply.message = reply.body
    return reply
