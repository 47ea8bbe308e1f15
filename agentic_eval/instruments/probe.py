"""`probe`: what does this server and model do with tools? One small tool-call request per API shape.

The same tiny request (one `read_file` tool, "show me src/main.py") is sent in each shape a coding
agent might use: chat completions with tool_choice auto / required / named function, streamed and
not, the Responses API, streamed and not, and the Anthropic Messages API (`POST /v1/messages`,
tool_choice auto / any / a named tool, streamed and not; read by instruments/anthropic.py). Each
answer is labelled by the turn classifier (structured call, call written as text and its family,
prose, empty; an Anthropic reply through its chat-completion equivalent, thinking blocks as
reasoning), and its call checked: the right tool with `{"path": "src/main.py"}`. A shape that fails
(HTTP error, timeout, a body that is not a model turn) is a row saying so, never a crash; a server
without `/v1/messages` (HTTP 404 or 405) gets `unsupported` rows for the Messages API shapes.
Streams are assembled with the openai package's stream helpers (the Messages API's by
instruments/anthropic.py). Finally `/metrics` is read, if the server has one, to name the metric
families it exports (`vllm:`, `llamacpp:`, `sglang:` ...).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from agentic_eval.endpoint import Endpoint, auth_headers, preflight

if TYPE_CHECKING:
    from agentic_eval.classify.diagnosis import Diagnosis

REQUEST_TIMEOUT_S = 180.0
"""Per request. A 1.5B model on two CPU cores answers these in ~10-60 s; a GPU server in well under 1."""
MAX_TOKENS = 512
"""Room for a short reasoning before the call. A model that does not stop after its call runs to it
(flag `truncated`): ~50 s on two CPU cores, well inside REQUEST_TIMEOUT_S unless the CPU is shared."""
TOOL_NAME = "read_file"
EXPECTED_PATH = "src/main.py"
SYSTEM = "You are a coding agent. Act through the tools you are given instead of describing what you would do."
USER = f"Show me what is in {EXPECTED_PATH}."
_PARAMETERS = {
    "type": "object",
    "properties": {"path": {"type": "string", "description": "file path relative to the repository root"}},
    "required": ["path"],
}
_DESCRIPTION = "Read a text file of the repository and return its contents."
CHAT_TOOL = {"type": "function", "function": {"name": TOOL_NAME, "description": _DESCRIPTION,
                                              "parameters": _PARAMETERS}}
RESPONSES_TOOL = {"type": "function", "name": TOOL_NAME, "description": _DESCRIPTION, "parameters": _PARAMETERS}
MESSAGES_TOOL = {"name": TOOL_NAME, "description": _DESCRIPTION, "input_schema": _PARAMETERS}


@dataclass(frozen=True)
class Shape:
    """One request shape: which API, tool_choice, and whether streamed."""

    name: str
    api: str  # "chat" | "responses" | "messages" (Anthropic)
    tool_choice: Any
    stream: bool

    def body(self, model: str, max_tokens: int = MAX_TOKENS) -> dict[str, Any]:
        if self.api == "chat":
            return {"model": model,
                    "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}],
                    "tools": [CHAT_TOOL], "tool_choice": self.tool_choice, "max_tokens": max_tokens,
                    "temperature": 0}
        if self.api == "messages":
            from agentic_eval.instruments.anthropic import messages_body

            return messages_body(model, SYSTEM, USER, [MESSAGES_TOOL], self.tool_choice, stream=self.stream,
                                 max_tokens=max_tokens)
        return {"model": model, "instructions": SYSTEM, "input": USER, "tools": [RESPONSES_TOOL],
                "tool_choice": self.tool_choice, "max_output_tokens": max_tokens, "temperature": 0}


SHAPES: tuple[Shape, ...] = (
    Shape("chat auto", "chat", "auto", False),
    Shape("chat required", "chat", "required", False),
    Shape("chat named", "chat", {"type": "function", "function": {"name": TOOL_NAME}}, False),
    Shape("chat auto stream", "chat", "auto", True),
    Shape("responses auto", "responses", "auto", False),
    Shape("responses auto stream", "responses", "auto", True),
    Shape("messages auto", "messages", {"type": "auto"}, False),
    Shape("messages any", "messages", {"type": "any"}, False),
    Shape("messages named", "messages", {"type": "tool", "name": TOOL_NAME}, False),
    Shape("messages auto stream", "messages", {"type": "auto"}, True),
)


@dataclass
class ShapeResult:
    """One row of the probe: what came back for one shape."""

    shape: str
    status: int | None = None
    """HTTP status (None when no answer came: timeout, connection refused)."""
    label: str = "error"
    """The classifier's label, `error` when there was no model turn to classify, `unsupported` when the server
    does not speak the shape's API (no /v1/messages)."""
    family: str | None = None
    tool: str | None = None
    """The tool called first (structured, else written as text)."""
    arguments_ok: bool | None = None
    """The call is `read_file` with path src/main.py (None: no call)."""
    latency_s: float = 0.0
    flags: list[str] = field(default_factory=list)
    error: str | None = None
    usage: dict[str, Any] | None = None
    parsers: list[str] = field(default_factory=list)
    """The engine parsers ('vllm:hermes', ...) that read the first call written as text (none: no text call)."""
    text_calls: dict[str, Any] | None = None
    """The answer's text calls counted for the diagnosis (`TextCallFigures`); None without any."""


