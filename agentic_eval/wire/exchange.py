"""One exchange as the wire recorder sees it, and the record it becomes: a line of the wire log.

`Exchange` collects what passes through (the request, the reply's chunks and when they came, an error) and
turns it into a `WireRecord` when the exchange ends. Both relays share it: the recorder's plain one
(recorder.py) and its translating one (translate.py), which also share `race_client` and the ASGI types.
`EndpointClock` keeps when exchanges were waiting on the endpoint.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
import zlib
from collections import deque
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from agentic_eval.wire.refs import deeper_than
from agentic_eval.wire.sse import summarize_stream

__all__ = ["WIRE_FORMAT_VERSION", "EndpointClock", "Exchange", "Receive", "Scope", "Send", "WireRecord",
           "WireTimings", "race_client"]

WIRE_FORMAT_VERSION = 2
"""1: every request whole. 2: a request may be stored by reference to an earlier one (`request_ref`),
and a reply the recorder could not reassemble is kept raw (`raw_reply`). Version 1 logs still load."""
MAX_JSON_DEPTH = 64
"""A body nested deeper than this is kept as text: no reader of the log has to recurse that far."""
MAX_INFLATED_BYTES = 256 * 1024 * 1024
"""A compressed reply that inflates past this is kept compressed (undecoded), not inflated."""
MAX_KEPT_BYTES = 64 * 1024 * 1024
"""A reply body longer than this is passed on to the client whole but not kept: its record says so (`error`)."""


class WireTimings(BaseModel):
    """When the exchange happened. Offsets are seconds after `started_at`, on a monotonic clock."""

    started_at: float = Field(description="Unix time at which the proxy received the request.")
    headers_s: float | None = Field(default=None, description="Upstream response headers received.")
    first_byte_s: float | None = Field(default=None, description="First byte of the upstream response body.")
    first_token_s: float | None = Field(
        default=None, description="First stream event carrying generated output; None for a non-streamed body."
    )
    end_s: float = Field(description="The exchange ended (last byte relayed, or the error).")


class WireRecord(BaseModel):
    """One request/response exchange, one line of a wire log. The field names are a file format."""

    format_version: int = Field(default=WIRE_FORMAT_VERSION, description="Version of this record's layout.")
    id: str = Field(description="Unique id of the exchange.")
    seq: int = Field(description="Order in which the proxy received the requests (0, 1, ...).")
    method: str = Field(description="HTTP method, e.g. POST.")
    path: str = Field(description="Request path with query, as the client sent it; secrets in the query redacted.")
    request: Any = Field(description="Request body: parsed JSON, else text, else None when empty.")
    status: int | None = Field(description="HTTP status the client got (502 when the upstream was unreachable).")
    response: Any = Field(
        description="Response body: parsed JSON, else text. For a stream, the whole message reassembled "
        "from its events, shaped like the non-streamed body (chat.completion or Response)."
    )
    stream: bool = Field(description="True when the response was a server-sent event stream.")
    events: list[str] = Field(default_factory=list, description="Raw `data:` payloads of the stream, in order.")
    error: str | None = Field(default=None, description="What went wrong, if the exchange did not end cleanly.")
    timings: WireTimings
    usage: dict[str, Any] | None = Field(default=None, description="Token usage the upstream reported.")
    request_ref: dict[str, Any] | None = Field(
        default=None, description="Set when `request` holds only what the request added to an earlier record's: "
        "{base: that record's id, key: 'messages' or 'input', prefix: how many of the base's items come first, "
        "same: top-level keys whose values are the base's, from_response: [[path in the stored items, path in "
        "the base's response], ...] for long strings the base's reply holds}. read_wire_log puts the whole "
        "request back."
    )
    raw_reply: bool = Field(
        default=False, description="True when the recorder could not reassemble or parse the reply: `response` "
        "holds its body as text, as received, and `error` says why."
    )
    upstream: dict[str, Any] | None = Field(
        default=None, description="Set when the recorder translated the exchange (an Anthropic Messages request "
        "to an endpoint that speaks only chat completions): what went to and came from the endpoint, {path, "
        "request, status, response, stream, events, error}, beside `request`/`response`/`events`, which are "
        "what the agent sent and got. Its request is stored by reference to an earlier record's upstream request "
        "like `request` (a `request_ref` inside it); read_wire_log puts it back whole."
    )
    emulated: dict[str, Any] | None = Field(
        default=None, description="Set in a run with `--emulate-parser`: {parser: the engine parser emulated, "
        "rewritten: whether it changed the reply, response: the reply as that parser would have returned it "
        "(calls read from the text made structured `tool_calls`), which is what the agent got, or None when it "
        "got the endpoint's own; error: why the parser could not be applied, if so}. `response` stays the "
        "endpoint's reply as it was."
    )


def _parse_body(body: bytes) -> Any:
    if not body:
        return None
    text = body.decode("utf-8", "replace")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text
    return text if deeper_than(value, MAX_JSON_DEPTH) else value


def _not_utf8(body: bytes) -> str | None:
    """What is wrong when a reply body is not valid UTF-8 (kept with its bad bytes replaced), else None."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"the reply is not valid UTF-8 ({exc.reason} at byte {exc.start}); its bad bytes are replaced here"
    return None


