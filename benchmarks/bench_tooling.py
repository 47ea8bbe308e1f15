"""Benchmark: the tool-call battery's throughput against a zero-latency scripted endpoint.

Everything here is the harness's own cost: the scripted model on 127.0.0.1 answers every case
correctly at once (tests/test_tooling_e2e.py's oracle), so the time is case generation, request
building, HTTP, the turn classifier and the checkers. Prints, per -j, the wall time of the 370
cases (median and spread over rounds) and cases per second; then the generation time alone, and
the form matrix's 15 shapes with 500 tools.

Goal (issue 7): the 370 in well under 10 s here.

    python benchmarks/bench_tooling.py [--rounds N] [--jobs 1,4,8]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the shared test helpers live in tests/

from agentic_eval.endpoint import resolve_endpoint
from agentic_eval.instruments.battery import generate_cases, run_battery
from agentic_eval.instruments.forms import run_forms
from tests.helpers import ResponderEndpoint, battery_model, forms_model

GOAL_S = 10.0


def spread(values: list[float]) -> str:
    return f"median {statistics.median(values):.2f} s (spread {min(values):.2f}-{max(values):.2f} s, n={len(values)})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="runs per setting (default 3)")
    parser.add_argument("--jobs", default="1,4,8", help="parallel requests to try, comma-separated (default 1,4,8)")
    args = parser.parse_args()

    started = time.perf_counter()
    cases = generate_cases(45739)
    print(f"generate 370 cases: {time.perf_counter() - started:.3f} s")

    worst = 0.0
    with ResponderEndpoint(battery_model(cases, "oracle")) as fake:
        endpoint = resolve_endpoint(fake.base_url)
        for jobs in (int(j) for j in args.jobs.split(",")):
            walls = []
            for _ in range(max(1, args.rounds)):
                started = time.perf_counter()
                results = run_battery(cases, endpoint, "fake-model", jobs=jobs)
                walls.append(time.perf_counter() - started)
                assert sum(r.passed for r in results) == len(cases), "the oracle must pass every case"
            median = statistics.median(walls)
            worst = max(worst, median)
            print(f"battery -j {jobs}: {spread(walls)} · {len(cases) / median:.0f} cases/s · "
                  f"{sum(len(r.turns) for r in results)} requests")
    with ResponderEndpoint(forms_model()) as fake:
        started = time.perf_counter()
        shapes = run_forms(resolve_endpoint(fake.base_url), "fake-model", 500)
        print(f"form matrix, 15 shapes x 500 tools: {time.perf_counter() - started:.2f} s, "
              f"{sum(s.passed for s in shapes)}/10 passed")
    verdict = "met" if worst < GOAL_S else "MISSED"
    print(f"goal: 370 cases in under {GOAL_S:.0f} s at every -j: {verdict} (slowest median {worst:.2f} s)")
    return 0 if worst < GOAL_S else 1


if __name__ == "__main__":
    sys.exit(main())
