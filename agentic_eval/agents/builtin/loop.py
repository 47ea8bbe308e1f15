"""The built-in agent: one linear chat history, the model's tool calls executed in the sandbox.

Each turn sends the whole history with the tools (`tool_choice="auto"`), streamed or not. A
reply with structured tool calls gets one `tool` message per call and the loop goes on; a reply
without any ends the run (`completed`, `no_tool_call`). With `lenient_text_calls`, calls the model
wrote as text are found by the turn classifier, executed, and their results fed back in a user
message. Endpoint problems are outcomes (`endpoint_error`), never exceptions.

The endpoint is spoken to with plain httpx (`chat.py` checks the replies): the `openai` SDK's import
alone was most of a campaign's start-up.

Settings in `ctx.options.extra` (strings from `--agent-opt` are accepted): `max_retries` (client
retries of connection errors and HTTP 408/409/429/5xx, default 2), `bash_timeout_s` (default 60),
`temperature`, `max_tokens` (sent only when given).
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, TypeVar

import httpx
from httpx_retries import Retry, RetryTransport
from pydantic import ValidationError

from agentic_eval.agents.base import Agent, AgentContext, AgentOutcome
from agentic_eval.agents.builtin.chat import Chunk, Message, StatusError
from agentic_eval.agents.builtin.prompts import build_system_prompt
from agentic_eval.agents.builtin.tools import TOOL_SCHEMAS, FileToolWorker, ToolLimits, execute_tool
from agentic_eval.classify.turn import find_text_tool_calls
from agentic_eval.endpoint import not_an_event_stream, shared_ssl_context
from agentic_eval.errors import AgenticEvalError
from agentic_eval.faults import is_context_refusal
from agentic_eval.plural import counted
from agentic_eval.wire.bounded import ACCEPT_ENCODING, UnreadableReply, bound_replies, json_reply
from agentic_eval.wire.chat_stream import ChatStreamAssembler
from agentic_eval.wire.sse import MAX_LINE_BYTES, SSEDecoder, StreamUnreadable, stream_error

DEFAULT_MAX_RETRIES = 2
RETRIED_STATUSES = frozenset({408, 409, 429, *range(500, 600)})
"""The answers a request is sent again for (as the OpenAI SDK does): a timeout, a conflict, a rate limit,
a server error."""
_CONTEXT_LENGTH_HINTS = ("context length", "context_length", "maximum context", "too many tokens",
                         "prompt is too long")
T = TypeVar("T")


class EndpointFailure(Exception):
    """The endpoint could not give a usable reply; the message is the outcome's one-line detail."""


class _Stopped(Exception):
    """The deadline passed or the run was cancelled while waiting for the model."""


class Transcript:
    """`transcript.jsonl`: one JSON line per step, flushed as it is written. Every line has `kind`,
    `turn` and `t` (seconds since the start); kinds: `message` (each message added to the history,
    tool results with `name`, `is_error`, `duration_s`), `reply` (latency, finish_reason, usage,
    reasoning of each model reply), `text_call` (lenient mode), `end` (the outcome)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.start = time.monotonic()
        self._file: IO[str] = path.open("w", encoding="utf-8")

    def write(self, kind: str, turn: int, **fields: object) -> None:
        entry = {"kind": kind, "turn": turn, "t": round(time.monotonic() - self.start, 3), **fields}
        line = json.dumps(entry, ensure_ascii=False, default=str)
        self._file.write(line.encode("utf-8", "replace").decode("utf-8") + "\n")  # a model's lone surrogates
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def _option(ctx: AgentContext, key: str, kind: Callable[[Any], T], default: T) -> T:
    value = ctx.options.extra.get(key)
    return default if value is None else kind(value)


def _describe_status_error(exc: StatusError, retries: int) -> str:
    message = exc.message.splitlines()[0][:300]
    if exc.status_code >= 500:
        return f"HTTP {exc.status_code} from the endpoint (after {retries} retries): {message}"
    if is_context_refusal(exc.status_code, exc.body) or any(hint in message.lower() for hint in _CONTEXT_LENGTH_HINTS):
        return f"context length exceeded (HTTP {exc.status_code}): {message}"
    return f"HTTP {exc.status_code} from the endpoint: {message}"


def _shown(value: object, size: int = 120) -> str:
    """A short one-line rendering of what the endpoint sent, for an outcome's detail."""
    try:
        text = value if isinstance(value, str) else json.dumps(value, default=str)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text[:size].replace("\n", " ")


