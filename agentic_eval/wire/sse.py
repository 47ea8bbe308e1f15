"""Server-sent events: split a byte stream into events, and rebuild the whole message from them.

Pure functions on plain data, used by the wire recorder once a stream has ended (the proxy's hot
path only stores the raw chunks and their arrival times). A reassembled stream is shaped like the
non-streamed body of the same API, so the classifier reads both alike:

- chat completions: `chat.completion.chunk` deltas become one `chat.completion` (content,
  reasoning_content / reasoning, refusal, tool calls with their argument fragments joined, parallel
  calls too, finish_reason, usage), by the assembler the built-in agent executes from
  (agentic_eval.wire.chat_stream);
- Responses API: the terminal event's `response` (`response.completed`, `.incomplete`, `.failed`)
  is the whole thing; without one (a stream cut short), the output is rebuilt from
  `response.output_item.done` items, and from deltas for items that never finished;
- Anthropic Messages API: `message_start` and the `content_block_*` events become one `message`
  (text, thinking and tool_use blocks, the tool input's JSON fragments joined), with `message_delta`'s
  stop_reason and usage (agentic_eval.wire.messages, leniently: what can be read is).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from agentic_eval.wire.chat_stream import JOINED_TEXT, ChatStreamAssembler
from agentic_eval.wire.messages import MessagesStreamAssembler, is_messages_event, malformed_messages_event

_LINE_END = re.compile(rb"\r\n|\r|\n")
MAX_LINE_BYTES = 16 * 1024 * 1024
"""The longest stream line the agent and the recorder read (an event's `data:` line carries one chunk; even a
Responses API `response.completed` holding the whole reply is far below this)."""


class StreamUnreadable(ValueError):
    """A stream that cannot be read as server-sent events: the message says what was wrong, in one line."""


@dataclass
class SSEEvent:
    """One server-sent event: its `event:` name (None when absent) and its joined `data:` lines."""

    data: str
    event: str | None = None


@dataclass
class SSEDecoder:
    """Incremental SSE parser (the WHATWG event-stream grammar, minus `id:` and `retry:`).

    Feed raw bytes as they arrive; complete events come out. Lines are split on bytes before
    decoding, so a multi-byte character cut across two chunks is safe. Each byte is scanned once,
    however long a line grows.

    `max_line` (bytes): a longer line, complete or still arriving, raises `StreamUnreadable`, so a
    stream that never ends its line cannot grow without bound. `strict`: a line that is not valid
    UTF-8 raises `StreamUnreadable`; otherwise its bad bytes are replaced, and `bad_utf8_line` holds
    the number of the first such line (1-based).
    """

    max_line: int | None = None
    strict: bool = False
    bad_utf8_line: int | None = None
    lines: int = 0
    """Lines read so far."""
    _pending: bytearray = field(default_factory=bytearray)
    _scanned: int = 0
    _data: list[str] = field(default_factory=list)
    _event: str | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Add bytes; return the events they complete."""
        buffer = self._pending
        buffer += chunk
        events: list[SSEEvent] = []
        start = 0
        # A "\r" last seen at the end may be the first half of "\r\n": look at it again.
        for match in _LINE_END.finditer(buffer, max(self._scanned - 1, 0)):
            if match.group() == b"\r" and match.end() == len(buffer):
                break
            self._take_line(bytes(buffer[start : match.start()]), events)
            start = match.end()
        del buffer[:start]
        self._scanned = len(buffer)
        if self.max_line is not None and len(buffer) > self.max_line:
            raise StreamUnreadable(f"stream line {self.lines + 1} is longer than {self.max_line} bytes "
                                   "without an end")
        return events

    def close(self) -> list[SSEEvent]:
        """The stream ended: dispatch an event left without its closing blank line."""
        events: list[SSEEvent] = []
        if self._pending:
            self._take_line(bytes(self._pending), events)
            self._pending.clear()
            self._scanned = 0
        self._take_text("", events)
        return events

    def _take_line(self, raw: bytes, events: list[SSEEvent]) -> None:
        self.lines += 1
        if self.max_line is not None and len(raw) > self.max_line:
            raise StreamUnreadable(f"stream line {self.lines} is longer than {self.max_line} bytes")
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            if self.strict:
                raise StreamUnreadable(f"stream line {self.lines} is not valid UTF-8 ({exc.reason} at byte "
                                       f"{exc.start}: {raw[exc.start:exc.start + 4]!r})") from None
            self.bad_utf8_line = self.bad_utf8_line or self.lines
            line = raw.decode("utf-8", "replace")
        self._take_text(line, events)

    def _take_text(self, line: str, events: list[SSEEvent]) -> None:
        if not line:
            if self._data:
                events.append(SSEEvent(data="\n".join(self._data), event=self._event))
            self._data, self._event = [], None
            return
        if line.startswith(":"):
            return
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value


