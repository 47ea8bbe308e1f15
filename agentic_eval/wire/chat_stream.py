"""A chat completions stream added up: `chat.completion.chunk` events joined into the one `chat.completion` they make.

The one assembler of chat streams: the built-in agent's loop executes what it returns, and the wire recorder
rebuilds what the classifier reads with it, so a call is never executed one way and graded another. Pure, no I/O;
it skips what is not the shape it reads (the raw events keep it) and never raises; the loop checks each chunk's
shape before adding it (`agents.builtin.chat.Chunk`), the recorder names a malformed event (`sse.malformed_event`).

How pieces join (what openai-python's stream accumulator does, and where it and the servers part, what we decided):

- text (`content`, `reasoning_content`, `reasoning`, `refusal`) is concatenated; `role` and unknown keys take
  the last value (servers that repeat `"role": "assistant"` in every chunk do not make `assistantassistant`);
- a tool-call piece belongs to the call at its `index` (openai-python, vLLM, SGLang); calls keep the order they
  first appeared in, whatever their indexes (skipped, or going back);
- several pieces at one index in one chunk are one call (vLLM with speculative decoding sends them: the fix of
  openai-python issue 3201);
- a *different* non-empty `id` at an index whose call already has one starts a new call (servers that number
  every call 0); the same id sent again is the same call, kept once, not concatenated (JetBrains/koog #2052);
  an id that first comes in a later piece is taken then;
- a function name sent again whole is kept once; a name in pieces is joined; a *different* name at an index
  whose call already has its name and some arguments starts a new call (two whole calls both at index 0,
  without ids);
- arguments are joined as raw text, never parsed piece by piece (a piece may end mid-escape or mid-character
  escape); non-text arguments are written as JSON;
- content after the tool calls is kept as content, the calls stay calls; a `finish_reason` is recorded as sent
  (`tool_calls` without calls, or `stop` after calls: nothing reads it as a call or the lack of one).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["JOINED_TEXT", "ChatStreamAssembler"]

JOINED_TEXT = ("content", "reasoning_content", "reasoning", "refusal")
"""The delta keys whose pieces are concatenated."""

JSONObject = dict[str, Any]


def _text(piece: object) -> str:
    return piece if isinstance(piece, str) else json.dumps(piece)


def _join_name(current: str, piece: str) -> str:
    # Most servers send the name once; some repeat it in every chunk; a few split it.
    if not current:
        return piece
    return current if piece == current else current + piece


@dataclass
class _Call:
    index: int | None
    id: str = ""
    type: str = "function"
    name: str = ""
    arguments: str = ""

    def as_json(self) -> JSONObject:
        return {"id": self.id, "type": self.type, "function": {"name": self.name, "arguments": self.arguments}}


@dataclass
class _Choice:
    index: int
    message: JSONObject = field(default_factory=lambda: {"role": "assistant", "content": None})
    calls: list[_Call] = field(default_factory=list)
    finish_reason: str | None = None

    def add_delta(self, delta: JSONObject) -> None:
        for key, value in delta.items():
            if key == "tool_calls":
                for piece in value if isinstance(value, list) else ():
                    if isinstance(piece, dict):  # anything else is not a call: the raw event keeps it
                        self._add_call_piece(piece)
            elif key == "function_call" and isinstance(value, dict):
                call = self.message.setdefault("function_call", {"name": "", "arguments": ""})
                if value.get("name"):
                    call["name"] = _join_name(call["name"], _text(value["name"]))
                if value.get("arguments") is not None:
                    call["arguments"] += _text(value["arguments"])
            elif key in JOINED_TEXT:
                if value is not None:
                    self.message[key] = (self.message.get(key) or "") + str(value)
                else:
                    self.message.setdefault(key, None)
            elif value is not None or key not in self.message:  # role, and anything unknown: last value
                self.message[key] = value

    def _add_call_piece(self, piece: JSONObject) -> None:
        function = piece.get("function")
        function = function if isinstance(function, dict) else {}
        name = _text(function["name"]) if function.get("name") else ""
        call = self._call_for(piece, name)
        if isinstance(piece.get("id"), str) and piece["id"]:
            call.id = piece["id"]
        if isinstance(piece.get("type"), str) and piece["type"]:
            call.type = piece["type"]
        if name:
            call.name = _join_name(call.name, name)
        if function.get("arguments") is not None:
            call.arguments += _text(function["arguments"])

    def _call_for(self, piece: JSONObject, name: str) -> _Call:
        call_id, index = piece.get("id"), piece.get("index")
        call_id = call_id if isinstance(call_id, str) and call_id else None
        index = index if isinstance(index, int) and not isinstance(index, bool) else None
        if call_id:
            for call in self.calls:
                if call.id == call_id:
                    return call
        if index is not None:
            for call in reversed(self.calls):
                if call.index != index:
                    continue
                if call_id and call.id:  # another id at a known index: another call
                    break
                if name and call.name and call.arguments and name != call.name:  # another whole call at this index
                    break
                return call
        elif not call_id and self.calls:
            return self.calls[-1]  # no index and no id: the call being streamed
        call = _Call(index=index, id=call_id or "")
        self.calls.append(call)
        return call

    def result(self) -> JSONObject:
        message = dict(self.message)
        if self.calls:
            message["tool_calls"] = [call.as_json() for call in self.calls]
        return {"index": self.index, "message": message, "finish_reason": self.finish_reason}


@dataclass
class ChatStreamAssembler:
    """Joins `chat.completion.chunk` events into one `chat.completion` body (see the module's rules)."""

    header: JSONObject = field(default_factory=dict)
    choices: dict[int, _Choice] = field(default_factory=dict)
    usage: JSONObject | None = None

    def add(self, chunk: JSONObject) -> None:
        """Take one chunk (a parsed `data:` payload)."""
        for key in ("id", "created", "model", "system_fingerprint", "service_tier"):
            if chunk.get(key) is not None:
                self.header.setdefault(key, chunk[key])
        if isinstance(chunk.get("usage"), dict) and chunk["usage"]:
            self.usage = chunk["usage"]
        choices = chunk.get("choices")
        for choice in choices if isinstance(choices, list) else ():
            if not isinstance(choice, dict):
                continue  # not a choice: the raw event keeps it
            index = choice.get("index", 0)
            index = index if isinstance(index, int) and not isinstance(index, bool) else 0
            state = self.choices.setdefault(index, _Choice(index=index))
            delta = choice.get("delta")
            state.add_delta(delta if isinstance(delta, dict) else {})
            if choice.get("finish_reason"):
                state.finish_reason = choice["finish_reason"]

    def result(self) -> JSONObject:
        """The `chat.completion` body the chunks add up to (a choice's `finish_reason` is None when none came)."""
        body: JSONObject = {"id": self.header.get("id"), "object": "chat.completion"}
        body.update({k: v for k, v in self.header.items() if k != "id"})
        body["choices"] = [self.choices[i].result() for i in sorted(self.choices)]
        body["usage"] = self.usage
        return body
