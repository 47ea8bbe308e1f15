"""A scripted OpenAI-compatible (or Anthropic Messages) endpoint for tests: real HTTP on 127.0.0.1, replaying a
queue of replies.

The public test kit, for agentic-eval's own tests and for plugin authors (standard library only):
code that talks to a model endpoint (an agent, an adapter's CLI, an instrument) is tested against
`FakeEndpoint` with scripted replies, and the test reads back what was sent in `fake.requests`.

    import json
    import urllib.request

    from agentic_eval.testing import FakeEndpoint, ScriptedReply, chat_body, tool_call

    def test_the_reply_carries_the_tool_call():
        call = tool_call("read_file", {"path": "README.md"})
        with FakeEndpoint([ScriptedReply(body=chat_body(None, tool_calls=[call]))]) as fake:
            request = urllib.request.Request(
                fake.base_url + "/chat/completions",
                data=json.dumps({"model": fake.model, "messages": [{"role": "user", "content": "hi"}]}).encode(),
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=10) as response:
                reply = json.load(response)
        assert reply["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "read_file"
        assert fake.requests[0].body["messages"][0]["content"] == "hi"

`fake.base_url` is what an OpenAI client or `run --base-url` takes. A `responder=` function computes
each reply from the request instead, for a scripted "model" that reads the conversation (how a whole
trial of an agent is tested: docs/plugins.md). Builders: `chat_body`, `chat_stream` (the events of a
streamed reply), `tool_call`, `responses_body`, `responses_stream`, `messages_body` and `messages_stream`
(the Anthropic Messages API's), `sse_bytes`.

Each request under any path takes the next reply from the queue, whatever the path, except
`GET .../models`, which always answers a list with the fake's model (agent CLIs probe it first).
An empty queue answers 500 with a message saying so. Streams are sent with chunked transfer
encoding, one chunk per event, so an upstream that stops mid-stream is visible as such.

Built on the standard library's threading HTTP server, on purpose a different stack from the
wire recorder's, so that pass-through tests compare two independent implementations.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

__all__ = [
    "DONE",
    "FakeEndpoint",
    "ReceivedRequest",
    "ScriptedReply",
    "chat_body",
    "chat_stream",
    "messages_body",
    "messages_stream",
    "responses_body",
    "responses_stream",
    "sse_bytes",
    "tool_call",
]

DONE = "[DONE]"
"""The data of the event that ends a chat stream."""


@dataclass
class ScriptedReply:
    """One scripted answer. Give `body` for a plain response, or `events` for a server-sent event stream."""

    status: int = 200
    body: Any = None
    """JSON-able value (sent as JSON), or str/bytes sent as they are."""
    events: Sequence[Any] | None = None
    """Stream events: a dict is sent as JSON data, a str as it is (e.g. DONE)."""
    named_events: bool = False
    """Write an `event: <type>` line before each dict event's data (the Responses API does)."""
    chunk_delay_s: float | Sequence[float] = 0.0
    """Pause before each event: one value for all, or one per event."""
    pace_s: float | None = None
    """Send event i at (stream start + i * pace_s): a steady token rate, where a late wake-up does not
    delay the events after it (unlike chunk_delay_s, whose pauses add up)."""
    close_after_events: int | None = None
    """Drop the connection after this many events, without ending the stream."""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    """Wait this long before answering at all (a slow server)."""
    drop: bool = False
    """Close the connection without answering (a server that died mid-request)."""


@dataclass
class ReceivedRequest:
    """A request the fake served, and when it sent each stream event (time.perf_counter)."""

    method: str
    path: str
    headers: dict[str, str]
    raw_body: bytes
    event_sent_times: list[float] = field(default_factory=list)
    header_lines: list[tuple[str, str]] = field(default_factory=list)
    """Every header line as sent, repeated names kept (`headers` keeps the last of each)."""

    @property
    def body(self) -> Any:
        return json.loads(self.raw_body) if self.raw_body else None


def sse_bytes(event: Any, named: bool = False) -> bytes:
    """The wire form of one event."""
    if isinstance(event, str):
        return f"data: {event}\n\n".encode()
    prefix = f"event: {event['type']}\n" if named and "type" in event else ""
    return f"{prefix}data: {json.dumps(event)}\n\n".encode()


