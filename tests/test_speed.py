"""The speed instrument: pure statistics, Prometheus parsing and gate logic (table-driven), then the real
measurement loop against a scripted vLLM-like server (tests/fake_vllm.py) whose true rates are known.

Timing tests use rates and durations large against scheduler noise (a request decodes for ~0.25 s)
and compare medians with a few percent of tolerance; nothing asserts on the speed of our own code.
"""

from __future__ import annotations

import json
import struct
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_vllm import FakeVllm, FakeVllmConfig

from agentic_eval.cli import main
from agentic_eval.errors import AgenticEvalError
from agentic_eval.instruments import metrics as m
from agentic_eval.instruments.servers import detect_kind
from agentic_eval.instruments.speed import (
    RequestSample,
    SpeedConfig,
    SpeedReport,
    measure_speed,
    timed_chat,
    unique_prefix,
    workload_prompt,
)
from agentic_eval.instruments.speedstats import (
    acceptance,
    check_bandwidth,
    checkpoint_bytes,
    decode_rate,
    fit_line,
    prefill_rate,
    read_safetensors_header,
    server_decode_rate,
    spread,
)

FAST_GATE = m.GatePolicy(idle_scrapes=2, scrape_interval_s=0.02, idle_timeout_s=5.0, settle_timeout_s=2.0,
                         stale_window_s=0.5)
TRUE_DECODE = 200.0
TOL = 0.05  # "within a few percent"
VLLM = m.SERVER_METRICS["vllm"]


def measure(fake: FakeVllm, **kw: Any) -> SpeedReport:
    cfg: dict[str, Any] = {"workloads": ("free_gen",), "reps": 3, "warmup": 1, "max_tokens": 48, "gate": FAST_GATE}
    cfg.update(kw)
    return measure_speed(SpeedConfig(base_url=fake.base_url, model=fake.config.model, **cfg))


def close(value: float | None, truth: float, tol: float = TOL) -> bool:
    return value is not None and abs(value / truth - 1) <= tol


def close_to_sent(value: float | None, fake: FakeVllm) -> bool:
    """The measured decode rate is within TOL of the fake's, allowing for however late the fake's sender was
    woken on a loaded machine (a rate can only be as true as what was sent)."""
    late = max(fake.state.lateness, default=0.0)
    return value is not None and -(TOL + late) <= value / TRUE_DECODE - 1 <= TOL


# --- pure: statistics ------------------------------------------------------------------------------

@pytest.mark.parametrize("values, expected", [
    ([3.0, 1.0, 2.0], (2.0, 1.0, 3.0)),
    ([1.0, None, 4.0], (2.5, 1.0, 4.0)),
    ([5.0], (5.0, 5.0, 5.0)),
])
def test_spread(values: list[float | None], expected: tuple[float, float, float]) -> None:
    s = spread(values)
    assert s is not None and (s.median, s.min, s.max) == expected


def test_spread_of_nothing_is_none() -> None:
    assert spread([]) is None and spread([None]) is None


@pytest.mark.parametrize("n, t_first, t_last, expected", [
    (101, 1.0, 2.0, 100.0),     # n - 1 tokens over the interval: the first token is prefill's
    (2, 0.0, 0.5, 2.0),
    (1, 0.0, 1.0, None),        # one token: no interval to divide by
    (10, 1.0, 1.0, None),       # a buffered stream: every token arrived at once
    (None, 0.0, 1.0, None),     # no usage: never fall back to chunk counts
])
def test_decode_rate(n: int | None, t_first: float, t_last: float, expected: float | None) -> None:
    assert decode_rate(n, t_first, t_last) == expected


def test_server_decode_rate_removes_the_first_token_bias() -> None:
    assert server_decode_rate(101, 2_000_000_000) == pytest.approx(50.0)  # not 50.5
    assert server_decode_rate(1, 10) is None and server_decode_rate(10, 0) is None


