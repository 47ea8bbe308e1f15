"""The built-in agent: one linear chat history, the model's tool calls executed in the sandbox.

Each turn sends the whole history with the tools (`tool_choice="auto"`), streamed or not. A
reply with structured tool calls gets one `tool` message per call and the loop goes on; a reply
without any ends the run (`completed`, `no_tool_call`). With `lenient_text_calls`, calls the model
wrote as text are found by the turn classifier, executed, and their results fed back in a user
message. Endpoint problems are outcomes (`endpoint_error`), never exceptions.

Settings in `ctx.options.extra` (strings from `--agent-opt` are accepted): `max_retries` (client
retries of connection errors and HTTP 5xx/429, default 2), `bash_timeout_s` (default 60),
`temperature`, `max_tokens` (sent only when given).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, TypeVar

import openai
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import (
    ChatCompletionMessage,
    ChatCompletionMessageParam,
    ChatCompletionMessageToolCallParam,
)
from pydantic import ValidationError

from agentic_eval.agent import AgentContext, AgentOutcome
from agentic_eval.classify import find_text_tool_calls
from agentic_eval.endpoint import shared_ssl_context
from agentic_eval.errors import AgenticEvalError
from agentic_eval.prompts import build_system_prompt
from agentic_eval.tools import TOOL_SCHEMAS, ToolLimits, execute_tool

DEFAULT_MAX_RETRIES = 2
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

    def write(self, kind: str, turn: int, **fields: Any) -> None:
        entry = {"kind": kind, "turn": turn, "t": round(time.monotonic() - self.start, 3), **fields}
        self._file.write(json.dumps(entry, ensure_ascii=False, default=str) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def _turns(n: int) -> str:
    return f"{n} turn" if n == 1 else f"{n} turns"


def _option(ctx: AgentContext, key: str, kind: Callable[[Any], T], default: T) -> T:
    value = ctx.options.extra.get(key)
    return default if value is None else kind(value)


def _describe_status_error(exc: openai.APIStatusError, retries: int) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    message = str(body.get("message") or exc.message).splitlines()[0][:300]
    if exc.status_code >= 500:
        return f"HTTP {exc.status_code} from the endpoint (after {retries} retries): {message}"
    if any(hint in message.lower() for hint in _CONTEXT_LENGTH_HINTS):
        return f"context length exceeded (HTTP {exc.status_code}): {message}"
    return f"HTTP {exc.status_code} from the endpoint: {message}"


def read_reply(data: Any) -> tuple[ChatCompletionMessage, str | None, Any]:
    """(message, finish_reason, usage) of a chat completion body; `EndpointFailure` if it is none."""
    if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
        raise EndpointFailure(f"reply is not a chat completion: {json.dumps(data, default=str)[:120]}")
    if not data["choices"] or not isinstance(data["choices"][0], dict):
        raise EndpointFailure("reply is not a chat completion: it has no choices")
    choice = data["choices"][0]
    message = dict(choice.get("message") or {})
    message.setdefault("role", "assistant")
    for number, call in enumerate(message.get("tool_calls") or []):
        if isinstance(call, dict):  # some servers leave these out
            call.setdefault("type", "function")
            call["id"] = call.get("id") or f"call_{number}"
    try:
        parsed = ChatCompletionMessage.model_validate(message)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise EndpointFailure(f"reply is not a valid chat completion: message.{where}: {first['msg']}"
                              ) from None
    return parsed, choice.get("finish_reason"), data.get("usage")


def _reasoning(message: ChatCompletionMessage) -> str:
    """The reasoning text servers put beside the content (`reasoning_content` or `reasoning`)."""
    extra = message.model_extra or {}
    value = extra.get("reasoning_content") or extra.get("reasoning")
    return value if isinstance(value, str) else ""


OPTIONS: dict[str, Callable[[Any], Any]] = {"max_retries": int, "bash_timeout_s": float, "temperature": float,
                                            "max_tokens": int}
"""The `--agent-opt` keys the built-in agent reads, with their types."""


class BuiltinAgent:
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
            try:
                if OPTIONS[key](value) < 0:
                    raise ValueError
            except (TypeError, ValueError):
                raise AgenticEvalError(f"--agent-opt {key}={value}: expected a non-negative "
                                       f"{'whole number' if OPTIONS[key] is int else 'number'}") from None

    def run(self, ctx: AgentContext) -> AgentOutcome:
        try:
            ctx.trial_dir.mkdir(parents=True, exist_ok=True)
            transcript = Transcript(ctx.trial_dir / "transcript.jsonl")
            loop = _Loop(ctx, transcript)
        except Exception as exc:
            return AgentOutcome("agent_error", detail=f"cannot start: {type(exc).__name__}: {exc}")
        try:
            outcome = loop.run()
        except Exception as exc:  # a bug of ours: recorded on the trial, never raised to the runner
            outcome = AgentOutcome("agent_error", detail=f"{type(exc).__name__}: {exc}")
        finally:
            loop.client.close()
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
        self.client = openai.OpenAI(base_url=ctx.base_url, api_key=ctx.api_key or "none",
                                    http_client=openai.DefaultHttpxClient(verify=shared_ssl_context()),
                                    max_retries=self.retries, timeout=ctx.timeout_s)
        self.limits = ToolLimits(bash_timeout_s=_option(ctx, "bash_timeout_s", float, 60.0),
                                 deadline=self.deadline, cancel=ctx.cancel, backend=ctx.backend)
        self.messages: list[ChatCompletionMessageParam] = []

    def append(self, message: ChatCompletionMessageParam, **extra: Any) -> None:
        self.messages.append(message)
        self.transcript.write("message", self.turns, message=message, **extra)

    def run(self) -> AgentOutcome:
        ctx = self.ctx
        self.append({"role": "system", "content": build_system_prompt(ctx.options.system_prompt_tokens)})
        self.append({"role": "user", "content": ctx.instruction})
        while True:
            if ctx.cancel.is_set():
                return AgentOutcome("cancelled", detail=f"cancelled after {_turns(self.turns)}")
            if time.monotonic() >= self.deadline:
                return AgentOutcome("timeout", detail=f"agent time limit of {ctx.timeout_s:g}s reached "
                                                      f"after {_turns(self.turns)}")
            if self.turns >= ctx.max_turns:
                return AgentOutcome("completed", stop_reason="max_turns")
            self.turns += 1
            try:
                message = self._ask_model()
            except EndpointFailure as exc:
                return AgentOutcome("endpoint_error", detail=str(exc))
            except _Stopped:
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
            except BaseException as exc:  # handed to the waiting thread
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

    def _ask_model(self) -> ChatCompletionMessage:
        ctx = self.ctx
        params: dict[str, Any] = {"model": ctx.model, "messages": list(self.messages), "tools": TOOL_SCHEMAS,
                                  "tool_choice": "auto"}
        for key, kind in (("temperature", float), ("max_tokens", int)):
            if ctx.options.extra.get(key) is not None:
                params[key] = kind(ctx.options.extra[key])
        timeout = max(self.deadline - time.monotonic(), 0.1)

        def request() -> Any:
            if not ctx.options.stream:
                raw = self.client.chat.completions.with_raw_response.create(**params, timeout=timeout)
                try:
                    return raw.http_response.json()
                except ValueError:
                    raise EndpointFailure(f"reply is not JSON: {raw.http_response.text[:120]!r}") from None
            state = ChatCompletionStreamState()
            for chunk in self.client.chat.completions.create(**params, stream=True, timeout=timeout):
                state.handle_chunk(chunk)
                if ctx.cancel.is_set() or time.monotonic() >= self.deadline:
                    raise _Stopped
            # The snapshot, not get_final_completion(): that one raises on finish_reason "length" or
            # "content_filter", and a reply cut at the token limit is a turn like any other.
            completion = state.current_completion_snapshot
            if completion.choices and completion.choices[0].finish_reason is None:
                raise EndpointFailure("stream ended without a finish_reason (cut short)")
            return completion.model_dump(exclude_none=True)

        started = time.monotonic()
        try:
            data = self._wait(request)
        except openai.APIStatusError as exc:
            raise EndpointFailure(_describe_status_error(exc, self.retries)) from None
        except openai.APITimeoutError:
            if time.monotonic() >= self.deadline:
                raise _Stopped from None
            raise EndpointFailure(f"request to {ctx.base_url} timed out") from None
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            # Matched by name: openai builds may vendor their own httpx.
            if type(cause).__name__ in ("RemoteProtocolError", "ReadError"):
                raise EndpointFailure(f"the endpoint dropped the connection mid-reply: {cause}") from None
            raise EndpointFailure(f"cannot reach the endpoint at {ctx.base_url} (after {self.retries} "
                                  f"retries): {type(cause).__name__}: {cause}") from None
        except (openai.OpenAIError, ValueError) as exc:  # e.g. a stream event that is not JSON
            raise EndpointFailure(f"broken reply from the endpoint: {type(exc).__name__}: {exc}") from None
        message, finish_reason, usage = read_reply(data)
        self.transcript.write("reply", self.turns, latency_s=round(time.monotonic() - started, 3),
                              finish_reason=finish_reason, usage=usage, reasoning=_reasoning(message))
        return message

    def _run_structured_calls(self, message: ChatCompletionMessage) -> None:
        calls: list[ChatCompletionMessageToolCallParam] = []
        for reply_call in message.tool_calls or []:
            function = getattr(reply_call, "function", None)  # only function tools are offered
            name, arguments = (function.name, function.arguments) if function else ("?", "")
            calls.append({"id": reply_call.id, "type": "function",
                          "function": {"name": name, "arguments": arguments}})
        self.append({"role": "assistant", "content": message.content, "tool_calls": calls})
        for call in calls:
            name, arguments = call["function"]["name"], call["function"]["arguments"]
            started = time.monotonic()
            result = execute_tool(self.ctx.sandbox.path, name, arguments, self.limits)
            self.append({"role": "tool", "tool_call_id": call["id"], "content": result.text},
                        name=name, is_error=result.is_error, duration_s=round(time.monotonic() - started, 3))

    def _run_text_calls(self, message: ChatCompletionMessage) -> bool:
        """Lenient mode: execute the tool calls written in the reply's text (its content, else its
        reasoning) and feed the results back. False when the text holds none."""
        request = {"tools": TOOL_SCHEMAS}
        text_calls = (find_text_tool_calls(message.content or "", request)
                      or find_text_tool_calls(_reasoning(message), request))
        if not text_calls:
            return False
        self.append({"role": "assistant", "content": message.content or ""})
        parts = [f"You wrote {len(text_calls)} tool call(s) as text in your reply instead of calling the "
                 "tools through the API. They were executed; here are their results, in order. Prefer "
                 "structured tool calls."]
        for number, call in enumerate(text_calls, 1):
            shown = f"{call.name or '?'}({json.dumps(call.arguments, ensure_ascii=False)})"
            if call.truncated or call.arguments is None or not call.offered or not call.name:
                why = ("cut short" if call.truncated else "unknown tool" if not call.offered
                       else "unreadable arguments")
                text = f"error: not executed ({why})"
            else:
                text = execute_tool(self.ctx.sandbox.path, call.name, call.arguments, self.limits).text
            self.transcript.write("text_call", self.turns, family=call.family, name=call.name,
                                  arguments=call.arguments, result=text)
            parts.append(f"Result of text tool call {number}, {shown}:\n{text}")
        self.append({"role": "user", "content": "\n\n".join(parts)})
        return True
