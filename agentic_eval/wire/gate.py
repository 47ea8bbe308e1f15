"""What the wire relay takes from an agent: the model API's routes, and request bodies up to a size.

The relay forwards with the endpoint's real key, and whatever runs in the sandbox (the model's own commands
too) can reach it, so it serves only what an agent needs of the model API (`served_path`) and answers 404 to
the rest: files, batches, fine-tuning and the like never reach the endpoint with that key. A request body
larger than `configured_request_limit()` is answered 413 unread, so one request can neither fill the machine's
memory nor the wire log.
"""

from __future__ import annotations

import os
import re

from agentic_eval.errors import AgenticEvalError
from agentic_eval.inputs import MIB, size_text
from agentic_eval.wire.exchange import Receive

SERVED_ROUTES: dict[str, str] = {
    "/chat/completions": "POST",  # every OpenAI-compatible agent
    "/responses": "POST",  # codex, the Responses API
    "/messages": "POST",  # claude-code, the Anthropic Messages API
    "/messages/count_tokens": "POST",  # claude-code counts its context
    "/models": "GET",  # clients list the served models (codex, the openai client's models.list)
}
"""Path under /v1 -> the method the relay forwards it with."""
_MODEL_PATH = re.compile(r"/models/[A-Za-z0-9._:@+-]+(?:/[A-Za-z0-9._:@+-]+)*")
"""GET /v1/models/{id}: one model's entry (ids such as Qwen/Qwen3-8B hold a slash)."""
SERVED_TEXT = "POST /v1/chat/completions, /v1/responses, /v1/messages, /v1/messages/count_tokens; GET /v1/models"

MAX_REQUEST_BYTES = 32 * MIB
"""The largest request body the relay takes: a long agent context is a few megabytes of JSON, images included."""
MAX_REQUEST_ENV = "AGENTIC_EVAL_MAX_REQUEST_MB"
RELAY_OVER_LIMIT = "request_over_relay_limit"
"""The error code of the relay's 413 (agentic_eval.faults reads it: the model grew the request)."""
_DRAIN_FACTOR = 8
"""A refused body is read and dropped up to this many limits, so the client gets its 413 rather than a reset."""


def served_path(method: str, sub_path: str) -> str | None:
    """The path under /v1 to forward `method sub_path` to (empty segments dropped), or None when the relay
    does not serve it."""
    segments = [s for s in sub_path.split("/") if s]
    if any(s in (".", "..") for s in segments):  # the upstream URL would be normalised to another route
        return None
    path = "/" + "/".join(segments)
    if SERVED_ROUTES.get(path) == method or (method == "GET" and _MODEL_PATH.fullmatch(path)):
        return path
    return None


def configured_request_limit() -> int:
    """The relay's request body limit: MAX_REQUEST_BYTES, or AGENTIC_EVAL_MAX_REQUEST_MB megabytes."""
    text = os.environ.get(MAX_REQUEST_ENV, "").strip()
    if not text:
        return MAX_REQUEST_BYTES
    try:
        megabytes = float(text)
    except ValueError:
        megabytes = 0.0
    if not 0 < megabytes <= 4096:
        raise AgenticEvalError(f"{MAX_REQUEST_ENV}={text[:40]!r}: give the wire relay's request size limit in "
                               f"megabytes, above 0 and at most 4096 (unset: {MAX_REQUEST_BYTES // MIB})")
    return max(1, int(megabytes * MIB))


def over_limit_message(limit: int, declared: int | None) -> str:
    """The 413's message and the record's error."""
    size = f" ({size_text(declared)})" if declared is not None else ""
    return (f"the request body{size} is larger than the relay's limit of {size_text(limit)} ({MAX_REQUEST_ENV} "
            "sets another); it was not forwarded")


def declared_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    """The request's Content-Length, when it gives a number."""
    for name, value in headers:
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def read_body(receive: Receive, limit: int) -> bytes | None:
    """The request body, or None when it is larger than `limit` bytes (what came is dropped, and the rest is
    read and dropped up to a bound so the client can read the answer)."""
    parts: list[bytes] = []
    size = 0
    drain = limit * _DRAIN_FACTOR
    while size <= drain:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size <= limit:
            parts.append(chunk)
        else:
            parts = []
        if not message.get("more_body", False):
            break
    return b"".join(parts) if size <= limit else None
