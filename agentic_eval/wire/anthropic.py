"""The Anthropic Messages API translated to and from chat completions.

Agents such as Claude Code speak `POST /v1/messages`. Against an endpoint that serves it, the wire recorder
passes it through (and reassembles its stream with `wire.messages`, where the API's shapes live); against one
that speaks only OpenAI chat completions, the recorder translates each exchange both ways with the pure functions
below:

- `to_chat_request`: a Messages request -> a chat completions request (system prompt, text/image blocks,
  `tool_use` blocks -> `tool_calls`, `tool_result` blocks -> `tool` messages, tools, tool_choice, sampling,
  stop sequences, streaming with usage);
- `to_message`: a `chat.completion` -> a Messages `message` (reasoning_content -> a `thinking` block,
  content -> a `text` block, tool_calls -> `tool_use` blocks, finish_reason -> stop_reason, usage);
- `ChatToMessagesStream`: `chat.completion.chunk` events -> Messages stream events, as they arrive (text and
  thinking deltas stream; a tool call is sent whole once its arguments are complete, as one
  `input_json_delta`, because chunks of parallel calls may interleave; the calls are joined by the one
  chat-stream assembler, `wire.chat_stream`, as the built-in agent and the classifier join them);
- `message_events`: a whole `message` as the events of a stream (for a server that ignored `stream: true`).

A block the model's own files can bring into a turn (a PDF or an image in a tool result) becomes a note that it was
left out. What else cannot be translated faithfully raises `Untranslatable`, whose message names the part
(`tools[0] (web_search): server tool type ... is not supported`): the recorder answers it as an Anthropic error and
the trial ends `endpoint_error`. Nothing here does I/O.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentic_eval.wire.chat_stream import ChatStreamAssembler
from agentic_eval.wire.messages import STOP_FOR_FINISH, UNPARSED_ARGUMENTS, call_arguments, tool_input

__all__ = [
    "ChatToMessagesStream",
    "UNPARSED_ARGUMENTS",
    "Untranslatable",
    "error_body",
    "event_bytes",
    "message_events",
    "to_chat_request",
    "tool_input",
    "to_message",
]

IGNORED_REQUEST_KEYS = frozenset({"metadata", "thinking", "context_management", "output_config", "service_tier",
                                  "container", "mcp_servers", "betas", "cache_control"})
"""Messages request keys with no chat completions counterpart that change nothing the model is asked: dropped."""
KNOWN_REQUEST_KEYS = frozenset({"model", "messages", "system", "max_tokens", "tools", "tool_choice", "stream",
                                "temperature", "top_p", "top_k", "stop_sequences"}) | IGNORED_REQUEST_KEYS


class Untranslatable(ValueError):
    """A request or reply the translation cannot carry over faithfully; the message names the part, in one line."""


# ---------------------------------------------------------------- request: Messages -> chat completions


def _text_blocks(value: object, where: str) -> str:
    """The text of a `system` value or a `tool_result`'s content: a string or a list of text blocks."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise Untranslatable(f"{where}: expected text or a list of text blocks, got {type(value).__name__}")
    parts = []
    for number, block in enumerate(value):
        if not isinstance(block, Mapping) or block.get("type") != "text" or not isinstance(block.get("text"), str):
            kind = block.get("type") if isinstance(block, Mapping) else type(block).__name__
            raise Untranslatable(f"{where}[{number}]: expected a text block, got {kind!r}")
        parts.append(block["text"])
    return "\n\n".join(parts)


def omitted(kind: object, where: str) -> str:
    """The text that stands for a block chat completions cannot carry (a PDF the agent read, an image in a tool
    result): the model is told, and the trial goes on. Such blocks come from files the model's own commands can
    make, so refusing them would let a model end its trial unscored at will."""
    return f"[{kind} block omitted here ({where}): the endpoint speaks chat completions, which cannot carry it]"


def _image_part(block: Mapping[str, Any], where: str) -> dict[str, Any]:
    source = block.get("source")
    if isinstance(source, Mapping) and source.get("type") == "base64":
        url = f"data:{source.get('media_type')};base64,{source.get('data')}"
        return {"type": "image_url", "image_url": {"url": url}}
    if isinstance(source, Mapping) and source.get("type") == "url" and isinstance(source.get("url"), str):
        return {"type": "image_url", "image_url": {"url": source["url"]}}
    return {"type": "text", "text": omitted("image", where)}