def test_fit_line_exact_and_noisy() -> None:
    exact = fit_line([1, 2, 3, 4], [3, 5, 7, 9])
    assert exact is not None and exact.slope == pytest.approx(2) and exact.intercept == pytest.approx(1)
    assert exact.r2 == pytest.approx(1.0)
    noisy = fit_line([1, 2, 3, 4], [1, 3, 2, 4])
    assert noisy is not None and 0 < noisy.r2 < 1
    assert fit_line([1, 1], [2, 3]) is None and fit_line([1], [1]) is None


def test_prefill_rate_from_the_slope() -> None:
    tokens = [2000, 4000, 8000, 16000, 32000]
    wall = [0.4 + t / 3283 for t in tokens]  # the seed's re-measured figure, fixed output time 0.4 s
    rate, r2 = prefill_rate(tokens, wall) or (0, 0)
    assert rate == pytest.approx(3283) and r2 == pytest.approx(1.0)
    assert prefill_rate([1000, 2000], [1.0, 0.5]) is None  # a negative slope is no prefill rate


@pytest.mark.parametrize("accepted, draft_tokens, drafts, rate, length", [
    (44, 57, 19, 44 / 57, 1 + 44 / 19),
    (0, 30, 10, 0.0, 1.0),
    (None, None, None, None, None),
    (5, 0, 0, None, None),
])
def test_acceptance(accepted: float | None, draft_tokens: float | None, drafts: float | None,
                    rate: float | None, length: float | None) -> None:
    a = acceptance(accepted, draft_tokens, drafts)
    assert a.rate == (pytest.approx(rate) if rate is not None else None)
    assert a.mean_length == (pytest.approx(length) if length is not None else None)


@pytest.mark.parametrize("tok_s, gb, status", [
    (4.8, 42.0, "ok"),           # dense 70B: ~202 GB/s of 273
    (27.2, 6.83, "ok"),          # 122B MoE with the right bytes per token: 186 GB/s
    (36.2, 6.83, "high"),        # MTP-2 on: 247 GB/s, 90 % of the datasheet
    (27.3, 81.0, "impossible"),  # the MoE with resident bytes as the input: 2,211 GB/s
])
def test_bandwidth_law_on_the_seed_figures(tok_s: float, gb: float, status: str) -> None:
    check = check_bandwidth(tok_s, gb, 273.0)
    assert check.status == status
    assert check.implied_gb_s == pytest.approx(tok_s * gb)


def test_impossible_figure_names_speculation_when_it_is_on() -> None:
    check = check_bandwidth(150.0, 2.85, 273.0, mean_acceptance_length=4.0)
    assert check.status == "impossible" and "speculation" in check.message and "4.00 tokens" in check.message


# --- pure: safetensors header sum ------------------------------------------------------------------