def read_reply(data: object) -> tuple[Message, str | None, dict[str, Any] | None]:
    """(message, finish_reason, usage) of a chat completion body; `EndpointFailure` if it is none."""
    if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
        raise EndpointFailure(f"reply is not a chat completion: {_shown(data)}")
    if not data["choices"] or not isinstance(data["choices"][0], dict):
        raise EndpointFailure("reply is not a chat completion: it has no choices")
    choice = data["choices"][0]
    if not isinstance(choice.get("message") or {}, dict):
        raise EndpointFailure(f"reply is not a valid chat completion: message is not an object: "
                              f"{_shown(choice['message'])}")
    message = dict(choice.get("message") or {})
    message.setdefault("role", "assistant")
    if not isinstance(message.get("tool_calls") or [], list):
        raise EndpointFailure(f"reply is not a valid chat completion: message.tool_calls is not a list: "
                              f"{_shown(message['tool_calls'])}")
    if not isinstance(choice.get("finish_reason"), str | None):
        raise EndpointFailure(f"reply is not a valid chat completion: finish_reason is not a string: "
                              f"{_shown(choice['finish_reason'])}")
    for number, call in enumerate(message.get("tool_calls") or []):
        if isinstance(call, dict):  # some servers leave these out
            call.setdefault("type", "function")
            call["id"] = call.get("id") or f"call_{number}"
    try:
        parsed = Message.model_validate(message)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise EndpointFailure(f"reply is not a valid chat completion: message.{where}: {first['msg']}"
                              ) from None
    usage = data.get("usage")
    return parsed, choice.get("finish_reason"), usage if isinstance(usage, dict) else None


def _reasoning(message: Message) -> str:
    """The reasoning text servers put beside the content (`reasoning_content` or `reasoning`)."""
    extra = message.model_extra or {}
    value = extra.get("reasoning_content") or extra.get("reasoning")
    return value if isinstance(value, str) else ""


_noted: set[str] = set()
_noted_lock = threading.Lock()


def _note_once(line: str) -> None:
    """Print a note on stderr once per process (every trial of a run would say the same)."""
    with _noted_lock:
        if line in _noted:
            return
        _noted.add(line)
    print(f"agentic-eval: {line}", file=sys.stderr, flush=True)


def _accumulate(state: ChatStreamAssembler, data: str, event: str | None) -> None:
    """Add one stream event, checked, to the reply being accumulated."""
    state.add(_checked_chunk(data, event))


def _checked_chunk(data: str, event: str | None) -> dict[str, Any]:
    """One stream event's JSON, checked as a `chat.completion.chunk`; `EndpointFailure` saying what is wrong."""
    try:
        payload = json_reply(data)
    except UnreadableReply as exc:
        raise EndpointFailure(f"broken reply from the endpoint: a stream event is {exc}") from None
    if not isinstance(payload, dict):
        raise EndpointFailure(f"malformed stream chunk: not a JSON object: {_shown(payload)}")
    if event == "error" or stream_error(payload):
        raise EndpointFailure(f"the endpoint sent an error in the stream: {stream_error(payload) or _shown(payload)}")
    try:
        Chunk.model_validate(payload)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise EndpointFailure(f"malformed stream chunk: {where}: {first['msg']}: {_shown(payload)}") from None
    return payload


OPTIONS: dict[str, Callable[[Any], Any]] = {"max_retries": int, "bash_timeout_s": float, "temperature": float,
                                            "max_tokens": int}
"""The `--agent-opt` keys the built-in agent reads, with their types."""
OPTION_MINIMUM: dict[str, int] = {"max_tokens": 1}
OPTION_ABOVE_ZERO = frozenset({"bash_timeout_s"})
"""Options where 0 means nothing (a command with no time to run); the others may be 0 (no retries)."""
OPTION_MAXIMUM: dict[str, float] = {"max_tokens": 2_000_000, "bash_timeout_s": 86_400.0, "temperature": 2.0,
                                    "max_retries": 100}
