"""The chat completions the built-in agent reads: the reply shapes it checks, and a stream's chunks added up.

The loop talks to the endpoint with plain httpx (a campaign's start-up does not pay for the `openai`
SDK, which imports a model of every API it covers). What it needs of a reply is checked here with
pydantic models as lenient as the SDK's: unknown fields are kept (servers put `reasoning_content`
beside the content), a wrong type where the agent reads a value is an error naming its place
(`choices.0.delta.content`). A stream's chunks add up as the SDK's accumulator does: strings are
concatenated, objects merged, and list entries of objects merged by their `index`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class FunctionCall(_Open):
    name: str
    arguments: str


class ToolCall(_Open):
    id: str
    type: str = "function"
    function: FunctionCall | None = None

    @model_validator(mode="after")
    def _has_a_function(self) -> ToolCall:
        if self.function is None and self.type == "function":
            raise ValueError("a function tool call without its function")
        return self


class Message(_Open):
    """An assistant message as the agent reads it (`role` is not checked: the history says `assistant`)."""

    role: str = "assistant"
    content: str | None = None
    tool_calls: list[ToolCall] | None = None


class _DeltaFunction(_Open):
    name: str | None = None
    arguments: str | None = None


class _DeltaToolCall(_Open):
    index: int = Field(ge=0)
    id: str | None = None
    type: str | None = None
    function: _DeltaFunction | None = None


class _Delta(_Open):
    role: str | None = None
    content: str | None = None
    tool_calls: list[_DeltaToolCall] | None = None


class _ChunkChoice(_Open):
    index: int = Field(ge=0)
    delta: _Delta
    finish_reason: str | None = None


class Chunk(_Open):
    """One `chat.completion.chunk` (header fields some servers leave out are not required: none is read)."""

    choices: list[_ChunkChoice]
    usage: dict[str, Any] | None = None


def _merge(into: dict[str, Any], delta: dict[str, Any]) -> None:
    """Add `delta` to `into`: strings concatenated, objects merged, lists of objects merged by `index`;
    `index` and `type` are set, not added. ValueError where the two disagree in kind."""
    for key, value in delta.items():
        if value is None:
            continue
        have = into.get(key)
        if have is None or key in ("index", "type"):
            into[key] = value
        elif isinstance(have, str) and isinstance(value, str):
            into[key] = have + value
        elif isinstance(have, dict) and isinstance(value, dict):
            _merge(have, value)
        elif isinstance(have, list) and isinstance(value, list):
            for entry in value:
                if not isinstance(entry, dict) or not isinstance(entry.get("index"), int):
                    have.append(entry)
                    continue
                slot = next((old for old in have if isinstance(old, dict) and old.get("index") == entry["index"]),
                            None)
                if slot is None:
                    have.append(dict(entry))
                else:
                    _merge(slot, entry)
        elif type(have) is type(value) and isinstance(value, int | float | bool):
            into[key] = value
        else:
            raise ValueError(f"{key} was {type(have).__name__} and then {type(value).__name__}")


class StreamState:
    """A streamed reply's chunks added up into the chat completion they make."""

    def __init__(self) -> None:
        self.choices: dict[int, dict[str, Any]] = {}
        self.head: dict[str, Any] = {}
        self.usage: dict[str, Any] | None = None

    def add(self, payload: dict[str, Any], chunk: Chunk) -> None:
        """Add one checked chunk (`payload` is its JSON, `chunk` the same checked)."""
        for key in ("id", "model", "created", "system_fingerprint"):
            if key in payload and key not in self.head:
                self.head[key] = payload[key]
        if chunk.usage is not None:
            self.usage = chunk.usage
        for choice, raw in zip(chunk.choices, payload["choices"], strict=True):
            state = self.choices.setdefault(choice.index, {"message": {}, "finish_reason": None})
            _merge(state["message"], raw["delta"])
            if choice.finish_reason is not None:
                state["finish_reason"] = choice.finish_reason

    def completion(self) -> dict[str, Any]:
        """The completion so far, as a non-streamed reply's JSON (tool calls without their `index`)."""
        choices = []
        for index in sorted(self.choices):
            state = self.choices[index]
            message = {key: value for key, value in state["message"].items() if value is not None}
            message.setdefault("role", "assistant")
            if isinstance(message.get("tool_calls"), list):
                message["tool_calls"] = [
                    {key: value for key, value in call.items() if key != "index"} if isinstance(call, dict) else call
                    for call in message["tool_calls"]]
            choice = {"index": index, "message": message}
            if state["finish_reason"] is not None:
                choice["finish_reason"] = state["finish_reason"]
            choices.append(choice)
        completion: dict[str, Any] = {**self.head, "object": "chat.completion", "choices": choices}
        if self.usage is not None:
            completion["usage"] = self.usage
        return completion


class StatusError(Exception):
    """The endpoint answered with an HTTP error status; `body` is its JSON's `error` (or the JSON, or the
    text), `message` a one-line summary of it."""

    def __init__(self, status_code: int, body: Any, message: str) -> None:
        super().__init__(message)
        self.status_code, self.body, self.message = status_code, body, message
