"""The wire recorder: a local reverse proxy that logs every exchange with the model endpoint.

Agents are pointed at `WireRecorder.base_url` instead of the endpoint. The model API's requests
under `/v1` (chat completions, the Responses API, Anthropic Messages, models: agentic_eval.wire.gate)
are forwarded to the upstream, any other route is answered 404 and a body over the size limit 413,
both recorded; the response is passed back unchanged and unbuffered: a stream reaches the client
chunk by chunk, as the upstream sends it. Each exchange becomes one `WireRecord` line in a JSONL
wire log, written and flushed when the exchange ends. Request headers are forwarded but never
written anywhere, so no Authorization header or API key reaches the log.

    with WireRecorder("http://gpu-box:8000/v1", "runs/x/wire.jsonl") as recorder:
        agent.run(base_url=recorder.base_url)   # http://127.0.0.1:PORT/v1

The proxy runs in a background thread with its own event loop (uvicorn + an httpx upstream client);
`async with WireRecorder(...)` starts and stops it without blocking the caller's loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import socket
import sys
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qsl, urlencode

import httpx
import uvicorn

from agentic_eval.endpoint import shared_ssl_context
from agentic_eval.errors import AgenticEvalError
from agentic_eval.wire.emulate import ReplyRewriter
from agentic_eval.wire.exchange import (
    EndpointClock,
    Exchange,
    Receive,
    Scope,
    Send,
    WireRecord,
    race_client,
)
from agentic_eval.wire.gate import (
    MAX_REQUEST_BYTES,
    RELAY_OVER_LIMIT,
    SERVED_TEXT,
    configured_request_limit,
    declared_length,
    over_limit_message,
    read_body,
    served_path,
)
from agentic_eval.wire.refs import RequestResolver, bounded_recent, share_base, shorten_request
from agentic_eval.wire.translate import relay_translated

__all__ = ["WireRecorder", "read_wire_log"]

# Headers that describe one hop, not the message; never forwarded. Accept-Encoding is replaced by
# "identity" so the recorder can read the body it passes through byte for byte.
_REQUEST_HOP_HEADERS = frozenset(
    {"host", "connection", "keep-alive", "proxy-authorization", "proxy-connection", "te", "trailer",
     "transfer-encoding", "upgrade", "content-length", "accept-encoding", "expect"}
)
_RESPONSE_HOP_HEADERS = frozenset(
    {"connection", "keep-alive", "proxy-authenticate", "te", "trailer", "transfer-encoding", "upgrade"}
)
_SECRET_QUERY_WORDS = ("key", "token", "secret", "auth", "password")


def read_wire_log(path: str | Path, errors: list[str] | None = None) -> list[WireRecord]:
    """Load every record of a wire log, each request whole (see `WireRecord.request_ref`).

    With `errors`, a line that is not a record (a torn last line, a foreign line) is described
    there and skipped; without, it raises ValueError."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        return parse_wire_log(handle, str(path), errors)


def parse_wire_log(lines: Iterable[str], name: str, errors: list[str] | None = None) -> list[WireRecord]:
    """`read_wire_log` of lines already open (a file opened with checks, see agentic_eval.runfiles); `name`
    names the log in an error."""
    records: list[WireRecord] = []
    resolver = RequestResolver()
    upstream_resolver = RequestResolver()  # a translated exchange's upstream requests, stored by reference too
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = WireRecord.model_validate_json(line)
        except ValueError as exc:
            if errors is None:
                raise ValueError(f"{name}:{number}: not a wire record: {str(exc).splitlines()[0]}") from None
            errors.append(f"line {number}: not a wire record: {str(exc).splitlines()[0][:200]}")
            continue
        record.request, problem = resolver.resolve(record.id, record.request, record.request_ref, record.response)
        if problem is not None:
            record.error = f"{record.error}; {problem}" if record.error else problem
        else:
            record.request_ref = None
        if isinstance(record.upstream, dict):
            up = record.upstream
            up["request"], problem = upstream_resolver.resolve(record.id, up.get("request"), up.get("request_ref"),
                                                               up.get("response"))
            if problem is not None:
                record.error = f"{record.error}; upstream {problem}" if record.error else f"upstream {problem}"
            else:
                up.pop("request_ref", None)
        records.append(record)
    return records