def _block_text(block: Mapping[str, Any], where: str) -> str:
    """A block of another kind as text: a document's own text when it has one, else a note that it was left out."""
    source = block.get("source")
    if block.get("type") == "document" and isinstance(source, Mapping) and isinstance(source.get("data"), str) \
            and source.get("type") == "text":
        return str(source["data"])
    return omitted(block.get("type"), where)


def _tool_result_text(block: Mapping[str, Any], where: str) -> str:
    content = block.get("content", "")
    if isinstance(content, list):
        texts = []
        for number, part in enumerate(content):
            if not isinstance(part, Mapping):
                raise Untranslatable(f"{where}.content[{number}]: not a content block")
            if part.get("type") == "text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
            else:
                texts.append(_block_text(part, f"{where}.content[{number}]"))
        text = "\n\n".join(texts)
    elif isinstance(content, str):
        text = content
    elif content is None:
        text = ""
    else:
        raise Untranslatable(f"{where}.content: expected text or a list of blocks")
    return f"Error: {text}" if block.get("is_error") is True else text


def _user_message(content: object, where: str) -> list[dict[str, Any]]:
    """A user turn: its tool results as `tool` messages first (chat wants them right after the calls), then the rest."""
    if isinstance(content, str):
        return [{"role": "user", "content": content}]
    if not isinstance(content, list):
        raise Untranslatable(f"{where}.content: expected text or a list of blocks")
    tools: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for number, block in enumerate(content):
        at = f"{where}.content[{number}]"
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append({"type": "text", "text": block["text"]})
        elif kind == "image":
            parts.append(_image_part(block, at))
        elif kind == "tool_result" and isinstance(block.get("tool_use_id"), str):
            tools.append({"role": "tool", "tool_call_id": block["tool_use_id"],
                          "content": _tool_result_text(block, at)})
        elif isinstance(block, Mapping) and isinstance(kind, str) and kind not in ("text", "tool_result"):
            parts.append({"type": "text", "text": _block_text(block, at)})
        else:
            raise Untranslatable(f"{at}: block type {kind!r} is not supported in a user turn")
    messages = list(tools)
    if parts:
        only_text = all(part["type"] == "text" for part in parts)
        messages.append({"role": "user",
                         "content": "\n\n".join(part["text"] for part in parts) if only_text else parts})
    return messages


def _assistant_message(content: object, where: str) -> dict[str, Any]:
    if isinstance(content, str):
        return {"role": "assistant", "content": content}
    if not isinstance(content, list):
        raise Untranslatable(f"{where}.content: expected text or a list of blocks")
    texts: list[str] = []
    reasoning: list[str] = []
    calls: list[dict[str, Any]] = []
    for number, block in enumerate(content):
        at = f"{where}.content[{number}]"
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            reasoning.append(block["thinking"])
        elif kind == "redacted_thinking":
            continue  # opaque to any model but the one that wrote it
        elif kind == "tool_use" and isinstance(block.get("id"), str) and isinstance(block.get("name"), str):
            calls.append({"id": block["id"], "type": "function",
                          "function": {"name": block["name"], "arguments": _arguments_text(block.get("input"))}})
        else:
            raise Untranslatable(f"{at}: block type {kind!r} is not supported in an assistant turn")
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
    if reasoning:
        message["reasoning_content"] = "".join(reasoning)
    if calls:
        message["tool_calls"] = calls
    return message


def _arguments_text(value: object) -> str:
    arguments = call_arguments(value)  # what the model wrote, given back as it wrote it
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)


def _tool(tool: object, number: int) -> dict[str, Any]:
    where = f"tools[{number}]"
    if not isinstance(tool, Mapping) or not isinstance(tool.get("name"), str):
        raise Untranslatable(f"{where}: not a tool with a name")
    if tool.get("type") not in (None, "custom") or not isinstance(tool.get("input_schema"), Mapping):
        raise Untranslatable(f"{where} ({tool['name']}): server tool type {tool.get('type')!r} is not supported "
                             "(only tools with an input_schema)")
    function: dict[str, Any] = {"name": tool["name"], "parameters": dict(tool["input_schema"])}
    if isinstance(tool.get("description"), str):
        function["description"] = tool["description"]
    return {"type": "function", "function": function}