def write_safetensors(path: Path, tensors: dict[str, int]) -> None:
    """A real safetensors file: {name: byte size} as U8 tensors, zero-filled."""
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, size in tensors.items():
        header[name] = {"dtype": "U8", "shape": [size], "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(offset))


def tiny_moe(folder: Path, tied: bool = False, config: dict[str, Any] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    shard1 = {"model.embed_tokens.weight": 1000, "model.layers.0.self_attn.q_proj.weight": 400,
              "model.layers.0.mlp.gate.weight": 8, "model.layers.0.mlp.shared_expert.up_proj.weight": 200}
    shard2 = {f"model.layers.0.mlp.experts.{i}.down_proj.weight": 100 for i in range(8)}
    shard2.update({"mtp.layers.0.mlp.experts.0.down_proj.weight": 50, "model.visual.blocks.0.attn.weight": 300})
    if not tied:
        shard2["lm_head.weight"] = 1000
    write_safetensors(folder / "model-00001-of-00002.safetensors", shard1)
    write_safetensors(folder / "model-00002-of-00002.safetensors", shard2)
    cfg = config if config is not None else {"text_config": {"num_experts": 8, "num_experts_per_tok": 2}}
    (folder / "config.json").write_text(json.dumps(cfg))
    return folder


def test_checkpoint_bytes_sums_always_on_plus_active_expert_share(tmp_path: Path) -> None:
    cb = checkpoint_bytes(tiny_moe(tmp_path / "ckpt"))
    assert cb.total == 1000 + 400 + 8 + 200 + 800 + 50 + 300 + 1000
    assert cb.routed_experts == 800 and (cb.num_experts, cb.experts_per_tok) == (8, 2)
    # lm_head + attention + router + shared expert, plus 2/8 of the routed experts
    assert cb.per_token == 1000 + 400 + 8 + 200 + 800 * 2 / 8
    assert cb.excluded == {"embedding": 1000, "mtp": 50, "vision": 300}


def test_checkpoint_tied_embeddings_count_as_the_output_head(tmp_path: Path) -> None:
    cb = checkpoint_bytes(tiny_moe(tmp_path / "ckpt", tied=True))
    assert cb.per_token == 1000 + 400 + 8 + 200 + 200 and "embedding" not in cb.excluded


def test_checkpoint_errors_say_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(AgenticEvalError, match="num_experts"):
        checkpoint_bytes(tiny_moe(tmp_path / "noconf", config={}))
    with pytest.raises(AgenticEvalError, match="no .safetensors"):
        checkpoint_bytes(tmp_path)
    (tmp_path / "bad.safetensors").write_bytes(b"\x05\x00")
    with pytest.raises(AgenticEvalError, match="too short"):
        read_safetensors_header(tmp_path / "bad.safetensors")


# --- pure: Prometheus parsing and the gate ---------------------------------------------------------

VLLM_TEXT = """# HELP vllm:num_requests_running Running.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="m",engine="0"} 0.0
vllm:num_requests_running{model_name="m",engine="1"} 1.0
# TYPE vllm:spec_decode_num_accepted_tokens counter
vllm:spec_decode_num_accepted_tokens_total{model_name="m",engine="0"} 40.0
vllm:spec_decode_num_accepted_tokens_total{model_name="m",engine="1"} 4.0
vllm:spec_decode_num_accepted_tokens_created{model_name="m",engine="0"} 1.7e9
# TYPE vllm:spec_decode_num_accepted_tokens_per_pos counter
vllm:spec_decode_num_accepted_tokens_per_pos_total{model_name="m",engine="0",position="0"} 19.0
# TYPE vllm:cache_config_info gauge
vllm:cache_config_info{block_size="16",enable_prefix_caching="True"} 1.0
"""


def test_parse_sums_engines_and_matches_exact_names() -> None:
    scrape = m.parse_metrics(VLLM_TEXT)
    assert scrape.get("vllm:num_requests_running") == 1.0
    assert scrape.get("vllm:spec_decode_num_accepted_tokens_total") == 44.0  # not per_pos, not _created
    assert scrape.get("vllm:spec_decode_num_accepted_tokens_per_pos_total") == 19.0
    assert scrape.get("vllm:num_requests_waiting") is None  # absent: unsupported, never 0
    assert scrape.info["vllm:cache_config_info"]["enable_prefix_caching"] == "True"


def test_parse_counter_declared_without_total() -> None:
    text = "# TYPE llamacpp:spec_decode_num_drafts counter\nllamacpp:spec_decode_num_drafts 7\n"
    assert m.parse_metrics(text).get("llamacpp:spec_decode_num_drafts") == 7.0


def test_malformed_metrics_raise_one_clear_error() -> None:
    with pytest.raises(m.MetricsError, match="not valid Prometheus"):
        m.parse_metrics("vllm:num_requests_running{model_name=\"m\" 1\n")


@pytest.mark.parametrize("sample, kind", [
    ("vllm:num_requests_running 0", "vllm"),
    ("sglang:num_running_reqs 0", "sglang"),
    ("llamacpp:requests_processing 0", "llamacpp"),
    ("process_cpu_seconds_total 3", "unknown"),
])
def test_detect_kind_from_metric_names(sample: str, kind: str) -> None:
    assert detect_kind(m.parse_metrics(sample + "\n")) == kind


def scrape(running: float = 0, waiting: float = 0, gen: float | None = 0, prompt: float | None = 0,
           t: float = 0.0) -> m.Scrape:
    values = {VLLM.running: running, VLLM.waiting: waiting}
    if gen is not None:
        values[VLLM.generation_tokens] = gen
    if prompt is not None:
        values[VLLM.prompt_tokens] = prompt
    return m.Scrape(values=values, t=t)


@pytest.mark.parametrize("before, after, own_prompt, own_gen, keep, reason", [
    (scrape(gen=100, prompt=50), scrape(gen=164, prompt=550), 500, 64, True, ""),
    (scrape(gen=100, prompt=50), scrape(gen=165, prompt=550), 500, 64, True, ""),  # within one token
    (scrape(gen=100, prompt=50), scrape(gen=200, prompt=550), 500, 64, False, "another request generated"),
    (scrape(gen=100, prompt=50), scrape(gen=120, prompt=550), 500, 64, False, "did not settle"),
    (scrape(gen=100, prompt=50), scrape(gen=164, prompt=700), 500, 64, False, "another request was prefilled"),
    (None, scrape(gen=164), 500, 64, False, "busy before"),
    (scrape(gen=100), None, 500, 64, False, "busy after"),
    (scrape(gen=None, prompt=None), scrape(gen=None, prompt=None), 500, 64, True, ""),  # unsupported: note
])
def test_judge_sample(before: m.Scrape | None, after: m.Scrape | None, own_prompt: int, own_gen: int,
                      keep: bool, reason: str) -> None:
    verdict = m.judge_sample(before, after, VLLM, own_prompt, own_gen, tolerance=1)
    assert verdict.keep is keep
    assert reason in " ".join(verdict.reasons)
    if before is not None and before.get(VLLM.generation_tokens) is None:
        assert "unsupported" in " ".join(verdict.notes)


class ScriptedScrapes:
    """wait_idle's collaborators: a scripted sequence of scrapes and a fake clock."""

    def __init__(self, scrapes: list[m.Scrape], step_s: float = 0.1) -> None:
        self.scrapes, self.i, self.now, self.step_s = scrapes, 0, 0.0, step_s

    def scrape(self) -> m.Scrape:
        s = self.scrapes[min(self.i, len(self.scrapes) - 1)]
        self.i += 1
        return m.Scrape(values=dict(s.values))

    def clock(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.now += self.step_s


def wait(script: ScriptedScrapes, timeout_s: float = 10.0, **policy: Any) -> m.IdleWait:
    pol = m.GatePolicy(idle_scrapes=2, stale_window_s=1.0, **policy)
    return m.wait_idle(script.scrape, VLLM, pol, timeout_s, clock=script.clock, sleep=script.sleep)


def test_wait_idle_needs_consecutive_idle_scrapes() -> None:
    script = ScriptedScrapes([scrape(running=1, gen=1), scrape(gen=2), scrape(running=1, gen=3), scrape(gen=4),
                              scrape(gen=4)])
    result = wait(script)
    assert result.scrape is not None and script.i == 5 and not result.stale_gauges


def test_wait_idle_gives_up_on_a_busy_server() -> None:
    busy = [scrape(running=1, gen=g) for g in range(200)]  # tokens flowing: a real neighbour
    result = wait(ScriptedScrapes(busy), timeout_s=2.0)
    assert result.scrape is None and "running=1" in result.last_busy


def test_wait_idle_reads_a_stuck_gauge_with_frozen_counters_as_stale() -> None:
    result = wait(ScriptedScrapes([scrape(running=1, gen=50, prompt=9)]), timeout_s=5.0)
    assert result.scrape is not None and result.stale_gauges and result.waited_s >= 1.0


def test_acceptance_from_deltas() -> None:
    d = {"accepted_tokens": 22.0, "draft_tokens": 30.0, "drafts": 10.0, "generation_tokens": 33.0}
    rate, length, _ = m.acceptance_from_deltas([d, d], VLLM)
    assert rate == pytest.approx(44 / 60) and length == pytest.approx(1 + 44 / 20)
    rate, length, note = m.acceptance_from_deltas([{"accepted_tokens": None, "drafts": None}], VLLM)
    assert (rate, length) == (None, None) and "speculation off or not exposed" in note
    sgl = m.SERVER_METRICS["sglang"]
    rate, length, _ = m.acceptance_from_deltas([{"verify_calls": 10.0, "generation_tokens": 35.0}], sgl, 0.8)
    assert (rate, length) == (0.8, 3.5)


# --- the loop against the scripted server ----------------------------------------------------------

def test_decode_and_ttft_without_speculation() -> None:
    with FakeVllm(FakeVllmConfig(decode_tok_s=TRUE_DECODE)) as fake:
        report = measure(fake, workloads=("code_edit",))
    w = report.workloads["code_edit"]
    assert (w.kept, w.discarded) == (3, 0)
    assert w.decode is not None and close_to_sent(w.decode.median, fake), w.decode
    # TTFT runs to the first chunk with content: the role-only chunk sent at once does not count
    prompt = w.samples[0].prompt_tokens or 0
    assert w.ttft is not None and w.ttft.median >= 0.8 * prompt / FakeVllmConfig().prefill_tok_s
    assert w.acceptance_rate is None and "speculation off or not exposed" in w.acceptance_note
    assert report.server_kind == "vllm" and report.server["gate"] == "metrics"


def test_decode_with_speculation_counts_tokens_not_chunks() -> None:
    cfg = FakeVllmConfig(decode_tok_s=TRUE_DECODE, spec_k=3)
    with FakeVllm(cfg) as fake:
        report = measure(fake, max_tokens=64)
        sizes = fake.token_schedule(64)
    w = report.workloads["free_gen"]
    assert w.decode is not None and close_to_sent(w.decode.median, fake), w.decode
    steps = len(sizes) - 1
    accepted = sum(sizes[1:]) - steps
    assert w.acceptance_rate == pytest.approx(accepted / (steps * cfg.spec_k))
    assert w.mean_acceptance_length == pytest.approx(1 + accepted / steps)
    assert w.mean_acceptance_length > 3  # chunk counting would have under-reported decode ~3x


def test_neighbour_samples_are_discarded_and_counted() -> None:
    # chat request 0 is the warm-up; a neighbour joins measured attempts 2 and 4
    with FakeVllm(FakeVllmConfig(decode_tok_s=TRUE_DECODE, neighbour_on=frozenset({2, 4}))) as fake:
        report = measure(fake)
    w = report.workloads["free_gen"]
    assert (w.kept, w.discarded) == (3, 2)
    assert w.decode is not None and close_to_sent(w.decode.median, fake), w.decode
    dropped = [s for s in w.samples if not s.kept]
    assert all("another request" in " ".join(s.reasons) for s in dropped)
    # the contaminated figures looked plausible but were slow: the gate is what kept them out
    assert all(s.decode_tok_s is not None and s.decode_tok_s < 0.9 * TRUE_DECODE for s in dropped)


def test_gate_waits_for_a_running_neighbour_to_finish() -> None:
    with FakeVllm(FakeVllmConfig(decode_tok_s=TRUE_DECODE)) as fake:
        fake.start_neighbour(0.5)
        time.sleep(0.05)  # let it register as running
        report = measure(fake, warmup=0, reps=2)
        events = list(fake.state.events)
    w = report.workloads["free_gen"]
    assert (w.kept, w.discarded) == (2, 0)
    neighbour_end = next(t for what, t in events if what == "neighbour_end")
    first_request = next(t for what, t in events if what.startswith("request_start"))
    assert first_request > neighbour_end
    assert w.decode is not None and close_to_sent(w.decode.median, fake)


def test_stale_gauge_with_frozen_counters_does_not_block() -> None:
    with FakeVllm(FakeVllmConfig(stuck_running=1)) as fake:
        report = measure(fake, warmup=0, reps=1)
    assert report.workloads["free_gen"].kept == 1
    assert any("stale" in w for w in report.warnings)


def test_reused_prompts_would_hit_the_cache_and_this_harness_does_not() -> None:
    with FakeVllm(FakeVllmConfig()) as fake:
        cfg = SpeedConfig(base_url=fake.base_url, model=fake.config.model, long_ctx_tokens=1500,
                          workloads=("long_ctx",), reps=2, warmup=1, max_tokens=16, gate=FAST_GATE)
        body = unique_prefix() + workload_prompt("long_ctx", cfg)
        naive = [RequestSample(workload="long_ctx", prefix="same") for _ in range(2)]
        with httpx.Client() as client:
            for sample in naive:  # what a harness that repeats one prompt would measure
                timed_chat(client, cfg, body, 16, sample)
        assert (naive[1].cached_tokens or 0) >= 0.9 * (naive[1].prompt_tokens or 1)
        assert (naive[1].ttft_s or 0) < 0.5 * (naive[0].ttft_s or 0)
        hits_before = fake.state.cache_hits
        report = measure_speed(cfg)
        assert fake.state.cache_hits == hits_before  # warm-up included: nothing shared a prefix
    w = report.workloads["long_ctx"]
    assert w.kept == 2 and all(s.cached_tokens == 0 and s.deltas["cache_hits"] == 0 for s in w.samples)
    assert not any("prefix cache" in x for x in report.warnings)


def test_a_refused_request_is_recorded_and_the_run_goes_on() -> None:
    with FakeVllm(FakeVllmConfig(max_prompt_tokens=2000)) as fake:
        report = measure(fake, workloads=("long_ctx", "free_gen"), long_ctx_tokens=3000, reps=2, warmup=1)
    long_ctx, free_gen = report.workloads["long_ctx"], report.workloads["free_gen"]
    assert (long_ctx.kept, long_ctx.discarded) == (0, 2)  # two refusals in a row end the retries
    assert all("HTTP 400" in s.reasons[0] and "context length" in s.reasons[0] for s in long_ctx.samples)
    assert long_ctx.decode is None and free_gen.kept == 2
    assert any("long_ctx: only 0 of 2" in w for w in report.warnings)


def test_prefill_sweep_slope() -> None:
    # prompts of ~0.05 to ~0.75 s of prefill: a scheduler hiccup of tens of ms stays small against the range
    with FakeVllm(FakeVllmConfig(prefill_tok_s=10_000)) as fake:
        report = measure(fake, workloads=(), prefill_sweep=True, sweep_tokens=(250, 1000, 2000, 4000),
                         sweep_output_tokens=8)
    assert report.prefill is not None
    rate, r2 = report.prefill
    # a slope fitted to four prompts: one late wake-up on a loaded machine tilts it more than one rate (+8.8 % seen
    # at load ~15), so it is held to 15 %, still far from a wrong unit or a per-request rate
    assert close(rate, 10_000, tol=0.15), rate
    assert r2 > 0.95  # a straight line; a loaded machine's sleeps add scatter (0.989 seen under load ~10)
    assert {p.completion_tokens for p in report.prefill_points} == {8}


def test_no_metrics_page_means_ungated_and_unsupported_not_zero() -> None:
    with FakeVllm(FakeVllmConfig(metrics=False)) as fake:
        report = measure(fake, reps=2, warmup=0)
    out = report.to_json()
    assert out["server"]["gate"] == "none" and out["server"]["kind"] == "unknown"
    assert any("NOT contention-gated" in w for w in report.warnings)
    wl = out["workloads"]["free_gen"]
    assert wl["acceptance_rate"] is None and wl["mean_acceptance_length"] is None and wl["kept"] == 2


def test_absent_metrics_are_reported_unsupported() -> None:
    omit = frozenset({"vllm:num_requests_waiting", "vllm:prefix_cache_hits"})
    with FakeVllm(FakeVllmConfig(omit=omit)) as fake:
        report = measure(fake, reps=1, warmup=0)
    unsupported = report.server["unsupported"]
    assert "vllm:num_requests_waiting" in unsupported and "vllm:prefix_cache_hits_total" in unsupported
    assert "vllm:spec_decode_num_accepted_tokens_total" in unsupported
    assert report.server["gate"] == "metrics"  # running alone still gates
    sample = report.workloads["free_gen"].samples[0]
    assert sample.deltas["cache_hits"] is None  # not 0
    assert any("vllm:num_requests_waiting" in w for w in report.warnings)


def test_ollama_native_api_and_client_side_gate() -> None:
    with FakeVllm(FakeVllmConfig(ollama=True, ollama_load_s=0.8, decode_tok_s=TRUE_DECODE)) as fake:
        report = measure(fake, warmup=0, reps=2)
    assert report.server_kind == "ollama" and report.server["gate"] == "client-side"
    w = report.workloads["free_gen"]
    assert (w.kept, w.discarded) == (2, 1)
    assert "cold" in " ".join(w.samples[0].reasons) and (w.samples[0].load_s or 0) >= 0.8
    assert all(s.server_decode_tok_s and s.server_prefill_tok_s and s.load_s == 0 for s in w.samples[1:])
    assert w.decode is not None and close_to_sent(w.decode.median, fake)


# --- the command -----------------------------------------------------------------------------------

def test_cli_json_shape_saved_run_and_bandwidth_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeVllm(FakeVllmConfig(spec_k=2, spec_accept_cycle=(2, 1))) as fake:
        args = ["speed", "--model", fake.config.model, "--base-url", fake.base_url, "--workload", "free_gen",
                "--reps", "2", "--warmup", "0", "--max-tokens", "16", "--bytes-per-token", "2",
                "--bandwidth", "100", "--run-dir", str(tmp_path)]
        assert main([*args, "--json"]) == 0
        captured = capsys.readouterr()
        assert main(args) == 0
        table = capsys.readouterr().out
    out = json.loads(captured.out)
    assert set(out) == {"server", "model", "workloads", "prefill"}
    wl = out["workloads"]["free_gen"]
    assert set(wl) == {"decode_tok_s", "ttft_s", "kept", "discarded", "acceptance_rate", "mean_acceptance_length"}
    assert set(wl["decode_tok_s"]) == {"median", "min", "max"} and wl["kept"] == 2
    assert wl["acceptance_rate"] == pytest.approx(0.75) and out["prefill"] is None
    assert "impossible" in captured.err
    assert "free_gen" in table and "impossible" in table and "saved:" in table
    runs = sorted(p for p in tmp_path.iterdir() if (p / "instrument.json").is_file())
    meta = json.loads((runs[0] / "instrument.json").read_text())
    assert meta["kind"] == "speed" and meta["headline"]["unit"] == "tok/s"
    assert meta["headline_text"].startswith("free_gen ")


def test_cli_checkpoint_and_bad_workload(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["speed", "--model", "x", "--base-url", "http://127.0.0.1:9/v1", "--workload", "poetry"]) == 2
    assert "choose from code_edit" in capsys.readouterr().err
    ckpt = tiny_moe(tmp_path / "ckpt")
    with FakeVllm(FakeVllmConfig()) as fake:
        code = main(["speed", "--model", fake.config.model, "--base-url", fake.base_url, "--workload", "free_gen",
                     "--reps", "1", "--warmup", "0", "--max-tokens", "8", "--checkpoint", str(ckpt),
                     "--bandwidth", "1000", "--run-dir", str(tmp_path / "runs")])
    assert code == 0
    assert "ckpt: " in capsys.readouterr().out


@pytest.mark.parametrize(("reply", "message"), [
    ("buffered", "the stream looks buffered"),
    ("not_a_stream", "the server ignored stream: true"),
])
def test_a_stream_that_cannot_be_timed_is_a_failed_sample(reply: str, message: str) -> None:
    import httpx

    from agentic_eval.instruments.speed import RequestSample, SpeedConfig, SpeedError, timed_chat
    from agentic_eval.testing import FakeEndpoint, ScriptedReply, chat_body, chat_stream, sse_bytes

    usage = {"prompt_tokens": 10, "completion_tokens": 40, "total_tokens": 50}
    whole_stream = b"".join(sse_bytes(e) for e in chat_stream("x" * 160, piece_chars=4, usage=usage))
    scripted = (ScriptedReply(body=whole_stream, headers={"Content-Type": "text/event-stream"})  # one write
                if reply == "buffered" else ScriptedReply(body=chat_body("hello", usage=usage)))
    with FakeEndpoint([scripted]) as fake, httpx.Client() as client:
        with pytest.raises(SpeedError, match=message):
            timed_chat(client, SpeedConfig(base_url=fake.base_url, model="fake-model"), "hi", 40,
                        RequestSample(workload="free_gen", prefix="p", warmup=False))