@dataclass
class MetricsInfo:
    """What `/metrics` showed: whether it answered, how many families, their name prefixes."""

    url: str
    status: int | None = None
    families: list[str] = field(default_factory=list)
    prefixes: list[str] = field(default_factory=list)
    error: str | None = None


@dataclass
class ProbeReport:
    base_url: str
    model: str
    models: list[str] | None
    shapes: list[ShapeResult]
    metrics: MetricsInfo

    def to_json(self) -> dict[str, Any]:
        found = probe_diagnosis(self)
        return {**asdict(self), "diagnosis": found.model_dump() if found is not None else None}


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


def _call_ok(name: str | None, arguments: object) -> bool:
    if name != TOOL_NAME:
        return False
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return False
    if not isinstance(arguments, dict) or set(arguments) - {"path"}:
        return False
    path = str(arguments.get("path", "")).strip()
    return path.removeprefix("./") == EXPECTED_PATH


def classify_answer(row: ShapeResult, request: dict[str, Any], response: Any) -> None:
    """Fill the row's label, family, flags, tool and argument check from one answer body."""
    from agentic_eval.classify.turn import NotAModelTurn, classify_turn, read_turn

    try:
        result = classify_turn(request, response)
        turn = read_turn(response)
    except (NotAModelTurn, AttributeError, TypeError, KeyError, IndexError) as exc:
        row.label, row.error = "error", f"not a model turn: {_short(exc)}"
        return
    row.label, row.family, row.flags = result.label, result.family, list(result.flags)
    if turn.structured_calls:
        row.tool, arguments = turn.structured_calls[0]
        row.arguments_ok = _call_ok(row.tool, arguments)
    elif result.text_calls:
        row.tool = result.text_calls[0].name
        row.arguments_ok = _call_ok(row.tool, result.text_calls[0].arguments)
    if result.text_calls:
        from agentic_eval.classify.diagnosis import call_figures

        row.parsers = list(result.text_calls[0].parsers)
        row.text_calls = call_figures([result]).model_dump()
    if isinstance(response, dict) and isinstance(response.get("usage"), dict):
        row.usage = response["usage"]


def _plain(endpoint: Endpoint, shape: Shape, body: dict[str, Any], timeout_s: float) -> tuple[int, Any]:
    import httpx

    path = "/chat/completions" if shape.api == "chat" else "/responses"
    resp = httpx.post(endpoint.base_url + path, json=body, timeout=timeout_s,
                      headers=auth_headers(endpoint.api_key))
    try:
        data = resp.json()
    except ValueError:
        data = resp.text
    return resp.status_code, data


def _streamed(endpoint: Endpoint, shape: Shape, body: dict[str, Any], timeout_s: float) -> tuple[int, Any]:
    import openai

    client = openai.OpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key, max_retries=0, timeout=timeout_s)
    try:
        if shape.api == "chat":
            with client.chat.completions.stream(**body) as stream:
                for _ in stream:
                    pass
                return 200, stream.current_completion_snapshot.model_dump(mode="json")  # also when cut at the limit
        with client.responses.stream(**body) as rstream:
            for _ in rstream:
                pass
            return 200, rstream.get_final_response().model_dump(mode="json")
    finally:
        client.close()


def probe_shape(endpoint: Endpoint, model: str, shape: Shape, timeout_s: float = REQUEST_TIMEOUT_S,
                max_tokens: int = MAX_TOKENS) -> ShapeResult:
    """Send one shape's request and describe the answer. Never raises for the endpoint's behaviour."""
    import httpx
    import openai

    row = ShapeResult(shape=shape.name)
    body = shape.body(model, max_tokens)
    t0 = time.monotonic()
    if shape.api == "messages":
        _messages(endpoint, row, body, timeout_s)
        row.latency_s = round(time.monotonic() - t0, 2)
        return row
    try:
        status, data = (_streamed if shape.stream else _plain)(endpoint, shape, body, timeout_s)
    except (openai.APITimeoutError, httpx.TimeoutException):
        row.error = f"no answer within {timeout_s:.0f}s"
    except openai.APIStatusError as exc:
        row.status, row.error = exc.status_code, f"HTTP {exc.status_code}: {_short(exc)}"
    except (openai.APIConnectionError, httpx.TransportError) as exc:
        row.error = f"connection failed: {_short(exc)}"
    except Exception as exc:  # noqa: BLE001 - a stream cut short, garbage the helper cannot read: a row
        row.error = ("the openai SDK's stream helper could not read the stream: " if shape.stream else "") + _short(exc)
    else:
        row.status = status
        if status >= 400:
            message = data if isinstance(data, str) else json.dumps(data)
            row.error = f"HTTP {status}: {' '.join(message.split())[:200]}"
        else:
            classify_answer(row, body, data)
    row.latency_s = round(time.monotonic() - t0, 2)
    return row


