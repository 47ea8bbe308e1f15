"""The form matrix: one tool-call request in 15 API shapes, with N tool schemas exposed.

    results = run_forms(endpoint, "qwen3-coder", n_tools=500)
    forms_json(results, 500)   # {"tools": 500, "shapes": [{"name", "passed", "reason"}, ...]}
    record(results, Path("runs"), base_url=endpoint.base_url, model="qwen3-coder", tools=500)  # for the report

The request always asks for the same thing (a 3-day metric forecast for Lisbon, which only
`get_forecast` does); the shapes vary what agent clients vary: chat completions, the Responses
API or the Anthropic Messages API (`/v1/messages`, as Claude Code sends it), `tool_choice` auto /
required (Anthropic: any) / named, streaming, strict schemas, and the full catalog of N tools
against a narrowed one of 8. Each shape passes or fails with a reason: `unsupported` (the server
has no /v1/messages: HTTP 404 or 405), `http_error`,
`ignored_required`, `ignored_named_choice`, `call_written_as_text`, `no_call`,
`arguments_duplicated_into_content` (the call also written in the text, typically when streaming),
`think_tags_in_content`, `finish_reason_mismatch` ("tool_calls" / "tool_use" with no call), `truncated`,
`stream_incomplete`, `timeout`, or the argument checker's reasons (`wrong_tool`, `wrong_value ...`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentic_eval.instruments.catalog import JSON, TOOLS, TOOLS_BY_NAME, Tool, a, b, e, i, o, s
from agentic_eval.instruments.exchange import SYSTEM_PROMPT, Exchange, is_stale_connection, make_client, post_json
from agentic_eval.instruments.registry import Headline, Log
from agentic_eval.instruments.toolcheck import Verdict, check_calls
from agentic_eval.results.instrument_runs import save_instrument_run

if TYPE_CHECKING:
    from collections.abc import Sequence

    import httpx

    from agentic_eval.classify.turn import TurnClassification
    from agentic_eval.endpoint import Endpoint
    from agentic_eval.results.instrument_runs import InstrumentRun

KIND = "forms"

TARGET = "get_forecast"
REQUEST = "What will the weather be like in Lisbon over the next 3 days? Use metric units."
EXPECTED: JSON = {"name": TARGET, "args": {"city": {"values": ["Lisbon", "Lisbon, Portugal", "Lisbon, PT"]},
                                           "days": {"values": [3]}, "units": {"values": ["metric"]}},
                  "witness": {"city": "Lisbon", "days": 3, "units": "metric"}}
NARROWED_SIZE = 8


@dataclass(frozen=True)
class Shape:
    """One way of asking: API, tool_choice, streaming, strict schemas, narrowed catalog."""

    name: str
    api: Literal["chat", "responses", "messages"]
    tool_choice: Literal["auto", "required", "named"]
    stream: bool = False
    strict: bool = False
    narrowed: bool = False


SHAPES: tuple[Shape, ...] = (
    Shape("chat-auto", "chat", "auto"),
    Shape("chat-required", "chat", "required"),
    Shape("chat-named", "chat", "named"),
    Shape("chat-auto-stream", "chat", "auto", stream=True),
    Shape("chat-named-stream", "chat", "named", stream=True),
    Shape("chat-strict", "chat", "auto", strict=True),
    Shape("chat-narrowed", "chat", "auto", narrowed=True),
    Shape("responses-auto", "responses", "auto"),
    Shape("responses-required", "responses", "required"),
    Shape("responses-auto-stream", "responses", "auto", stream=True),
    Shape("messages-auto", "messages", "auto"),
    Shape("messages-any", "messages", "required"),
    Shape("messages-named", "messages", "named"),
    Shape("messages-auto-stream", "messages", "auto", stream=True),
    Shape("messages-named-stream", "messages", "named", stream=True),
)
"""Anthropic's `tool_choice` any is the `required` of the other APIs."""

# ---------------------------------------------------------------- the catalog of N tools

