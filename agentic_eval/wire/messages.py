"""The Anthropic Messages API's shapes, in one place: a reply checked, read, and put together from its stream.

Every part of the suite that reads a Messages `message` reads it here: the wire recorder (a stream reassembled,
`MessagesStreamAssembler`), its translation to and from chat completions (`wire/anthropic.py`), the instruments
(`instruments/anthropic.py`: a reply checked with `message_problem`, put together strictly, judged through
`as_chat_completion`) and the turn classifier (`message_parts`). Pure, no I/O.

A reply is a `message` whose `content` is a list of blocks: `text`, `tool_use` (`id`, `name`, `input`, an
object), `thinking` (or `redacted_thinking`); `stop_reason` is one of `STOP_REASONS`. Streamed, the same message
comes as server-sent events: `message_start` (the message without content), then per block `content_block_start`,
`content_block_delta` (`text_delta`, `input_json_delta` with a piece of the input's JSON, `thinking_delta`,
`signature_delta`, `citations_delta`) and `content_block_stop`, then `message_delta` (stop reason, output usage)
and `message_stop`; `ping` may come anywhere, `error` ends the stream.

One assembler serves both readers. Each break of the protocol is noted (`problem`, the first one); the strict
assembler (instruments: a reply that breaks the rules is an error naming what was wrong) stops there, the lenient
one (the recorder: the exchange is kept whatever the endpoint sent) goes on with what it can read.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "BLOCK_TYPES",
    "EVENT_TYPES",
    "FINISH_FOR_STOP",
    "STOP_FOR_FINISH",
    "STOP_REASONS",
    "UNPARSED_ARGUMENTS",
    "MessageParts",
    "MessagesStreamAssembler",
    "as_chat_completion",
    "assemble",
    "call_arguments",
    "is_messages_event",
    "malformed_messages_event",
    "message_parts",
    "message_problem",
    "tool_input",
]

JSONObject = dict[str, Any]

BLOCK_TYPES = ("text", "tool_use", "thinking", "redacted_thinking")
"""The content blocks a reply to a request with client tools may hold."""
STOP_REASONS = ("end_turn", "tool_use", "max_tokens", "stop_sequence", "pause_turn", "refusal")
FINISH_FOR_STOP = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls", "max_tokens": "length",
                   "pause_turn": "stop", "refusal": "content_filter"}
"""Messages stop_reason -> chat finish_reason."""
STOP_FOR_FINISH = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "function_call": "tool_use",
                   "content_filter": "refusal"}
"""Chat finish_reason -> Messages stop_reason (anything else, or none: end_turn)."""
EVENT_TYPES = frozenset({"message_start", "message_delta", "message_stop", "content_block_start",
                         "content_block_delta", "content_block_stop", "ping"})
"""The events of a Messages stream (not `error`, which every API may send)."""
MAX_BLOCK_INDEX = 1024
UNPARSED_ARGUMENTS = "__unparsed_arguments__"
"""A tool call whose arguments are not a JSON object becomes a `tool_use` whose input holds them as text under this
key: the agent sees a call with bad input (the model's fault, graded as such), not a broken reply."""

_DELTAS = {"text_delta": ("text", "text"), "input_json_delta": ("tool_use", "partial_json"),
           "thinking_delta": ("thinking", "thinking"), "signature_delta": ("thinking", "signature"),
           "citations_delta": ("text", "citation")}
"""delta type -> (the block type it belongs to, the key of its piece)."""


def tool_input(arguments: object) -> JSONObject:
    """A chat tool call's arguments as a tool_use input (see UNPARSED_ARGUMENTS)."""
    if isinstance(arguments, Mapping):
        return dict(arguments)
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        value = None
    return value if isinstance(value, dict) else {UNPARSED_ARGUMENTS: text}


def call_arguments(value: object) -> object:
    """A tool_use input as the model wrote it: the text of UNPARSED_ARGUMENTS, else the input itself."""
    if isinstance(value, Mapping) and set(value) == {UNPARSED_ARGUMENTS} and isinstance(value[UNPARSED_ARGUMENTS], str):
        return value[UNPARSED_ARGUMENTS]
    return value


# ---------------------------------------------------------------- a whole reply


def message_problem(body: object, strict: bool = True) -> str | None:
    """What makes `body` not a Messages API reply, in a few words; None when it is one.

    Lenient (`strict=False`, what the classifier reads of any endpoint): a `content` list of objects whose
    tool_use blocks have a name. Strict (the instruments' check): also the type `message`, known block types
    with their text, tool inputs that are objects, a known stop reason."""
    if not isinstance(body, Mapping):
        return f"the body is a {type(body).__name__}, not a JSON object"
    if strict and body.get("type") == "error":
        error = body.get("error")
        return f"an error body: {json.dumps(error)[:200] if error is not None else 'no detail'}"
    if strict and body.get("type") != "message":
        return f"type is {body.get('type')!r}, not 'message'"
    content = body.get("content")
    if not isinstance(content, list):
        return "content is not a list of blocks"
    for position, block in enumerate(content):
        if not isinstance(block, Mapping):
            return f"content block {position} is not an object" if strict else f"content[{position}] is not an object"
        kind = block.get("type")
        if not strict:
            if kind == "tool_use" and not isinstance(block.get("name"), str):
                return f"content[{position}] is a tool_use block without a name"
            continue
        if kind not in BLOCK_TYPES:
            return f"content block {position} has the unknown type {kind!r}"
        if kind == "text" and not isinstance(block.get("text"), str):
            return f"text block {position} has no text"
        if kind == "thinking" and not isinstance(block.get("thinking"), str):
            return f"thinking block {position} has no thinking"
        if kind == "tool_use":
            if not isinstance(block.get("name"), str) or not block["name"]:
                return f"tool_use block {position} has no name"
            if not isinstance(block.get("input"), dict):
                return f"tool_use block {position}'s input is not an object"
    reason = body.get("stop_reason")
    if strict and reason is not None and reason not in STOP_REASONS:
        return f"unknown stop_reason {reason!r}"
    return None


@dataclass
class MessageParts:
    """What a `message` says: its text, its reasoning, its tool calls, and why it stopped."""

    text: str = ""
    """The text blocks, joined."""
    reasoning: str = ""
    """The thinking blocks, joined (never prose)."""
    calls: list[tuple[str, str, object]] = field(default_factory=list)
    """(id, name, arguments) of each tool_use (and server_tool_use) block; the arguments as the model wrote them
    (`call_arguments`)."""
    stop_reason: str | None = None


def message_parts(message: Mapping[str, Any]) -> MessageParts:
    """The parts of a message (what is not a block of the API's shape is passed over: `message_problem` names it)."""
    parts = MessageParts(stop_reason=message.get("stop_reason") if isinstance(message.get("stop_reason"), str)
                         else None)
    content = message.get("content")
    for block in content if isinstance(content, list) else ():
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind == "text" and isinstance(block.get("text"), str):
            parts.text += block["text"]
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            parts.reasoning += block["thinking"]
        elif kind in ("tool_use", "server_tool_use"):
            call_id = block.get("id")
            parts.calls.append((call_id if isinstance(call_id, str) else "", str(block.get("name") or ""),
                                call_arguments(block.get("input"))))
    return parts


def as_chat_completion(message: Mapping[str, Any]) -> JSONObject:
    """The chat completion equivalent to a (checked) Messages API reply: text blocks joined as the content,
    thinking blocks as `reasoning_content`, tool_use blocks as tool calls (input as JSON arguments), the
    stop reason as the finish reason, the usage renamed."""
    parts = message_parts(message)
    texts = [b for b in message["content"] if b.get("type") == "text"]
    chat_message: JSONObject = {"role": "assistant", "content": parts.text if texts else None}
    if any(b.get("type") == "thinking" for b in message["content"]):
        chat_message["reasoning_content"] = parts.reasoning
    if parts.calls:
        chat_message["tool_calls"] = [
            {"id": call_id or f"call_{n}", "type": "function",
             "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
            for n, (call_id, name, args) in enumerate(parts.calls)]
    found = message.get("usage")
    usage: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    prompt, completion = usage.get("input_tokens"), usage.get("output_tokens")
    body: JSONObject = {
        "id": message.get("id", ""), "object": "chat.completion", "model": message.get("model", ""),
        "choices": [{"index": 0, "message": chat_message,
                     "finish_reason": FINISH_FOR_STOP.get(str(message.get("stop_reason")))}],
    }
    if isinstance(prompt, int) and isinstance(completion, int):
        body["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion,
                         "total_tokens": prompt + completion}
    return body


# ---------------------------------------------------------------- stream events


def is_messages_event(payload: Mapping[str, Any]) -> bool:
    """True for an event of a Messages stream (not `error`, which every API may send)."""
    return payload.get("type") in EVENT_TYPES


def _valid_index(index: object) -> bool:
    return isinstance(index, int) and not isinstance(index, bool) and 0 <= index <= MAX_BLOCK_INDEX


def malformed_messages_event(payload: Mapping[str, Any]) -> str | None:
    """What is wrong with one Messages stream event's shape (the parts the reassembly reads), or None."""
    kind = payload.get("type")
    if kind == "message_start" and not isinstance(payload.get("message"), Mapping):
        return "message_start.message is not an object"
    if kind in ("content_block_start", "content_block_delta", "content_block_stop") and \
            not _valid_index(payload.get("index")):
        return f"{kind}.index is not a valid index"
    if kind == "content_block_start" and not isinstance(payload.get("content_block"), Mapping):
        return "content_block_start.content_block is not an object"
    if kind == "content_block_delta":
        delta = payload.get("delta")
        if not isinstance(delta, Mapping):
            return "content_block_delta.delta is not an object"
        for key in ("text", "thinking", "partial_json", "signature"):
            if key in delta and not isinstance(delta[key], str):
                return f"content_block_delta.delta.{key} is not text"
    if kind == "message_delta" and not isinstance(payload.get("delta"), Mapping):
        return "message_delta.delta is not an object"
    return None


@dataclass
class MessagesStreamAssembler:
    """The message a Messages API event stream adds up to. `add` each event's payload in order.

    `problem` holds the first thing that broke the protocol (an event before `message_start` or after
    `message_stop`, a block out of order or of an unknown type, a delta that does not fit its block, a tool input
    that is not a JSON object, `message_stop` with blocks open); `error` an `error` event's message; `done`
    whether `message_stop` came. `strict`: nothing after the first problem or error is read. Lenient: what can
    be read still is (a tool input that is not JSON becomes UNPARSED_ARGUMENTS)."""

    strict: bool = False
    message: JSONObject | None = None
    blocks: dict[int, JSONObject] = field(default_factory=dict)
    partial_json: dict[int, str] = field(default_factory=dict)
    open_blocks: set[int] = field(default_factory=set)
    done: bool = False
    problem: str | None = None
    error: str | None = None

    def _broke(self, problem: str) -> bool:
        """Note a problem; True when reading should stop here (strict)."""
        self.problem = self.problem or problem
        return self.strict

    def add(self, payload: Mapping[str, Any]) -> None:
        """Take one event (a parsed `data:` payload)."""
        if self.strict and (self.problem is not None or self.error is not None):
            return
        kind = payload.get("type")
        if kind == "ping":
            return
        if kind == "error":
            error = payload.get("error")
            message = (error.get("message") or error) if isinstance(error, Mapping) else error
            self.error = self.error or str(message)
            return
        if kind == "message_start":
            start = payload.get("message")
            if not isinstance(start, Mapping) or self.message is not None:
                if self._broke("message_start without a message, or a second one") or not isinstance(start, Mapping):
                    return
            self.message = {key: value for key, value in start.items() if key != "content"}
            for index, block in enumerate(start.get("content") or ()):
                if isinstance(block, Mapping):
                    self.blocks[index] = dict(block)
            return
        if self.message is None:
            if self._broke(f"{kind!r} event before message_start"):
                return
            self.message = {"type": "message", "role": "assistant"}
        if self.done and self._broke(f"{kind!r} event after message_stop"):
            return
        handler = {"content_block_start": self._start, "content_block_delta": self._delta,
                   "content_block_stop": self._stop, "message_delta": self._message_delta,
                   "message_stop": self._message_stop}.get(str(kind))
        if handler is None:
            self._broke(f"unknown event type {kind!r}")
            return
        handler(payload)

    def _index(self, payload: Mapping[str, Any]) -> int | None:
        index = payload.get("index")
        if not _valid_index(index):
            self._broke(f"{payload.get('type')} without a block index")
            return None
        assert isinstance(index, int)
        return index

    def _start(self, payload: Mapping[str, Any]) -> None:
        index, block = self._index(payload), payload.get("content_block")
        if index is None:
            return
        if index != len(self.blocks) or index in self.blocks or not isinstance(block, Mapping):
            if self._broke(f"content_block_start {index} out of order, or without a block") or \
                    not isinstance(block, Mapping):
                return
        if block.get("type") not in BLOCK_TYPES and self._broke(
                f"content block {index} has the unknown type {block.get('type')!r}"):
            return
        self.blocks[index] = dict(block)
        self.open_blocks.add(index)
        if block.get("type") in ("tool_use", "server_tool_use"):
            self.partial_json[index] = ""

    def _delta(self, payload: Mapping[str, Any]) -> None:
        index, delta = self._index(payload), payload.get("delta")
        if index is None:
            return
        if index not in self.open_blocks or not isinstance(delta, Mapping):
            if self._broke(f"content_block_delta for block {index}, which is not open") or \
                    not isinstance(delta, Mapping):
                return
        block, kind = self.blocks.setdefault(index, {}), delta.get("type")
        fits = _DELTAS.get(str(kind))
        if fits is None:
            self._broke(f"unknown delta type {kind!r} in block {index}")
            return
        if kind == "citations_delta":
            return  # a citation of the text: nothing the suite reads
        piece = delta.get(fits[1])
        held = block.get("type")
        fits_block = held == fits[0] or (kind, held) == ("input_json_delta", "server_tool_use")
        if not fits_block or not isinstance(piece, str):
            if self._broke(f"a {kind} in a {block.get('type')} block ({index})") or not isinstance(piece, str):
                return
        if kind == "input_json_delta":
            self.partial_json[index] = self.partial_json.get(index, "") + piece
        else:
            block[fits[1]] = str(block.get(fits[1]) or "") + piece

    def _stop(self, payload: Mapping[str, Any]) -> None:
        index = self._index(payload)
        if index is None:
            return
        if index not in self.open_blocks and self._broke(f"content_block_stop for block {index}, which is not open"):
            return
        self.open_blocks.discard(index)
        self._close_input(index)

    def _close_input(self, index: int) -> None:
        if index not in self.partial_json:
            return
        text = self.partial_json.pop(index)
        block = self.blocks.setdefault(index, {})
        if not text.strip():
            block["input"] = block.get("input") if isinstance(block.get("input"), dict) else {}
            return
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            self._broke(f"tool_use block {index}'s input_json_delta pieces are not JSON: {text[:80]!r}")
            value = None
        if value is not None and not isinstance(value, dict):
            self._broke(f"tool_use block {index}'s input is not an object")
        block["input"] = value if isinstance(value, dict) else {UNPARSED_ARGUMENTS: text}

    def _message_delta(self, payload: Mapping[str, Any]) -> None:
        assert self.message is not None
        delta = payload.get("delta")
        if not isinstance(delta, Mapping):
            self._broke("message_delta.delta is not an object")
        else:
            self.message.update({key: value for key, value in delta.items() if key != "content"})
        usage = payload.get("usage")
        if isinstance(usage, Mapping):
            had = self.message.get("usage")
            self.message["usage"] = {**(had if isinstance(had, Mapping) else {}), **usage}

    def _message_stop(self, payload: Mapping[str, Any]) -> None:
        if self.open_blocks and self._broke(f"message_stop with block(s) {sorted(self.open_blocks)} still open"):
            return
        self.done = True

    def result(self) -> JSONObject | None:
        """The message so far (tool inputs still arriving are closed as they stand), or None before message_start
        when strict (lenient: a message with what came)."""
        if self.message is None and self.strict:
            return None
        for index in sorted(self.partial_json):
            if not (self.strict and self.problem is not None):
                self._close_input(index)
        message = dict(self.message or {"type": "message", "role": "assistant"})
        message["content"] = [self.blocks[index] for index in sorted(self.blocks)]
        return message


def assemble(payloads: Iterable[Mapping[str, Any]], strict: bool = True) -> MessagesStreamAssembler:
    """A whole stream's event payloads, put together."""
    assembler = MessagesStreamAssembler(strict=strict)
    for payload in payloads:
        assembler.add(payload)
    return assembler
