"""The chat completions the built-in agent reads: the reply shapes it checks, and a stream's chunks added up.

The loop talks to the endpoint with plain httpx (a campaign's start-up does not pay for the `openai`
SDK, which imports a model of every API it covers). What it needs of a reply is checked here with
pydantic models as lenient as the SDK's: unknown fields are kept (servers put `reasoning_content`
beside the content), a wrong type where the agent reads a value is an error naming its place
(`choices.0.delta.content`). A stream's checked chunks are added up by the wire's one chat-stream
assembler (`agentic_eval.wire.chat_stream`), the same that rebuilds what the classifier reads.
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


class StatusError(Exception):
    """The endpoint answered with an HTTP error status; `body` is its JSON's `error` (or the JSON, or the
    text), `message` a one-line summary of it."""

    def __init__(self, status_code: int, body: object, message: str) -> None:
        super().__init__(message)
        self.status_code, self.body, self.message = status_code, body, message