def _tool_choice(choice: object) -> tuple[object, bool | None]:
    """(chat tool_choice, parallel_tool_calls) for a Messages tool_choice."""
    if not isinstance(choice, Mapping):
        raise Untranslatable("tool_choice: expected an object")
    parallel = False if choice.get("disable_parallel_tool_use") is True else None
    kind = choice.get("type")
    if kind == "auto":
        return "auto", parallel
    if kind == "any":
        return "required", parallel
    if kind == "none":
        return "none", None
    if kind == "tool" and isinstance(choice.get("name"), str):
        return {"type": "function", "function": {"name": choice["name"]}}, parallel
    raise Untranslatable(f"tool_choice: type {kind!r} is not supported")


def to_chat_request(body: object) -> dict[str, Any]:
    """The chat completions request that asks the model what `body` (a Messages request) asks it."""
    if not isinstance(body, Mapping):
        raise Untranslatable("the request body is not a JSON object")
    unknown = sorted(set(body) - KNOWN_REQUEST_KEYS)
    if unknown:
        raise Untranslatable(f"request key {unknown[0]!r} has no chat completions counterpart")
    if not isinstance(body.get("model"), str) or not isinstance(body.get("messages"), list):
        raise Untranslatable("the request needs a model (text) and messages (a list)")
    system: list[str] = []
    if body.get("system") not in (None, "", []):
        system.append(_text_blocks(body["system"], "system"))
    messages: list[dict[str, Any]] = []
    for number, message in enumerate(body["messages"]):
        where = f"messages[{number}]"
        role = message.get("role") if isinstance(message, Mapping) else None
        if role == "user":
            messages += _user_message(message.get("content"), where)
        elif role == "assistant":
            messages.append(_assistant_message(message.get("content"), where))
        elif role == "system":  # Claude Code sends one after the first user turn; chat templates want it first
            system.append(_text_blocks(message.get("content"), f"{where}.content"))
        else:
            raise Untranslatable(f"{where}: role {role!r} is not supported")
    if system:
        messages.insert(0, {"role": "system", "content": "\n\n".join(system)})
    chat: dict[str, Any] = {"model": body["model"], "messages": messages}
    if body.get("max_tokens") is not None:
        chat["max_tokens"] = body["max_tokens"]
    for key in ("temperature", "top_p", "top_k"):
        if body.get(key) is not None:
            chat[key] = body[key]
    if body.get("stop_sequences"):
        chat["stop"] = body["stop_sequences"]
    tools = body.get("tools")
    if tools is not None and not isinstance(tools, list):
        raise Untranslatable("tools: expected a list")
    if tools:
        chat["tools"] = [_tool(tool, number) for number, tool in enumerate(tools)]
    if body.get("tool_choice") is not None:
        choice, parallel = _tool_choice(body["tool_choice"])
        if tools:  # chat servers refuse a tool_choice without tools
            chat["tool_choice"] = choice
        if parallel is not None and tools:
            chat["parallel_tool_calls"] = parallel
    if body.get("stream") is True:
        chat["stream"] = True
        chat["stream_options"] = {"include_usage": True}
    return chat


# ---------------------------------------------------------------- reply: chat completions -> Messages


def new_message_id() -> str:
    return "msg_" + uuid.uuid4().hex[:24]


def new_tool_use_id() -> str:
    return "toolu_" + uuid.uuid4().hex[:24]


def message_usage(usage: object) -> dict[str, int]:
    """Messages usage from a chat usage object (zeros where the endpoint said nothing)."""
    usage = usage if isinstance(usage, Mapping) else {}
    numbers = {}
    for ours, theirs in (("input_tokens", "prompt_tokens"), ("output_tokens", "completion_tokens")):
        value = usage.get(theirs)
        numbers[ours] = value if isinstance(value, int) and not isinstance(value, bool) else 0
    return numbers