class FakeEndpoint:
    """The scripted server. Start with `with`, or `start()` / `stop()`."""

    def __init__(self, replies: Iterable[ScriptedReply] = (), *, model: str = "fake-model",
                 responder: Callable[[ReceivedRequest], ScriptedReply] | None = None) -> None:
        self.model = model
        self.responder = responder
        """Answers a request when the queue is empty: a scripted model that reads the conversation."""
        self.requests: list[ReceivedRequest] = []
        self._queue: deque[ScriptedReply] = deque(replies)
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def enqueue(self, *replies: ScriptedReply) -> None:
        """Add replies at the end of the queue."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def url(self) -> str:
        assert self._server is not None, "the fake endpoint is not running"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    def _next_reply(self, received: ReceivedRequest) -> ScriptedReply | None:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        return self.responder(received) if self.responder is not None else None

    def start(self) -> None:
        fake = self

        class Handler(_Handler):
            endpoint = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(5)
        self._server = self._thread = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as separate writes; don't let TCP hold them
    endpoint: FakeEndpoint

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_PUT(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    def _serve(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        received = ReceivedRequest(
            method=self.command,
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            raw_body=self.rfile.read(length) if length else b"",
            header_lines=[(k.lower(), v) for k, v in self.headers.items()],
        )
        with self.endpoint._lock:
            self.endpoint.requests.append(received)
        if self.command == "GET" and self.path.rstrip("/").endswith("/models"):
            body = {"object": "list", "data": [{"id": self.endpoint.model, "object": "model", "owned_by": "fake"}]}
            self._send_whole(ScriptedReply(body=body))
            return
        reply = self.endpoint._next_reply(received)
        if reply is not None and reply.delay_s:
            time.sleep(reply.delay_s)
        if reply is not None and reply.drop:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if reply is None:
            message = "fake endpoint: no scripted reply left"
            self._send_whole(ScriptedReply(status=500, body={"error": {"message": message}}))
        elif reply.events is not None:
            self._send_stream(reply, received)
        else:
            self._send_whole(reply)

    def _send_whole(self, reply: ScriptedReply) -> None:
        body = reply.body
        if isinstance(body, str):
            data, content_type = body.encode(), "text/plain; charset=utf-8"
        elif isinstance(body, bytes):
            data, content_type = body, "application/octet-stream"
        else:
            data, content_type = json.dumps(body).encode(), "application/json"
        self.send_response(reply.status)
        headers = {"Content-Type": content_type, **reply.headers}  # a scripted Content-Type wins
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _send_stream(self, reply: ScriptedReply, received: ReceivedRequest) -> None:
        try:
            self._write_stream(reply, received)
        except (BrokenPipeError, ConnectionResetError):  # the client left early (e.g. on a malformed chunk)
            self.close_connection = True

    def _write_stream(self, reply: ScriptedReply, received: ReceivedRequest) -> None:
        assert reply.events is not None
        self.send_response(reply.status)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.flush()
        delays = reply.chunk_delay_s
        started = time.perf_counter()
        for number, event in enumerate(reply.events):
            if reply.close_after_events is not None and number >= reply.close_after_events:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            delay = delays[number] if isinstance(delays, Sequence) else delays
            if delay:
                time.sleep(delay)
            if reply.pace_s is not None and (wait := started + number * reply.pace_s - time.perf_counter()) > 0:
                time.sleep(wait)
            data = sse_bytes(event, reply.named_events)
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
            received.event_sent_times.append(time.perf_counter())
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


# ---------------------------------------------------------------- reply builders

_CREATED = 1_700_000_000


def tool_call(name: str, arguments: dict[str, Any] | str, call_id: str | None = None) -> dict[str, Any]:
    """A structured chat tool call; dict arguments are serialised to a JSON string."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id or f"call_{name}", "type": "function", "function": {"name": name, "arguments": args}}


def chat_body(
    content: str | None = None,
    *,
    tool_calls: Sequence[dict[str, Any]] = (),
    reasoning_content: str | None = None,
    finish_reason: str | None = None,
    usage: dict[str, int] | None = None,
    model: str = "fake-model",
) -> dict[str, Any]:
    """A non-streamed `chat.completion` body."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning_content is not None:
        message["reasoning_content"] = reasoning_content
    if tool_calls:
        message["tool_calls"] = list(tool_calls)
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": _CREATED,
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop")}
        ],
        "usage": usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def chat_stream(
    content: str | None = None,
    *,
    tool_calls: Sequence[dict[str, Any]] = (),
    reasoning_content: str | None = None,
    piece_chars: int = 4,
    finish_reason: str | None = None,
    usage: dict[str, int] | None = None,
    model: str = "fake-model",
    done: bool = True,
) -> list[Any]:
    """The `chat.completion.chunk` events of a streamed reply: text cut into `piece_chars` pieces,
    each tool call's arguments cut likewise after a first chunk with its id and name, a finish
    chunk, a usage chunk (empty choices), and `[DONE]`."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": _CREATED, "model": model,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }

    events: list[Any] = [chunk({"role": "assistant", "content": ""})]
    if reasoning_content:
        events += [chunk({"reasoning_content": piece}) for piece in _pieces(reasoning_content, piece_chars)]
    if content:
        events += [chunk({"content": piece}) for piece in _pieces(content, piece_chars)]
    for index, call in enumerate(tool_calls):
        function = call["function"]
        head = {"index": index, "id": call["id"], "type": "function",
                "function": {"name": function["name"], "arguments": ""}}
        events.append(chunk({"tool_calls": [head]}))
        events += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            for piece in _pieces(function["arguments"], piece_chars)
        ]
    events.append(chunk({}, finish_reason or ("tool_calls" if tool_calls else "stop")))
    final_usage = usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    events.append({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": _CREATED, "model": model,
                   "choices": [], "usage": final_usage})
    if done:
        events.append(DONE)
    return events


