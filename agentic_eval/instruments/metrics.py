"""Server metrics for the speed instrument: Prometheus scraping, exact metric names per server, and the
contention gate.

`servers.detect_kind` names the server (vLLM, SGLang, llama.cpp) from the metric names it exposes.
Every figure is looked up by its exact sample name, never by prefix (`..._num_accepted_tokens` is a prefix of
`..._num_accepted_tokens_per_pos`); a metric the server does not expose is None ("unsupported"),
never zero.

The gate keeps a sample only if running and waiting requests were zero over consecutive scrapes
before the request and after it, and the generation-token counter advanced by this request's own
tokens alone (and the prompt counter by no more than its own prompt).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentic_eval.errors import AgenticEvalError
from agentic_eval.instruments.speedstats import acceptance

if TYPE_CHECKING:
    import httpx


@dataclass(frozen=True)
class MetricNames:
    """Exact sample names (as prometheus_client's parser yields them) of the figures one server exposes."""

    prefix: str
    running: str
    waiting: str
    prompt_tokens: str
    generation_tokens: str
    drafts: str | None = None
    draft_tokens: str | None = None
    accepted_tokens: str | None = None
    verify_calls: str | None = None
    """SGLang: one per verification step, so Δgeneration / Δverify_calls is the mean acceptance length."""
    accept_rate_gauge: str | None = None
    cache_hits: str | None = None
    """Prompt tokens served from the prefix cache."""

    def all(self) -> dict[str, str]:
        """Every named figure: {role: sample name}."""
        roles = ("running", "waiting", "prompt_tokens", "generation_tokens", "drafts", "draft_tokens",
                 "accepted_tokens", "verify_calls", "accept_rate_gauge", "cache_hits")
        return {r: n for r in roles if (n := getattr(self, r))}


SERVER_METRICS: dict[str, MetricNames] = {
    "vllm": MetricNames(
        prefix="vllm:", running="vllm:num_requests_running", waiting="vllm:num_requests_waiting",
        prompt_tokens="vllm:prompt_tokens_total", generation_tokens="vllm:generation_tokens_total",
        drafts="vllm:spec_decode_num_drafts_total", draft_tokens="vllm:spec_decode_num_draft_tokens_total",
        accepted_tokens="vllm:spec_decode_num_accepted_tokens_total", cache_hits="vllm:prefix_cache_hits_total",
    ),
    "sglang": MetricNames(
        prefix="sglang:", running="sglang:num_running_reqs", waiting="sglang:num_queue_reqs",
        prompt_tokens="sglang:prompt_tokens_total", generation_tokens="sglang:generation_tokens_total",
        verify_calls="sglang:spec_verify_calls_total", accept_rate_gauge="sglang:spec_accept_rate",
        cache_hits="sglang:cached_tokens_total",
    ),
    "llamacpp": MetricNames(
        prefix="llamacpp:", running="llamacpp:requests_processing", waiting="llamacpp:requests_deferred",
        prompt_tokens="llamacpp:prompt_tokens_total", generation_tokens="llamacpp:tokens_predicted_total",
        # declared without _total by the server; the parser renames counter samples to ..._total
        drafts="llamacpp:spec_decode_num_drafts", draft_tokens="llamacpp:spec_decode_num_draft_tokens",
        accepted_tokens="llamacpp:spec_decode_num_accepted_tokens",
    ),
}


class MetricsError(AgenticEvalError):
    """A /metrics page that does not parse as Prometheus text."""


@dataclass
class Scrape:
    """One reading of /metrics: each sample name's value summed over its labels (vLLM labels by engine
    and model), plus the labels of `*_info` samples (server flags)."""

    values: dict[str, float] = field(default_factory=dict)
    info: dict[str, dict[str, str]] = field(default_factory=dict)
    t: float = 0.0

    def get(self, name: str | None) -> float | None:
        """The value of an exact sample name, or None if absent. A counter the server declared without
        `_total` is found under the parser's `..._total` spelling too."""
        if name is None:
            return None
        if name in self.values:
            return self.values[name]
        if not name.endswith("_total") and f"{name}_total" in self.values:
            return self.values[f"{name}_total"]
        return None


def parse_metrics(text: str, t: float = 0.0) -> Scrape:
    """Parse Prometheus text with prometheus_client. Raises MetricsError on a malformed page."""
    from prometheus_client.parser import text_string_to_metric_families

    scrape = Scrape(t=t)
    try:  # the parser is lazy: a bad line raises only while iterating
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name.endswith("_info") and sample.labels:
                    scrape.info[sample.name] = dict(sample.labels)
                scrape.values[sample.name] = scrape.values.get(sample.name, 0.0) + float(sample.value)
    except (ValueError, TypeError, IndexError) as exc:
        raise MetricsError(f"the /metrics page is not valid Prometheus text: {exc}") from None
    return scrape


def support(scrape: Scrape, names: MetricNames) -> dict[str, bool]:
    """For each figure of this server kind: whether the server exposes it."""
    return {role: scrape.get(name) is not None for role, name in names.all().items()}


def delta(before: Scrape | None, after: Scrape | None, name: str | None) -> float | None:
    """How much a counter advanced between two scrapes; None when either side lacks it."""
    if before is None or after is None:
        return None
    a, b = before.get(name), after.get(name)
    return None if a is None or b is None else b - a


def is_idle(scrape: Scrape, names: MetricNames) -> bool | None:
    """Running and waiting both zero; None when the server exposes neither gauge."""
    running, waiting = scrape.get(names.running), scrape.get(names.waiting)
    if running is None and waiting is None:
        return None
    return (running or 0.0) == 0 and (waiting or 0.0) == 0


@dataclass(frozen=True)
class GatePolicy:
    """How strict the contention gate is and how long it waits."""

    idle_scrapes: int = 2
    """Consecutive idle scrapes needed before and after a request."""
    scrape_interval_s: float = 0.1
    idle_timeout_s: float = 60.0
    """Give up waiting for an idle server before a request after this long (the attempt is discarded)."""
    settle_timeout_s: float = 10.0
    """After a request, wait at most this long for idle gauges and counters that include our tokens."""
    stale_window_s: float = 3.0
    """Gauges stuck non-zero while the token counters have not moved for this long are stale (gauges
    update on engine steps and can stay non-zero after aborts); they are then read as idle."""
    token_tolerance: int = 1
    max_attempts_factor: int = 3
    """Attempts per wanted sample are bounded: at most reps * factor + 2 tries per workload."""


@dataclass
class IdleWait:
    """The outcome of waiting for an idle server."""

    scrape: Scrape | None
    """The last scrape, taken while idle; None if the server never went idle in time."""
    waited_s: float
    stale_gauges: bool = False
    last_busy: str = ""
    last: Scrape | None = None
    """The last scrape taken, idle or not."""
    last_idle: bool = False
    """Whether the gauges read idle on the last scrape (a timeout with idle gauges: counters never settled)."""


def _busy_text(scrape: Scrape, names: MetricNames) -> str:
    return f"running={scrape.get(names.running)}, waiting={scrape.get(names.waiting)}"


def wait_idle(scrape_fn: Callable[[], Scrape], names: MetricNames, policy: GatePolicy, timeout_s: float,
              ready: Callable[[Scrape], bool] = lambda s: True,
              clock: Callable[[], float] = time.perf_counter,
              sleep: Callable[[float], None] = time.sleep) -> IdleWait:
    """Scrape until `policy.idle_scrapes` consecutive scrapes are idle and `ready(scrape)` holds.

    Bounded by `timeout_s`. Gauges stuck busy while the prompt and generation counters stay frozen
    for `stale_window_s` count as idle (and are reported as stale).
    """
    start = clock()
    history: list[Scrape] = []
    consecutive, stale_seen, last_busy = 0, False, ""
    while True:
        scrape = scrape_fn()
        now = scrape.t = clock()
        history.append(scrape)
        idle = is_idle(scrape, names)
        if idle is False:
            last_busy = _busy_text(scrape, names)
            old = next((s for s in history if s.t <= now - policy.stale_window_s), None)
            counters = (names.generation_tokens, names.prompt_tokens)
            if old is not None and all(scrape.get(c) is not None and scrape.get(c) == old.get(c) for c in counters):
                idle, stale_seen = True, True
        if idle is not False and ready(scrape):
            consecutive += 1
            if consecutive >= policy.idle_scrapes:
                return IdleWait(scrape, now - start, stale_seen, last_busy, scrape, True)
        else:
            consecutive = 0
        if now - start >= timeout_s:
            return IdleWait(None, now - start, stale_seen, last_busy, scrape, idle is not False)
        sleep(policy.scrape_interval_s)


@dataclass(frozen=True)
class GateVerdict:
    """Keep the sample or not, and why not."""

    keep: bool
    reasons: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def judge_sample(before: Scrape | None, after: Scrape | None, names: MetricNames, own_prompt_tokens: int | None,
                 own_completion_tokens: int | None, tolerance: int = 1) -> GateVerdict:
    """The contention verdict for one request from its idle scrapes before and after (None: never idle).

    Discard when the server was busy before or after, when the generation counter moved by anything
    but this request's tokens, or when the prompt counter moved by more than this request's prompt.
    """
    reasons: list[str] = []
    notes: list[str] = []
    if before is None:
        reasons.append("server busy before the request")
    if after is None:
        reasons.append("server busy after the request")
    if before is not None and after is not None:
        d_gen = delta(before, after, names.generation_tokens)
        if d_gen is None:
            notes.append(f"{names.generation_tokens} unsupported: no token-count check")
        elif own_completion_tokens is not None:
            if d_gen > own_completion_tokens + tolerance:
                reasons.append(f"generation counter +{d_gen:.0f} but this request made {own_completion_tokens}: "
                               "another request generated meanwhile")
            elif d_gen < own_completion_tokens - tolerance:
                reasons.append(f"generation counter +{d_gen:.0f} but this request made {own_completion_tokens}: "
                               "counters did not settle or do not count this request")
        d_prompt = delta(before, after, names.prompt_tokens)
        if d_prompt is not None and own_prompt_tokens is not None and d_prompt > own_prompt_tokens + tolerance:
            reasons.append(f"prompt counter +{d_prompt:.0f} but this request's prompt is {own_prompt_tokens} "
                           "tokens: another request was prefilled meanwhile")
    return GateVerdict(keep=not reasons, reasons=tuple(reasons), notes=tuple(notes))


def acceptance_from_deltas(deltas: list[dict[str, float | None]], names: MetricNames | None,
                           rate_gauge: float | None = None) -> tuple[float | None, float | None, str]:
    """(acceptance rate, mean acceptance length, note) from the counter deltas of the kept samples.

    vLLM / llama.cpp: rate = Σaccepted / Σdraft_tokens, length = 1 + Σaccepted / Σdrafts (bonus token
    included). SGLang: length = Σgeneration / Σverify_calls; its rate is only a windowed gauge.
    Absent counters mean nothing is speculating (or the server hides it): None, never zero.
    """
    if names is None:
        return None, None, "no metrics: speculation not observable"
    if not deltas:
        return None, None, "no kept samples"

    def total(role: str) -> float | None:
        vals = [d.get(role) for d in deltas]
        return None if any(v is None for v in vals) else float(sum(v for v in vals if v is not None))

    off = "speculation off or not exposed (no acceptance counters)"
    if names.verify_calls:
        calls, gen = total("verify_calls"), total("generation_tokens")
        if not calls or gen is None:
            return None, None, off
        return rate_gauge, gen / calls, "length = Δgeneration/Δverify_calls; rate from the windowed gauge"
    accepted, drafts = total("accepted_tokens"), total("drafts")
    if accepted is None or drafts is None:
        return None, None, off
    if not drafts:
        return None, None, "acceptance counters present but no drafts were proposed: speculation idle"
    result = acceptance(accepted, total("draft_tokens"), drafts)
    return result.rate, result.mean_length, f"counter deltas over {len(deltas)} kept samples"


class MetricsReader:
    """Scrapes `<server root>/metrics` over an httpx client."""

    def __init__(self, client: httpx.Client, root_url: str) -> None:
        self.client = client
        self.url = root_url.rstrip("/") + "/metrics"

    def try_scrape(self) -> Scrape | None:
        """One scrape, or None when the server has no /metrics page."""
        import httpx

        try:
            resp = self.client.get(self.url, timeout=10.0)
        except httpx.HTTPError:
            return None
        if resp.status_code != 200 or "text/html" in resp.headers.get("content-type", ""):
            return None
        return parse_metrics(resp.text, time.perf_counter())

    def scrape(self) -> Scrape:
        scrape = self.try_scrape()
        if scrape is None:
            raise MetricsError(f"{self.url} stopped answering during the measurement")
        return scrape
