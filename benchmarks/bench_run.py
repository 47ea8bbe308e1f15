"""Benchmark: `agentic-eval run`'s own cost, its start-up, and how -j scales.

Prints, from one interleaved run:
- per trial, the harness's cost with the oracle agent (sandbox, reference fix, grade, diff, durable
  record) against a bare floor: the same generator, git commands, fix, grader and diff from a plain
  script; as median and spread over rounds, and the ratio;
- the time from `agentic-eval run` starting (process spawn) to its first trial starting (the
  trial's recorded `started_at`, before its sandbox is built);
- the built-in agent against a scripted endpoint on 127.0.0.1 with a fixed latency per request
  (three requests per trial): wall time at -j 1, 2, 4, 8 and the speed-up against ideal.

Goals (issue 4): overhead within 1.3x of the floor; first trial under 1 s after start; speed-up at
least 0.8 of ideal.

    python benchmarks/bench_run.py [--rounds N] [--tasks PATH] [--latency S] [--trials N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # the shared test helpers live in tests/

from bench_validate import bare_sandbox

from agentic_eval.grading.grader import run_script
from agentic_eval.packs.builtin import core_pack_dir
from agentic_eval.packs.task import Task, load_tasks
from agentic_eval.results.trial_log import read_trials
from agentic_eval.testing import FakeEndpoint, ReceivedRequest, ScriptedReply
from tests.helpers import make_pack, solver

CLI = [sys.executable, "-m", "agentic_eval.cli"]
MINI = REPO / "tests" / "packs" / "mini"


def fmt(values: list[float]) -> str:
    return f"median {statistics.median(values):.3f}s (spread {min(values):.3f}-{max(values):.3f}s, n={len(values)})"


def floor_trial(task: Task, seed: int, root: Path) -> float:
    """Generator, git init/add/commit, fix, grader, diff from a plain script."""
    start = time.perf_counter()
    script, git_env = bare_sandbox(task, seed, root)
    run_script(task.solution_path, root, script, task.meta.limits.agent_timeout_s)
    run_script(task.grader_path, root, script, task.meta.limits.grader_timeout_s)
    subprocess.run(["git", "add", "--all"], cwd=root, env=git_env, check=True, capture_output=True)
    subprocess.run(["git", "diff", "--cached", "HEAD"], cwd=root, env=git_env, check=True, capture_output=True)
    return time.perf_counter() - start


def cli_run(pack: Path, runs: Path, *extra: str) -> float:
    start = time.perf_counter()
    proc = subprocess.run([*CLI, "run", "--model", "m", "--tasks", str(pack), "--run-dir", str(runs), *extra],
                          capture_output=True, text=True, timeout=1800, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"run failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--tasks", default=None, help="pack for the oracle figures (default: the core pack)")
    parser.add_argument("--latency", type=float, default=0.5, help="scripted endpoint latency per request (0.5 s)")
    parser.add_argument("--trials", type=int, default=16, help="trials in the -j comparison (default 16)")
    parser.add_argument("--jobs", default="1,2,4,8", help="-j values to compare (default 1,2,4,8)")
    args = parser.parse_args()
    jobs = [int(j) for j in args.jobs.split(",")]

    tmp = Path(tempfile.mkdtemp(prefix="ae-bench-run-"))
    pack = Path(args.tasks) if args.tasks else core_pack_dir()
    tasks = load_tasks([str(pack)]).tasks
    mini = make_pack(MINI, args.trials, dest=tmp / "mini")

    def respond(request: ReceivedRequest) -> ScriptedReply:
        reply = solver(request)
        reply.delay_s = args.latency
        return reply

    harness_t: list[float] = []
    floor_t: list[float] = []
    first_t: list[float] = []
    walls: dict[int, list[float]] = {j: [] for j in jobs}
    try:
        with FakeEndpoint(responder=respond) as fake:
            for r in range(args.rounds):
                # the oracle through the CLI, and the floor, in alternating order
                floors: list[float] = []
                for step in (["cli", "floor"] if r % 2 == 0 else ["floor", "cli"]):
                    if step == "cli":
                        spawn = time.time()
                        wall = cli_run(pack, tmp / f"runs-{r}", "--agent", "oracle")
                        (run_dir,) = (tmp / f"runs-{r}").iterdir()
                        records, _ = read_trials(run_dir)
                        first = min(datetime.fromisoformat(t.started_at).timestamp() for t in records) - spawn
                    else:
                        floors = [floor_trial(task, 0, tmp / f"floor-{r}-{i}") for i, task in enumerate(tasks)]
                first_t.append(first)
                harness_t.append((wall - first) / len(tasks))
                floor_t.append(sum(floors) / len(tasks))
                # -j scaling against the scripted endpoint, order rotated each round
                order = jobs[r % len(jobs):] + jobs[: r % len(jobs)]
                for j in order:
                    walls[j].append(cli_run(mini, tmp / f"runs-j{j}-{r}", "--model", fake.model, "--base-url",
                                            fake.base_url, "-j", str(j), "--agent-opt", "max_retries=0"))
                print(f"round {r + 1}/{args.rounds}: oracle {wall:.1f}s for {len(tasks)} trials, floor "
                      f"{sum(floors):.1f}s; " + ", ".join(f"-j {j} {walls[j][-1]:.1f}s" for j in jobs), file=sys.stderr)
                for child in tmp.iterdir():
                    if child.name.startswith(("floor-", "runs-")):
                        shutil.rmtree(child, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    ratio = statistics.median(harness_t) / statistics.median(floor_t)
    print(f"oracle pack: {len(tasks)} tasks ({args.tasks or 'core pack'}), rounds: {args.rounds}, "
          f"machine: {os.cpu_count()} cores")
    print(f"per trial, harness (oracle):  {fmt(harness_t)}")
    print(f"per trial, bare floor:        {fmt(floor_t)}")
    print(f"ratio harness / floor:        {ratio:.2f}x   goal <= 1.3x")
    print(f"run start to first trial:     {fmt(first_t)}   goal < 1 s")
    base = statistics.median(walls[jobs[0]])
    print(f"-j scaling: {args.trials} trials x 3 requests, {args.latency:g}s latency per request, builtin agent")
    for j in jobs:
        speedup = base / statistics.median(walls[j])
        ideal = min(j, args.trials) / jobs[0]
        print(f"  -j {j}: {fmt(walls[j])}  speed-up {speedup:.2f}x of ideal {ideal:g}x = {speedup / ideal:.2f}"
              "   goal >= 0.8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
