"""Benchmark: `report --html`'s page size and build time as a campaign grows.

Makes real runs with the oracle agent on copies of the tests' mini task (T tasks x K attempts, R
runs), then builds the page from them and prints: the inlined chart bundle's size, the page's size and
what it is made of (bundle vs the rest), and the median time to build it over a few rounds.

    python benchmarks/bench_html_report.py [--tasks T] [--attempts K] [--runs R] [--rounds N]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agentic_eval.cli import main
from agentic_eval.report.html import (
    chart_bundle,
    locate_runs,
    render_html,
)
from agentic_eval.report.summary import summarize_run
from tests.helpers import make_pack


def main_bench() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=20)
    ap.add_argument("--attempts", type=int, default=2)
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        pack = make_pack(REPO / "tests" / "packs" / "mini", args.tasks, dest=root / "pack")
        runs = root / "runs"
        for r in range(args.runs):
            agent = "oracle" if r % 2 == 0 else "nop"
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                code = main(["run", "--model", f"m{r // 2}", "--agent", agent, "--tasks", str(pack), "--run-dir",
                             str(runs), "--attempts", str(args.attempts), "-j", "2", "--json"])
            assert code in (0, 1), f"run {r} failed"
        dirs = sorted(p.parent for p in runs.glob("*/run.json"))
        summaries = [summarize_run(d) for d in dirs]
        located = locate_runs(dirs)
        t0 = time.perf_counter()
        bundle = chart_bundle()
        bundle_s = time.perf_counter() - t0
        times = []
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            page = render_html(summaries, [], located)
            times.append(time.perf_counter() - t0)
    size = len(page.encode())
    trials = sum(len(s.trials) for s in summaries)
    print(f"campaign: {args.runs} runs x {args.tasks} tasks x {args.attempts} attempts = {trials} trials")
    print(f"chart bundle (Vega + Vega-Lite + vega-embed, inlined): {len(bundle.encode()) / 1e6:.2f} MB, "
          f"built in {bundle_s:.2f} s")
    print(f"page: {size / 1e6:.2f} MB, of which the rest (tables, specs, trial details): "
          f"{(size - len(bundle.encode())) / 1e3:.0f} kB ({(size - len(bundle.encode())) / trials / 1e3:.1f} kB "
          "per trial)")
    print(f"build time: median {statistics.median(times):.2f} s over {args.rounds} rounds "
          f"(min {min(times):.2f}, max {max(times):.2f})")


if __name__ == "__main__":
    main_bench()
