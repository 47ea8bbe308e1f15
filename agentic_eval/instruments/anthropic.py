"""The Anthropic Messages API for the instruments: request bodies, replies read and checked, streams put together.

    body = messages_body(model, SYSTEM, USER, [anthropic_tool(name, description, schema)], choice("any"))
    reply = send_messages(client, body, timeout_s=180)   # never raises: reply.error, reply.message
    as_chat_completion(reply.message)                     # what the turn classifier and the judges read

`POST /v1/messages` takes `tools` as `{name, description, input_schema}` and `tool_choice` as
`{"type": "auto"}`, `{"type": "any"}` (a call is required) or `{"type": "tool", "name": ...}`. A reply
is a `message` whose `content` is a list of blocks: `text`, `tool_use` (`id`, `name`, `input`, an
object), `thinking` (or `redacted_thinking`); `stop_reason` is `end_turn`, `tool_use`, `max_tokens`,
`stop_sequence`, `pause_turn` or `refusal`. Streamed, the same message comes as server-sent events:
`message_start` (the message without content), then per block `content_block_start`,
`content_block_delta` (`text_delta`, `input_json_delta` with a piece of the input's JSON,
`thinking_delta`, `signature_delta`) and `content_block_stop`, then `message_delta` (stop reason,
output usage) and `message_stop`; `ping` may come anywhere, `error` ends the stream.

A reply that breaks these rules (a block of an unknown type, a tool_use input that is not an object,
a stream whose deltas do not fit their blocks) is an error naming what was wrong. A server without the
route (HTTP 404 or 405) is `unsupported`, so the instruments can say "not supported" instead of failing.

The instruments judge a reply through its chat-completion equivalent (`as_chat_completion`): text blocks
are the content, thinking blocks the reasoning (never prose), tool_use blocks structured calls; the
Anthropic body itself is what they record.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

MESSAGES_PATH = "/messages"
"""Under the base URL (which ends in /v1)."""
ANTHROPIC_VERSION = "2023-06-01"
BLOCK_TYPES = ("text", "tool_use", "thinking", "redacted_thinking")
STOP_REASONS = ("end_turn", "tool_use", "max_tokens", "stop_sequence", "pause_turn", "refusal")
FINISH_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls", "max_tokens": "length",
                  "pause_turn": "stop", "refusal": "content_filter"}
"""Anthropic stop reasons as chat-completion finish reasons."""
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


# ---------------------------------------------------------------- reading a reply


def message_problem(body: Any) -> str | None:
    """What makes `body` not a Messages API reply, in a few words; None when it is one."""
    if not isinstance(body, dict):
        return f"the body is a {type(body).__name__}, not a JSON object"
    if body.get("type") == "error":
        error = body.get("error")
        return f"an error body: {json.dumps(error)[:200] if error is not None else 'no detail'}"
    if body.get("type") != "message":
        return f"type is {body.get('type')!r}, not 'message'"
    content = body.get("content")
    if not isinstance(content, list):
        return "content is not a list of blocks"
    for position, block in enumerate(content):
        if not isinstance(block, dict):
            return f"content block {position} is not an object"
        kind = block.get("type")
        if kind not in BLOCK_TYPES:
            return f"content block {position} has the unknown type {kind!r}"
        if kind == "text" and not isinstance(block.get("text"), str):
            return f"text block {position} has no text"
        if kind == "thinking" and not isinstance(block.get("thinking"), str):
            return f"thinking block {position} has no thinking"
        if kind == "tool_use":
            if not isinstance(block.get("name"), str) or not block["name"]:
                return f"tool_use block {position} has no name"
            if not isinstance(block.get("input"), dict):
                return f"tool_use block {position}'s input is not an object"
    reason = body.get("stop_reason")
    if reason is not None and reason not in STOP_REASONS:
        return f"unknown stop_reason {reason!r}"
    return None


def as_chat_completion(message: dict[str, Any]) -> dict[str, Any]:
    """The chat completion equivalent to a (checked) Messages API reply: text blocks joined as the content,
    thinking blocks as `reasoning_content`, tool_use blocks as tool calls (input as JSON arguments), the
    stop reason as the finish reason, the usage renamed."""
    texts = [b["text"] for b in message["content"] if b.get("type") == "text"]
    thoughts = [b.get("thinking", "") for b in message["content"] if b.get("type") == "thinking"]
    calls = [{"id": str(b.get("id") or f"call_{n}"), "type": "function",
              "function": {"name": b["name"], "arguments": json.dumps(b["input"])}}
             for n, b in enumerate(b for b in message["content"] if b.get("type") == "tool_use")]
    chat_message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) if texts else None}
    if thoughts:
        chat_message["reasoning_content"] = "".join(thoughts)
    if calls:
        chat_message["tool_calls"] = calls
    found = message.get("usage")
    usage: dict[str, Any] = found if isinstance(found, dict) else {}
    prompt, completion = usage.get("input_tokens"), usage.get("output_tokens")
    body: dict[str, Any] = {
        "id": message.get("id", ""), "object": "chat.completion", "model": message.get("model", ""),
        "choices": [{"index": 0, "message": chat_message,
                     "finish_reason": FINISH_REASONS.get(str(message.get("stop_reason")))}],
    }
    if isinstance(prompt, int) and isinstance(completion, int):
        body["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion,
                         "total_tokens": prompt + completion}
    return body


# ---------------------------------------------------------------- a stream put together


@dataclass
class StreamAssembler:
    """The message a Messages API event stream adds up to. `add` each event's payload in order; `problem`
    holds the first thing that broke the protocol (later events are then ignored), `error` an `error`
    event's message, `done` whether `message_stop` came."""

    message: dict[str, Any] | None = None
    partial_json: dict[int, str] = field(default_factory=dict)
    open_blocks: set[int] = field(default_factory=set)
    done: bool = False
    problem: str | None = None
    error: str | None = None

    def add(self, payload: dict[str, Any]) -> None:
        if self.problem is not None or self.error is not None:
            return
        kind = payload.get("type")
        if kind == "ping":
            return
        if kind == "error":
            error = payload.get("error")
            self.error = str(error.get("message") or error) if isinstance(error, dict) else str(error)
            return
        if kind == "message_start":
            start = payload.get("message")
            if not isinstance(start, dict) or self.message is not None:
                self.problem = "message_start without a message, or a second one"
                return
            self.message = {**start, "content": list(start.get("content") or [])}
            return
        if self.message is None:
            self.problem = f"{kind!r} event before message_start"
            return
        if self.done:
            self.problem = f"{kind!r} event after message_stop"
            return
        handler = {"content_block_start": self._start, "content_block_delta": self._delta,
                   "content_block_stop": self._stop, "message_delta": self._message_delta,
                   "message_stop": self._message_stop}.get(str(kind))
        if handler is None:
            self.problem = f"unknown event type {kind!r}"
            return
        handler(payload)

    def _index(self, payload: dict[str, Any]) -> int | None:
        index = payload.get("index")
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            self.problem = f"{payload.get('type')} without a block index"
            return None
        return index

    def _start(self, payload: dict[str, Any]) -> None:
        index, block = self._index(payload), payload.get("content_block")
        if index is None:
            return
        assert self.message is not None
        if index != len(self.message["content"]) or not isinstance(block, dict):
            self.problem = f"content_block_start {index} out of order, or without a block"
            return
        if block.get("type") not in BLOCK_TYPES:
            self.problem = f"content block {index} has the unknown type {block.get('type')!r}"
            return
        block = dict(block)
        if block["type"] == "tool_use":
            self.partial_json[index] = ""
        self.message["content"].append(block)
        self.open_blocks.add(index)

    def _delta(self, payload: dict[str, Any]) -> None:
        index, delta = self._index(payload), payload.get("delta")
        if index is None:
            return
        if index not in self.open_blocks or not isinstance(delta, dict):
            self.problem = f"content_block_delta for block {index}, which is not open"
            return
        assert self.message is not None
        block, kind = self.message["content"][index], delta.get("type")
        fits = {"text_delta": ("text", "text"), "input_json_delta": ("tool_use", "partial_json"),
                "thinking_delta": ("thinking", "thinking"), "signature_delta": ("thinking", "signature")}.get(str(kind))
        if fits is None:
            self.problem = f"unknown delta type {kind!r} in block {index}"
            return
        if block["type"] != fits[0] or not isinstance(delta.get(fits[1]), str):
            self.problem = f"a {kind} in a {block['type']} block ({index})"
            return
        piece = delta[fits[1]]
        if kind == "input_json_delta":
            self.partial_json[index] += piece
        else:
            block[fits[1]] = str(block.get(fits[1]) or "") + piece

    def _stop(self, payload: dict[str, Any]) -> None:
        index = self._index(payload)
        if index is None:
            return
        if index not in self.open_blocks:
            self.problem = f"content_block_stop for block {index}, which is not open"
            return
        self.open_blocks.discard(index)
        self._close_tool_use(index)

    def _close_tool_use(self, index: int) -> None:
        assert self.message is not None
        if index not in self.partial_json:
            return
        text = self.partial_json.pop(index)
        block = self.message["content"][index]
        if not text.strip():
            block["input"] = block.get("input") if isinstance(block.get("input"), dict) else {}
            return
        try:
            block["input"] = json.loads(text)
        except ValueError:
            self.problem = f"tool_use block {index}'s input_json_delta pieces are not JSON: {text[:80]!r}"

    def _message_delta(self, payload: dict[str, Any]) -> None:
        assert self.message is not None
        delta = payload.get("delta")
        if isinstance(delta, dict):
            for key in ("stop_reason", "stop_sequence"):
                if key in delta:
                    self.message[key] = delta[key]
        usage = payload.get("usage")
        if isinstance(usage, dict):
            self.message["usage"] = {**(self.message.get("usage") or {}), **usage}

    def _message_stop(self, payload: dict[str, Any]) -> None:
        if self.open_blocks:
            self.problem = f"message_stop with block(s) {sorted(self.open_blocks)} still open"
            return
        self.done = True

    def result(self) -> dict[str, Any] | None:
        """The message so far (tool inputs still arriving are closed as they stand), or None before
        message_start."""
        if self.message is None:
            return None
        for index in sorted(self.partial_json):
            if self.problem is None:
                self._close_tool_use(index)
        return self.message


def assemble(payloads: Iterable[dict[str, Any]]) -> StreamAssembler:
    """A whole stream's event payloads, put together."""
    assembler = StreamAssembler()
    for payload in payloads:
        assembler.add(payload)
    return assembler


# ---------------------------------------------------------------- one exchange


@dataclass
class MessagesReply:
    """One Messages API request and what came back."""

    status: int | None = None
    body: Any = None
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


def _take(assembler: StreamAssembler, data: str, payload: dict[str, Any] | None) -> None:
    if payload is not None:
        assembler.add(payload)
    elif data.strip() and assembler.problem is None:  # an empty data line is a keep-alive
        assembler.problem = f"an event that is not a JSON object: {data[:80]!r}"


def send_messages(client: Any, body: dict[str, Any], timeout_s: float, api_key: str) -> MessagesReply:
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
            assembler = StreamAssembler()
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
    if problem is not None:
        reply.error = f"not a Messages API reply: {problem}"
        return reply
    reply.message = reply.body
    return reply
