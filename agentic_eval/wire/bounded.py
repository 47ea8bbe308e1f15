"""Reading an endpoint's reply within bounds: a size cap, bounded inflation, strict UTF-8 and JSON.

The built-in agent reads every reply through these, so that whatever bytes an endpoint sends, its
reply either decodes or fails with `UnreadableReply`, whose message names what was wrong in one line
(the agent makes it the trial's `endpoint_error`). Never a traceback, never unbounded memory:

- `bound_replies` is an httpx response hook: the body the client reads (streamed or not, an error
  body too) stops at MAX_REPLY_BYTES, and a compressed body (the agent asks for none) is inflated
  here, within the same cap, instead of by httpx, which would inflate without bound;
- `json_reply` reads a whole body (or a stream event's data) as JSON: empty, not UTF-8, not JSON and
  nested deeper than MAX_REPLY_DEPTH each say so.
"""

from __future__ import annotations

import functools
import json
import zlib
from collections.abc import Iterator
from typing import Any

from agentic_eval.wire.refs import deeper_than

MAX_REPLY_BYTES = 64 * 1024 * 1024
"""The largest reply body the built-in agent reads (after inflation): a reply that long is not a model's
turn (a 100,000-token reply is well under 1 MiB)."""
MAX_REPLY_DEPTH = 64
"""The deepest JSON the agent reads in a reply (a chat completion nests 6 levels; the wire recorder keeps a
reply deeper than this as text)."""
ACCEPT_ENCODING = "identity"
"""What the agent asks for: no compression (the wire recorder asks the upstream for none either)."""
_INFLATED = {"gzip": zlib.MAX_WBITS | 16, "x-gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}


class UnreadableReply(Exception):
    """A reply that cannot be decoded; the message says what was wrong, as a phrase that follows
    'the reply is' or 'the body is' (e.g. 'not valid UTF-8 (invalid start byte at byte 3)'). `status`: the
    reply's HTTP status, when known."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status

    def subject(self) -> str:
        """'the reply', or 'the reply (HTTP 500)' for an error reply."""
        return "the reply" + (f" (HTTP {self.status})" if self.status and self.status >= 400 else "")


def _shown(data: bytes | str, size: int = 80) -> str:
    return repr(data[:size]) + ("..." if len(data) > size else "")


class _BoundedStream:
    """The body as the client reads it: at most `limit` bytes, inflated here when it was compressed. Made a
    subclass of the client's own SyncByteStream (`_stream_class`: httpx, or the httpx2 the openai SDK uses)."""

    def __init__(self, inner: Any, limit: int, encoding: str, status: int) -> None:
        self.inner, self.limit, self.encoding, self.status = inner, limit, encoding, status

    def __iter__(self) -> Iterator[bytes]:
        encoding = self.encoding.strip().lower()
        if encoding in ("", "identity"):
            yield from self._capped(iter(self.inner))
        elif encoding in _INFLATED:
            yield from self._capped(self._inflated(encoding))
        else:
            raise UnreadableReply(f"compressed as {self.encoding!r}, which the agent cannot read (it asked for "
                                  f"{ACCEPT_ENCODING!r})", self.status)

    def _capped(self, pieces: Iterator[bytes]) -> Iterator[bytes]:
        total = 0
        for piece in pieces:
            total += len(piece)
            if total > self.limit:
                raise UnreadableReply(f"larger than {self.limit} bytes (the most the agent reads of one reply)",
                                      self.status)
            yield piece

    def _inflated(self, encoding: str) -> Iterator[bytes]:
        inflater = zlib.decompressobj(_INFLATED[encoding])
        started = False
        for chunk in self.inner:
            while chunk:  # at most limit + 1 bytes out per call: a small body can inflate to gigabytes
                try:
                    piece = inflater.decompress(chunk, self.limit + 1)
                except zlib.error as exc:
                    if encoding == "deflate" and not started:  # some servers send raw deflate, no zlib header
                        inflater, encoding = zlib.decompressobj(-zlib.MAX_WBITS), "raw deflate"
                        continue
                    raise UnreadableReply(f"compressed as {self.encoding!r} but does not inflate ({exc})",
                                          self.status) from None
                started = True
                chunk = inflater.unconsumed_tail
                if piece:
                    yield piece
        if not inflater.eof:
            raise UnreadableReply(f"compressed as {self.encoding!r} and cut short (the compressed data does not "
                                  "end)", self.status)

    def close(self) -> None:
        self.inner.close()


@functools.cache
def _stream_class(base: type) -> type:
    return type("BoundedStream", (_BoundedStream, base), {})


def bound_replies(response: Any) -> None:
    """An httpx (or httpx2) response hook (`event_hooks={"response": [bound_replies]}`), called before the
    body is read: the body is read through `_BoundedStream` (cap: MAX_REPLY_BYTES at the time of the call)."""
    base = next((kind for kind in type(response.stream).__mro__ if kind.__name__ == "SyncByteStream"), None)
    if base is None:
        raise TypeError(f"bound_replies: not a synchronous httpx response stream: {type(response.stream)}")
    encoding = response.headers.get("content-encoding", "")
    if encoding:
        del response.headers["content-encoding"]  # inflated here, within the cap, not by the client
    response.stream = _stream_class(base)(response.stream, MAX_REPLY_BYTES, encoding, response.status_code)


def json_reply(body: bytes | str) -> Any:
    """The JSON value of a whole reply body or a stream event's data; `UnreadableReply` naming what is wrong
    (JSON is UTF-8: RFC 8259)."""
    if not body.strip():
        raise UnreadableReply("empty" if not body else f"blank ({len(body)} characters of white space)")
    if isinstance(body, bytes):
        try:
            text = body.decode("utf-8").removeprefix("\ufeff")
        except UnicodeDecodeError as exc:
            raise UnreadableReply(f"not valid UTF-8 ({exc.reason} at byte {exc.start}: "
                                  f"{body[exc.start:exc.start + 4]!r}): {_shown(body)}") from None
    else:
        text = body
    try:
        value = json.loads(text)
    except RecursionError:
        value = None
    except ValueError as exc:
        raise UnreadableReply(f"not JSON ({str(exc).splitlines()[0]}): {_shown(text)}") from None
    else:
        if not deeper_than(value, MAX_REPLY_DEPTH):
            return value
    raise UnreadableReply(f"JSON nested deeper than {MAX_REPLY_DEPTH} levels: {_shown(text, 40)}")
