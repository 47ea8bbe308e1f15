"""Benchmark what the Anthropic Messages translation costs, beside passing the same reply through.

    python benchmarks/bench_messages_translation.py [--pairs N] [--tokens T]

A streamed reply of T text pieces and one tool call, sent as fast as a local fake endpoint can write it: once as
Messages events to a recorder that passes them through, once as chat completion chunks to a recorder that
translates them into Messages events. The two are fetched pair by pair, in alternating order, by the same client
(the Messages request Claude Code sends, shortened); printed side by side: the median wall time per exchange, its
spread, and the time to the first text event. The fake and the recorders run in this process's threads, so the
figures are an upper bound of the recorder's own cost, not a network's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentic_eval.testing import FakeEndpoint, ScriptedReply, chat_stream, messages_stream, tool_call
from agentic_eval.wire.recorder import WireRecorder

REQUEST: dict[str, Any] = {
    "model": "fake-model", "max_tokens": 4096, "stream": True, "system": "You are a coding agent.",
    "messages": [{"role": "user", "content": "Fix the port in config.json."}],
    "tools": [{"name": "Bash", "description": "Run a command.",
               "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}],
}


def one(client: httpx.Client, url: str) -> tuple[float, float]:
    """(whole exchange, first text event) in seconds."""
    t0 = time.perf_counter()
    first = 0.0
    with client.stream("POST", url + "/messages", json=REQUEST) as reply:
        for line in reply.iter_lines():
            if not first and '"text_delta"' in line:
                first = time.perf_counter() - t0
    return time.perf_counter() - t0, first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=40)
    parser.add_argument("--tokens", type=int, default=500)
    args = parser.parse_args()
    text = "word " * args.tokens
    native_reply = ScriptedReply(events=messages_stream(text, tool_uses=[("Bash", {"command": "ls"})], piece_chars=5),
                                 named_events=True)
    chat_reply = ScriptedReply(events=chat_stream(text, tool_calls=[tool_call("Bash", {"command": "ls"})],
                                                  piece_chars=5))
    native_fake = FakeEndpoint(responder=lambda req: native_reply)
    chat_fake = FakeEndpoint(responder=lambda req: chat_reply)
    times: dict[str, list[tuple[float, float]]] = {"passed through": [], "translated": []}
    with tempfile.TemporaryDirectory() as folder, native_fake, chat_fake, \
            WireRecorder(native_fake.base_url, Path(folder) / "native.jsonl") as native, \
            WireRecorder(chat_fake.base_url, Path(folder) / "translated.jsonl",
                         translate_messages=True) as translated, \
            httpx.Client(timeout=60) as client:
        for url in (native.base_url, translated.base_url):  # warm up both
            one(client, url)
        for pair in range(args.pairs):
            order = [("passed through", native.base_url), ("translated", translated.base_url)]
            for name, url in order if pair % 2 == 0 else order[::-1]:
                times[name].append(one(client, url))
    print(f"{args.pairs} exchanges each, a streamed reply of {args.tokens} text pieces and one tool call:")
    print(f"{'':16}{'median':>10}{'min-max':>20}{'first text':>14}")
    for name, pairs in times.items():
        walls = [w * 1000 for w, _ in pairs]
        firsts = [f * 1000 for _, f in pairs]
        print(f"{name:16}{statistics.median(walls):>8.1f}ms{min(walls):>10.1f}-{max(walls):<7.1f}ms"
              f"{statistics.median(firsts):>10.1f}ms")
    medians = {name: statistics.median(w for w, _ in pairs) for name, pairs in times.items()}
    added = medians["translated"] - medians["passed through"]
    print(f"translation adds {added * 1000:.1f} ms per exchange (median), "
          f"{added * 1e6 / args.tokens:.1f} us per text piece")


if __name__ == "__main__":
    main()
