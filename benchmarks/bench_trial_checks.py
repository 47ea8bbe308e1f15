"""Benchmark: what issue 13's per-trial checks cost (the repository check before grading, the
torn-write-proof record append, reading trials.jsonl line by line as bytes).

Prints medians over N repetitions, beside the time a trial's grade takes for the same task (the
mini test pack's answer-file, graded by the harness's ScriptRunner), so the added cost reads as a
share of grading.

    python benchmarks/bench_trial_checks.py [--reps N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentic_eval.grading.grader import ScriptRunner
from agentic_eval.packs.sandbox import materialize_sandbox
from agentic_eval.packs.task import load_task
from agentic_eval.results.records import TrialResult
from agentic_eval.results.trial_log import TrialLog, read_trials
from agentic_eval.runner import repository_damage

MINI = Path(__file__).resolve().parents[1] / "tests" / "packs" / "mini" / "answer-file"


def median_ms(fn, reps: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=30)
    args = parser.parse_args()
    os.environ.setdefault("GIT_CONFIG_NOSYSTEM", "1")
    task = load_task(MINI)
    with tempfile.TemporaryDirectory() as tmp:
        sandbox = materialize_sandbox(task, 0, Path(tmp) / "sandbox")

        def grade() -> None:
            with ScriptRunner(task, sandbox) as runner:
                runner.grade()

        grade_ms = median_ms(grade, max(5, args.reps // 3))
        check_ms = median_ms(lambda: repository_damage(sandbox.path, sandbox.pristine_commit), args.reps)
        record = TrialResult(trial_id="x" * 20, run_id="r", task_id="t", task_digest="d", agent="a", model="m",
                             seed=0, attempt=1, outcome="pass", detail="café ✓", started_at="s", ended_at="e",
                             duration_s=1.0)
        run_dir = Path(tmp) / "run"
        run_dir.mkdir()
        log = TrialLog(run_dir)
        append_ms = median_ms(lambda: log.append(record), args.reps)
        for _ in range(1000 - args.reps):
            log.append(record)
        read_ms = median_ms(lambda: read_trials(run_dir), 5)
    print(f"grade (mini answer-file, median):       {grade_ms:8.2f} ms")
    print(f"repository check before grading:        {check_ms:8.2f} ms  ({check_ms / grade_ms * 100:.1f} % of grading)")
    print(f"append one record (fsync included):     {append_ms:8.2f} ms")
    print(f"read 1000 records (bytes, line by line): {read_ms:8.2f} ms")


if __name__ == "__main__":
    main()