_AREAS: dict[str, tuple[str, ...]] = {
    "crm": ("contact", "deal", "account"), "hr": ("employee", "leave_request", "review"),
    "inventory": ("item", "stock_level", "supplier"), "billing": ("subscription", "credit_note", "price_plan"),
    "analytics": ("dashboard", "metric", "segment"), "cms": ("page", "asset", "menu"),
    "iot": ("device", "sensor", "firmware"), "fleet": ("vehicle", "driver", "route"),
    "lms": ("course", "lesson", "enrollment"), "support": ("macro", "sla_policy", "queue"),
    "marketing": ("campaign", "audience", "coupon"), "legal": ("contract", "clause", "signature"),
    "warehouse": ("bin", "pick_list", "pallet"), "procurement": ("purchase_order", "vendor", "quote"),
    "travel": ("booking", "itinerary", "expense"), "facilities": ("room", "desk", "work_order"),
    "security": ("api_key", "role", "audit_event"), "payroll": ("payslip", "bonus", "tax_form"),
    "media": ("video", "playlist", "caption"), "surveys": ("survey", "question", "response"),
}
_STATUS = ["active", "archived", "all"]


def _filler(area: str, noun: str, verb: str, suffix: str) -> Tool:
    """A plausible tool of another product area (never one that forecasts weather)."""
    key = s(f"Identifier of the {noun.replace('_', ' ')}.")
    label = noun.replace("_", " ")
    params = {
        "get": o({f"{noun}_id": key, "include_history": b("Include the change history.")}, [f"{noun}_id"]),
        "list": o({"status": e("Filter by state.", _STATUS), "limit": i("Page size.", 1, 200),
                   "page": i("Page number.", 1)}, []),
        "create": o({"name": s("Display name."), "description": s("Longer description."),
                     "tags": a("Tags.", s("A tag.")), "priority": e("Priority.", ["low", "normal", "high"])}, ["name"]),
        "update": o({f"{noun}_id": key, "name": s("New display name."), "status": e("New state.", _STATUS[:2])},
                    [f"{noun}_id"]),
        "delete": o({f"{noun}_id": key, "hard_delete": b("Delete permanently instead of to the bin.")}, [f"{noun}_id"]),
        "archive": o({f"{noun}_id": key, "reason": s("Why it is archived.")}, [f"{noun}_id"]),
        "export": o({"format": e("File format.", ["csv", "json", "xlsx"]), "since": s("From date, YYYY-MM-DD."),
                     "until": s("To date, YYYY-MM-DD.")}, ["format"]),
        "search": o({"query": s("Words to search for."), "limit": i("Maximum results.", 1, 100)}, ["query"]),
    }[verb]
    what = {"get": f"Get one {label} from the {area} system by its id.",
            "list": f"List the {label}s in the {area} system.",
            "create": f"Create a {label} in the {area} system.",
            "update": f"Update a {label} in the {area} system.",
            "delete": f"Delete a {label} from the {area} system.",
            "archive": f"Archive a {label} in the {area} system.",
            "export": f"Export the {label}s of the {area} system to a file.",
            "search": f"Search the {label}s of the {area} system."}[verb]
    return Tool(f"{area}_{verb}_{noun}{suffix}", area, what, params)