def responses_body(
    text: str | None = None,
    *,
    function_calls: Sequence[tuple[str, dict[str, Any] | str]] = (),
    reasoning: str | None = None,
    status: str = "completed",
    model: str = "fake-model",
) -> dict[str, Any]:
    """A Responses API `response` object: optional reasoning item, message item, function_call items."""
    output: list[dict[str, Any]] = []
    if reasoning is not None:
        output.append({"id": "rs_0", "type": "reasoning", "summary": [],
                       "content": [{"type": "reasoning_text", "text": reasoning}]})
    if text is not None:
        output.append({"id": "msg_0", "type": "message", "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": text, "annotations": []}]})
    for number, (name, arguments) in enumerate(function_calls):
        args = arguments if isinstance(arguments, str) else json.dumps(arguments)
        output.append({"id": f"fc_{number}", "type": "function_call", "call_id": f"call_{number}",
                       "name": name, "arguments": args, "status": "completed"})
    return {"id": "resp_fake", "object": "response", "created_at": _CREATED, "model": model, "status": status,
            "output": output, "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}}


def responses_stream(
    text: str | None = None,
    *,
    function_calls: Sequence[tuple[str, dict[str, Any] | str]] = (),
    reasoning: str | None = None,
    piece_chars: int = 4,
    completed: bool = True,
    model: str = "fake-model",
) -> list[dict[str, Any]]:
    """Responses API stream events for the same reply as `responses_body` (send with named_events=True).
    `completed=False` leaves out the final `response.completed` event."""
    whole = responses_body(text, function_calls=function_calls, reasoning=reasoning, model=model)
    in_progress = {**whole, "status": "in_progress", "output": [], "usage": None}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": in_progress},
        {"type": "response.in_progress", "response": in_progress},
    ]
    for position, item in enumerate(whole["output"]):
        where = {"output_index": position, "item_id": item["id"]}
        if item["type"] == "function_call":
            started = {**item, "arguments": "", "status": "in_progress"}
            events.append({"type": "response.output_item.added", "output_index": position, "item": started})
            events += [{"type": "response.function_call_arguments.delta", **where, "delta": piece}
                       for piece in _pieces(item["arguments"], piece_chars)]
            events.append({"type": "response.function_call_arguments.done", **where, "arguments": item["arguments"]})
        else:
            kind = "output_text" if item["type"] == "message" else "reasoning_text"
            part = item["content"][0]
            started = {**item, "content": [], **({"status": "in_progress"} if "status" in item else {})}
            events.append({"type": "response.output_item.added", "output_index": position, "item": started})
            events.append({"type": "response.content_part.added", **where, "content_index": 0,
                           "part": {**part, "text": ""}})
            events += [{"type": f"response.{kind}.delta", **where, "content_index": 0, "delta": piece}
                       for piece in _pieces(part["text"], piece_chars)]
            events.append({"type": f"response.{kind}.done", **where, "content_index": 0, "text": part["text"]})
            events.append({"type": "response.content_part.done", **where, "content_index": 0, "part": part})
        events.append({"type": "response.output_item.done", "output_index": position, "item": item})
    if completed:
        events.append({"type": "response.completed", "response": whole})
    return [{**event, "sequence_number": number} for number, event in enumerate(events)]


def messages_body(
    text: str | None = None,
    *,
    tool_uses: Sequence[tuple[str, dict[str, Any]]] = (),
    thinking: str | None = None,
    stop_reason: str | None = None,
    model: str = "fake-model",
) -> dict[str, Any]:
    """An Anthropic Messages API `message`: optional thinking block, text block, tool_use blocks (name, input)."""
    content: list[dict[str, Any]] = []
    if thinking is not None:
        content.append({"type": "thinking", "thinking": thinking, "signature": ""})
    if text is not None:
        content.append({"type": "text", "text": text})
    for number, (name, arguments) in enumerate(tool_uses):
        content.append({"type": "tool_use", "id": f"toolu_{number}", "name": name, "input": arguments})
    return {"id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": stop_reason or ("tool_use" if tool_uses else "end_turn"), "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5}}


def messages_stream(
    text: str | None = None,
    *,
    tool_uses: Sequence[tuple[str, dict[str, Any]]] = (),
    thinking: str | None = None,
    piece_chars: int = 4,
    model: str = "fake-model",
) -> list[dict[str, Any]]:
    """Messages API stream events for the same reply as `messages_body` (send with named_events=True): text,
    thinking and each tool input's JSON cut into `piece_chars` pieces."""
    from agentic_eval.wire.anthropic import message_events

    events: list[dict[str, Any]] = []
    for event in message_events(messages_body(text, tool_uses=tool_uses, thinking=thinking, model=model)):
        delta = event.get("delta") if event["type"] == "content_block_delta" else None
        key = next((k for k in ("text", "thinking", "partial_json") if delta and k in delta), None)
        if delta is None or key is None:
            events.append(event)
            continue
        events += [{**event, "delta": {**delta, key: piece}} for piece in _pieces(delta[key], piece_chars)]
    return events