"""The largest value each option takes: a context's worth of tokens, a day, the OpenAI API's top
temperature, a hundred retries."""


def _valid_text(text: str) -> str:
    """`text` as valid Unicode (lone surrogates a model sent become '?'), so that the history can be
    sent back and written down: what the model sends must not crash its own agent."""
    return text.encode("utf-8", "replace").decode("utf-8")


class BuiltinAgent(Agent):
    """The suite's own agent loop over chat completions with tools."""

    name = "builtin"
    uses_model = True

    @staticmethod
    def check_options(extra: dict[str, Any]) -> None:
        """Before any trial: an unknown key or a value of the wrong type is one line, not N agent errors."""
        for key, value in extra.items():
            if key not in OPTIONS:
                raise AgenticEvalError(f"--agent-opt {key}: the builtin agent has no such option "
                                       f"(it has: {', '.join(OPTIONS)})")
            least, most = OPTION_MINIMUM.get(key, 0), OPTION_MAXIMUM[key]
            try:
                number = OPTIONS[key](value)
            except (TypeError, ValueError, OverflowError):
                number = math.nan
            if math.isfinite(number) and number > most:
                shown = f"{int(most):,}" if float(most).is_integer() else f"{most:g}"
                raise AgenticEvalError(f"--agent-opt {key}={value}: over the limit of {shown}")
            if not math.isfinite(number) or number < least or (key in OPTION_ABOVE_ZERO and number == 0):
                kind = "whole number" if OPTIONS[key] is int else "number"
                wanted = (f"a finite {kind} above 0" if key in OPTION_ABOVE_ZERO else f"a {kind} of at least {least}"
                          if least else f"a non-negative {kind}" + ("" if OPTIONS[key] is int else " (finite)"))
                raise AgenticEvalError(f"--agent-opt {key}={value}: expected {wanted}") from None

    def run(self, ctx: AgentContext) -> AgentOutcome:
        try:
            ctx.trial_dir.mkdir(parents=True, exist_ok=True)
            transcript = Transcript(ctx.trial_dir / "transcript.jsonl")
            loop = _Loop(ctx, transcript)
        except Exception as exc:  # noqa: BLE001 - any failure to set up is the trial's agent_error
            return AgentOutcome("agent_error", detail=f"cannot start: {type(exc).__name__}: {exc}")
        try:
            outcome = loop.run()
        except Exception as exc:  # noqa: BLE001 - a bug of ours: recorded on the trial, never raised to the runner
            outcome = AgentOutcome("agent_error", detail=f"{type(exc).__name__}: {exc}")
        finally:
            loop.client.close()
            if loop.limits.worker is not None:  # always there: _Loop serves its file tools with one
                loop.limits.worker.close()
        outcome.turns, outcome.transcript = loop.turns, transcript.path
        transcript.write("end", loop.turns, status=outcome.status, stop_reason=outcome.stop_reason,
                         detail=outcome.detail)
        transcript.close()
        return outcome