def decode_sse(chunks: Iterable[bytes], decoder: SSEDecoder | None = None) -> Iterator[tuple[int, SSEEvent]]:
    """Events of a whole stream, each with the index of the chunk that completed it."""
    decoder = decoder or SSEDecoder()
    last = -1
    for last, chunk in enumerate(chunks):
        for event in decoder.feed(chunk):
            yield last, event
    for event in decoder.close():
        yield max(last, 0), event


def parse_event_json(data: str) -> dict[str, Any] | None:
    """The event's data as a JSON object, or None (`[DONE]`, keep-alives, anything else)."""
    if not data.startswith("{"):
        return None
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):  # RecursionError: JSON nested thousands deep
        return None
    return value if isinstance(value, dict) else None


def carries_token(payload: dict[str, Any]) -> bool:
    """True when a stream event carries generated output (the first such event is the first token)."""
    event_type = payload.get("type")
    if isinstance(event_type, str):
        return (event_type.startswith("response.") and event_type.endswith(".delta")) or \
            event_type == "content_block_delta"
    choices = payload.get("choices")
    for choice in choices if isinstance(choices, list) else ():
        delta = choice.get("delta") if isinstance(choice, dict) else None
        if not isinstance(delta, dict):
            continue
        if any(delta.get(key) for key in ("content", "reasoning_content", "reasoning", "refusal", "tool_calls")):
            return True
        if delta.get("function_call"):
            return True
    return False


def stream_error(payload: dict[str, Any]) -> str | None:
    """The message of an error sent inside a stream (chat `{"error": ...}` or a Responses `error` event)."""
    error = payload.get("error")
    if payload.get("type") in ("error", "response.failed"):
        response = payload.get("response")
        error = error or (response.get("error") if isinstance(response, dict) else None) or payload
    if not error:
        return None
    if isinstance(error, dict):
        return str(error.get("message") or json.dumps(error))
    return str(error)


@dataclass
class StreamSummary:
    """What a whole event stream amounts to."""

    events: list[str]
    """Every event's raw data, in order."""
    response: dict[str, Any] | None
    """The reassembled message (see `assemble_stream`)."""
    first_token_chunk: int | None
    """Index of the chunk that completed the first event carrying generated output."""
    error: str | None
    """The first error the upstream sent inside the stream."""


def summarize_stream(chunks: Iterable[bytes]) -> StreamSummary:
    """Decode a stream's raw chunks (as received) into its events and the message they add up to. What
    cannot be read (a line longer than MAX_LINE_BYTES, bytes that are not UTF-8) is named in `error`."""
    events: list[str] = []
    payloads: list[dict[str, Any]] = []
    first_token_chunk: int | None = None
    error: str | None = None
    decoder = SSEDecoder(max_line=MAX_LINE_BYTES)
    try:
        for chunk_index, event in decode_sse(chunks, decoder):
            events.append(event.data)
            payload = parse_event_json(event.data)
            if payload is None:
                continue
            payloads.append(payload)
            if first_token_chunk is None and carries_token(payload):
                first_token_chunk = chunk_index
            if error is None and (message := stream_error(payload)):
                error = f"upstream sent an error event: {message}"
            if error is None and (problem := malformed_event(payload)):
                error = f"malformed stream event {len(events)}: {problem} (the raw events are kept)"
    except StreamUnreadable as exc:
        error = error or f"{exc}: the events after it are not read"
    if error is None and decoder.bad_utf8_line is not None:
        error = f"stream line {decoder.bad_utf8_line} is not valid UTF-8 (its bad bytes are replaced here)"
    return StreamSummary(events, assemble_stream(payloads), first_token_chunk, error)


def _not(kind: type | tuple[type, ...], value: object) -> bool:
    return value is not None and not isinstance(value, kind)


def malformed_event(payload: dict[str, Any]) -> str | None:
    """What is wrong with a stream event's shape (the parts the reassembly reads), or None.
    The assemblers skip such parts; the recorder says so in the record's `error`."""
    event_type = payload.get("type")
    if is_messages_event(payload):
        return malformed_messages_event(payload)
    if isinstance(event_type, str) and event_type.startswith("response."):
        if _not(dict, payload.get("response")):
            return "response is not an object"
        if _not(dict, payload.get("item")):
            return "item is not an object"
        for key in ("output_index", "content_index", "summary_index"):
            index = payload.get(key)
            if _not(int, index) or isinstance(index, bool) or not 0 <= (index or 0) <= MAX_PART_INDEX:
                return f"{key} is not a valid index"
        if event_type.endswith(".delta") and _not(str, payload.get("delta")):
            return "delta is not text"
        output = (payload.get("response") or {}).get("output")
        if _not(list, output) or any(not isinstance(item, dict) for item in output or ()):
            return "response.output is not a list of objects"
        return None
    choices = payload.get("choices")
    if _not(list, choices):
        return "choices is not a list"
    for number, choice in enumerate(choices or ()):
        where = f"choices[{number}]"
        if not isinstance(choice, dict):
            return f"{where} is not an object"
        if _not(int, choice.get("index")) or isinstance(choice.get("index"), bool):
            return f"{where}.index is not a number"
        delta = choice.get("delta")
        if _not(dict, delta):
            return f"{where}.delta is not an object"
        for key in (*JOINED_TEXT, "role"):
            if _not(str, (delta or {}).get(key)):
                return f"{where}.delta.{key} is not text"
        calls = (delta or {}).get("tool_calls")
        if _not(list, calls):
            return f"{where}.delta.tool_calls is not a list"
        for call in calls or ():
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(call, dict) or _not(dict, function) or _not(str, (function or {}).get("name")):
                return f"{where}.delta.tool_calls holds something that is not a tool call"
    return None


