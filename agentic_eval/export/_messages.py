"""The three API shapes on the wire, read into one neutral form: chat completions, the Responses API and
the Anthropic Messages API. Pure functions on the bodies as the wire log holds them (parsed JSON of any
shape: an endpoint or an agent can send anything, so every access is checked).

    history_items(api, request)  the conversation a request carries, as a list of its raw items (the
                                 system prompt first), comparable across requests of one trial
    to_messages(api, item)       one raw item as `Message`s (an Anthropic user turn with three
                                 tool_result blocks is three)
    reply_calls(api, response)   the structured tool calls of a reply, with their ids
    offered_tool_definitions     the tools a request offers, as OpenAI function definitions
    usage_of(api, usage)         token counts, whatever the API called them
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agentic_eval.wire.messages import call_arguments, message_parts

Api = Literal["chat", "responses", "messages", "other"]
Role = Literal["system", "user", "assistant", "tool"]


@dataclass
class Call:
    """A structured tool call: its id, the tool's name, its arguments as an object (`{}` when what was sent
    is not a JSON object, which `raw` then keeps, with `problem` saying why)."""

    id: str
    name: str
    arguments: dict[str, Any]
    raw: Any = None
    problem: str | None = None
    free_text: bool = False
    """A custom tool's call (Responses `custom_tool_call`, chat `custom`): its input is free text, kept as
    `{"input": text}`."""


@dataclass
class Message:
    """One message of a conversation: a tool result has `call_id` (None when its call was not named)."""

    role: Role
    text: str = ""
    reasoning: str = ""
    calls: list[Call] = field(default_factory=list)
    call_id: str | None = None
    name: str | None = None
    is_error: bool = False


def api_of(path: str) -> Api:
    """Which API an exchange spoke, by its request path (`/v1/chat/completions`, `/v1/responses`,
    `/v1/messages`, with or without a query)."""
    bare = path.split("?", 1)[0].rstrip("/")
    if bare.endswith("/chat/completions") or bare.endswith("/completions"):
        return "chat"
    if bare.endswith("/responses"):
        return "responses"
    if bare.endswith("/messages"):
        return "messages"
    return "other"


def text_of(content: object) -> str:
    """The text of a content value: a string, or a list of parts (text, refusal, a tool result's blocks);
    an image or other part that has no text is named in brackets."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else json.dumps(content, ensure_ascii=False, default=str)
    pieces = []
    for part in content:
        if isinstance(part, str):
            pieces.append(part)
        elif isinstance(part, Mapping):
            text = part.get("text", part.get("refusal"))
            if isinstance(text, str):
                pieces.append(text)
            elif isinstance(part.get("content"), (str, list)):
                pieces.append(text_of(part["content"]))
            elif part.get("type") not in ("thinking", "redacted_thinking", "reasoning"):
                pieces.append(f"[{part.get('type', 'part')}]")
    return "".join(pieces)


def history_items(api: Api, request: object) -> list[Any]:
    """The raw conversation items of a request, a system prompt given apart (`instructions`, `system`) first
    as `{"role": "system", "content": ...}`. Two requests of one conversation share a prefix of these."""
    if not isinstance(request, Mapping):
        return []
    items: list[Any] = []
    if api == "responses":
        if request.get("instructions"):
            items.append({"role": "system", "content": request["instructions"]})
        given = request.get("input")
        items += [{"role": "user", "content": given}] if isinstance(given, str) else _listed(given)
        return items
    if api == "messages" and request.get("system"):
        system = request["system"]
        items.append({"role": "system", "content": system if isinstance(system, str) else _listed(system)})
    return items + _listed(request.get("messages"))


def is_reply_item(api: Api, item: object) -> bool:
    """Whether an item is the model's own turn sent back in the history (an assistant message, or a
    Responses item the model produced)."""
    if not isinstance(item, Mapping):
        return False
    if api == "responses" and item.get("type") in ("function_call", "custom_tool_call", "reasoning"):
        return True
    return item.get("role") == "assistant"


def to_messages(api: Api, item: object) -> list[Message]:
    """One history item as neutral messages."""
    if not isinstance(item, Mapping):
        return []
    kind, role = item.get("type"), item.get("role")
    if api == "responses" and kind in ("function_call", "custom_tool_call"):
        return [Message("assistant", calls=[_responses_call(item)])]
    if api == "responses" and kind in ("function_call_output", "custom_tool_call_output"):
        return [Message("tool", text_of(item.get("output")), call_id=_str(item.get("call_id")))]
    if api == "responses" and kind == "reasoning":
        return [Message("assistant", reasoning=text_of(item.get("content")) or text_of(item.get("summary")))]
    if role == "tool":  # chat completions
        return [Message("tool", text_of(item.get("content")), call_id=_str(item.get("tool_call_id")),
                        name=_str(item.get("name")))]
    if role == "function":  # chat completions' legacy function result
        return [Message("tool", text_of(item.get("content")), name=_str(item.get("name")))]
    if api == "messages" and isinstance(item.get("content"), list):
        return _anthropic_turn(role, item["content"])
    if role == "assistant":
        calls = [_chat_call(call) for call in (_listed(item.get("tool_calls")))]
        reasoning = item.get("reasoning_content") or item.get("reasoning")
        return [Message("assistant", text_of(item.get("content")), reasoning if isinstance(reasoning, str) else "",
                        calls=[c for c in calls if c is not None])]
    if role in ("system", "developer"):
        return [Message("system", text_of(item.get("content")))]
    return [Message("user", text_of(item.get("content")))]


def _anthropic_turn(role: object, blocks: list[Any]) -> list[Message]:
    """A Messages API turn: tool_result blocks become tool messages, the rest one user or assistant message."""
    out: list[Message] = []
    main = Message("assistant" if role == "assistant" else "system" if role in ("system", "developer") else "user")
    texts: list[str] = []
    for block in blocks:
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "tool_result":
            out.append(Message("tool", text_of(block.get("content")), call_id=_str(block.get("tool_use_id")),
                               is_error=block.get("is_error") is True))
        elif kind in ("tool_use", "server_tool_use"):
            main.calls.append(_call(block.get("id"), block.get("name"), call_arguments(block.get("input"))))
        elif kind == "thinking":
            main.reasoning += text_of(block.get("thinking"))
        elif kind != "redacted_thinking":
            texts.append(text_of([block]))
    main.text = "\n".join(texts)  # separate blocks: kept apart
    return ([main] if main.text or main.calls or main.reasoning or not out else []) + out


def reply_calls(api: Api, response: object) -> list[Call]:
    """The structured tool calls of a reply, in order, with the ids the agent will answer to."""
    if not isinstance(response, Mapping):
        return []
    if api == "responses" or isinstance(response.get("output"), list):
        return [_responses_call(item) for item in _listed(response.get("output"))
                if isinstance(item, Mapping) and item.get("type") in ("function_call", "custom_tool_call")]
    if isinstance(response.get("choices"), list):
        choice = response["choices"][0] if response["choices"] else {}
        message = choice.get("message") if isinstance(choice, Mapping) else None
        if not isinstance(message, Mapping):
            return []
        calls = [_chat_call(call) for call in (_listed(message.get("tool_calls")))]
        return [c for c in calls if c is not None]
    return [_call(call_id, name, arguments) for call_id, name, arguments in message_parts(response).calls]


def offered_tool_definitions(request: object) -> list[dict[str, Any]]:
    """The function tools a request offers, each as `{"type": "function", "function": {name, description,
    parameters}}` (OpenAI's function calling schema, which ATIF asks for), whichever API offered them."""
    if not isinstance(request, Mapping):
        return []
    out = []
    for tool in _listed(request.get("tools")) + _listed(request.get("functions")):
        if not isinstance(tool, Mapping):
            continue
        spec = tool["function"] if isinstance(tool.get("function"), Mapping) else tool
        if not isinstance(spec.get("name"), str):
            continue
        function: dict[str, Any] = {"name": spec["name"]}
        if isinstance(spec.get("description"), str):
            function["description"] = spec["description"]
        parameters = spec.get("parameters", spec.get("input_schema"))
        if isinstance(parameters, Mapping):
            function["parameters"] = dict(parameters)
        out.append({"type": "function", "function": function})
    return out


@dataclass(frozen=True)
class Usage:
    """A reply's token counts: prompt includes cached tokens (Anthropic's cache reads and writes added in)."""

    prompt: int | None = None
    completion: int | None = None
    cached: int | None = None


def usage_of(usage: object) -> Usage:
    """Token counts from a usage object of any of the three APIs (None where not reported)."""
    if not isinstance(usage, Mapping):
        return Usage()
    if "cache_read_input_tokens" in usage or "cache_creation_input_tokens" in usage:  # Anthropic: input is uncached
        parts = [_int(usage.get(k)) for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")]
        prompt = sum(p for p in parts if p is not None) if any(p is not None for p in parts) else None
        return Usage(prompt, _int(usage.get("output_tokens")), _int(usage.get("cache_read_input_tokens")))
    prompt = _int(usage.get("prompt_tokens", usage.get("input_tokens")))
    details = usage.get("prompt_tokens_details") or usage.get("input_tokens_details")
    cached = _int(details.get("cached_tokens")) if isinstance(details, Mapping) else None
    return Usage(prompt, _int(usage.get("completion_tokens", usage.get("output_tokens"))), cached)


def _call(call_id: object, name: object, arguments: object) -> Call:
    """A call with its arguments as an object; a JSON string is parsed, anything else kept raw with why."""
    raw = arguments
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError as exc:
            return Call(_str(call_id) or "", _str(name) or "", {}, raw, f"not JSON: {exc}")
    if isinstance(arguments, Mapping):
        return Call(_str(call_id) or "", _str(name) or "", dict(arguments), raw if isinstance(raw, str) else None)
    if arguments is None:
        return Call(_str(call_id) or "", _str(name) or "", {})
    return Call(_str(call_id) or "", _str(name) or "", {}, raw, "not a JSON object")


def _free_text_call(call_id: object, name: object, text: object) -> Call:
    return Call(_str(call_id) or "", _str(name) or "", {"input": text if isinstance(text, str) else ""},
                raw=text, free_text=True)


def _responses_call(item: Mapping[str, Any]) -> Call:
    call_id = item.get("call_id") or item.get("id")
    if item.get("type") == "custom_tool_call":
        return _free_text_call(call_id, item.get("name"), item.get("input"))
    return _call(call_id, item.get("name"), item.get("arguments"))


def _chat_call(call: object) -> Call | None:
    if not isinstance(call, Mapping):
        return None
    if isinstance(call.get("custom"), Mapping):
        return _free_text_call(call.get("id"), call["custom"].get("name"), call["custom"].get("input"))
    spec = call.get("function")
    if not isinstance(spec, Mapping):
        return None
    return _call(call.get("id"), spec.get("name"), spec.get("arguments"))


def _listed(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
