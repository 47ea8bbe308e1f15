"""Benchmark the engine tool-call parsers (and the text-call classifier) on the engines' own test cases.

    python benchmarks/engine_parsers.py [--corpus DIR] [--verbose]

The corpus is tests/data/engine_parsers/*.jsonl: model outputs from vLLM's, SGLang's and llama.cpp's
public parser tests (and our own held-out cases), each with the parser it was written for, the
offered tools, and the calls that engine's test expects (none for a negative case).

1. Engine parsers, the goal figures: a positive case reads when `extract(case parser)` gives the
   expected names and arguments AND the case's parser is among `readers()` (goal >= 95 %); a negative
   is flagged when its own parser reads a call (goal <= 1). Per parser, and the time per case.
2. The classifier (`agentic_eval.classify.turn.find_text_tool_calls`) on the same corpus, as the issue
   measured it: text calls detected, the same names as the engine, the same arguments, negatives
   flagged as calls.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentic_eval.classify.parsers import PARSERS, extract, readers
from agentic_eval.classify.turn import find_text_tool_calls

GOAL_POSITIVE = 0.95
GOAL_NEGATIVES = 1


def load(directory: Path) -> list[dict[str, Any]]:
    cases = []
    for path in sorted(directory.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                cases.append({**json.loads(line), "id": f"{path.stem}:{number}"})
    return cases


def same_calls(got: list[tuple[str | None, Any]], expected: list[dict[str, Any]], *, arguments: bool) -> bool:
    if [name for name, _ in got] != [call["name"] for call in expected]:
        return False
    return not arguments or all(call["arguments"] is None or args == call["arguments"]
                                for (_, args), call in zip(got, expected, strict=True))


HELD_OUT = "agentic-eval (held out)"


def engine_parsers(cases: list[dict[str, Any]], title: str, verbose: bool) -> bool:
    """Print the engine parsers' figures on `cases`; True when the goals are met."""
    positives = [case for case in cases if case["calls"]]
    negatives = [case for case in cases if not case["calls"]]
    per_parser: dict[str, Counter[str]] = defaultdict(Counter)
    misses: list[str] = []
    started = time.perf_counter()
    read = flagged = 0
    for case in cases:
        found = extract(case["parser"], case["text"], case["tools"])
        keys = {extraction.parser for extraction in readers(case["text"], case["tools"])}
        stats = per_parser[found.parser]
        if case["calls"]:
            stats["positives"] += 1
            ok = same_calls([(c.name, c.arguments) for c in found.calls], case["calls"], arguments=True)
            ok = ok and found.parser in keys
            read += ok
            stats["read"] += ok
            if not ok:
                misses.append(f"  positive missed {case['id']} {case['parser']}: {case['source']['test']}")
        else:
            stats["negatives"] += 1
            wrong = bool(found.calls)
            flagged += wrong
            stats["flagged"] += wrong
            if wrong:
                misses.append(f"  negative flagged {case['id']} {case['parser']}: {case['source']['test']}")
    elapsed = time.perf_counter() - started

    print(f"Engine parsers ({len(PARSERS)} in the registry) on {len(cases)} {title}")
    share = read / len(positives) if positives else 0.0
    print(f"  positives read with the engine's names and arguments, parser among readers: "
          f"{read}/{len(positives)} = {share:.1%} (goal >= {GOAL_POSITIVE:.0%})")
    print(f"  negatives flagged by their own parser: {flagged}/{len(negatives)} (goal <= {GOAL_NEGATIVES})")
    print(f"  time per case (extract + all readers): {elapsed / len(cases) * 1000:.2f} ms")
    print("  per parser: positives read / total, negatives flagged / total")
    for key in sorted(per_parser, key=lambda key: (key.split(":")[0], key)):
        stats = per_parser[key]
        print(f"    {key:28} {stats['read']:3}/{stats['positives']:<3}  {stats['flagged']}/{stats['negatives']}")
    if verbose:
        print("\n".join(misses))
    return share >= GOAL_POSITIVE and flagged <= GOAL_NEGATIVES


def classifier(cases: list[dict[str, Any]]) -> None:
    positives = [case for case in cases if case["calls"]]
    negatives = [case for case in cases if not case["calls"]]
    detected = names = arguments = classifier_flagged = 0
    for case in cases:
        found = find_text_tool_calls(case["text"], {"tools": case["tools"] or []})
        if not case["calls"]:
            classifier_flagged += bool(found)
            continue
        detected += bool(found)
        got = [(call.name, call.arguments) for call in found]
        names += same_calls(got, case["calls"], arguments=False)
        arguments += same_calls(got, case["calls"], arguments=True)
    print(f"\nClassifier (find_text_tool_calls) on the same {len(positives)} positives / {len(negatives)} negatives")
    print(f"  text calls detected {detected}/{len(positives)}, same names {names}/{len(positives)}, "
          f"same arguments {arguments}/{len(positives)}; negatives flagged {classifier_flagged}/{len(negatives)}")


_MARKERS = ["[f(", "a=", "1", ")", "]", "{", "}", '"name"', ":", ",", " ", "\n", "<tool_call>", "</tool_call>",
            "<function=f>", "<parameter=a>", "```json\n", "[TOOL_CALLS]", "<|python_tag|>", "<｜tool▁calls▁begin｜>",
            "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<arg_key>", "<arg_value>", '<invoke name="f">',
            "<minimax:tool_call>", "<|tool_calls_section_begin|>", "<|tool_call_begin|>", "<|message|>",
            "to=functions.f", "<seed:tool_call>", "<start_function_call>call:f{", "x" * 20]


def degenerate(size: int = 100_000) -> None:
    """A model stuck in a loop: an output of `size` characters of markers that mostly never close."""
    generator = random.Random(38)
    pieces: list[str] = []
    while sum(map(len, pieces)) < size:
        pieces.append(generator.choice(_MARKERS))
    text = "".join(pieces)
    tools = [{"type": "function", "function": {"name": "f"}}]
    started = time.perf_counter()
    found = readers(text, tools)
    print(f"\nDegenerate output of {len(text):,} characters (unclosed markers): readers() took "
          f"{(time.perf_counter() - started) * 1000:.0f} ms, {len(found)} parsers read a call")


def main() -> int:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--corpus", type=Path, default=ROOT / "tests" / "data" / "engine_parsers")
    options.add_argument("--verbose", action="store_true", help="list every case that misses")
    args = options.parse_args()
    cases = load(args.corpus)
    engines = [case for case in cases if case["source"]["repo"] != HELD_OUT]
    held_out = [case for case in cases if case["source"]["repo"] == HELD_OUT]
    met = engine_parsers(engines, "cases from the engines' own parser tests", args.verbose)
    if held_out:
        print()
        met = engine_parsers(held_out, "held-out cases of our own", args.verbose) and met
    classifier(engines)
    degenerate()
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
