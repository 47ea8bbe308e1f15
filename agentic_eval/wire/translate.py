"""The wire recorder's translating relay: an Anthropic Messages exchange served by an endpoint that speaks only
chat completions.

`POST /v1/messages` is translated (agentic_eval.wire.anthropic) into `POST {upstream}/chat/completions`, and the
endpoint's answer back into a Messages reply, streamed as it arrives when the agent asked for a stream. The
record keeps both sides: `request`, `response` and `events` are what the agent sent and got (Messages), and
`upstream` is what went to the endpoint and came back (chat completions, its raw stream events included).
A request or reply that cannot be translated is answered with a Messages error (a 400 before anything was
sent upstream; an `error` event inside a stream) whose message names what was wrong; the record's `error`
says the same, so the trial ends `endpoint_error`. Other paths under `/v1/messages` (count_tokens) are
answered 404 here: chat completions has nothing to count them with.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

import httpx

from agentic_eval.wire.anthropic import (
    ChatToMessagesStream,
    Untranslatable,
    error_body,
    event_bytes,
    message_events,
    to_chat_request,
    to_message,
)
from agentic_eval.wire.emulate import ReplyRewriter
from agentic_eval.wire.exchange import Exchange, Receive, Send, race_client
from agentic_eval.wire.sse import MAX_LINE_BYTES, SSEDecoder, StreamUnreadable

CHAT_PATH = "/chat/completions"
_ERROR_KINDS = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 529: "overloaded_error"}


async def _reply_json(send: Send, exchange: Exchange, status: int, payload: Any) -> None:
    body = json.dumps(payload, ensure_ascii=False).encode()
    exchange.status, exchange.content_type = status, "application/json"
    exchange.keep(body)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def _upstream_message(body: bytes) -> str:
    text = body.decode("utf-8", "replace")
    try:
        value = json.loads(text)
    except ValueError:
        return text.strip()[:300]
    error = value.get("error") if isinstance(value, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])[:300]
    if isinstance(value, dict) and isinstance(value.get("message"), str):
        return value["message"][:300]
    return text.strip()[:300]


async def relay_translated(receive: Receive, send: Send, exchange: Exchange, sub_path: str, *,
                           client: httpx.AsyncClient, base_url: httpx.URL, headers: Mapping[str, str],
                           shown_upstream: str, emulate: ReplyRewriter | None = None) -> None:
    """Serve one request under `/v1/messages` by translation (see the module's docstring): `client` sends it
    to the endpoint at `base_url` with `headers` added; `shown_upstream` names the endpoint in an error."""
    if sub_path.rstrip("/") != "/messages" or exchange.method != "POST":
        message = (f"agentic-eval wire recorder: {exchange.method} /v1{sub_path} is not served: the endpoint speaks "
                   "only chat completions, and the recorder translates POST /v1/messages alone")
        await _reply_json(send, exchange, 404, error_body(message, "not_found_error"))
        return
    try:
        body = json.loads(exchange.request_body)
        chat = to_chat_request(body)
    except (ValueError, RecursionError) as exc:
        why = str(exc) if isinstance(exc, Untranslatable) else f"the body is not JSON ({exc})"
        exchange.error = f"the Messages request cannot be translated to chat completions: {why}"
        await _reply_json(send, exchange, 400, error_body(f"agentic-eval wire recorder: {exchange.error}",
                                                          "invalid_request_error"))
        return
    upstream = Exchange(seq=exchange.seq, method="POST", path="/v1" + CHAT_PATH,
                        request_body=json.dumps(chat, ensure_ascii=False).encode())
    exchange.upstream = upstream
    sent = [("content-type", "application/json"), ("accept-encoding", "identity"), *headers.items()]
    url = base_url.copy_with(path=base_url.path + CHAT_PATH)
    request = client.build_request("POST", url, headers=sent, content=upstream.request_body)
    exchange.wait_upstream(True)
    try:
        reply = await client.send(request, stream=True)
    except httpx.HTTPError as exc:
        exchange.wait_upstream(False)
        reason = "unreachable" if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout) else "failed"
        exchange.error = upstream.error = (f"upstream {reason}: {type(exc).__name__}: {exc or 'no detail'} "
                                           f"({shown_upstream})")
        upstream.status = 502
        await _reply_json(send, exchange, 502, error_body(f"agentic-eval wire recorder: {exchange.error}"))
        return
    exchange.headers_at = upstream.headers_at = time.perf_counter()
    upstream.status = reply.status_code
    upstream.content_type = reply.headers.get("content-type", "")
    upstream.content_encoding = reply.headers.get("content-encoding", "")
    try:
        await race_client(receive, exchange, _relay(send, exchange, upstream, reply, body, chat, emulate))
    finally:
        await reply.aclose()


async def _relay(send: Send, exchange: Exchange, upstream: Exchange, reply: httpx.Response,
                 body: dict[str, Any], chat: dict[str, Any], emulate: ReplyRewriter | None) -> None:
    model = str(body.get("model"))
    wants_stream = body.get("stream") is True
    streamed = upstream.content_type.lower().startswith("text/event-stream")
    if (reply.status_code < 400 and streamed and upstream.content_encoding.lower() in ("", "identity")
            and emulate is None):
        await _relay_stream(send, exchange, upstream, reply, model)
        return
    try:
        async for chunk in reply.aiter_raw():
            upstream.keep(chunk)
    except httpx.HTTPError as exc:
        upstream.error = f"upstream closed the response early: {type(exc).__name__}: {exc}"
    finally:
        exchange.wait_upstream(False)
    record = upstream.safe_record()
    if reply.status_code >= 400:
        kind = _ERROR_KINDS.get(reply.status_code, "api_error")
        message = f"the endpoint answered HTTP {reply.status_code}: {_upstream_message(b''.join(upstream.chunks))}"
        await _reply_json(send, exchange, reply.status_code, error_body(message, kind))
        return
    try:
        if upstream.error or record.error:
            raise Untranslatable(str(upstream.error or record.error))
        chat_reply = record.response
        if emulate is not None:
            from agentic_eval.wire.emulate import emulated_record

            rewritten = emulate.rewrite(chat, chat_reply)
            exchange.emulated = emulated_record(emulate.name, rewritten)
            chat_reply = rewritten or chat_reply
        message_body = to_message(chat_reply, model)
    except Untranslatable as exc:
        exchange.error = f"the endpoint's reply cannot be translated to the Messages API: {exc}"
        await _reply_json(send, exchange, 502, error_body(f"agentic-eval wire recorder: {exchange.error}"))
        return
    if not wants_stream:
        await _reply_json(send, exchange, 200, message_body)
        return
    await _start_stream(send, exchange)
    for event in message_events(message_body):
        await _send_event(send, exchange, event)
    await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _start_stream(send: Send, exchange: Exchange) -> None:
    exchange.status, exchange.content_type = 200, "text/event-stream"
    headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})


async def _send_event(send: Send, exchange: Exchange, event: dict[str, Any]) -> None:
    data = event_bytes(event)
    exchange.keep(data)
    await send({"type": "http.response.body", "body": data, "more_body": True})


async def _relay_stream(send: Send, exchange: Exchange, upstream: Exchange, reply: httpx.Response,
                        model: str) -> None:
    """Translate a chat stream event by event; a problem ends the stream with an `error` event naming it."""
    await _start_stream(send, exchange)
    translator = ChatToMessagesStream(model=model)
    decoder = SSEDecoder(max_line=MAX_LINE_BYTES)
    done = False
    try:
        try:
            async for chunk in reply.aiter_raw():
                exchange.wait_upstream(False)
                upstream.keep(chunk)
                out: list[dict[str, Any]] = []
                try:
                    for event in decoder.feed(chunk):
                        done = _translate_event(translator, event.data, out) or done
                finally:  # what one upstream chunk made, in one write (also what came before a bad event)
                    await _send_events(send, exchange, out)
                exchange.wait_upstream(True)
            out = []
            try:
                for event in decoder.close():
                    done = _translate_event(translator, event.data, out) or done
            finally:
                await _send_events(send, exchange, out)
        except httpx.HTTPError as exc:
            upstream.error = exchange.error = f"upstream closed the response early: {type(exc).__name__}: {exc}"
            raise Untranslatable(exchange.error) from None
        except StreamUnreadable as exc:
            raise Untranslatable(f"the endpoint's stream is unreadable: {exc}") from None
        finally:
            exchange.wait_upstream(False)
        if not done and translator._finish is None:
            raise Untranslatable("the endpoint's stream ended without a finish_reason or [DONE]: it was cut short")
        await _send_events(send, exchange, translator.finish())
    except Untranslatable as exc:
        exchange.error = exchange.error or f"the endpoint's reply cannot be translated to the Messages API: {exc}"
        await _send_event(send, exchange, error_body(f"agentic-eval wire recorder: {exchange.error}"))
    await send({"type": "http.response.body", "body": b"", "more_body": False})


def _translate_event(translator: ChatToMessagesStream, data: str, out: list[dict[str, Any]]) -> bool:
    """Translate one chat stream event, adding the Messages events it makes to `out`; True at `[DONE]`."""
    if data.strip() == "[DONE]":
        out += translator.finish()
        return True
    if translator.finished:
        return False
    try:
        payload = json.loads(data)
    except (ValueError, RecursionError):
        raise Untranslatable(f"a stream event is not JSON: {data[:80]!r}") from None
    out += translator.feed(payload)
    return False


async def _send_events(send: Send, exchange: Exchange, events: list[dict[str, Any]]) -> None:
    if events:
        data = b"".join(event_bytes(event) for event in events)
        exchange.keep(data)
        await send({"type": "http.response.body", "body": data, "more_body": True})
