"""Benchmark: a trial's own cost per backend against a bare floor, start-up, and -j with the built-in agent.

Prints, from one interleaved run (every figure a median over rounds, with its spread):
- the bare floor per sample: a fresh 20-file git repo (the same generator, `git init`, `git add`,
  `git commit`), the fix and the grep grader as `bash` scripts, `git add` and `git diff --cached`, from a
  plain loop;
- for each backend (local, bwrap; docker with --docker): `agentic-eval run --agent oracle -j 1` of a pack
  of K=1 and of K=14 such tasks, as whole processes: start-up is the K=1 run end to end; the per-sample
  cost is (wall(K=14) - wall(K=1)) / 13, and its ratio to the floor;
- the built-in agent against a scripted endpoint on 127.0.0.1 (three requests per trial at --latency):
  the harness's own cost per trial at -j 1 (a trial's recorded duration less the endpoint's latency), and
  -j 4 against ideal (wall(-j 1) / 4), for local and bwrap (and docker with --docker).

Goals (issue 32): per sample at most 1.5x the floor with local, bwrap adding at most 15 ms per command
(benchmarks/bench_sandbox.py measures per command), start-up at most 0.5 s, docker at most 0.7 s per
oracle trial, -j 4 at least 0.8 of ideal with local and bwrap.

    python benchmarks/bench_trial_cost.py [--rounds N] [--latency S] [--trials N] [--docker]

--docker uses the engine of DOCKER_HOST (with the sandbox image built: `agentic-eval sandbox build`).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # the shared test helpers live in tests/

from agentic_eval.results.trial_log import read_trials
from agentic_eval.testing import FakeEndpoint, ReceivedRequest, ScriptedReply
from tests.helpers import solver

CLI = [sys.executable, "-m", "agentic_eval.cli"]
MINI = REPO / "tests" / "packs" / "mini"
K = 14
GENERATOR = '''"""Twenty small files."""
from pathlib import Path


def generate(root: Path, seed: int, params: dict) -> dict:
    for i in range(20):
        (root / f"m{i:02d}.txt").write_text(f"value {seed * 100 + i}\\n" * 20)
    return {"want": f"answer {seed}"}
'''
TASK = '''id = "{id}"
title = "Write the answer"
tags = ["bench"]
difficulty = "easy"

[sandbox]
generator = "twenty"

[limits]
grader_timeout_s = 20
agent_timeout_s = 60
max_turns = 5
'''
FIX = '#!/usr/bin/env bash\necho "answer 0" > answer.txt\n'
GRADER = '#!/usr/bin/env bash\ngrep -q "answer 0" answer.txt\n'


def make_pack(dest: Path, n: int) -> Path:
    (dest / "sandboxes").mkdir(parents=True)
    (dest / "sandboxes" / "twenty.py").write_text(GENERATOR)
    for i in range(n):
        task = dest / f"t{i:02d}"
        task.mkdir()
        (task / "task.toml").write_text(TASK.format(id=f"t{i:02d}"))
        (task / "instruction.md").write_text('Write "answer 0" into answer.txt.\n')
        (task / "solve.sh").write_text(FIX)
        (task / "grade.sh").write_text(GRADER)
    return dest


def children_cpu() -> float:
    """CPU seconds (user + system) of every child process waited for so far: less moved by the machine's
    load than wall time."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def floor_sample(root: Path, fix: Path, grader: Path) -> float:
    """The same work as one oracle trial, from a plain loop: generator, git init/add/commit, fix, grader,
    git add, git diff."""
    env = dict(os.environ, GIT_AUTHOR_NAME="a", GIT_AUTHOR_EMAIL="a@x", GIT_COMMITTER_NAME="a",
               GIT_COMMITTER_EMAIL="a@x", GIT_AUTHOR_DATE="2024-01-02T03:04:05+0000",
               GIT_COMMITTER_DATE="2024-01-02T03:04:05+0000")
    start = time.perf_counter()
    root.mkdir(parents=True)
    for i in range(20):
        (root / f"m{i:02d}.txt").write_text(f"value {i}\n" * 20)
    for cmd in (["git", "init", "-q", "-b", "main"], ["git", "add", "--all"], ["git", "commit", "-q", "-m", "x"],
                ["bash", str(fix)], ["bash", str(grader)], ["git", "add", "--all"],
                ["git", "diff", "--cached", "HEAD"]):
        subprocess.run(cmd, cwd=root, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


CPU: list[float] = [0.0]
"""The CPU seconds of the last `timed_run` (the CLI and every process it waited for)."""


def timed_run(args: list[str], env: dict[str, str] | None = None) -> float:
    start, cpu = time.perf_counter(), children_cpu()
    proc = subprocess.run([*CLI, "run", "--model", "m", *args], capture_output=True, text=True, timeout=1800,
                          check=False, env=env)
    wall = time.perf_counter() - start
    CPU[0] = children_cpu() - cpu
    if proc.returncode != 0:
        raise SystemExit(f"run failed ({proc.returncode}): {' '.join(args)}: {proc.stderr.strip()[-800:]}")
    return wall


def spread(values: list[float], unit: float = 1.0, digits: int = 3) -> str:
    med = statistics.median(values) * unit
    return f"{med:.{digits}f} (spread {min(values) * unit:.{digits}f}-{max(values) * unit:.{digits}f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--latency", type=float, default=0.5, help="scripted endpoint latency per request (0.5 s)")
    parser.add_argument("--trials", type=int, default=8, help="built-in agent trials per -j run (default 8)")
    parser.add_argument("--docker", action="store_true", help="also the docker backend (DOCKER_HOST's engine)")
    parser.add_argument("--no-agent", action="store_true", help="skip the built-in agent's figures")
    args = parser.parse_args()
    backends = ["local", "bwrap", *(["docker"] if args.docker else [])]

    tmp = Path(tempfile.mkdtemp(prefix="ae-bench-cost-"))
    one, many = make_pack(tmp / "k1", 1), make_pack(tmp / "k14", K)
    fix, grader = one / "t00" / "solve.sh", one / "t00" / "grade.sh"

    def respond(request: ReceivedRequest) -> ScriptedReply:
        reply = solver(request)
        reply.delay_s = args.latency
        return reply

    floor: list[float] = []
    floor_cpu: list[float] = []
    k1: dict[str, list[float]] = {b: [] for b in backends}
    per: dict[str, list[float]] = {b: [] for b in backends}
    per_cpu: dict[str, list[float]] = {b: [] for b in backends}
    k1_cpu: dict[str, list[float]] = {b: [] for b in backends}
    agent_own: dict[str, list[float]] = {b: [] for b in backends}
    of_ideal: dict[str, list[float]] = {b: [] for b in backends}
    try:
        with FakeEndpoint(responder=respond) as fake:
            for r in range(args.rounds):
                steps = ["floor", *backends]
                steps = steps[r % len(steps):] + steps[: r % len(steps)]  # rotated: no backend always first
                for step in steps:
                    out = tmp / f"r{r}-{step}"
                    if step == "floor":
                        cpu = children_cpu()
                        samples = [floor_sample(out / f"s{i}", fix, grader) for i in range(K)]
                        floor.append(statistics.median(samples))
                        floor_cpu.append((children_cpu() - cpu) / K)
                        continue
                    oracle = ["--agent", "oracle", "--sandbox", step, "-j", "1"]
                    w1 = timed_run([*oracle, "--tasks", str(one), "--run-dir", str(out / "k1")])
                    c1 = CPU[0]
                    w14 = timed_run([*oracle, "--tasks", str(many), "--run-dir", str(out / "k14")])
                    k1[step].append(w1)
                    k1_cpu[step].append(c1)
                    per[step].append((w14 - w1) / (K - 1))
                    per_cpu[step].append((CPU[0] - c1) / (K - 1))
                    if args.no_agent:
                        continue
                    agent = ["--model", fake.model, "--base-url", fake.base_url, "--tasks", str(MINI), "--attempts",
                             str(args.trials), "--sandbox", step, "--agent-opt", "max_retries=0"]
                    j1 = timed_run([*agent, "-j", "1", "--run-dir", str(out / "j1")])
                    j4 = timed_run([*agent, "-j", "4", "--run-dir", str(out / "j4")])
                    (run_dir,) = (out / "j1").iterdir()
                    records, _ = read_trials(run_dir)
                    agent_own[step].append(statistics.median(t.duration_s for t in records) - 3 * args.latency)
                    of_ideal[step].append(j1 / 4 / j4)
                print(f"round {r + 1}/{args.rounds}: floor {floor[-1] * 1000:.0f} ms/sample; " + ", ".join(
                    f"{b} {per[b][-1] * 1000:.0f} ms/sample, start-up {k1[b][-1]:.2f} s" for b in backends),
                    file=sys.stderr)
                for child in tmp.iterdir():
                    if child.name.startswith("r"):
                        shutil.rmtree(child, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    base = statistics.median(floor)
    print(f"{args.rounds} interleaved rounds, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; "
          "medians (spread min-max)")
    base_cpu = statistics.median(floor_cpu)
    print(f"floor per sample:                 {spread(floor, 1000, 1)} ms wall, {base_cpu * 1000:.1f} ms CPU")
    for b in backends:
        ratio = statistics.median(per[b]) / base
        print(f"{b:6s} oracle per sample:         {spread(per[b], 1000, 1)} ms = {ratio:.2f}x the floor"
              + ("   goal <= 1.5x" if b == "local" else "   goal <= 0.7 s" if b == "docker" else ""))
        print(f"{b:6s}   CPU per sample:          {spread(per_cpu[b], 1000, 1)} ms = "
              f"{statistics.median(per_cpu[b]) / base_cpu:.2f}x the floor's CPU")
        print(f"{b:6s} start-up (K=1 run):        {spread(k1[b], 1, 3)} s wall, {statistics.median(k1_cpu[b]):.3f} s "
              "CPU" + ("   (one docker trial of it)" if b == "docker" else "   goal <= 0.5 s"))
    if "bwrap" in per:
        added = statistics.median(per["bwrap"]) - statistics.median(per["local"])
        print(f"bwrap - local per oracle sample:  {added * 1000:.1f} ms: two confined commands (a fix, a sealed "
              f"grader), {added * 500:.1f} ms each   goal <= 15 ms")
    if not args.no_agent:
        print(f"built-in agent: {args.trials} trials x 3 requests at {args.latency:g} s:")
        for b in backends:
            print(f"  {b:6s} own cost per trial at -j 1: {spread(agent_own[b], 1000, 0)} ms;"
                  f" -j 4: {spread(of_ideal[b], 1, 2)} of ideal   goal >= 0.8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