def to_message(completion: object, model: str) -> dict[str, Any]:
    """The Messages `message` of a `chat.completion` (its first choice)."""
    if not isinstance(completion, Mapping) or not isinstance(completion.get("choices"), list):
        raise Untranslatable("the endpoint's reply is not a chat completion (no choices list)")
    if not completion["choices"]:
        raise Untranslatable("the endpoint's reply has no choices")
    choice = completion["choices"][0]
    message = choice.get("message") if isinstance(choice, Mapping) else None
    if not isinstance(message, Mapping):
        raise Untranslatable("choices[0].message is not an object")
    content: list[dict[str, Any]] = []
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        content.append({"type": "thinking", "thinking": reasoning, "signature": ""})
    text = message.get("content")
    if text is not None and not isinstance(text, str):
        raise Untranslatable("choices[0].message.content is not text")
    if text:
        content.append({"type": "text", "text": text})
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        raise Untranslatable("choices[0].message.tool_calls is not a list")
    for number, call in enumerate(calls):
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            raise Untranslatable(f"choices[0].message.tool_calls[{number}] is not a function call with a name")
        call_id = call.get("id") if isinstance(call.get("id"), str) and call.get("id") else new_tool_use_id()
        content.append({"type": "tool_use", "id": call_id, "name": function["name"],
                        "input": tool_input(function.get("arguments"))})
    finish = choice.get("finish_reason")
    stop_reason = STOP_FOR_FINISH.get(finish, "end_turn") if isinstance(finish, str) else "end_turn"
    if calls and stop_reason == "end_turn":
        stop_reason = "tool_use"  # servers that say "stop" after a call: the agent must run it
    return {"id": new_message_id(), "type": "message", "role": "assistant",
            "model": completion.get("model") if isinstance(completion.get("model"), str) else model,
            "content": content, "stop_reason": stop_reason, "stop_sequence": None,
            "usage": message_usage(completion.get("usage"))}


def event_bytes(event: Mapping[str, Any]) -> bytes:
    """One Messages stream event on the wire (`event:` line, then its data)."""
    return f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n".encode()


def error_body(message: str, kind: str = "api_error") -> dict[str, Any]:
    """A Messages error body (also the data of a stream's `error` event)."""
    return {"type": "error", "error": {"type": kind, "message": message}}


