"""The speed instrument's measurement loop: workloads, streamed requests, the gated retry loop, the
prefill sweep.

Per request (streamed, usage included): TTFT to the first chunk carrying content, reasoning or a tool
call; decode = (n - 1) / (t_last - t_first) with n from usage.completion_tokens; end-to-end time;
cached prompt tokens where the server reports them. Every request, warm-ups included, starts with its
own random prefix, so none can be served from the prefix cache of another.

Servers with Prometheus /metrics (vLLM, SGLang, llama.cpp) are gated by `metrics.judge_sample`;
Ollama is measured through its native /api/chat and gated client-side (load time, queueing).

`record(report, runs_root, config=cfg)` saves a run as `agentic-eval speed` does, for the report.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import httpx
from pydantic import BaseModel, ConfigDict, Field

from agentic_eval.endpoint import auth_headers, not_an_event_stream, redact_url
from agentic_eval.errors import AgenticEvalError
from agentic_eval.instruments import metrics as m
from agentic_eval.instruments import servers
from agentic_eval.instruments.exchange import sse_chunks
from agentic_eval.instruments.registry import Headline, Log
from agentic_eval.instruments.speedstats import Spread, decode_rate, prefill_rate, server_decode_rate, spread
from agentic_eval.results.instrument_runs import save_instrument_run

if TYPE_CHECKING:
    from collections.abc import Sequence

    from agentic_eval.endpoint import Endpoint
    from agentic_eval.results.instrument_runs import InstrumentRun

KIND = "speed"
WORKLOADS = ("code_edit", "free_gen", "long_ctx")
COLD_LOAD_S = 0.5
"""Ollama: a load_duration above this means the model was not resident (a cold sample)."""
FAILED = "request failed"
CACHED_WARN_TOKENS = 64
"""A measured request with more prompt tokens than this served from cache is reported."""


class SpeedError(AgenticEvalError):
    """A request failed in a way the measurement cannot continue from."""


@dataclass
class SpeedConfig:
    """What to measure and how."""

    base_url: str
    """OpenAI-compatible base URL (ending in /v1); /metrics and the native APIs live at its root."""
    model: str
    api_key: str = "sk-no-key"
    workloads: tuple[str, ...] = WORKLOADS
    reps: int = 5
    warmup: int = 1
    max_tokens: int = 256
    long_ctx_tokens: int = 50_000
    prefill_sweep: bool = False
    sweep_tokens: tuple[int, ...] | None = None
    """Prompt sizes of the sweep; default 1/32 .. 1/2 of long_ctx_tokens, doubling."""
    sweep_output_tokens: int = 32
    gate: m.GatePolicy = field(default_factory=m.GatePolicy)
    request_timeout_s: float = 1800.0


@dataclass
class RequestSample:
    """One request: what the server counted, what the client timed, and the gate's verdict."""

    workload: str
    prefix: str
    warmup: bool = False
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    ttft_s: float | None = None
    decode_tok_s: float | None = None
    e2e_s: float | None = None
    server_decode_tok_s: float | None = None
    server_prefill_tok_s: float | None = None
    """The server's own prompt rate (Ollama prompt_eval_*, llama.cpp timings); cached tokens inflate it."""
    load_s: float | None = None
    kept: bool = True
    reasons: list[str] = field(default_factory=list)
    deltas: dict[str, float | None] = field(default_factory=dict)
    """Counter deltas over this request (metric role -> delta; None where unsupported)."""
    accept_rate_gauge: float | None = None


@dataclass
class WorkloadResult:
    name: str
    samples: list[RequestSample]
    decode: Spread | None
    ttft: Spread | None
    e2e: Spread | None
    acceptance_rate: float | None
    mean_acceptance_length: float | None
    acceptance_note: str

    @property
    def kept(self) -> int:
        return sum(1 for s in self.samples if s.kept)

    @property
    def discarded(self) -> int:
        return sum(1 for s in self.samples if not s.kept)


