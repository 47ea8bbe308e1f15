"""The wire: a recorder between agent and endpoint that logs every exchange, and reading its log.

    recorder  WireRecorder, the local reverse proxy, and its log written and read back.
    gate      What the relay takes: the model API's routes only, and request bodies up to a size.
    exchange  One exchange as the proxy sees it, and the record (WireRecord) it becomes.
    sse       Server-sent events: decoding a stream and rebuilding the whole message from it.
    chat_stream  The one chat-stream assembler: chunks joined into a completion, for the agent and the recorder.
    refs      Requests stored by reference: what a request repeats from an earlier one is not stored twice.
    bounded   Reading a reply within bounds (size cap, bounded inflation, strict UTF-8 and JSON), failures named.
    messages  The Anthropic Messages API's shapes: a reply checked and read, its stream put together (one home).
    anthropic The Anthropic Messages API translated to and from chat completions.
    translate The recorder's translating relay: a Messages exchange served by a chat-completions-only endpoint.
    emulate   `--emulate-parser`: a reply rewritten as an engine's tool parser would have returned it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval._lazy import lazy_face

if TYPE_CHECKING:
    from .exchange import WIRE_FORMAT_VERSION as WIRE_FORMAT_VERSION
    from .exchange import WireRecord as WireRecord
    from .exchange import WireTimings as WireTimings
    from .recorder import WireRecorder as WireRecorder
    from .recorder import read_wire_log as read_wire_log
    from .sse import SSEDecoder as SSEDecoder
    from .sse import assemble_stream as assemble_stream

_EXPORTS = {
    "WireRecorder": ".recorder",
    "read_wire_log": ".recorder",
    "WireRecord": ".exchange",
    "WireTimings": ".exchange",
    "WIRE_FORMAT_VERSION": ".exchange",
    "SSEDecoder": ".sse",
    "assemble_stream": ".sse",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)
