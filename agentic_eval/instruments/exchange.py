"""What the instruments share for talking to the endpoint: one request and its answer, the client,
and a streamed chat completion read event by event.

    with make_client(endpoint, jobs=4) as client:
        ex = post_json(client, "/chat/completions", body, timeout_s=180)   # never raises: ex.error
    reply = stream_chat(client, url, body, auth_headers(key), timeout_s=600)  # content, reasoning, timings

Streams are split into events by the wire's `SSEDecoder` (`sse_chunks`), the same parser the
recorder and the form matrix use, so every instrument reads a stream the same way.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

    from agentic_eval.endpoint import Endpoint

SYSTEM_PROMPT = (
    "You are an assistant that can call tools. When one of the offered tools can do what the user asks, "
    "call it, passing the values exactly as the user gives them. When no offered tool fits, or the request "
    "needs no tool, answer in plain text without calling any tool."
)
"""The system message of the battery's and the form matrix's tool-call requests (part of the battery digest)."""


@dataclass
class Exchange:
    """One HTTP request to the endpoint and what came back (body: the decoded JSON, when it was)."""

    status: int | None
    body: Any
    error: str | None
    elapsed_s: float


def is_stale_connection(start: float) -> bool:
    """A disconnect within a second of sending: the server had closed the kept-alive connection
    (after an earlier request timed out, say). Worth one retry on a fresh connection; a disconnect
    later than that is the server's answer."""
    return time.perf_counter() - start < 1.0


def post_json(client: httpx.Client, path: str, payload: object, timeout_s: float) -> Exchange:
    """POST `payload` with an httpx client; never raises: failures come back in `error`."""
    import httpx

    start = time.perf_counter()
    for attempt in range(2):
        try:
            resp = client.post(path, json=payload, timeout=timeout_s)
            break
        except httpx.RemoteProtocolError as exc:
            if attempt == 0 and is_stale_connection(start):
                time.sleep(0.5)
                continue
            return Exchange(None, None, f"{type(exc).__name__}: {exc}", time.perf_counter() - start)
        except httpx.TimeoutException:
            return Exchange(None, None, f"timeout after {timeout_s:g} s", time.perf_counter() - start)
        except httpx.HTTPError as exc:
            return Exchange(None, None, f"{type(exc).__name__}: {exc}", time.perf_counter() - start)
    elapsed = time.perf_counter() - start
    try:
        body = resp.json()
    except ValueError:
        return Exchange(resp.status_code, resp.text[:2000], "the body is not JSON", elapsed)
    error = None if resp.status_code < 400 else f"HTTP {resp.status_code}: {json.dumps(body)[:200]}"
    return Exchange(resp.status_code, body, error, elapsed)


def make_client(endpoint: Endpoint, jobs: int = 4) -> httpx.Client:
    """An httpx client for the endpoint, sized for `jobs` parallel requests."""
    import httpx

    from agentic_eval.endpoint import http_client

    limits = httpx.Limits(max_connections=max(jobs, 1) * 2, max_keepalive_connections=max(jobs, 1))
    return http_client(endpoint, limits=limits, timeout=httpx.Timeout(60.0, connect=10.0))


def sse_chunks(resp: httpx.Response, clock: Callable[[], float] = time.monotonic) -> Iterator[tuple[float, Any]]:
    """Each event of a streamed httpx response, with `clock()` when the bytes completing it arrived:
    (time, its data parsed as JSON), or (time, None) for `[DONE]`. Raises ValueError on data that is
    not JSON (the caller records it as that request's failure)."""
    from agentic_eval.wire.sse import SSEDecoder

    decoder = SSEDecoder()
    for raw in resp.iter_bytes():
        now = clock()
        for event in decoder.feed(raw):
            yield now, _event_json(event.data)
    now = clock()
    for event in decoder.close():
        yield now, _event_json(event.data)


def _event_json(data: str) -> Any:
    return None if data.strip() == "[DONE]" else json.loads(data)


@dataclass
class StreamedReply:
    """A streamed chat completion put back together, with its token timings (time.monotonic)."""

    content: str = ""
    reasoning: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
    token_times: list[float] = field(default_factory=list)
    """When each chunk carrying content or reasoning arrived."""

    @property
    def decode_tok_s(self) -> float | None:
        """(n - 1) / (t_last - t_first), n from usage, else the chunk count."""
        n = self.usage.get("completion_tokens") or len(self.token_times)
        span = self.token_times[-1] - self.token_times[0] if len(self.token_times) >= 2 else 0.0
        return (n - 1) / span if n >= 2 and span > 0 else None


def stream_chat(client: httpx.Client, url: str, body: dict[str, Any], headers: dict[str, str],
                timeout_s: float, on_first_token: Callable[[float], None] | None = None) -> StreamedReply:
    """POST a streamed chat completion and read it to the end. Raises httpx errors and RuntimeError
    (an HTTP error answer, or a reply that is not an event stream), ValueError (an event that is not JSON)."""
    from agentic_eval.endpoint import not_an_event_stream

    reply = StreamedReply()
    with client.stream("POST", url, json={**body, "stream": True}, headers=headers, timeout=timeout_s) as resp:
        if resp.status_code >= 400:
            raise RuntimeError(f"HTTP {resp.status_code}: {resp.read().decode('utf-8', 'replace')[:300]}")
        if problem := not_an_event_stream(resp.headers.get("content-type", "")):
            raise RuntimeError(problem)
        for now, chunk in sse_chunks(resp, time.monotonic):
            if chunk is None:
                continue
            if isinstance(chunk.get("usage"), dict):
                reply.usage = chunk["usage"]
            for choice in chunk.get("choices") or []:
                delta = choice.get("delta") or {}
                thought = delta.get("reasoning_content") or delta.get("reasoning") or delta.get("thinking") or ""
                text = delta.get("content") or ""
                if thought or text:
                    if not reply.token_times and on_first_token is not None:
                        on_first_token(now)
                    reply.token_times.append(now)
                reply.reasoning += thought
                reply.content += text
    return reply