class _Loop:
    """One run's state: history, client, deadline, turn count."""

    def __init__(self, ctx: AgentContext, transcript: Transcript) -> None:
        self.ctx, self.transcript, self.turns = ctx, transcript, 0
        self.deadline = time.monotonic() + ctx.timeout_s
        self.retries = _option(ctx, "max_retries", int, DEFAULT_MAX_RETRIES)
        # Every reply is read within bounds (wire.bounded): a size cap, no inflation past it. Connection
        # errors and the RETRIED_STATUSES are sent again, up to max_retries times, backing off from 0.5 s
        # (at most 8 s, or what a Retry-After asks for up to that).
        retry = Retry(total=self.retries, allowed_methods=["POST"], status_forcelist=RETRIED_STATUSES,
                      retry_on_exceptions=(httpx.NetworkError, httpx.RemoteProtocolError), backoff_factor=0.5,
                      max_backoff_wait=8.0, backoff_jitter=0.25)
        transport = RetryTransport(httpx.HTTPTransport(verify=shared_ssl_context()), retry=retry)
        headers = {"Accept-Encoding": ACCEPT_ENCODING, "Authorization": f"Bearer {ctx.api_key or 'none'}"}
        self.client = httpx.Client(base_url=ctx.base_url.rstrip("/") + "/", transport=transport, headers=headers,
                                   event_hooks={"response": [bound_replies]}, timeout=ctx.timeout_s)
        limits = ToolLimits(bash_timeout_s=_option(ctx, "bash_timeout_s", float, 60.0),
                            deadline=self.deadline, cancel=ctx.cancel, backend=ctx.backend, hidden=ctx.sandbox.hidden)
        self.limits = dataclasses.replace(limits, worker=FileToolWorker(ctx.sandbox.path, limits))
        self.messages: list[dict[str, Any]] = []

    def append(self, message: dict[str, Any], **extra: object) -> None:
        self.messages.append(message)
        self.transcript.write("message", self.turns, message=message, **extra)

    def run(self) -> AgentOutcome:
        ctx = self.ctx
        self.append({"role": "system", "content": build_system_prompt(ctx.options.system_prompt_tokens)})
        self.append({"role": "user", "content": ctx.instruction})
        waiting = False  # stopped while waiting for the model (the endpoint's time), not in a tool (the model's)
        while True:
            if ctx.cancel.is_set():
                return AgentOutcome("cancelled", detail=f"cancelled after {counted(self.turns, 'turn')}")
            if time.monotonic() >= self.deadline:
                return AgentOutcome("timeout", detail=f"agent time limit of {ctx.timeout_s:g}s reached "
                                                      f"after {counted(self.turns, 'turn')}",
                                    waiting_for_endpoint=waiting, timed_out_at=self.deadline)
            if self.turns >= ctx.max_turns:
                return AgentOutcome("completed", stop_reason="max_turns")
            self.turns += 1
            try:
                message = self._ask_model()
            except EndpointFailure as exc:
                return AgentOutcome("endpoint_error", detail=str(exc))
            except _Stopped:
                waiting = True
                continue  # the checks above say which
            if message.tool_calls:
                self._run_structured_calls(message)
            elif not (ctx.options.lenient_text_calls and self._run_text_calls(message)):
                return AgentOutcome("completed", stop_reason="no_tool_call")

    def _wait(self, request: Callable[[], T]) -> T:
        """Run `request` in a thread; stop waiting at once on cancel or past the deadline."""
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["value"] = request()
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
                box["error"] = exc

        worker = threading.Thread(target=target, daemon=True)  # left behind on stop: its timeout ends it
        worker.start()
        while worker.is_alive():
            worker.join(0.05)
            if self.ctx.cancel.is_set() or time.monotonic() >= self.deadline:
                raise _Stopped
        if "error" in box:
            raise box["error"]
        return box["value"]  # type: ignore[no-any-return]

    def _ask_model(self) -> Message:
        ctx = self.ctx
        params: dict[str, Any] = {"model": ctx.model, "messages": list(self.messages), "tools": TOOL_SCHEMAS,
                                  "tool_choice": "auto"}
        for key, kind in (("temperature", float), ("max_tokens", int)):
            if ctx.options.extra.get(key) is not None:
                params[key] = kind(ctx.options.extra[key])
        if ctx.options.stream:
            params["stream"] = True
        timeout = max(self.deadline - time.monotonic(), 0.1)

        def request() -> object:
            response = self.client.send(self.client.build_request("POST", "chat/completions", json=params,
                                                                  timeout=timeout), stream=True)
            try:
                if not response.is_success:  # (a redirect too: the agent follows none, as the SDK did)
                    raise self._status_error(response)
                if not ctx.options.stream:
                    return self._whole_reply(response)
                if why := not_an_event_stream(response.headers.get("content-type", "")):
                    return self._unstreamed_reply(response, why)
                return self._read_stream(response)
            finally:
                response.close()

        started = time.monotonic()
        try:
            data = self._wait(request)
        except UnreadableReply as exc:  # a body that could not be read (past the cap, say)
            raise EndpointFailure(f"{exc.subject()} is {exc}") from None
        except StatusError as exc:
            raise EndpointFailure(_describe_status_error(exc, self.retries)) from None
        except httpx.TimeoutException:
            if time.monotonic() >= self.deadline:
                raise _Stopped from None
            raise EndpointFailure(f"request to {ctx.base_url} timed out") from None
        except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
            raise EndpointFailure(f"the endpoint dropped the connection mid-reply: {exc}") from None
        except httpx.TransportError as exc:
            raise EndpointFailure(f"cannot reach the endpoint at {ctx.base_url} (after {self.retries} "
                                  f"retries): {type(exc).__name__}: {exc}") from None
        except (httpx.HTTPError, ValueError) as exc:  # e.g. a URL httpx cannot send to
            raise EndpointFailure(f"broken reply from the endpoint: {type(exc).__name__}: {exc}") from None
        message, finish_reason, usage = read_reply(data)
        self.transcript.write("reply", self.turns, latency_s=round(time.monotonic() - started, 3),
                              finish_reason=finish_reason, usage=usage, reasoning=_reasoning(message))
        return message

    @staticmethod
    def _status_error(response: httpx.Response) -> StatusError:
        """What an HTTP error answer says: its JSON's `error` (or the JSON, or the text) and a line of it."""
        status = response.status_code
        raw = response.read()  # UnreadableReply (past the cap, say) is the caller's
        try:
            body: object = json_reply(raw)
        except UnreadableReply:
            body = raw.decode("utf-8", "replace").strip()
        if isinstance(body, dict) and "error" in body:
            body = body["error"]
        said = body.get("message") if isinstance(body, dict) else None
        message = (str(said) if said else
                   f"Error code: {status}" + (f" - {_shown(body, 300)}" if body not in ("", None) else ""))
        return StatusError(status, body, message)

    def _whole_reply(self, response: httpx.Response) -> object:
        """The JSON body of a reply to `stream: false`; `EndpointFailure` naming what keeps it from being read."""
        content_type = response.headers.get("content-type", "")
        body = response.read()  # UnreadableReply (past the cap, say) is the caller's: "the reply is ..."
        try:
            return json_reply(body)
        except UnreadableReply as exc:
            if "text/event-stream" in content_type:
                raise EndpointFailure(f"the endpoint sent an event stream where a JSON body was asked for "
                                      f"(stream: false); the reply is {exc}") from None
            raise EndpointFailure(f"reply is {exc}") from None

    def _unstreamed_reply(self, response: httpx.Response, why: str) -> object:
        """A whole completion where a stream was asked for (some servers and proxies ignore
        `stream: true`) is accepted, and noted; anything else is the endpoint's fault."""
        try:
            data = json_reply(response.read())
        except UnreadableReply as exc:
            raise EndpointFailure(f"{why}, and the body is {exc}") from None
        choices = data.get("choices") if isinstance(data, dict) else None
        if not (isinstance(choices, list) and choices and isinstance(choices[0], dict) and "message" in choices[0]):
            raise EndpointFailure(f"{why}; it sent: {_shown(data)}")
        self.transcript.write("note", self.turns, note=why + "; accepted as a whole completion")
        _note_once(f"note: {why}; the built-in agent accepts the whole completions it sends instead")
        return data

    def _read_stream(self, response: httpx.Response) -> dict[str, Any]:
        """The chat completion a stream of chunks adds up to (`wire.chat_stream`). Each event is
        parsed and checked against the chunk's shape, so a chunk of the wrong shape is the endpoint's
        fault, named in one line; so is a line that is not UTF-8 or longer than MAX_LINE_BYTES, and a
        stream past the reply cap. A reply cut at the token limit (`length`) is a turn like any other."""
        state = ChatStreamAssembler()
        decoder, chunks, events = SSEDecoder(max_line=MAX_LINE_BYTES, strict=True), 0, 0
        head = bytearray()  # the stream's first bytes, to show when it held no event
        pieces, done = response.iter_bytes(), False
        try:
            for piece in pieces:
                if len(head) < 120:
                    head += piece[:120 - len(head)]
                for event in decoder.feed(piece):
                    events += 1
                    done = event.data.strip() == "[DONE]"
                    if done:
                        break
                    _accumulate(state, event.data, event.event)
                    chunks += 1
                if done:
                    break
                if self.ctx.cancel.is_set() or time.monotonic() >= self.deadline:
                    raise _Stopped
            if done:
                self._drain(pieces)
            else:
                for event in decoder.close():
                    events += 1
                    if event.data.strip() != "[DONE]":
                        _accumulate(state, event.data, event.event)
                        chunks += 1
        except (EndpointFailure, _Stopped):
            raise
        except (StreamUnreadable, UnreadableReply) as exc:
            raise EndpointFailure(f"unreadable stream from the endpoint: {exc}") from None
        finally:  # (httpx's timeouts and dropped connections mid-stream: _ask_model says them)
            response.close()
        if not chunks:
            seen = ("the stream was empty" if not head else f"it held {events} event(s), none a chunk" if events
                    else f"it held no `data:` event; it began: {bytes(head)!r}")
            raise EndpointFailure(f"stream ended without any completion chunk ({seen})")
        completion = state.result()
        if completion["choices"] and completion["choices"][0]["finish_reason"] is None:
            raise EndpointFailure("stream ended without a finish_reason (cut short)")
        return completion

    def _drain(self, pieces: Iterator[bytes], limit: int = 1 << 20) -> None:
        """Read what follows `[DONE]` (the stream's end), so the server sees the reply taken whole;
        at most `limit` bytes, never past the deadline, and whatever goes wrong there is moot."""
        try:
            for piece in pieces:
                limit -= len(piece)
                if limit < 0 or self.ctx.cancel.is_set() or time.monotonic() >= self.deadline:
                    return
        except Exception:  # noqa: BLE001 - the reply is complete; a broken tail changes nothing
            pass

    def _run_structured_calls(self, message: Message) -> None:
        calls: list[dict[str, Any]] = []
        executed: list[tuple[str, str]] = []  # as the model sent them; the history gets them as valid text
        for reply_call in message.tool_calls or []:
            function = getattr(reply_call, "function", None)  # only function tools are offered
            name, arguments = (function.name, function.arguments) if function else ("?", "")
            executed.append((name, arguments))
            calls.append({"id": _valid_text(reply_call.id), "type": "function",
                          "function": {"name": _valid_text(name), "arguments": _valid_text(arguments)}})
        content = None if message.content is None else _valid_text(message.content)
        self.append({"role": "assistant", "content": content, "tool_calls": calls})
        for call, (name, arguments) in zip(calls, executed, strict=True):
            started = time.monotonic()
            result = execute_tool(self.ctx.sandbox.path, name, arguments, self.limits)
            name = call["function"]["name"]
            self.append({"role": "tool", "tool_call_id": call["id"], "content": result.text},
                        name=name, is_error=result.is_error, duration_s=round(time.monotonic() - started, 3))

    def _run_text_calls(self, message: Message) -> bool:
        """Lenient mode: execute the tool calls written in the reply's text (its content, else its
        reasoning) and feed the results back. False when the text holds none."""
        request = {"tools": TOOL_SCHEMAS}
        text_calls = (find_text_tool_calls(message.content or "", request)
                      or find_text_tool_calls(_reasoning(message), request))
        if not text_calls:
            return False
        self.append({"role": "assistant", "content": _valid_text(message.content or "")})
        parts = [f"You wrote {len(text_calls)} tool call(s) as text in your reply instead of calling the "
                 "tools through the API. They were executed; here are their results, in order. Prefer "
                 "structured tool calls."]
        for number, call in enumerate(text_calls, 1):
            shown = _valid_text(f"{call.name or '?'}({json.dumps(call.arguments, ensure_ascii=False)})")
            if call.truncated or call.arguments is None or not call.offered or not call.name:
                why = ("cut short" if call.truncated else "unknown tool" if not call.offered
                       else "unreadable arguments")
                text = f"error: not executed ({why})"
            else:
                text = execute_tool(self.ctx.sandbox.path, call.name, call.arguments, self.limits).text
            self.transcript.write("text_call", self.turns, family=call.family, name=_valid_text(call.name or ""),
                                  arguments=json.loads(_valid_text(json.dumps(call.arguments))), result=text)
            parts.append(f"Result of text tool call {number}, {shown}:\n{text}")
        self.append({"role": "user", "content": "\n\n".join(parts)})
        return True