def _messages(endpoint: Endpoint, row: ShapeResult, body: dict[str, Any], timeout_s: float) -> None:
    """One Anthropic Messages API shape: sent, checked, and classified through its chat equivalent."""
    from agentic_eval.endpoint import http_client
    from agentic_eval.instruments.anthropic import chat_request, send_messages

    with http_client(endpoint) as client:
        reply = send_messages(client, body, timeout_s, endpoint.api_key)
    row.status = reply.status
    if reply.unsupported:
        row.label, row.error = "unsupported", reply.error
        return
    if reply.error is not None or reply.chat is None:
        row.error = reply.error or "no message"
        return
    classify_answer(row, chat_request(body), reply.chat)
    usage = reply.message.get("usage") if reply.message else None
    row.usage = usage if isinstance(usage, dict) else None


def read_metrics(endpoint: Endpoint, timeout_s: float = 15.0) -> MetricsInfo:
    """The metric families at the server root's /metrics (beside /v1), if it has one."""
    import httpx
    from prometheus_client.parser import text_string_to_metric_families

    root = endpoint.base_url.removesuffix("/v1")
    info = MetricsInfo(url=root + "/metrics")
    try:
        resp = httpx.get(info.url, timeout=timeout_s, headers=auth_headers(endpoint.api_key))
        info.status = resp.status_code
        if resp.status_code >= 400:
            info.error = f"HTTP {resp.status_code}"
            return info
        info.families = sorted({f.name for f in text_string_to_metric_families(resp.text)})
    except Exception as exc:  # noqa: BLE001 - unreachable, or not the Prometheus text format
        info.error = _short(exc)
        return info
    if not info.families:
        info.error = "no metric families in the answer"
    info.prefixes = sorted({name.split(":", 1)[0] + ":" for name in info.families if ":" in name})
    return info


def run_probe(endpoint: Endpoint, model: str, *, shapes: tuple[Shape, ...] = SHAPES,
              timeout_s: float = REQUEST_TIMEOUT_S, max_tokens: int = MAX_TOKENS,
              on_row: Callable[[ShapeResult], None] | None = None,
              on_start: Callable[[], None] | None = None) -> ProbeReport:
    """List the models, probe every shape in order, then read /metrics. `on_start` is called once the
    endpoint has answered and lists `model`, before the first shape (`probe`'s "probing ..." line).

    Raises EndpointError only when the endpoint is unreachable or does not list `model`.
    """
    models = preflight(endpoint, model)
    if on_start is not None:
        on_start()
    rows = []
    for shape in shapes:
        row = probe_shape(endpoint, model, shape, timeout_s, max_tokens)
        rows.append(row)
        if on_row is not None:
            on_row(row)
    return ProbeReport(base_url=endpoint.shown_url, model=model, models=models, shapes=rows,
                       metrics=read_metrics(endpoint))


def probe_diagnosis(report: ProbeReport) -> Diagnosis | None:
    """Whose fix it is that the probe's calls came back as text (agentic_eval.classify.diagnosis), or None."""
    from agentic_eval.classify.diagnosis import diagnose
    from agentic_eval.results.records import TextCallFigures, TurnCounts

    figures = TextCallFigures()
    families: dict[str, int] = {}
    answered = [r for r in report.shapes if r.label in ("tool_call", "text_tool_call", "prose", "empty")]
    for row in answered:
        if row.text_calls:
            figures = figures.merged(TextCallFigures(**row.text_calls))
        if row.family:
            families[row.family] = families.get(row.family, 0) + 1
    turns = TurnCounts(**{label: sum(1 for r in answered if r.label == label)
                          for label in ("tool_call", "text_tool_call", "prose", "empty")})
    return diagnose(figures, turns, families, model=report.model)


def verdict(report: ProbeReport) -> str:
    """One sentence on what the server and model do with tools."""
    answered = [r for r in report.shapes if r.label not in ("error", "unsupported")]
    unsupported = [r for r in report.shapes if r.label == "unsupported"]
    structured = [r for r in answered if r.label == "tool_call"]
    text = [r for r in answered if r.label == "text_tool_call"]
    parts = [f"{len(structured)} of {len(report.shapes)} shapes got a structured tool call"]
    wrong = [r for r in structured if r.tool != TOOL_NAME or r.arguments_ok is False]
    if wrong:
        parts[0] += (f", {len(wrong)} of them to the wrong tool or with wrong arguments"
                     if len(wrong) < len(structured) else ", but none to the right tool with the right arguments")
    if text:
        families = sorted({r.family or "?" for r in text})
        readers = sorted({p for r in text for p in r.parsers})
        parts.append(f"{len(text)} a tool call written as text ({', '.join(families)}): the server did not parse "
                     "the model's format" + (f" ({', '.join(readers[:4])} would)" if readers else "")
                     + "; `run --emulate-parser NAME` or `run --lenient-text-calls` shows what the model could do")
    if unsupported:
        parts.append(f"{len(unsupported)} not supported (the server has no Anthropic Messages API at /v1/messages)")
    errors = len(report.shapes) - len(answered) - len(unsupported)
    if errors:
        parts.append(f"{errors} failed")
    return "; ".join(parts) + "."
