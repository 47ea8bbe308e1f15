"""Which server is behind the endpoint, and the one native API an instrument speaks (Ollama's /api/chat).

    info = detect_server(client, endpoint.base_url)        # ServerInfo(kind="vllm", detail="/metrics has vllm: names")
    details = server_details(client, root_url(base), info.kind, info.scrape)   # version and flags
    reply = stream_ollama_chat(client, root, body)          # first/last token times, the final `done` line

The evidence, in order: the metric names of /metrics (`vllm:`, `sglang:`, `llamacpp:`), Ollama's
/api/version, the model list's `owned_by` (unless the caller leaves it out), llama.cpp's /props.
The first that names a server decides; none: "unknown".
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from agentic_eval.instruments.metrics import SERVER_METRICS, MetricsError, MetricsReader, Scrape

if TYPE_CHECKING:
    import httpx

ServerKind = Literal["vllm", "sglang", "llamacpp", "ollama", "openai", "unknown"]
"""The server kinds the instruments tell apart. "unknown": nothing named the server (speed records
that); think-check records such a server as "openai", since it then switches reasoning the OpenAI
way (`reasoning_effort`). Both values are in recorded results, so both stay."""

OPENAI_STYLE = "no server-specific route answered: assuming an OpenAI-style API"


@dataclass
class ServerInfo:
    """What `detect_server` found."""

    kind: ServerKind
    detail: str
    """How it was recognised, e.g. "/metrics has vllm: names" or "Ollama 0.5.7 (/api/version)"."""
    scrape: Scrape | None = None
    """The /metrics reading taken on the way (None: no page, or not Prometheus text)."""
    from_metrics: bool = False
    """The kind came from the metric names (so SERVER_METRICS[kind] names its figures)."""


def root_url(base_url: str) -> str:
    """The server root (where /metrics and the native APIs live) of an OpenAI-compatible base URL."""
    base = base_url.rstrip("/")
    return base.removesuffix("/v1")


def detect_kind(scrape: Scrape) -> ServerKind:
    """The server kind from the names its metrics carry: vllm:, sglang: or llamacpp: samples."""
    for kind, names in SERVER_METRICS.items():
        if any(name.startswith(names.prefix) for name in scrape.values):
            return kind  # type: ignore[return-value]
    return "unknown"


def _get_json(client: httpx.Client, url: str) -> Any:
    """GET `url` (5 s); its JSON when it answered 200, else None. Never raises for the server's behaviour."""
    import httpx

    try:
        resp = client.get(url, timeout=5.0)
        return resp.json() if resp.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None


def _has(data: Any, key: str) -> bool:
    try:
        return data is not None and key in data
    except TypeError:
        return False


def detect_server(client: httpx.Client, base_url: str, *, ask_model_list: bool = True) -> ServerInfo:
    """The server behind `base_url`, from what it exposes (see the module docstring for the order).

    `ask_model_list=False` leaves out the model list's `owned_by`: the speed instrument names a
    server only from its metrics and native routes, since its gate and its sweep's flags follow the kind."""
    import httpx

    root = root_url(base_url)
    try:
        scrape = MetricsReader(client, root).try_scrape()
    except MetricsError:
        scrape = None  # a page that is not Prometheus text names nothing
    if scrape is not None and (kind := detect_kind(scrape)) != "unknown":
        return ServerInfo(kind, f"/metrics has {kind}: names", scrape, from_metrics=True)
    if _has(version := _get_json(client, f"{root}/api/version"), "version"):
        shown = version.get("version") if isinstance(version, dict) else None
        return ServerInfo("ollama", f"Ollama {shown} (/api/version)", scrape)
    if ask_model_list:
        try:
            resp = client.get(f"{base_url}/models", timeout=5.0)
        except httpx.HTTPError:
            resp = None
        if resp is not None and resp.status_code == 200:
            owners = re.findall(r'"owned_by"\s*:\s*"([^"]*)"', resp.text)
            for kind in ("vllm", "sglang", "llamacpp"):
                if kind in owners:
                    return ServerInfo(kind, f"/models owned_by {kind}", scrape)  # type: ignore[arg-type]
    if _has(_get_json(client, f"{root}/props"), "default_generation_settings"):
        return ServerInfo("llamacpp", "/props has default_generation_settings (llama.cpp)", scrape)
    return ServerInfo("unknown", OPENAI_STYLE, scrape)


