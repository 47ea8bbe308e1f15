"""Benchmark: the parallel-call matching and the BFCL suite's offline work (no endpoint).

Prints the time `check_calls` takes to match N correct parallel calls given in reverse order
(issue 21: a maximum matching, no permutations, so 64 calls cost milliseconds where 64! orders
never end), then, when bfcl-eval is installed, the time to load and convert every supported
BFCL category and to judge each case's correct answer with both checkers.

    python benchmarks/bench_bfcl.py
"""

from __future__ import annotations

import time

from agentic_eval.instruments.toolcheck import check_calls

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
          "required": ["city", "days"]}


def bench_matching() -> None:
    for n in (2, 6, 8, 16, 32, 64):
        expected = [{"name": "f", "args": {"city": {"values": [f"c{i}"]}, "days": {"values": [i]}}} for i in range(n)]
        calls = [("f", {"city": f"c{i}", "days": i}) for i in range(n)][::-1]
        start = time.perf_counter()
        verdict = check_calls(calls, expected, {"f": SCHEMA})
        elapsed = time.perf_counter() - start
        print(f"matching {n:3d} parallel calls (reversed): {1000 * elapsed:8.1f} ms  passed={verdict.passed}")


def bench_bfcl() -> None:
    try:
        from agentic_eval.instruments import bfcl

        bfcl.package_dir()
    except Exception as exc:  # noqa: BLE001 - the benchmark reports and goes on
        print(f"BFCL part skipped: {exc}")
        return
    start = time.perf_counter()
    categories = list(bfcl.CATEGORIES)
    cases = bfcl.load_cases(categories)
    loaded = time.perf_counter() - start
    print(f"load + convert {len(cases)} BFCL cases ({len(categories)} categories): {loaded:.2f} s")
    checker = bfcl.bfcl_checker()
    sources = {e["id"]: (e, a) for c in categories for e, a in bfcl.load_entries(c)}
    judged, agree = 0, 0
    start = time.perf_counter()
    for case in cases:
        expected = case.steps[0].expected
        if not expected:
            continue
        calls = [(e["name"], e["witness"]) for e in expected]
        schemas = {t["function"]["name"]: t["function"]["parameters"] for t in case.tools}
        ours = check_calls(calls, expected, schemas).passed
        entry, answer = sources[case.id]
        theirs, _ = bfcl.bfcl_verdict(checker, entry, answer, case.phase, calls)
        judged += 1
        agree += ours == theirs
    elapsed = time.perf_counter() - start
    print(f"both checkers on {judged} correct answers: {elapsed:.2f} s; verdicts agree on {agree} "
          f"({100 * agree / judged:.1f} %; the rest: BFCL answers that break their own schemas, "
          "or its greedy parallel matching; see tests/test_bfcl.py)")


if __name__ == "__main__":
    bench_matching()
    bench_bfcl()