def form_catalog(n: int) -> list[Tool]:
    """N tools: the battery's catalog, then fillers from 20 product areas; the target sits in the middle."""
    tools = [t for t in TOOLS if t.name != TARGET]
    round_no = 0
    while len(tools) < n:
        suffix = f"_v{round_no + 1}" if round_no else ""
        for area, nouns in _AREAS.items():
            for noun in nouns:
                for verb in ("get", "list", "create", "update", "delete", "archive", "export", "search"):
                    tools.append(_filler(area, noun, verb, suffix))
        round_no += 1
    tools = tools[: max(n, 1) - 1]
    tools.insert(len(tools) // 2, TOOLS_BY_NAME[TARGET])
    return tools


def narrowed_catalog(tools: list[Tool]) -> list[Tool]:
    """What a client that narrows the catalog would send: the target, its domain, a few others."""
    near = [t for t in tools if t.domain == TOOLS_BY_NAME[TARGET].domain]
    rest = [t for t in tools if t not in near]
    return (near + rest)[:NARROWED_SIZE]


def strict_schema(schema: JSON) -> JSON:
    """The schema in OpenAI strict form: every property required (optional ones nullable), no extra
    keys. Optional free-form objects, which strict mode cannot express, are left out."""
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        return {**schema, "items": strict_schema(schema["items"])}
    if schema.get("type") != "object":
        return dict(schema)
    required = set(schema.get("required", ()))
    props: JSON = {}
    for key, sub in schema.get("properties", {}).items():
        if sub.get("type") == "object" and "properties" not in sub:
            if key in required:
                props[key] = {**sub, "properties": {}, "required": [], "additionalProperties": False}
            continue
        sub = strict_schema(sub)
        if key not in required:
            sub = {**sub, "type": [sub["type"], "null"]}
            if "enum" in sub:
                sub["enum"] = [*sub["enum"], None]
        props[key] = sub
    return {**schema, "properties": props, "required": list(props), "additionalProperties": False}


# ---------------------------------------------------------------- requests


def build_request(shape: Shape, model: str, tools: list[Tool], max_tokens: int = 4096) -> JSON:
    """The request body of one shape."""
    offered = narrowed_catalog(tools) if shape.narrowed else tools
    if shape.api == "chat":
        specs: list[JSON] = [{"type": "function", "function": {
            "name": t.name, "description": t.description,
            "parameters": strict_schema(t.parameters) if shape.strict else t.parameters,
            **({"strict": True} if shape.strict else {})}} for t in offered]
        choice: Any = ({"type": "function", "function": {"name": TARGET}} if shape.tool_choice == "named"
                       else shape.tool_choice)
        return {"model": model, "messages": [{"role": "system", "content": SYSTEM_PROMPT},
                                             {"role": "user", "content": REQUEST}],
                "tools": specs, "tool_choice": choice, "temperature": 0, "max_tokens": max_tokens,
                "stream": shape.stream}
    if shape.api == "messages":
        from agentic_eval.instruments.anthropic import anthropic_tool, choice, messages_body

        kind = {"auto": "auto", "required": "any", "named": "tool"}[shape.tool_choice]
        return messages_body(model, SYSTEM_PROMPT, REQUEST, [anthropic_tool(t.name, t.description, t.parameters)
                                                             for t in offered],
                             choice(kind, TARGET), stream=shape.stream, max_tokens=max_tokens)
    specs = [{"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters,
              "strict": False} for t in offered]
    choice = {"type": "function", "name": TARGET} if shape.tool_choice == "named" else shape.tool_choice
    return {"model": model, "instructions": SYSTEM_PROMPT, "input": REQUEST, "tools": specs, "tool_choice": choice,
            "temperature": 0, "max_output_tokens": max_tokens, "stream": shape.stream}


def stream_json(client: httpx.Client, path: str, payload: JSON, timeout_s: float) -> tuple[Exchange, bool]:
    """POST and read a server-sent event stream; the body is the message the events add up to.
    Also says whether the stream ended properly (`[DONE]`, or `response.completed`). Never raises."""
    import httpx

    from agentic_eval.wire.sse import SSEDecoder, assemble_stream, parse_event_json, stream_error

    start, payloads, done, error = time.perf_counter(), [], False, None

    def take(data: str) -> None:
        nonlocal done, error
        if data.strip() == "[DONE]":
            done = True
        elif (event := parse_event_json(data)) is not None:
            payloads.append(event)
            done = done or event.get("type") == "response.completed"
            error = error or stream_error(event)

    for attempt in range(2):
        try:
            with client.stream("POST", path, json=payload, timeout=timeout_s) as resp:
                if resp.status_code >= 400:
                    text = resp.read().decode("utf-8", "replace")
                    return Exchange(resp.status_code, text[:2000], f"HTTP {resp.status_code}: {text[:200]}",
                                    time.perf_counter() - start), False
                decoder = SSEDecoder()
                for chunk in resp.iter_bytes():
                    for event in decoder.feed(chunk):
                        take(event.data)
                    if time.perf_counter() - start > timeout_s:
                        return Exchange(resp.status_code, None, f"timeout after {timeout_s:g} s", timeout_s), False
                for event in decoder.close():
                    take(event.data)
            break
        except httpx.RemoteProtocolError as exc:
            if attempt == 0 and not payloads and is_stale_connection(start):
                time.sleep(0.5)
                continue
            return Exchange(None, None, f"{type(exc).__name__}: {exc}", time.perf_counter() - start), False
        except httpx.TimeoutException:
            return Exchange(None, None, f"timeout after {timeout_s:g} s", time.perf_counter() - start), False
        except httpx.HTTPError as exc:
            return Exchange(None, None, f"{type(exc).__name__}: {exc}", time.perf_counter() - start), False
    body = assemble_stream(payloads)
    return (Exchange(200, body, f"error inside the stream: {error}" if error else None, time.perf_counter() - start),
            done)


# ---------------------------------------------------------------- judging one shape


def _finish_reason(body: JSON) -> str | None:
    choices = body.get("choices") or [{}]
    return choices[0].get("finish_reason") if isinstance(choices[0], dict) else None


def judge_shape(shape: Shape, request: JSON, ex: Exchange, stream_done: bool = True,
                classification: TurnClassification | None = None) -> Verdict:
    """Pass or fail for one shape's exchange (pure)."""
    from agentic_eval.classify.turn import is_model_turn, offered_tools, read_turn

    if ex.error is not None:
        code = "timeout" if ex.error.startswith("timeout") else "http_error"
        return Verdict(False, f"{code} status={ex.status}" if ex.status else code, ex.error)
    if not is_model_turn(ex.body):
        return Verdict(False, f"http_error status={ex.status}", f"not a model turn: {json.dumps(ex.body)[:120]}")
    wanted = "response" if shape.api == "responses" else "chat.completion"  # messages: judged as its chat form
    if isinstance(ex.body, dict) and ex.body.get("object") not in (None, wanted):
        return Verdict(False, "wrong_api", f"asked the {shape.api} API, got a {ex.body.get('object')} body: the "
                                          "server does not speak it at this path")
    turn = read_turn(ex.body)
    calls = turn.structured_calls
    if shape.api != "responses" and _finish_reason(ex.body) == "tool_calls" and not calls:
        said = "stop_reason is tool_use" if shape.api == "messages" else "finish_reason is tool_calls"
        return Verdict(False, "finish_reason_mismatch", f"{said} but no call came back")
    if turn.hit_length_limit:
        return Verdict(False, "truncated", "the reply stopped at the token limit")
    if shape.api == "responses" and ex.body.get("status") not in (None, "completed"):
        return Verdict(False, "truncated", f"response status {ex.body.get('status')}")
    if shape.stream and not stream_done:
        return Verdict(False, "stream_incomplete",
                       "the stream never ended properly ([DONE] / response.completed / message_stop)")
    if not calls:
        if classification is not None and classification.label == "text_tool_call":
            ignored = f"; tool_choice {shape.tool_choice} was not enforced" if shape.tool_choice != "auto" else ""
            return Verdict(False, f"call_written_as_text family={classification.family}",
                           f"the call is in the reply text{ignored}")
        code = {"required": "ignored_required", "named": "ignored_named_choice"}.get(shape.tool_choice, "no_call")
        return Verdict(False, code, f"answered {classification.label if classification else 'without a call'}")
    names = [name for name, _ in calls]
    if shape.tool_choice == "named" and any(name != TARGET for name in names):
        return Verdict(False, "ignored_named_choice", f"named {TARGET}, called {', '.join(names)}")
    verdict = check_calls(calls, [EXPECTED], offered_tools(request).schemas)
    if not verdict.passed:
        return verdict
    content = turn.content
    if classification is not None and classification.text_calls or any(
            isinstance(args, str) and len(args) > 8 and args in content for _, args in calls):
        return Verdict(False, "arguments_duplicated_into_content", f"the content repeats the call: {content[:120]!r}")
    if "<think>" in content or "</think>" in content:
        return Verdict(False, "think_tags_in_content", f"beside the call, the content holds {content[:80]!r}")
    return Verdict(True, "ok", "" if _finish_reason(ex.body) in (None, "tool_calls") or shape.api != "chat"
                   else f"finish_reason {_finish_reason(ex.body)} beside the call")


# ---------------------------------------------------------------- running


@dataclass
class ShapeResult:
    """One shape's verdict and its exchange (the request without its tool list)."""

    name: str
    passed: bool
    reason: str
    detail: str
    elapsed_s: float
    request: JSON = field(default_factory=dict)
    response: Any = None
    classification: JSON | None = None


MAX_TOKENS = 4096
"""Default output cap per shape: room for a reasoning model to think before it calls."""
TIMEOUT_S = 600.0
"""Default time limit per shape."""


def run_shape(client: httpx.Client, model: str, shape: Shape, tools: list[Tool], timeout_s: float = TIMEOUT_S,
              api_key: str = "", max_tokens: int = MAX_TOKENS) -> ShapeResult:
    """Send one shape's request and judge it; any failure is this shape's verdict. `api_key` goes in the
    Anthropic shapes' `x-api-key` header (the client already sends it as a Bearer token)."""
    from agentic_eval.classify.turn import NotAModelTurn, classify_turn

    request = build_request(shape, model, tools, max_tokens)
    summary = {**request, "tools": f"<{len(request['tools'])} tools>"}
    judged, recorded = request, None
    if shape.api == "messages":
        from agentic_eval.instruments.anthropic import chat_request, send_messages

        reply = send_messages(client, request, timeout_s, api_key)
        if reply.unsupported:
            return ShapeResult(shape.name, False, "unsupported", reply.error or "", round(reply.elapsed_s, 3),
                               summary, reply.body)
        # Judged through its chat-completion equivalent; the Anthropic body is what is recorded.
        ex, done, recorded = Exchange(reply.status, reply.chat, reply.error, reply.elapsed_s), reply.stream_done, reply
        judged = chat_request(request)
    else:
        path = "/chat/completions" if shape.api == "chat" else "/responses"
        ex, done = (stream_json(client, path, request, timeout_s) if shape.stream
                    else (post_json(client, path, request, timeout_s), True))
    classification = None
    if ex.error is None:
        try:
            classification = classify_turn(judged, ex.body)
        except NotAModelTurn:
            pass
    verdict = judge_shape(shape, judged, ex, done, classification)
    return ShapeResult(shape.name, verdict.passed, verdict.reason, verdict.detail, round(ex.elapsed_s, 3), summary,
                       recorded.body if recorded is not None else ex.body,
                       classification.model_dump(mode="json") if classification else None)


def run_forms(endpoint: Endpoint, model: str, n_tools: int = 500, *, shapes: tuple[Shape, ...] = SHAPES,
              timeout_s: float = TIMEOUT_S, max_tokens: int = MAX_TOKENS,
              on_result: Callable[[ShapeResult], None] | None = None) -> list[ShapeResult]:
    """Every shape in turn (one at a time, so no shape's latency is another's queueing), each capped at
    `max_tokens` of output and `timeout_s` seconds: at most 15 x `timeout_s` in all. On a CPU-served model
    (a few tokens a second) lower both: a shape that runs out is a `timeout` or `truncated` fail."""
    tools = form_catalog(n_tools)
    results = []
    with make_client(endpoint, 1) as client:
        for shape in shapes:
            try:
                result = run_shape(client, model, shape, tools, timeout_s, getattr(endpoint, "api_key", ""), max_tokens)
            except Exception as exc:  # noqa: BLE001 - a harness bug on one shape must not sink the others
                result = ShapeResult(shape.name, False, "harness_error", f"{type(exc).__name__}: {exc}", 0.0)
            results.append(result)
            if on_result is not None:
                on_result(result)
    return results


def forms_json(results: list[ShapeResult], n_tools: int) -> JSON:
    """The `--json` output: {"tools": N, "shapes": [{"name", "passed", "reason"}]}."""
    return {"tools": n_tools, "shapes": [{"name": r.name, "passed": r.passed, "reason": r.reason} for r in results]}


def exchanges_json(results: list[ShapeResult]) -> list[JSON]:
    """Every shape's full record (detail, request without tools, response, classification)."""
    return [asdict(r) for r in results]


def headline(results: list[ShapeResult]) -> Headline:
    """Shapes passed of those asked."""
    passed = sum(r.passed for r in results)
    pct = round(100 * passed / len(results), 1) if results else None
    return Headline({"passed": passed, "cases": len(results), "score_pct": pct}, f"{passed}/{len(results)} shapes")


def record(results: list[ShapeResult], runs_root: Path = Path("runs"), *, base_url: str, model: str,
           tools: int) -> Path:
    """Save the run (`forms_json` as its result, every exchange beside it) under `runs_root` for `agentic-eval
    report` and return its folder. `base_url` is the endpoint's own (secrets in it are scrubbed from the result);
    `model` and `tools` are what `run_forms` was asked."""
    shown = headline(results)
    run_dir = save_instrument_run(KIND, model=model, base_url=base_url, result=forms_json(results, tools),
                                  headline=shown.values, headline_text=shown.text, settings={"tools": tools},
                                  runs_root=runs_root)
    (run_dir / "exchanges.json").write_text(json.dumps(exchanges_json(results), indent=2, default=str) + "\n",
                                            encoding="utf-8")
    return run_dir


# ------------------------------------------------------------------------------------------------ campaign


class FormsOptions(BaseModel):
    """`[forms]` in a campaign file."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    tools: int = Field(default=500, ge=1, le=5000)
    max_tokens: int = Field(default=4096, ge=16, le=1_000_000)
    """Output cap per shape; lower it on a CPU-served model (15 shapes run one after another)."""
    timeout_s: float = Field(default=600.0, gt=0, le=86_400)
    """Time limit per shape: the matrix takes at most 15 times this."""

    def runs_wanted(self) -> int:
        return 1

    def asked(self) -> dict[str, object]:
        asked = self.model_dump()
        for key, default in {"max_tokens": 4096, "timeout_s": 600.0}.items():
            if asked[key] == default:  # added after campaigns were recorded: those runs used the default
                asked.pop(key)
        return asked


OPTIONS = FormsOptions


def measure(endpoint: Endpoint, model: str, options: FormsOptions, runs_root: Path, log: Log) -> Path:
    """The matrix as a campaign's `[forms]` asks, recorded under `runs_root`; a line per shape (minutes each on a
    CPU-served model)."""
    done = [0]

    def shape_done(result: ShapeResult) -> None:
        done[0] += 1
        log(f"forms {done[0]}/{len(SHAPES)} {result.name}: {'pass' if result.passed else result.reason} "
            f"({result.elapsed_s:.0f} s)")

    results = run_forms(endpoint, model, options.tools, timeout_s=options.timeout_s, max_tokens=options.max_tokens,
                        on_result=shape_done)
    return record(results, runs_root, base_url=endpoint.base_url, model=model, tools=options.tools)


def figures(runs: Sequence[InstrumentRun], folders: Sequence[Path]) -> dict[str, object]:
    """Shapes passed of those asked, in the latest run."""
    passed, cases = runs[-1].headline.get("passed"), runs[-1].headline.get("cases")
    return {"forms": (passed, cases)} if isinstance(passed, int) and isinstance(cases, int) else {}