class _UpstreamBrokeOff(Exception):
    """Raised out of the ASGI app so that uvicorn drops the client connection mid-body, as the upstream did."""


def _drop_expected_breakoff(record: logging.LogRecord) -> bool:
    """uvicorn's log, less what the recorder does on purpose: break off a client connection as the
    upstream did, and cut short an exchange its agent abandoned (recorded as such in the wire log)."""
    exc = record.exc_info[1] if record.exc_info else None
    if isinstance(exc, (_UpstreamBrokeOff, asyncio.CancelledError)):
        return False
    return "timeout graceful shutdown exceeded" not in record.getMessage()


def _redact_query(query: str) -> str:
    pairs = parse_qsl(query, keep_blank_values=True)
    if not any(word in name.lower() for name, _ in pairs for word in _SECRET_QUERY_WORDS):
        return query
    return urlencode(
        [(name, "REDACTED" if any(w in name.lower() for w in _SECRET_QUERY_WORDS) else value) for name, value in pairs]
    )


class _WireLog:
    """Appends records to the JSONL file, one whole line each (a write that fails is taken back, so
    a full disk never leaves half a line). A request is stored by reference to an earlier one."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._fd: int | None = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._lock = threading.Lock()
        self._recent = bounded_recent()
        self._recent_upstream = bounded_recent()
        """The translated requests' bases (`WireRecord.upstream`), apart from the agent's own."""
        self.count = 0
        self.lost = 0
        """Exchanges that could not be written (a full disk): said once on stderr."""

    def write(self, record: WireRecord) -> None:
        whole = record.request
        upstream = record.upstream if isinstance(record.upstream, dict) else None
        whole_up = upstream.get("request") if upstream is not None else None
        with self._lock:  # the bases are records already written, so the line may be made outside the lock
            stored, ref = shorten_request(whole, list(self._recent))
            stored_up, ref_up = shorten_request(whole_up, list(self._recent_upstream))
        update: dict[str, Any] = {"request": stored, "request_ref": ref}
        if upstream is not None and ref_up is not None:  # a translated request: stored by reference likewise
            update["upstream"] = {**upstream, "request": stored_up, "request_ref": ref_up}
        line = _serialized(record.model_copy(update=update))
        with self._lock:
            if self._fd is None:  # an exchange outlived stop()'s wait; nothing to write to
                return
            if not self._append(line.encode("utf-8")):
                return
            self.count += 1
            if isinstance(whole, dict):  # kept sharing its base's items: memory grows with what was said
                self._remember(self._recent, record.id, whole, ref, record.response)
            if isinstance(whole_up, dict) and upstream is not None:
                self._remember(self._recent_upstream, record.id, whole_up, ref_up, upstream.get("response"))

    @staticmethod
    def _remember(recent: Any, record_id: str, whole: dict[str, Any], ref: dict[str, Any] | None,
                  response: Any) -> None:
        base = next((request for base_id, request, _ in recent if ref and base_id == ref["base"]), None)
        recent.append((record_id, share_base(whole, ref, base) if ref and base is not None else whole, response))

    def _append(self, data: bytes) -> bool:
        assert self._fd is not None
        size = os.fstat(self._fd).st_size
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view):]
            return True
        except OSError as exc:
            try:
                os.ftruncate(self._fd, size)  # no half line for the next record to be glued to
            except OSError:
                pass
            self.lost += 1
            if self.lost == 1:
                print(f"agentic-eval: wire recorder: cannot write {self.path}: {exc.strerror or exc}; exchanges "
                      "of this trial are missing from its wire log (free space, then resume)",
                      file=sys.stderr, flush=True)
            return False

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


def _serialized(record: WireRecord) -> str:
    """The record's line; a body that cannot be written as JSON is written as text, marked."""
    try:
        return record.model_dump_json() + "\n"
    except ValueError as exc:  # pydantic's serialization error is a ValueError
        try:  # text that is not valid Unicode (a lone surrogate the model sent): made valid, nothing lost else
            text = json.dumps(record.model_dump(mode="json"), ensure_ascii=False)
            return text.encode("utf-8", "replace").decode("utf-8") + "\n"
        except (ValueError, RecursionError, TypeError):
            pass
        why = f"the recorder could not write the reply as JSON ({str(exc).splitlines()[0]}); kept as text"
        kept: str | None
        try:
            kept = json.dumps(record.response, default=str)
        except (ValueError, RecursionError, TypeError):
            kept = None
        fallback = record.model_copy(update={
            "response": kept, "events": [], "raw_reply": True,
            "error": f"{record.error}; {why}" if record.error else why})
        return fallback.model_dump_json() + "\n"


