"""Benchmark the instruments' shared stream reader (exchange.sse_chunks, on the wire's SSEDecoder)
against the hand-rolled `data:` line loop that speed and think-check had before.

    python benchmarks/bench_instrument_streams.py [--events N] [--pairs K]

1. Reader throughput: N chat chunks held in memory, read by each reader (events per second).
2. Timing agreement, what the speed instrument reports: a 400-token streamed reply from a local fake
   endpoint paced at 500 tokens/s, read by each reader in interleaved pairs; the median TTFT and
   decode rate of each, and the median per-pair difference.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentic_eval.instruments.exchange import sse_chunks
from agentic_eval.testing import FakeEndpoint, ScriptedReply, chat_stream, sse_bytes


def old_chunks(resp: Any) -> Any:
    """The loop speed.py had: each `data:` line parsed as it is read."""
    for line in resp.iter_lines():
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            yield time.perf_counter(), None
            continue
        now = time.perf_counter()
        yield now, json.loads(data)


def new_chunks(resp: Any) -> Any:
    return sse_chunks(resp, time.perf_counter)


def read(reader: Any, resp: Any) -> tuple[float | None, float | None, int]:
    """(first token time, last token time, events) as speed's timed_chat takes them."""
    first = last = None
    n = 0
    for now, chunk in reader(resp):
        if chunk is None:  # [DONE]: read on to the end, so the connection goes back to the pool
            continue
        n += 1
        if any((c.get("delta") or {}).get("content") for c in chunk.get("choices") or ()):
            first = first if first is not None else now
            last = now
    return first, last, n


def throughput(events: int) -> None:
    stream = chat_stream("x" * (4 * events), piece_chars=4)
    blob = b"".join(sse_bytes(e) for e in stream)
    pieces = [blob[i : i + 1500] for i in range(0, len(blob), 1500)]  # about one TCP segment each
    for name, reader in (("hand-rolled lines", old_chunks), ("sse_chunks (SSEDecoder)", new_chunks)):
        best = min(_timed(reader, pieces) for _ in range(3))
        print(f"  {name:26s} {len(stream) / best:12,.0f} events/s  ({best * 1000:.1f} ms for {len(stream):,})")


def _timed(reader: Any, pieces: list[bytes]) -> float:
    resp = httpx.Response(200, content=iter(pieces))
    start = time.perf_counter()
    read(reader, resp)
    return time.perf_counter() - start


def agreement(pairs: int, tokens: int = 400, rate: float = 500.0) -> None:
    usage = {"prompt_tokens": 10, "completion_tokens": tokens, "total_tokens": tokens + 10}
    reply = ScriptedReply(events=chat_stream("abcd" * tokens, piece_chars=4, usage=usage), pace_s=1 / rate,
                          headers={"Content-Type": "text/event-stream"})
    figures: dict[str, list[tuple[float, float]]] = {"old": [], "new": []}
    with FakeEndpoint([reply] * (2 * pairs)) as fake, httpx.Client(timeout=60) as client:
        for k in range(pairs):
            order = [("old", old_chunks), ("new", new_chunks)]
            for name, reader in order if k % 2 == 0 else order[::-1]:
                t0 = time.perf_counter()
                with client.stream("POST", f"{fake.base_url}/chat/completions", json={"stream": True}) as resp:
                    first, last, _ = read(reader, resp)
                assert first is not None and last is not None
                figures[name].append((first - t0, (tokens - 1) / (last - first)))
    for name in ("old", "new"):
        ttft = statistics.median(t for t, _ in figures[name])
        rate_ = statistics.median(r for _, r in figures[name])
        print(f"  {name}: TTFT median {ttft * 1000:7.2f} ms, decode median {rate_:7.1f} tok/s")
    d_ttft = statistics.median(n[0] - o[0] for o, n in zip(figures["old"], figures["new"]))
    d_rate = statistics.median(n[1] - o[1] for o, n in zip(figures["old"], figures["new"]))
    print(f"  median per-pair difference (new - old): TTFT {d_ttft * 1000:+.2f} ms, decode {d_rate:+.2f} tok/s "
          f"(paced at {rate:.0f} tok/s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--pairs", type=int, default=10)
    args = parser.parse_args()
    print(f"1. reader throughput ({args.events:,} content chunks in memory)")
    throughput(args.events)
    print(f"2. timing agreement ({args.pairs} interleaved pairs against the fake endpoint)")
    agreement(args.pairs)


if __name__ == "__main__":
    main()
