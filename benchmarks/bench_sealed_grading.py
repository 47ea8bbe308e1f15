"""Benchmark: grading time per trial with sealed grading (issue 25), per built-in pack, against an older
checkout measured in the same run.

For each pack (core, node, ops) a worker process materialises every task's sandbox, applies the
reference fix (not timed), then times `ScriptRunner.grade()` on each, `--reps` times. The worker runs
under this checkout's Python and, with `--before-python`, under another environment's Python (an older
checkout installed editable in its own venv: its package, gradelib and tasks), interleaved pack by pack
and round by round, so both see the same machine load. Prints per pack the median per-trial grading
time of each side and their ratio.

    python -m venv /tmp/venv-before && /tmp/venv-before/bin/pip install -e /path/to/old-checkout
    python benchmarks/bench_sealed_grading.py --before-python /tmp/venv-before/bin/python [--rounds 3]

Goal (issue 25): sealed grading within +20 % of before on the core, node and ops packs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PACKS = ("core", "node", "ops")


def worker(pack: str, reps: int) -> None:
    """Runs in the measured environment: prints {"task": [seconds per grade, ...]} as JSON."""
    from agentic_eval.confine.registry import default_backend
    from agentic_eval.grading.grader import ScriptRunner
    from agentic_eval.packs.builtin import builtin_packs
    from agentic_eval.packs.sandbox import materialize_sandbox
    from agentic_eval.packs.task import load_tasks

    folder = dict(builtin_packs())[pack]
    tasks = load_tasks([folder]).tasks
    backend = default_backend()
    work = Path(tempfile.mkdtemp(prefix="bench-sealed-"))
    times: dict[str, list[float]] = {}
    try:
        prepared = []
        for task in tasks:
            sandbox = materialize_sandbox(task, 0, work / task.id / "sandbox")
            backend.prepare(sandbox.path)
            with ScriptRunner(task, sandbox, backend=backend) as runner:
                fix = runner.apply_fix()
            if fix.exit_code != 0:
                print(f"{task.id}: the reference fix failed", file=sys.stderr)
                continue
            prepared.append((task, sandbox))
        for _ in range(reps):
            for task, sandbox in prepared:
                t0 = time.perf_counter()
                with ScriptRunner(task, sandbox, backend=backend) as runner:
                    result = runner.grade()
                times.setdefault(task.id, []).append(time.perf_counter() - t0)
                if result.verdict.value != "pass":
                    print(f"{task.id}: graded {result.verdict.value} after the fix", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(times))


def measure(python: str, pack: str, reps: int) -> float:
    """Mean grading seconds per trial over the pack's tasks (each task's median over reps)."""
    proc = subprocess.run([python, __file__, "--worker", pack, "--reps", str(reps)], capture_output=True, text=True,
                          check=False, timeout=1800)
    if proc.returncode != 0:
        raise SystemExit(f"{python} {pack}: {proc.stderr.strip()[-500:]}")
    times: dict[str, list[float]] = json.loads(proc.stdout.strip().splitlines()[-1])
    if not times:
        raise SystemExit(f"{python} {pack}: no task graded")
    return statistics.mean(statistics.median(v) for v in times.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reps", type=int, default=1, help="grades of each task per worker (default 1)")
    parser.add_argument("--packs", default=",".join(PACKS))
    parser.add_argument("--before-python", help="the Python of an environment with an older checkout installed")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.reps)
        return
    packs = [p for p in args.packs.split(",") if p]
    now: dict[str, list[float]] = {p: [] for p in packs}
    before: dict[str, list[float]] = {p: [] for p in packs}
    for _ in range(args.rounds):
        for pack in packs:
            if args.before_python:
                before[pack].append(measure(args.before_python, pack, args.reps))
            now[pack].append(measure(sys.executable, pack, args.reps))
    print(f"grading per trial (mean over a pack's tasks; median of {args.rounds} rounds, reference fix applied):")
    print(f"{'pack':6} {'before':>10} {'now':>10} {'ratio':>7}")
    for pack in packs:
        n = statistics.median(now[pack])
        if before[pack]:
            b = statistics.median(before[pack])
            print(f"{pack:6} {b * 1000:8.0f}ms {n * 1000:8.0f}ms {n / b:6.2f}x")
        else:
            print(f"{pack:6} {'-':>10} {n * 1000:8.0f}ms {'-':>7}")
    print("goal: at most 1.20x")


if __name__ == "__main__":
    main()