class _ProxyApp:
    """The ASGI application: forward `/v1/...` upstream, relay the answer, log the exchange."""

    def __init__(self, upstream_base_url: str, log: _WireLog, extra_headers: Mapping[str, str],
                 client_key: str | None = None, clock: EndpointClock | None = None,
                 translate_messages: bool = False, max_request_bytes: int = MAX_REQUEST_BYTES,
                 emulate: ReplyRewriter | None = None) -> None:
        self.upstream = httpx.URL(upstream_base_url.rstrip("/"))
        self.max_request_bytes = max_request_bytes
        self.translate_messages = translate_messages
        self.emulate = emulate
        self.clock = clock
        self.log = log
        self.extra_headers = dict(extra_headers)
        self.client_key = client_key
        self.client: httpx.AsyncClient | None = None
        self._seq = itertools.count()

    def _shown_upstream(self) -> str:
        return str(self.upstream.copy_with(username=None, password=None, query=None))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        path: str = scope["path"]
        if path != "/v1" and not path.startswith("/v1/"):
            await _send_json(send, 404,
                             _error_body(f"the wire recorder only forwards /v1/...; got {path}", "not_found"))
            return
        if self.client_key is not None and not _carries_key(scope["headers"], self.client_key):
            await _send_json(send, 401, _error_body("this trial's key is required (Authorization: Bearer KEY)",
                                                    "invalid_api_key"))
            return
        query = scope.get("query_string", b"").decode("latin-1")
        shown_path = path + ("?" + _redact_query(query) if query else "")
        exchange = Exchange(seq=next(self._seq), method=scope["method"], path=shown_path, request_body=b"",
                             clock=self.clock)
        sub_path = served_path(scope["method"], path.removeprefix("/v1"))
        if sub_path is None or not await self._read_request(scope, receive, exchange):
            if sub_path is None:
                self._refuse_route(exchange, path)
            await _send_json(send, exchange.status or 404, exchange.error_body)
            self.log.write(exchange.safe_record())
            return
        try:
            if self.translate_messages and sub_path.startswith("/messages"):
                assert self.client is not None
                await relay_translated(receive, send, exchange, sub_path, client=self.client, base_url=self.upstream,
                                       headers=self.extra_headers, shown_upstream=self._shown_upstream(),
                                       emulate=self.emulate)
            else:
                await self._forward(scope, receive, send, exchange, sub_path, query)
        except asyncio.CancelledError:
            exchange.error = exchange.error or "the recorder stopped before the exchange ended"
            raise
        finally:
            exchange.wait_upstream(False)
            record = exchange.safe_record()
            if exchange.upstream is not None:
                record.upstream = exchange.upstream.side_record()
            if exchange.emulated is not None:
                record.emulated = exchange.emulated
            self.log.write(record)

    @staticmethod
    def _refuse_route(exchange: Exchange, path: str) -> None:
        """Make the exchange a 404: the relay does not serve this route (agentic_eval.wire.gate)."""
        exchange.error = f"the relay serves only the model API ({SERVED_TEXT}); {exchange.method} {path} is not one"
        exchange.status, exchange.error_body = 404, _error_body(exchange.error, "not_found")

    async def _read_request(self, scope: Scope, receive: Receive, exchange: Exchange) -> bool:
        """Read the request's body into `exchange`; or False, the exchange made a 413: the body is over the limit."""
        body = await read_body(receive, self.max_request_bytes)
        if body is None:
            exchange.error = over_limit_message(self.max_request_bytes, declared_length(scope["headers"]))
            exchange.status, exchange.error_body = 413, _error_body(exchange.error, RELAY_OVER_LIMIT)
            return False
        exchange.request_body = body
        return True

    async def _forward(
        self, scope: Scope, receive: Receive, send: Send, exchange: Exchange, sub_path: str, query: str
    ) -> None:
        assert self.client is not None
        # A header the harness sets (the real API key) replaces the agent's own (often a placeholder).
        replaced = _REQUEST_HOP_HEADERS | {name.lower() for name in self.extra_headers} | {"accept-encoding"}
        extra = dict(self.extra_headers)
        if self.client_key is not None:  # the agent's credential headers hold only its placeholder
            replaced |= {"authorization", "x-api-key", "api-key"}
        bearer = next((v for k, v in extra.items() if k.lower() == "authorization"), "")
        if sub_path.startswith("/messages") and bearer[:7].lower() == "bearer ":
            extra["x-api-key"] = bearer[7:]  # an Anthropic-native server reads its key here
        headers = [
            (name.decode("latin-1"), value.decode("latin-1"))
            for name, value in scope["headers"]
            if name.decode("latin-1").lower() not in replaced
        ]
        headers += list(extra.items()) + [("accept-encoding", "identity")]
        url = self.upstream.copy_with(path=self.upstream.path + sub_path, query=query.encode("latin-1") or None)
        request = self.client.build_request(exchange.method, url, headers=headers, content=exchange.request_body)
        exchange.wait_upstream(True)  # until its answer's last byte arrives (the request was read whole before)
        try:
            upstream = await self.client.send(request, stream=True)
        except httpx.HTTPError as exc:
            exchange.wait_upstream(False)
            reason = "unreachable" if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout) else "failed"
            exchange.error = f"upstream {reason}: {type(exc).__name__}: {exc or 'no detail'} ({self._shown_upstream()})"
            exchange.status, exchange.error_body = 502, _error_body(exchange.error, f"upstream_{reason}")
            await _send_json(send, 502, exchange.error_body)
            return
        exchange.headers_at = time.perf_counter()
        exchange.status = upstream.status_code
        exchange.content_type = upstream.headers.get("content-type", "")
        exchange.content_encoding = upstream.headers.get("content-encoding", "")
        raw_headers = [
            (name, value) for name, value in upstream.headers.raw
            if name.decode("latin-1").lower() not in _RESPONSE_HOP_HEADERS
        ]
        try:
            if (self.emulate and exchange.method == "POST"
                    and sub_path.rstrip("/").endswith(("/chat/completions", "/responses"))
                    and upstream.status_code == 200 and exchange.content_encoding.lower() in ("", "identity")):
                await race_client(receive, exchange,
                                  _relay_emulated(upstream, send, exchange, self.emulate, raw_headers))
                return
            await send({"type": "http.response.start", "status": upstream.status_code, "headers": raw_headers})
            await _relay_until_done_or_disconnect(upstream, receive, send, exchange)
        finally:
            await upstream.aclose()