def message_events(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A whole `message` as the events of a stream."""
    start = {**message, "content": [], "stop_reason": None,
             "usage": {**message.get("usage", {}), "output_tokens": 0}}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(message.get("content") or ()):
        kind = block["type"]
        if kind == "text":
            events += [{"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
                       {"type": "content_block_delta", "index": index,
                        "delta": {"type": "text_delta", "text": block["text"]}}]
        elif kind == "thinking":
            events += [{"type": "content_block_start", "index": index,
                        "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
                       {"type": "content_block_delta", "index": index,
                        "delta": {"type": "thinking_delta", "thinking": block["thinking"]}}]
        else:
            events += [{"type": "content_block_start", "index": index,
                        "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}},
                       {"type": "content_block_delta", "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}}]
        events.append({"type": "content_block_stop", "index": index})
    events.append({"type": "message_delta", "delta": {"stop_reason": message.get("stop_reason"), "stop_sequence": None},
                   "usage": {"output_tokens": (message.get("usage") or {}).get("output_tokens", 0)}})
    events.append({"type": "message_stop"})
    return events


@dataclass
class ChatToMessagesStream:
    """Turns `chat.completion.chunk` events into Messages stream events as they arrive. `feed` a parsed chunk,
    `finish` when the stream ended (`[DONE]` or its end); each returns the events to send, in order."""

    model: str
    started: bool = False
    finished: bool = False
    _index: int = -1
    _open: str | None = None
    """The kind of the block being streamed ('text' or 'thinking'), if one is open."""
    _calls: ChatStreamAssembler = field(default_factory=ChatStreamAssembler)
    """The tool calls' pieces, joined as the built-in agent and the classifier join them."""
    _finish: str | None = None
    _usage: dict[str, int] = field(default_factory=lambda: {"input_tokens": 0, "output_tokens": 0})

    def _start(self, chunk: Mapping[str, Any]) -> list[dict[str, Any]]:
        if self.started:
            return []
        self.started = True
        model = chunk.get("model") if isinstance(chunk.get("model"), str) else self.model
        return [{"type": "message_start", "message": {
            "id": new_message_id(), "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": dict(self._usage)}}]

    def _close(self) -> list[dict[str, Any]]:
        if self._open is None:
            return []
        self._open = None
        return [{"type": "content_block_stop", "index": self._index}]

    def _text(self, kind: str, text: str) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        if self._open != kind:
            events += self._close()
            self._index += 1
            self._open = kind
            block = {"type": "text", "text": ""} if kind == "text" else {"type": "thinking", "thinking": "",
                                                                          "signature": ""}
            events.append({"type": "content_block_start", "index": self._index, "content_block": block})
        delta = {"type": "text_delta", "text": text} if kind == "text" else {"type": "thinking_delta", "thinking": text}
        events.append({"type": "content_block_delta", "index": self._index, "delta": delta})
        return events

    def feed(self, chunk: object) -> list[dict[str, Any]]:
        if not isinstance(chunk, Mapping):
            raise Untranslatable("a stream chunk is not a JSON object")
        if chunk.get("error"):
            error = chunk["error"]
            raise Untranslatable("the endpoint sent an error in its stream: "
                                 + str(error.get("message") if isinstance(error, Mapping) else error))
        events = self._start(chunk)
        if isinstance(chunk.get("usage"), Mapping):
            self._usage = message_usage(chunk["usage"])
        choices = chunk.get("choices")
        if choices is None:
            choices = []
        if not isinstance(choices, list):
            raise Untranslatable("a stream chunk's choices is not a list")
        for choice in choices:
            if not isinstance(choice, Mapping) or (choice.get("index") or 0) != 0:
                continue  # only the first choice is the agent's
            delta = choice.get("delta") or {}
            if not isinstance(delta, Mapping):
                raise Untranslatable("a stream chunk's choices[0].delta is not an object")
            for key in ("reasoning_content", "reasoning"):
                piece = delta.get(key)
                if piece is not None and not isinstance(piece, str):
                    raise Untranslatable(f"a stream chunk's delta.{key} is not text")
                if piece:
                    events += self._text("thinking", piece)
                    break
            piece = delta.get("content")
            if piece is not None and not isinstance(piece, str):
                raise Untranslatable("a stream chunk's delta.content is not text")
            if piece:
                events += self._text("text", piece)
            calls = delta.get("tool_calls")
            if calls is not None and not isinstance(calls, list):
                raise Untranslatable("a stream chunk's delta.tool_calls is not a list")
            for call in calls or ():
                function = call.get("function") if isinstance(call, Mapping) else None
                if not isinstance(call, Mapping) or (function is not None and not isinstance(function, Mapping)):
                    raise Untranslatable("a stream chunk's delta.tool_calls holds something that is not a tool call")
            if calls:
                self._calls.add({"choices": [{"index": 0, "delta": {"tool_calls": calls}}]})
            if isinstance(choice.get("finish_reason"), str):
                self._finish = choice["finish_reason"]
        return events

    def finish(self) -> list[dict[str, Any]]:
        """The stream ended: close the open block, send the tool calls whole, then message_delta and message_stop."""
        if self.finished:
            return []
        self.finished = True
        events = self._start({}) + self._close()
        choices = self._calls.result()["choices"]
        calls = choices[0]["message"].get("tool_calls", []) if choices else []
        for call in calls:
            self._index += 1
            events += [{"type": "content_block_start", "index": self._index,
                        "content_block": {"type": "tool_use", "id": call["id"] or new_tool_use_id(),
                                          "name": call["function"]["name"], "input": {}}},
                       {"type": "content_block_delta", "index": self._index,
                        "delta": {"type": "input_json_delta", "partial_json": json.dumps(
                            tool_input(call["function"]["arguments"]), ensure_ascii=False)}},
                       {"type": "content_block_stop", "index": self._index}]
        stop = STOP_FOR_FINISH.get(self._finish, "end_turn") if self._finish else "end_turn"
        if calls and stop == "end_turn":
            stop = "tool_use"
        events.append({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                       "usage": dict(self._usage)})
        events.append({"type": "message_stop"})
        return events
