"""Benchmark the wire recorder's added wall time and the turn classifier's throughput.

    python benchmarks/bench_wire.py [--pairs N]

1. Recorder overhead, the goal figure: a streamed 500-token chat reply from a local fake endpoint
   that sends one token per millisecond (1,000 tokens/s, faster than any single stream a local
   server decodes, so the ratio is an upper bound), fetched directly and through the recorder,
   interleaved pair by pair (the order alternates), reported as the median of the per-pair added
   time and its spread. The fake, the recorder and this client each run in their own process, as
   endpoint, runner and agent CLI do.
2. The same reply sent as fast as the fake can write it: the recorder's raw cost per event.
3. Classifier throughput over a mixed set of exchanges (the real-world-shaped examples in
   tests/data plus long prose, code and streamed-call bodies).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentic_eval.classify.turn import classify_turn
from agentic_eval.testing import FakeEndpoint, ScriptedReply, chat_stream
from agentic_eval.wire.recorder import WireRecorder

TOKENS = 500
GOAL_PERCENT = 2.0


def _serve_fake(conn: Connection, replies: int, delay_s: float) -> None:
    reply = ScriptedReply(events=chat_stream("tok " * TOKENS, piece_chars=4), pace_s=delay_s or None)
    with FakeEndpoint([reply] * replies) as fake:
        conn.send(fake.base_url)
        conn.recv()


def _serve_recorder(conn: Connection, upstream: str, log_path: str) -> None:
    with WireRecorder(upstream, log_path) as recorder:
        conn.send(recorder.base_url)
        conn.recv()


def _start(target: Any, *args: Any) -> tuple[Any, Connection, str]:
    ours, theirs = multiprocessing.Pipe()
    process = multiprocessing.get_context("spawn").Process(target=target, args=(theirs, *args), daemon=True)
    process.start()
    if not ours.poll(30):
        raise SystemExit(f"{target.__name__} did not start within 30 s")
    return process, ours, ours.recv()


def _fetch(client: httpx.Client, base_url: str) -> float:
    started = time.perf_counter()
    with client.stream("POST", base_url + "/chat/completions", json={"stream": True}) as response:
        for _ in response.iter_raw():
            pass
    return time.perf_counter() - started


def measure_overhead(pairs: int, delay_s: float, log_dir: str) -> tuple[list[float], list[float]]:
    """(direct, proxied) wall times of `pairs` interleaved fetches."""
    fake, fake_conn, fake_url = _start(_serve_fake, 2 * pairs + 2, delay_s)
    proxy, proxy_conn, proxy_url = _start(_serve_recorder, fake_url, f"{log_dir}/wire-{delay_s}.jsonl")
    direct: list[float] = []
    proxied: list[float] = []
    try:
        with httpx.Client(timeout=60) as client:
            _fetch(client, fake_url), _fetch(client, proxy_url)  # warm both connections
            for pair in range(pairs):
                order = [(fake_url, direct), (proxy_url, proxied)]
                for url, times in order if pair % 2 == 0 else order[::-1]:
                    times.append(_fetch(client, url))
    finally:
        for conn, process in ((proxy_conn, proxy), (fake_conn, fake)):
            conn.send("stop")
            process.join(15)
    return direct, proxied


def _quartiles(values: list[float]) -> tuple[float, float]:
    q = statistics.quantiles(values, n=4)
    return q[0], q[2]


def report_overhead(pairs: int, log_dir: str) -> None:
    direct, proxied = measure_overhead(pairs, 0.001, log_dir)
    added = [p - d for d, p in zip(direct, proxied, strict=True)]
    ratios = [100 * (p / d - 1) for d, p in zip(direct, proxied, strict=True)]
    low, high = _quartiles(ratios)
    median_ratio = statistics.median(ratios)
    verdict = "meets" if median_ratio <= GOAL_PERCENT else "MISSES"
    print(f"1. streamed {TOKENS}-token reply at 1 token/ms, {pairs} interleaved pairs")
    print(f"   direct   median {1000 * statistics.median(direct):7.1f} ms")
    print(f"   recorded median {1000 * statistics.median(proxied):7.1f} ms")
    print(f"   added    median {1000 * statistics.median(added):+7.1f} ms per reply")
    print(f"   ratio    median {median_ratio:+.2f} %  (quartiles {low:+.2f} % .. {high:+.2f} %, "
          f"min {min(ratios):+.2f} %, max {max(ratios):+.2f} %)   goal: at most +{GOAL_PERCENT:.0f} %  -> {verdict}")

    direct, proxied = measure_overhead(3 * pairs, 0.0, log_dir)
    added_us = [1e6 * (p - d) / TOKENS for d, p in zip(direct, proxied, strict=True)]
    print(f"2. the same reply unpaced (as fast as the fake writes), {3 * pairs} pairs")
    print(f"   direct {1000 * statistics.median(direct):.1f} ms, recorded {1000 * statistics.median(proxied):.1f} ms: "
          f"{statistics.median(added_us):.0f} us added per event (context, not the goal figure)")


def _mixed_exchanges() -> list[tuple[dict[str, Any] | None, dict[str, Any]]]:
    examples = [json.loads(line) for line in (ROOT / "tests/data/wire_examples.jsonl").read_text().splitlines() if line]
    request = examples[0]["request"]

    def chat(content: str) -> dict[str, Any]:
        return {"choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                             "finish_reason": "stop"}]}

    prose = ("The failing test expects the rate limiter to read its token from settings. I changed `load()` so "
             "it falls back to the environment, and added a test. " * 40)
    code = ("Here is the fix:\n```python\ndef load(path):\n    with open(path) as f:\n"
            "        return json.load(f)\n```\n" * 20)
    extra = [(request, chat(prose)), (request, chat(code)), (request, chat(prose + examples[0]["response"]["choices"][0]
                                                                          ["message"]["content"]))]
    return [(e["request"], e["response"]) for e in examples] + extra


def report_classifier(seconds: float = 3.0) -> None:
    exchanges = _mixed_exchanges()
    done, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        for request, response in exchanges:
            classify_turn(request, response)
        done += len(exchanges)
    elapsed = time.perf_counter() - started
    sizes = [len(json.dumps(response)) for _, response in exchanges]
    print(f"3. classifier: {done / elapsed:,.0f} exchanges/s over a mix of {len(exchanges)} exchanges "
          f"(response bodies {min(sizes):,}-{max(sizes):,} bytes)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=15, help="interleaved pairs for the goal figure (default 15)")
    args = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as log_dir:
        report_overhead(args.pairs, log_dir)
    report_classifier()
    print(f"(benchmark took {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