def server_details(client: httpx.Client, root_url: str, kind: ServerKind, scrape: Scrape | None) -> dict[str, Any]:
    """Version and flags the server exposes, best effort: vLLM /version and its *_info metric labels,
    SGLang /get_server_info, llama.cpp /props, Ollama /api/version."""
    import httpx

    root = root_url.rstrip("/")
    paths = {"vllm": "/version", "sglang": "/get_server_info", "llamacpp": "/props", "ollama": "/api/version"}
    details: dict[str, Any] = {"version": None, "flags": {}}
    if scrape is not None:
        for name, labels in scrape.info.items():
            details["flags"].update({f"{name.split(':')[-1]}.{k}": v for k, v in labels.items()})
    if kind not in paths:
        return details
    try:
        resp = client.get(root + paths[kind], timeout=5.0)
        data = resp.json() if resp.status_code == 200 else {}
    except (httpx.HTTPError, ValueError):
        data = {}
    if not isinstance(data, dict):
        return details
    details["version"] = data.get("version") or data.get("build_info")
    if kind == "sglang":
        keep = ("speculative", "disable_radix_cache", "chunked_prefill_size", "tp_size", "quantization",
                "kv_cache_dtype", "attention_backend", "enable_metrics", "context_length")
        details["flags"].update({k: v for k, v in data.items() if any(k.startswith(p) for p in keep)
                                 and isinstance(v, (str, int, float, bool, type(None)))})
    elif kind == "llamacpp":
        settings = data.get("default_generation_settings") or {}
        details["flags"].update({k: v for k, v in (("total_slots", data.get("total_slots")),
                                                     ("n_ctx", settings.get("n_ctx"))) if v is not None})
    return details


@dataclass
class OllamaStream:
    """One streamed request on Ollama's native /api/chat, timed with the caller's clock."""

    started: float
    ended: float
    """After the stream closed."""
    first_token: float | None = None
    last_token: float | None = None
    """When the first and the last line carrying content, thinking or a tool call arrived."""
    final: dict[str, Any] = field(default_factory=dict)
    """The `done` line: eval_count, eval_duration, load_duration, total_duration, ..."""
    error: httpx.Response | None = None
    """The httpx response, read, when the server answered HTTP 400 or above (then nothing else is set)."""


def stream_ollama_chat(client: httpx.Client, root: str, body: dict[str, Any], *,
                       timeout: float | httpx.Timeout | None = None,
                       clock: Callable[[], float] = time.perf_counter) -> OllamaStream:
    """POST `body` (with "stream": true) to `<root>/api/chat` and read its NDJSON lines to the end.
    `timeout` None: the client's own. Raises httpx errors, and ValueError for a line that is not JSON."""
    kwargs: dict[str, Any] = {"timeout": timeout} if timeout is not None else {}
    reply = OllamaStream(started=clock(), ended=0.0)
    with client.stream("POST", f"{root}/api/chat", json=body, **kwargs) as resp:
        if resp.status_code >= 400:
            resp.read()
            reply.error, reply.ended = resp, clock()
            return reply
        for line in resp.iter_lines():
            if not line.strip():
                continue
            now = clock()
            chunk = json.loads(line)
            msg = chunk.get("message") or {}
            if msg.get("content") or msg.get("thinking") or msg.get("tool_calls"):
                reply.first_token = reply.first_token if reply.first_token is not None else now
                reply.last_token = now
            if chunk.get("done"):
                reply.final = chunk
    reply.ended = clock()
    return reply