class EndpointClock:
    """When the recorder was waiting on the endpoint: from forwarding a request until the last byte of its
    answer arrived, less the time spent handing bytes on to a client that reads slowly (that is the client's
    time, not the endpoint's). Kept as spans on the `time.monotonic()` clock (spans closer than MERGE_S joined,
    the last KEEP kept), so that the runner can ask, after the fact, whether the endpoint was still answering
    when an agent's time ran out."""

    MERGE_S = 0.05
    KEEP = 4096

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting = 0
        self._since = 0.0
        self._spans: deque[tuple[float, float]] = deque(maxlen=self.KEEP)

    def enter(self) -> None:
        now = time.monotonic()
        with self._lock:
            self._waiting += 1
            if self._waiting == 1:
                if self._spans and now - self._spans[-1][1] <= self.MERGE_S:
                    self._since = self._spans.pop()[0]
                else:
                    self._since = now

    def leave(self) -> None:
        now = time.monotonic()
        with self._lock:
            self._waiting = max(0, self._waiting - 1)
            if self._waiting == 0:
                self._spans.append((self._since, now))

    def busy(self) -> bool:
        """Whether a request is waiting on the endpoint now."""
        with self._lock:
            return self._waiting > 0

    def busy_at(self, moment: float) -> bool:
        """Whether a request was waiting on the endpoint at `moment` (time.monotonic())."""
        with self._lock:
            if self._waiting and self._since <= moment:
                return True
            return any(start <= moment <= end for start, end in self._spans)