async def _relay_until_done_or_disconnect(
    upstream: httpx.Response, receive: Receive, send: Send, exchange: Exchange
) -> None:
    """Pass the body through chunk by chunk; stop early if the client goes away."""

    async def pump() -> None:
        try:
            async for chunk in upstream.aiter_raw():
                exchange.wait_upstream(False)  # handing it on to the client is the client's time
                exchange.keep(chunk)
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                exchange.wait_upstream(True)
        except httpx.HTTPError as exc:
            exchange.error = f"upstream closed the response early: {type(exc).__name__}: {exc}"
            raise _UpstreamBrokeOff(exchange.error) from exc
        finally:
            exchange.wait_upstream(False)
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    await race_client(receive, exchange, pump())  # re-raises _UpstreamBrokeOff


KEEPALIVE_S = 5.0
"""While an emulated stream is read whole, an SSE comment goes to the agent this often: a client whose stream
times out when no bytes come (opencode's) keeps waiting, as it would for a stream passed through."""
KEEPALIVE = b": agentic-eval: emulating a tool parser, reading the whole reply\n\n"


async def _relay_emulated(upstream: httpx.Response, send: Send, exchange: Exchange, emulate: ReplyRewriter,
                          raw_headers: list[tuple[bytes, bytes]]) -> None:
    """`--emulate-parser`: read the endpoint's whole reply, hand the agent what `emulate` makes of it (a stream as a
    stream, agentic_eval.wire.emulate), or the reply unchanged when it changes nothing (the parser reads no call).
    A stream's headers go at once, and SSE comments keep it alive while the reply is read."""
    from agentic_eval.wire.emulate import emulated_record, stream_bytes

    streamed = exchange.content_type.lower().startswith("text/event-stream")
    if streamed:
        await send({"type": "http.response.start", "status": upstream.status_code,
                    "headers": [(n, v) for n, v in raw_headers if n.lower() != b"content-length"]})
    parts: list[bytes] = []
    chunks = upstream.aiter_raw()
    following: asyncio.Future[bytes] | None = None
    try:
        while True:
            following = asyncio.ensure_future(anext(chunks))
            while not following.done():
                await asyncio.wait({following}, timeout=KEEPALIVE_S)
                if streamed and not following.done():
                    await send({"type": "http.response.body", "body": KEEPALIVE, "more_body": True})
            try:
                chunk = following.result()
            except StopAsyncIteration:
                break
            exchange.wait_upstream(False)
            exchange.keep(chunk)
            parts.append(chunk)
            exchange.wait_upstream(True)
    except httpx.HTTPError as exc:
        exchange.error = f"upstream closed the response early: {type(exc).__name__}: {exc}"
        raise _UpstreamBrokeOff(exchange.error) from exc
    finally:
        if following is not None and not following.done():
            following.cancel()  # the client went away mid-read
        exchange.wait_upstream(False)
    seen = exchange.safe_record()
    rewritten = None
    exchange.emulated = emulated_record(emulate.name, None)
    if seen.error is None and not seen.raw_reply:
        try:
            rewritten = emulate.rewrite(seen.request, seen.response)
            exchange.emulated = emulated_record(emulate.name, rewritten)
        except Exception as exc:  # noqa: BLE001 - a parser that fails on this text: the agent gets the reply as is
            exchange.emulated["error"] = f"{type(exc).__name__}: {exc}"
    if rewritten is None:
        body = b"".join(parts)
        headers = raw_headers
    else:
        body = stream_bytes(rewritten) if seen.stream else json.dumps(rewritten, ensure_ascii=False).encode()
        kind = b"text/event-stream" if seen.stream else b"application/json"
        headers = [(name, value) for name, value in raw_headers
                   if name.lower() not in (b"content-length", b"content-type")]
        headers += [(b"content-type", kind), (b"content-length", str(len(body)).encode())]
    if not streamed:
        await send({"type": "http.response.start", "status": upstream.status_code, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def _carries_key(headers: list[tuple[bytes, bytes]], key: str) -> bool:
    """True when a request presents `key` the way OpenAI-compatible clients do (Bearer, or an api-key header)."""
    import hmac

    for name, value in headers:
        name_text = name.decode("latin-1").lower()
        text = value.decode("latin-1").strip()
        if name_text == "authorization" and text[:7].lower() == "bearer ":
            text = text[7:].strip()
        elif name_text not in ("api-key", "x-api-key"):
            continue
        if hmac.compare_digest(text.encode("latin-1"), key.encode("latin-1")):
            return True
    return False


def _error_body(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": f"agentic-eval wire recorder: {message}", "type": kind, "code": kind}}


async def _send_json(send: Send, status: int, payload: Any) -> None:
    body = json.dumps(payload).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


class _PromptServer(uvicorn.Server):
    """uvicorn's server, stopping as soon as asked. uvicorn looks at `should_exit` every 0.1 s, and its
    shutdown sleeps 0.1 s and then waits for connections in 0.1 s steps: a recorder stopped after every
    trial paid ~0.18 s for that. Here `wake()` (from any thread) ends the main loop at once, and shutdown
    waits for the connections and exchanges in flight in 5 ms steps, `timeout_graceful_shutdown` at most,
    then cancels what is left, as uvicorn does."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._woken: asyncio.Event | None = None

    def wake(self) -> None:
        """Ask the server to stop, from any thread."""
        self.should_exit = True
        loop, woken = self._loop, self._woken
        if loop is not None and woken is not None:
            with contextlib.suppress(RuntimeError):  # the loop already closed: it has stopped
                loop.call_soon_threadsafe(woken.set)

    async def main_loop(self) -> None:
        self._woken = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 1) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._woken.wait(), 0.1)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        try:
            async with asyncio.timeout(self.config.timeout_graceful_shutdown):
                while self.server_state.connections or self.server_state.tasks:
                    await asyncio.sleep(0.005)
                for server in self.servers:
                    await server.wait_closed()
        except TimeoutError:
            logging.getLogger("uvicorn.error").error(
                "Cancel %s running task(s), timeout graceful shutdown exceeded", len(self.server_state.tasks))
            for task in self.server_state.tasks:
                task.cancel(msg="Task cancelled, timeout graceful shutdown exceeded")


class WireRecorder:
    """A recording reverse proxy on 127.0.0.1, in a background thread.

    Use as a context manager (`with` or `async with`), or call `start()` and `stop()`.

    Args:
        upstream_base_url: the endpoint's base URL, as given to an OpenAI client (e.g. `http://host:8000/v1`).
            A request to `{base_url}/chat/completions` goes to `{upstream_base_url}/chat/completions`.
        log_path: the JSONL wire log; created with its folders, appended to.
        upstream_headers: headers added to every upstream request (e.g. an Authorization the agent
            does not send). Never logged.
        client_key: when given, only requests presenting this key (a trial's placeholder, as
            `Authorization: Bearer KEY` or an `api-key` / `x-api-key` header) are forwarded; others get 401,
            unlogged.
        translate_messages: answer Anthropic Messages requests (`/v1/messages`) by translating each to chat
            completions for the upstream and its reply back (agentic_eval.wire.translate); False passes them
            through like any other request.
        emulate: a chat completion or Responses API reply reaches the agent as this rewrites it (`--emulate-parser`:
            as an engine's tool parser would have returned it, calls read from the text structured;
            agentic_eval.classify.emulation makes one); the whole reply is read before any of it is passed on.
        connect_timeout_s: give up on connecting to the upstream after this long (502 to the client).
        read_timeout_s: longest silence allowed from the upstream; None waits as long as the client does.
        port: port to listen on; 0 picks a free one.
        max_request_bytes: request bodies larger than this are answered 413, unread and recorded without them;
            None: 32 MiB, or AGENTIC_EVAL_MAX_REQUEST_MB.
    """

    def __init__(
        self,
        upstream_base_url: str,
        log_path: str | Path,
        *,
        upstream_headers: Mapping[str, str] | None = None,
        client_key: str | None = None,
        connect_timeout_s: float = 10.0,
        read_timeout_s: float | None = None,
        port: int = 0,
        translate_messages: bool = False,
        max_request_bytes: int | None = None,
        emulate: ReplyRewriter | None = None,
    ) -> None:
        self.upstream_base_url = upstream_base_url
        self.max_request_bytes = configured_request_limit() if max_request_bytes is None else max_request_bytes
        self.translate_messages = translate_messages
        self.emulate = emulate
        self.log_path = Path(log_path)
        self._headers = dict(upstream_headers or {})
        self._client_key = client_key
        self._timeout = httpx.Timeout(None, connect=connect_timeout_s, read=read_timeout_s)
        self._requested_port = port
        self._port: int | None = None
        self._server: _PromptServer | None = None
        self._thread: threading.Thread | None = None
        self._log: _WireLog | None = None
        self._failure: BaseException | None = None
        self._written = 0
        self.clock = EndpointClock()
        """When requests were waiting on the endpoint (kept after stop())."""

    @property
    def base_url(self) -> str:
        """The URL to give the agent instead of the endpoint's: `http://127.0.0.1:PORT/v1`."""
        if self._port is None:
            raise AgenticEvalError("the wire recorder is not running: call start() or use it as a context manager")
        return f"http://127.0.0.1:{self._port}/v1"

    @property
    def records_written(self) -> int:
        """How many exchanges have been written to the log so far."""
        return self._log.count if self._log else self._written

    def endpoint_busy_at(self, moment: float) -> bool:
        """Whether a request was waiting on the endpoint at `moment` (time.monotonic()): an agent whose time ran
        out then was waiting for the model, not running its own commands."""
        return self.clock.busy_at(moment)

    def start(self, timeout_s: float = 10.0) -> None:
        """Bind a port, start the proxy thread, return once it accepts connections."""
        if self._thread is not None:
            return
        logging.getLogger("uvicorn.error").addFilter(_drop_expected_breakoff)
        # proto given explicitly: asyncio only sets TCP_NODELAY on sockets whose proto says TCP, and
        # without it a response's headers and body wait for the client's delayed ACK (40 ms).
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", self._requested_port))
        except OSError as exc:
            sock.close()
            raise AgenticEvalError(f"wire recorder: cannot listen on 127.0.0.1:{self._requested_port}: {exc}") from exc
        self._log = _WireLog(self.log_path)
        app = _ProxyApp(self.upstream_base_url, self._log, self._headers, self._client_key, self.clock,
                        self.translate_messages, self.max_request_bytes, self.emulate)
        config = uvicorn.Config(
            app, interface="asgi3", http="h11", loop="asyncio", lifespan="off", log_config=None,
            access_log=False, proxy_headers=False, server_header=False, date_header=False, timeout_graceful_shutdown=5,
        )
        self._server = _PromptServer(config)
        self._thread = threading.Thread(
            target=self._run, args=(app, sock), name=f"wire-recorder-{sock.getsockname()[1]}", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started and self._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.005)
        if not self._server.started:
            self.stop()
            raise AgenticEvalError(f"wire recorder did not start within {timeout_s} s: {self._failure or 'no detail'}")
        self._port = sock.getsockname()[1]

    def _run(self, app: _ProxyApp, sock: socket.socket) -> None:
        async def serve() -> None:
            async with httpx.AsyncClient(timeout=self._timeout, follow_redirects=False,
                                         verify=shared_ssl_context()) as client:
                app.client = client
                assert self._server is not None
                await self._server.serve(sockets=[sock])

        try:
            asyncio.run(serve())
        except BaseException as exc:  # noqa: BLE001 - reported by start()
            self._failure = exc
        finally:
            sock.close()

    def stop(self, timeout_s: float = 10.0, grace_s: float = 5.0) -> None:
        """Stop accepting, let exchanges in flight end (`grace_s` at most; one cut short is still
        recorded, with the error saying so), close the log."""
        if self._server is not None:
            # uvicorn annotates an int but hands it to asyncio.timeout, which takes fractions of a second too
            self._server.config.timeout_graceful_shutdown = grace_s  # type: ignore[assignment]
            self._server.wake()
        if self._thread is not None:
            self._thread.join(timeout_s)
        if self._log is not None:
            self._log.close()
            self._written = self._log.count
        self._server = self._thread = self._log = None
        self._port = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        await asyncio.to_thread(self.start)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.to_thread(self.stop)