@dataclass
class SpeedReport:
    model: str
    server_kind: servers.ServerKind
    server: dict[str, Any]
    """version, flags, gate ("metrics", "client-side" or "none"), unsupported metric names."""
    workloads: dict[str, WorkloadResult]
    prefill: tuple[float, float] | None = None
    prefill_points: list[RequestSample] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The `--json` shape of issue 8."""
        def block(s: Spread | None) -> dict[str, float] | None:
            return s.as_dict() if s else None
        return {
            "server": {"kind": self.server_kind, **self.server},
            "model": self.model,
            "workloads": {w.name: {"decode_tok_s": block(w.decode), "ttft_s": block(w.ttft), "kept": w.kept,
                                   "discarded": w.discarded, "acceptance_rate": w.acceptance_rate,
                                   "mean_acceptance_length": w.mean_acceptance_length}
                          for w in self.workloads.values()},
            "prefill": {"tok_s": self.prefill[0], "r2": self.prefill[1]} if self.prefill else None,
        }

    def details(self) -> dict[str, Any]:
        """Everything else, for the saved result: every sample, notes and warnings."""
        from dataclasses import asdict
        return {"warnings": self.warnings,
                "acceptance_notes": {w.name: w.acceptance_note for w in self.workloads.values()},
                "e2e_s": {w.name: w.e2e.as_dict() if w.e2e else None for w in self.workloads.values()},
                "samples": [asdict(s) for w in self.workloads.values() for s in w.samples],
                "prefill_points": [asdict(s) for s in self.prefill_points]}


ProgressFn = Callable[[str, int, int], None]
"""progress(label, kept so far, wanted)."""


# --- prompts ---------------------------------------------------------------------------------------

def unique_prefix() -> str:
    """A prefix no other request shares (random, so reruns never meet an earlier run's cache either)."""
    return f"Request {uuid.uuid4().hex}. Ignore this line.\n\n"


def _code_module(lines: int) -> str:
    out: list[str] = ['"""Order bookkeeping helpers."""', "", "import math", ""]
    i = 0
    while len(out) < lines:
        out += [f"def settle_batch_{i}(values, factor):", f'    """Fold batch {i} of the ledger."""',
                "    total = 0", "    for v in values:", f"        if v % {i % 7 + 2} == 0:",
                "            total += v * factor", "        else:", f"            total -= {i + 1}",
                "    return math.floor(total)", ""]
        i += 1
    return "\n".join(out)


_WORDS = ("river", "harbour", "ledger", "signal", "engine", "valley", "quarter", "lantern", "market",
          "bridge", "archive", "council", "garden", "furnace", "meadow", "orchard", "granite", "cable",
          "ferry", "tower", "museum", "canal", "station", "beacon", "vineyard", "forest", "measured",
          "quietly", "northern", "restored", "gradual", "distant", "careful", "shared", "public", "narrow",
          "ancient")


def _document(tokens: int, seed: int = 7) -> str:
    """A deterministic report of about `tokens` tokens (its common words are about a token each)."""
    rng = random.Random(seed)
    parts: list[str] = []
    estimate = section = 0
    while estimate < tokens:
        section += 1
        parts.append(f"\n## Section {section}\n")
        estimate += 5
        for _ in range(8):
            words = [rng.choice(_WORDS) for _ in range(rng.randint(9, 16))]
            parts.append(" ".join(words).capitalize() + ".")
            estimate += len(words) + 1
    return " ".join(parts)


def workload_prompt(workload: str, cfg: SpeedConfig, tokens: int | None = None) -> str:
    """The body of a workload's prompt (without the unique prefix)."""
    if workload == "code_edit":
        return ("Edit this Python module: add type hints to every function, give each a one-line docstring "
                "that says what it returns, and keep the behaviour identical. Reply with the whole edited "
                "module in one code block and nothing else.\n\n```python\n" + _code_module(300) + "\n```")
    if workload == "free_gen":
        return ("Write a long, original essay of about 2,000 words on how a city changes when its buried river "
                "is brought back to the surface. Use several sections with headings and no lists.")
    if workload == "long_ctx":
        doc = _document(tokens or cfg.long_ctx_tokens)
        return "Read this report, then summarise it section by section.\n\n" + doc + "\n\nNow the summary."
    raise SpeedError(f"unknown workload {workload!r}; choose from {', '.join(WORKLOADS)}")


# --- one request -----------------------------------------------------------------------------------

def _chunk_has_tokens(delta: dict[str, Any]) -> bool:
    return bool(delta.get("content") or delta.get("reasoning_content") or delta.get("reasoning")
                or delta.get("tool_calls"))


BUFFERED_MIN_TOKENS = 16
BUFFERED_SPAN_S = 0.005
"""16 or more tokens inside 5 ms (over 3,000 tok/s single-stream): a stream delivered in one piece."""


def timed_chat(client: httpx.Client, cfg: SpeedConfig, prompt: str, max_tokens: int, sample: RequestSample,
               extra: dict[str, Any] | None = None) -> None:
    """One streamed chat completion with usage; fills the sample's counts and timings."""
    body = {"model": cfg.model, "messages": [{"role": "user", "content": prompt}], "max_tokens": max_tokens,
            "temperature": 0, "stream": True, "stream_options": {"include_usage": True}, **(extra or {})}
    headers = auth_headers(cfg.api_key)
    usage: dict[str, Any] = {}
    timings: dict[str, Any] = {}
    t_first = t_last = None
    t0 = time.perf_counter()
    with client.stream("POST", f"{cfg.base_url}/chat/completions", json=body, headers=headers,
                       timeout=cfg.request_timeout_s) as resp:
        if resp.status_code >= 400:
            resp.read()
            raise SpeedError(f"{redact_url(cfg.base_url)}/chat/completions answered HTTP {resp.status_code}: "
                             f"{resp.text[:200]!r}")
        if problem := not_an_event_stream(resp.headers.get("content-type", "")):
            raise SpeedError(f"{problem}, so tokens cannot be timed")
        for now, chunk in sse_chunks(resp, time.perf_counter):
            if chunk is None:  # [DONE]
                break
            usage = chunk.get("usage") or usage
            timings = chunk.get("timings") or timings
            if any(_chunk_has_tokens(c.get("delta") or {}) for c in chunk.get("choices") or ()):
                t_first = t_first if t_first is not None else now
                t_last = now
    sample.e2e_s = time.perf_counter() - t0
    sample.ttft_s = None if t_first is None else t_first - t0
    sample.prompt_tokens = usage.get("prompt_tokens") or timings.get("prompt_n")
    sample.completion_tokens = usage.get("completion_tokens") or timings.get("predicted_n")
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
    sample.cached_tokens = cached if cached is not None else timings.get("cache_n")
    n = sample.completion_tokens or 0
    if n >= BUFFERED_MIN_TOKENS and t_first is not None and t_last is not None and t_last - t_first < BUFFERED_SPAN_S:
        raise SpeedError(f"all {n} tokens arrived within {(t_last - t_first) * 1000:.1f} ms: the stream looks "
                         "buffered (a proxy in between?), so decode cannot be timed")
    sample.decode_tok_s = decode_rate(sample.completion_tokens, t_first, t_last)
    if timings.get("prompt_n") and timings.get("prompt_ms"):
        sample.server_prefill_tok_s = timings["prompt_n"] / (timings["prompt_ms"] / 1000)
    if timings.get("predicted_n") and timings.get("predicted_ms"):
        sample.server_decode_tok_s = server_decode_rate(timings["predicted_n"], int(timings["predicted_ms"] * 1e6))


def timed_ollama(client: httpx.Client, root: str, cfg: SpeedConfig, prompt: str, max_tokens: int, num_ctx: int,
                 sample: RequestSample) -> None:
    """One streamed request on Ollama's native /api/chat; the decode rate is the server's own
    (eval_count - 1) / eval_duration, gated client-side on load time and queueing."""
    body = {"model": cfg.model, "messages": [{"role": "user", "content": prompt}], "stream": True,
            "keep_alive": "10m", "options": {"num_predict": max_tokens, "temperature": 0, "num_ctx": num_ctx}}
    reply = servers.stream_ollama_chat(client, root, body, timeout=cfg.request_timeout_s, clock=time.perf_counter)
    if (resp := reply.error) is not None:
        raise SpeedError(f"{root}/api/chat answered HTTP {resp.status_code}: {resp.text[:200]!r}")
    final, t0, t_first, t_last = reply.final, reply.started, reply.first_token, reply.last_token
    sample.e2e_s = reply.ended - t0
    sample.ttft_s = None if t_first is None else t_first - t0
    sample.prompt_tokens, sample.completion_tokens = final.get("prompt_eval_count"), final.get("eval_count")
    sample.server_decode_tok_s = server_decode_rate(final.get("eval_count"), final.get("eval_duration"))
    sample.decode_tok_s = sample.server_decode_tok_s or decode_rate(sample.completion_tokens, t_first, t_last)
    if final.get("prompt_eval_count") and final.get("prompt_eval_duration"):
        sample.server_prefill_tok_s = final["prompt_eval_count"] / (final["prompt_eval_duration"] / 1e9)
    sample.load_s = (final.get("load_duration") or 0) / 1e9
    total_s = (final.get("total_duration") or 0) / 1e9
    if sample.load_s > COLD_LOAD_S:
        sample.reasons.append(f"model was loading ({sample.load_s:.1f} s load_duration): a cold sample")
    if total_s and sample.e2e_s - total_s > max(0.25, 0.1 * sample.e2e_s):
        sample.reasons.append(f"waited {sample.e2e_s - total_s:.2f} s before the server started on it: queued "
                              "behind another request")
    sample.kept = not sample.reasons


# --- the gated loop --------------------------------------------------------------------------------

class _Session:
    """One measurement against one server: its kind, its metrics, and the gated attempt."""

    def __init__(self, cfg: SpeedConfig, client: httpx.Client) -> None:
        self.cfg, self.client, self.root = cfg, client, servers.root_url(cfg.base_url)
        self.reader = m.MetricsReader(client, self.root)
        # A /metrics page that is not Prometheus text reads as none: measured ungated, and said so.
        found = servers.detect_server(client, cfg.base_url, ask_model_list=False)
        first = found.scrape
        self.kind: servers.ServerKind = found.kind
        self.names = m.SERVER_METRICS.get(self.kind) if found.from_metrics else None
        self.gated = self.names is not None and first is not None and m.is_idle(first, self.names) is not None
        unsupported = ([n for n in self.names.all().values() if first is not None and first.get(n) is None]
                       if self.names else [])
        gate = "metrics" if self.gated else "client-side" if self.kind == "ollama" else "none"
        self.server = {**servers.server_details(client, self.root, self.kind, first), "gate": gate,
                       "unsupported": unsupported}
        self.stale_seen = False
        longest = cfg.long_ctx_tokens if "long_ctx" in cfg.workloads or cfg.prefill_sweep else 4000
        self.num_ctx = max(8192, (int(longest * 1.2) + cfg.max_tokens + 1023) // 1024 * 1024)

    def attempt(self, workload: str, body: str, max_tokens: int, warmup: bool = False,
                extra: dict[str, Any] | None = None) -> RequestSample:
        """One request with a fresh unique prefix; gated unless it is a warm-up."""
        prefix = unique_prefix()
        sample = RequestSample(workload=workload, prefix=prefix.split(".")[0], warmup=warmup)
        names, policy = self.names, self.cfg.gate
        gated = self.gated and not warmup and names is not None
        before = m.wait_idle(self.reader.scrape, names, policy, policy.idle_timeout_s) if gated and names else None
        if gated and before is not None and before.scrape is None:
            sample.kept = False
            sample.reasons.append(f"server never idle for {before.waited_s:.0f} s ({before.last_busy})")
            return sample
        try:
            if self.kind == "ollama":
                timed_ollama(self.client, self.root, self.cfg, prefix + body, max_tokens, self.num_ctx, sample)
            else:
                timed_chat(self.client, self.cfg, prefix + body, max_tokens, sample, extra)
        except (SpeedError, httpx.HTTPError, ValueError) as exc:  # recorded on the sample; the run goes on
            sample.kept = False
            sample.reasons.append(f"{FAILED}: {exc}"[:300])
            return sample
        if not gated or before is None or names is None:
            return sample
        own = sample.completion_tokens
        tol = policy.token_tolerance

        def settled(scrape: m.Scrape) -> bool:
            d = m.delta(before.scrape, scrape, names.generation_tokens)
            return d is None or own is None or d >= own - tol

        after = m.wait_idle(self.reader.scrape, names, policy, policy.settle_timeout_s, ready=settled)
        self.stale_seen = self.stale_seen or before.stale_gauges or after.stale_gauges
        end = after.scrape or (after.last if after.last_idle else None)
        verdict = m.judge_sample(before.scrape, end, names, sample.prompt_tokens, own, tol)
        sample.kept, sample.reasons = verdict.keep, list(verdict.reasons)
        counters = ("prompt_tokens", "generation_tokens", "drafts", "draft_tokens", "accepted_tokens",
                    "verify_calls", "cache_hits")
        sample.deltas = {r: m.delta(before.scrape, end, n) for r, n in names.all().items() if r in counters}
        sample.accept_rate_gauge = end.get(names.accept_rate_gauge) if end is not None else None
        return sample

    def collect(self, label: str, want: int, workload: str, body: str, max_tokens: int,
                progress: ProgressFn | None, extra: dict[str, Any] | None = None) -> list[RequestSample]:
        """Attempts until `want` samples are kept, bounded by the policy's attempt factor."""
        samples: list[RequestSample] = []
        kept = 0
        bound = want * self.cfg.gate.max_attempts_factor + 2
        while kept < want and len(samples) < bound:
            sample = self.attempt(workload, body, max_tokens, extra=extra)
            samples.append(sample)
            kept += sample.kept
            if progress:
                progress(label, kept, want)
            if len(samples) >= 2 and all(s.reasons and s.reasons[0].startswith(FAILED) for s in samples[-2:]):
                break  # the server refuses this request (e.g. too long a prompt): retrying will not help
        return samples


def _workload_result(name: str, samples: list[RequestSample], names: m.MetricNames | None) -> WorkloadResult:
    kept = [s for s in samples if s.kept]
    rate, length, note = m.acceptance_from_deltas([s.deltas for s in kept], names,
                                                  kept[-1].accept_rate_gauge if kept else None)
    return WorkloadResult(name=name, samples=samples, decode=spread([s.decode_tok_s for s in kept]),
                          ttft=spread([s.ttft_s for s in kept]), e2e=spread([s.e2e_s for s in kept]),
                          acceptance_rate=rate, mean_acceptance_length=length, acceptance_note=note)


def _warnings(report: SpeedReport, session: _Session, cfg: SpeedConfig) -> list[str]:
    out: list[str] = []
    if session.server["gate"] == "none":
        out.append("no usable /metrics: samples are NOT contention-gated (vLLM: drop --disable-log-stats; "
                   "SGLang: --enable-metrics; llama.cpp: --metrics)")
    spec = {n for r, n in (session.names.all().items() if session.names else ())
            if r in ("drafts", "draft_tokens", "accepted_tokens", "verify_calls", "accept_rate_gauge")}
    missing = [n for n in session.server["unsupported"] if n not in spec]  # absent spec counters: see acceptance
    if missing:
        out.append("metrics not exposed (unsupported, not zero): " + ", ".join(missing))
    if session.stale_seen:
        out.append("running/waiting gauges stayed non-zero while token counters were frozen: read as stale")
    for w in report.workloads.values():
        if w.kept < cfg.reps:
            reasons = sorted({r for s in w.samples for r in s.reasons})
            out.append(f"{w.name}: only {w.kept} of {cfg.reps} samples kept after {len(w.samples)} attempts: "
                       + "; ".join(reasons[:3]))
        if any(s.kept and s.completion_tokens and s.decode_tok_s is None for s in w.samples):
            out.append(f"{w.name}: no token timings in the stream (buffered?): decode not measurable")
        if any(s.kept and s.completion_tokens is None for s in w.samples):
            out.append(f"{w.name}: the server sent no usage in the stream: decode not measurable")
        cached = max((s.cached_tokens or 0) for s in w.samples)
        hits = max((s.deltas.get("cache_hits") or 0) for s in w.samples)
        if max(cached, hits) > CACHED_WARN_TOKENS:
            out.append(f"{w.name}: a measured request had {max(cached, hits):.0f} prompt tokens from the prefix "
                       "cache although every prefix is unique")
    return out


def host_load_per_core(base_url: str) -> float | None:
    """This machine's one-minute load per core, when the endpoint is on this machine (a loopback address or
    this host's name); None elsewhere, or where the load cannot be read. The gate watches the server's own queue;
    on a CPU-served model other work on the host slows decoding as much, and this says how much there was."""
    import os
    import socket
    from urllib.parse import urlsplit

    host = (urlsplit(base_url).hostname or "").lower()
    local = host in ("localhost", socket.gethostname().lower()) or host.startswith("127.") or host == "::1"
    try:
        return round(os.getloadavg()[0] / (os.cpu_count() or 1), 2) if local else None
    except OSError:
        return None


def measure_speed(cfg: SpeedConfig, progress: ProgressFn | None = None) -> SpeedReport:
    """Run every workload (warm-ups, then gated repetitions) and the optional prefill sweep."""
    for w in cfg.workloads:
        if w not in WORKLOADS:
            raise SpeedError(f"unknown workload {w!r}; choose from {', '.join(WORKLOADS)}")
    with httpx.Client() as client:
        session = _Session(cfg, client)
        report = SpeedReport(model=cfg.model, server_kind=session.kind, server=session.server, workloads={})
        for name in cfg.workloads:
            body = workload_prompt(name, cfg)
            for _ in range(cfg.warmup):
                session.attempt(name, body, cfg.max_tokens, warmup=True)
            samples = session.collect(name, cfg.reps, name, body, cfg.max_tokens, progress)
            report.workloads[name] = _workload_result(name, samples, session.names)
        if cfg.prefill_sweep:
            _sweep(session, report, progress)
        load = host_load_per_core(cfg.base_url)
        if load is not None:
            report.server["host_load_per_core"] = load
            if load > 0.5:
                report.warnings.append(f"this machine's load was {load:.1f} per core while measuring: a model it "
                                       "serves on its CPU decodes slower than it would alone (the gate watches only "
                                       "the server's queue)")
        report.warnings = _warnings(report, session, cfg) + report.warnings
    return report


def _sweep(session: _Session, report: SpeedReport, progress: ProgressFn | None) -> None:
    """Fixed output length, several prompt lengths, unique prefixes: wall time against prompt tokens."""
    cfg = session.cfg
    sizes = cfg.sweep_tokens or tuple(max(256, cfg.long_ctx_tokens // d) for d in (32, 16, 8, 4, 2))
    extra = {"ignore_eos": True} if session.kind in ("vllm", "sglang", "llamacpp") else None
    session.attempt("prefill", workload_prompt("long_ctx", cfg, sizes[0]), cfg.sweep_output_tokens, True, extra)
    for size in sizes:
        body = workload_prompt("long_ctx", cfg, size)
        report.prefill_points += session.collect(f"prefill {size}", 1, "prefill", body, cfg.sweep_output_tokens,
                                                 progress, extra)
    kept = [p for p in report.prefill_points if p.kept and p.prompt_tokens and p.e2e_s]
    report.prefill = prefill_rate([float(p.prompt_tokens or 0) for p in kept], [p.e2e_s or 0.0 for p in kept])
    if len({p.completion_tokens for p in kept}) > 1:
        report.warnings.append("prefill sweep: output lengths differed between points; the fit is noisier")


def headline(report: SpeedReport) -> Headline:
    """The first workload's median decode rate; the line names every workload's."""
    first = next(iter(report.workloads.values()), None)
    decode = first.decode if first else None
    text = ", ".join(f"{w.name} {'-' if w.decode is None else f'{w.decode.median:,.1f}'} tok/s"
                     for w in report.workloads.values())
    return Headline({"value": round(decode.median, 1) if decode else None, "unit": "tok/s",
                     "workload": first.name if first else None}, text or "no workload")


def record(report: SpeedReport, runs_root: Path = Path("runs"), *, config: SpeedConfig,
           details: dict[str, Any] | None = None) -> Path:
    """Save the run under `runs_root` for `agentic-eval report` and return its folder: `report.to_json()` with
    `report.details()`, updated with `details` (what the caller measured beside it, such as the CLI's
    bandwidth check and its warnings). `config` is what `measure_speed` was given (its base URL's secrets are
    scrubbed from what is written)."""
    shown = headline(report)
    settings = {"workloads": list(config.workloads), "reps": config.reps, "warmup": config.warmup,
                "max_tokens": config.max_tokens, "long_ctx_tokens": config.long_ctx_tokens,
                "prefill_sweep": bool(config.prefill_sweep)}
    return save_instrument_run(
        KIND, model=config.model, base_url=config.base_url,
        result={**report.to_json(), "details": {**report.details(), **(details or {})}},
        headline=shown.values, headline_text=shown.text, settings=settings, runs_root=runs_root)


# ------------------------------------------------------------------------------------------------ campaign


class SpeedOptions(BaseModel):
    """`[speed]` in a campaign file."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    workloads: list[Literal["code_edit", "free_gen", "long_ctx"]] = ["code_edit", "free_gen", "long_ctx"]
    reps: int = Field(default=5, ge=1, le=1000)
    warmup: int = Field(default=1, ge=0, le=1000)
    max_tokens: int = Field(default=256, ge=2, le=2_000_000)
    long_ctx_tokens: int = Field(default=50000, ge=256, le=2_000_000)

    def runs_wanted(self) -> int:
        return 1

    def asked(self) -> dict[str, object]:
        return self.model_dump()


OPTIONS = SpeedOptions


def measure(endpoint: Endpoint, model: str, options: SpeedOptions, runs_root: Path, log: Log) -> Path:
    """One speed measurement as a campaign's `[speed]` asks, recorded under `runs_root`."""
    cfg = SpeedConfig(base_url=endpoint.base_url, api_key=endpoint.api_key, model=model,
                      workloads=tuple(options.workloads), reps=options.reps, warmup=options.warmup,
                      max_tokens=options.max_tokens, long_ctx_tokens=options.long_ctx_tokens)
    return record(measure_speed(cfg), runs_root, config=cfg)


def figures(runs: Sequence[InstrumentRun], folders: Sequence[Path]) -> dict[str, object]:
    """The latest run's median decode rate per workload, and the host's load per core while it measured."""
    import json

    try:
        result = json.loads((folders[-1] / "result.json").read_text(encoding="utf-8"))
        decode = {name: (w.get("decode_tok_s") or {}).get("median") for name, w in result.get("workloads", {}).items()}
        load = (result.get("server") or {}).get("host_load_per_core")
    except (OSError, ValueError, AttributeError):
        return {"decode_tok_s": {}}
    return {"decode_tok_s": decode, "host_load": float(load) if isinstance(load, (int, float)) else None}