def assemble_stream(payloads: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """The whole message a stream's JSON events add up to, shaped like the non-streamed body.

    The API is recognised from the events themselves (`type: response.*` means the Responses
    API, `message_start` and `content_block_*` the Messages API); None when no event was recognised.
    """
    chat = ChatStreamAssembler()
    responses = ResponsesStreamAssembler()
    messages = MessagesStreamAssembler()
    kind: str | None = None
    for payload in payloads:
        event_type = payload.get("type")
        if is_messages_event(payload):
            kind = kind or "messages"
            messages.add(payload)
        elif isinstance(event_type, str) and event_type.startswith("response."):
            kind = kind or "responses"
            responses.add(payload)
        elif "choices" in payload or payload.get("object") == "chat.completion.chunk":
            kind = kind or "chat"
            chat.add(payload)
    if kind == "chat":
        return chat.result()
    if kind == "responses":
        return responses.result()
    if kind == "messages":
        return messages.result()
    return None


# ---------------------------------------------------------------- Responses API

_TERMINAL_EVENTS = ("response.completed", "response.incomplete", "response.failed")
MAX_PART_INDEX = 1024


@dataclass
class ResponsesStreamAssembler:
    """Rebuilds a `response` object from Responses API stream events."""

    base: dict[str, Any] | None = None
    terminal: dict[str, Any] | None = None
    done_items: dict[int, dict[str, Any]] = field(default_factory=dict)
    open_items: dict[int, dict[str, Any]] = field(default_factory=dict)

    def add(self, event: dict[str, Any]) -> None:
        """Take one event (a parsed `data:` payload with its `type`)."""
        kind = event.get("type", "")
        kind = kind if isinstance(kind, str) else ""
        response = event.get("response")
        if isinstance(response, dict):
            if kind in _TERMINAL_EVENTS:
                self.terminal = response
            else:
                self.base = response
        position = event.get("output_index")
        if not isinstance(position, int):
            return
        item = event.get("item")
        if kind == "response.output_item.done":
            self.done_items[position] = item if isinstance(item, dict) else {"raw": item}
        elif kind == "response.output_item.added":
            self.open_items[position] = copy.deepcopy(item) if isinstance(item, dict) else {"raw": item}
        elif kind.endswith(".delta") and isinstance(event.get("delta"), str):
            self._add_delta(position, kind, event)

    def _add_delta(self, position: int, kind: str, event: dict[str, Any]) -> None:
        item = self.open_items.setdefault(position, {})
        delta: str = event["delta"]
        if kind == "response.function_call_arguments.delta":
            if isinstance(item.get("arguments", ""), str):
                item["arguments"] = item.get("arguments", "") + delta
            return
        part_kind, key = {
            "response.output_text.delta": ("output_text", "content"),
            "response.refusal.delta": ("refusal", "content"),
            "response.reasoning_text.delta": ("reasoning_text", "content"),
            "response.reasoning_summary_text.delta": ("summary_text", "summary"),
        }.get(kind, ("", ""))
        if not part_kind:
            return
        parts: list[dict[str, Any]] = item.setdefault(key, [])
        if not isinstance(parts, list):
            return
        part_index = event.get("content_index", event.get("summary_index", 0))
        # An index past any real item's parts is not a part: no list grows to a billion entries.
        if not isinstance(part_index, int) or not 0 <= part_index <= MAX_PART_INDEX:
            return
        while len(parts) <= part_index:
            parts.append({"type": part_kind, "refusal" if part_kind == "refusal" else "text": ""})
        text_key = "refusal" if part_kind == "refusal" else "text"
        if not isinstance(parts[part_index], dict) or not isinstance(parts[part_index].get(text_key, ""), str):
            return
        parts[part_index][text_key] = parts[part_index].get(text_key, "") + delta

    def result(self) -> dict[str, Any]:
        """The whole `response` object."""
        items = {**self.open_items, **self.done_items}
        if self.terminal is not None:
            response = copy.deepcopy(self.terminal)
            if not isinstance(response.get("output"), list | None):
                return response  # the endpoint's own shape, recorded as sent; the classifier says what is wrong
            if not response.get("output") and items:
                response["output"] = [items[i] for i in sorted(items)]
            return response
        response = copy.deepcopy(self.base) if self.base is not None else {"object": "response"}
        response["output"] = [items[i] for i in sorted(items)]
        return response