@dataclass
class Exchange:
    """What the proxy saw of one exchange, turned into a `WireRecord` when it ends."""

    seq: int
    method: str
    path: str
    request_body: bytes
    started_at: float = field(default_factory=time.time)
    t0: float = field(default_factory=time.perf_counter)
    status: int | None = None
    headers_at: float | None = None
    content_type: str = ""
    content_encoding: str = ""
    chunks: list[bytes] = field(default_factory=list)
    chunk_times: list[float] = field(default_factory=list)
    first_byte_at: float | None = None
    relayed: int = 0
    """Bytes of the reply body passed on to the client."""
    overflow: bool = False
    """The body grew past MAX_KEPT_BYTES: none of it is kept."""
    error: str | None = None
    error_body: Any = None
    clock: EndpointClock | None = None
    waiting: bool = False
    upstream: Exchange | None = None
    """The endpoint's side of a translated exchange (this one is the agent's side)."""
    emulated: dict[str, Any] | None = None
    """`--emulate-parser`: what the emulated parser made of the reply (`WireRecord.emulated`)."""

    def wait_upstream(self, on: bool) -> None:
        """Mark the exchange as waiting on the endpoint (or not) on the recorder's clock."""
        if self.clock is not None and on != self.waiting:
            self.waiting = on
            (self.clock.enter if on else self.clock.leave)()

    def keep(self, chunk: bytes) -> None:
        """Keep a piece of the reply body for the record, unless the body has grown past MAX_KEPT_BYTES."""
        self.first_byte_at = self.first_byte_at or time.perf_counter()
        self.relayed += len(chunk)
        if self.overflow:
            return
        if self.relayed > MAX_KEPT_BYTES:
            self.overflow = True
            self.chunks, self.chunk_times = [], []  # a record of part of a reply would pass for all of it
            return
        self.chunks.append(chunk)
        self.chunk_times.append(time.perf_counter())

    def _decoded_chunks(self) -> list[bytes] | None:
        encoding = self.content_encoding.lower().strip()
        if encoding in ("", "identity"):
            return self.chunks
        if encoding not in ("gzip", "deflate", "x-gzip"):
            return None
        inflater = zlib.decompressobj(wbits=zlib.MAX_WBITS | 32)  # gzip or zlib header, detected
        out: list[bytes] = []
        room = MAX_INFLATED_BYTES
        try:
            for chunk in self.chunks:
                out.append(b"")
                while chunk:  # bounded: a small compressed reply can inflate to gigabytes
                    piece = inflater.decompress(chunk, room + 1)
                    out[-1] += piece
                    room -= len(piece)
                    if room < 0:
                        return None
                    chunk = inflater.unconsumed_tail
        except zlib.error:
            return None
        return out

    def safe_record(self) -> WireRecord:
        """`to_record`, or, for a reply it cannot reassemble, the body as received, marked `raw_reply`:
        an exchange is never lost to a reply of a shape nobody foresaw."""
        try:
            return self.to_record()
        except Exception as exc:  # noqa: BLE001 - whatever the reply was, it is recorded
            return self.raw_record(f"the recorder could not reassemble the reply ({type(exc).__name__}: {exc}); "
                                   "its body is kept as received")

    def raw_record(self, why: str) -> WireRecord:
        """The exchange with its reply body as text, unparsed."""
        body = b"".join(self.chunks).decode("utf-8", "replace")
        request = _parse_body(self.request_body)
        return WireRecord(
            id=uuid.uuid4().hex, seq=self.seq, method=self.method, path=self.path, status=self.status,
            request=request, response=body, stream=self.content_type.lower().startswith("text/event-stream"),
            error=f"{self.error}; {why}" if self.error else why, raw_reply=True,
            timings=WireTimings(started_at=self.started_at, end_s=time.perf_counter() - self.t0),
        )

    def side_record(self) -> dict[str, Any]:
        """This exchange as the `upstream` part of a translated exchange's record."""
        record = self.safe_record()
        return {"path": record.path, "request": record.request, "status": record.status, "response": record.response,
                "stream": record.stream, "events": record.events, "error": record.error}

    def to_record(self) -> WireRecord:
        end_s = time.perf_counter() - self.t0
        stream = self.content_type.lower().startswith("text/event-stream")
        chunks = self._decoded_chunks()
        error = self.error
        events: list[str] = []
        first_token_s: float | None = None
        response: Any = self.error_body
        if self.overflow:
            error = error or (f"the reply was larger than {MAX_KEPT_BYTES} bytes ({self.relayed} passed on): the "
                              "recorder kept none of it")
        elif chunks is None:
            error = error or (f"response body not decoded: content-encoding {self.content_encoding!r} unknown, "
                              f"broken, or inflating past {MAX_INFLATED_BYTES} bytes")
        elif stream:
            summary = summarize_stream(chunks)
            events, response, error = summary.events, summary.response, error or summary.error
            if summary.first_token_chunk is not None:
                first_token_s = self.chunk_times[summary.first_token_chunk] - self.t0
        elif self.chunks:
            body = b"".join(chunks)
            response = _parse_body(body)
            error = error or _not_utf8(body)
        if stream and response is not None and deeper_than(response, MAX_JSON_DEPTH):
            return self.raw_record(f"the reassembled reply nests deeper than {MAX_JSON_DEPTH} levels; its body "
                                   "is kept as received")
        usage = response.get("usage") if isinstance(response, dict) else None
        return WireRecord(
            id=uuid.uuid4().hex,
            seq=self.seq,
            method=self.method,
            path=self.path,
            request=_parse_body(self.request_body),
            status=self.status,
            response=response,
            stream=stream,
            events=events,
            error=error,
            timings=WireTimings(
                started_at=self.started_at,
                headers_s=None if self.headers_at is None else self.headers_at - self.t0,
                first_byte_s=self.first_byte_at - self.t0 if self.first_byte_at is not None else None,
                first_token_s=first_token_s,
                end_s=end_s,
            ),
            usage=usage if isinstance(usage, dict) else None,
        )


Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


async def race_client(receive: Receive, exchange: Exchange, work: Any) -> None:
    """Run `work` (a coroutine), stopping it early if the client goes away (noted on the exchange); its own
    exception is re-raised."""

    async def client_gone() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    relay, watch = asyncio.ensure_future(work), asyncio.ensure_future(client_gone())
    try:
        await asyncio.wait({relay, watch}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watch.cancel()
        if not relay.done():
            relay.cancel()
            exchange.error = exchange.error or "client disconnected before the response ended"
            await asyncio.gather(relay, return_exceptions=True)
    relay.result()
