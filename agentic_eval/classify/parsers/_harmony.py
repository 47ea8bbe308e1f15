"""gpt-oss Harmony: `<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...}<|call|>`,
the final answer in `<|channel|>final<|message|>...`. vLLM reads the token ids; here the same
messages are read from their text."""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentic_eval.classify.parsers._tokens import passed_through
from agentic_eval.classify.parsers._types import ParsedCall, Tools

__all__ = ["sglang_gpt_oss", "vllm_openai"]

_MESSAGE = re.compile(
    r"(?:<\|start\|>)?(?P<header>(?:(?!<\|start\|>|<\|message\|>).)*)<\|message\|>"
    r"(?P<body>.*?)(?P<end><\|end\|>|<\|call\|>|<\|return\|>|(?=<\|start\|>)|$)",
    re.DOTALL,
)


@dataclass(frozen=True)
class _Message:
    channel: str
    recipient: str
    body: str


def _messages(text: str) -> list[_Message]:
    found = []
    for match in _MESSAGE.finditer(text):
        header = match["header"]
        channel = re.search(r"<\|channel\|>\s*(\w+)", header)
        recipient = re.search(r"\bto=([^\s<]+)", header)
        found.append(_Message(channel.group(1) if channel else "", recipient.group(1) if recipient else "",
                              match["body"]))
    return found


def vllm_openai(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """vLLM `openai` (gpt-oss): every message to `functions.NAME` is a call, its text the arguments
    (re-serialised when JSON, else handed on); the final channel's text is the content."""
    if "<|message|>" not in text:
        return [], text
    messages = _messages(text)
    calls = [passed_through(message.recipient.removeprefix("functions."), message.body.strip())
             for message in messages if message.recipient.startswith("functions.")]
    final = [message.body for message in messages if message.channel == "final" and not message.recipient]
    content = "".join(final) or None
    return (calls, content) if calls else ([], content if content is not None else text)


def sglang_gpt_oss(text: str, tools: Tools) -> tuple[list[ParsedCall], str | None]:
    """SGLang `gpt-oss`: as vLLM's, tools not offered dropped; text after the first call is dropped,
    final text before it kept."""
    if "<|message|>" not in text or "to=functions." not in text:
        return [], text
    calls: list[ParsedCall] = []
    content = ""
    for message in _messages(text):
        if message.recipient.startswith("functions."):
            name = message.recipient.removeprefix("functions.")
            if name in tools:
                calls.append(passed_through(name, message.body.strip()))
        elif message.channel == "final" and not calls:
            content += message.body
    return calls, content
