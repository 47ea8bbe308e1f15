"""Benchmark: validate's wall time, and the harness's per-task cost against a bare floor.

Prints, from one interleaved run:
- `agentic-eval --help` wall time, and the time from the CLI starting to its first task starting;
- the wall time of `agentic-eval validate --repeat 3` over the core pack;
- per task, the cost of sandbox + grade through the harness against a bare floor (the same
  generator, the same git commands and the same grader run from a plain script);
each as median and spread (min-max), and the ratio to the floor.

Goals (issue 2): sandbox + grade within 1.3x of the floor; --help and first task under 1 s;
validate --repeat 3 of the core pack under 15 s. All without the red team (issue 25), which
benchmarks/bench_redteam.py measures.

    python benchmarks/bench_validate.py [--rounds N] [--tasks PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agentic_eval.grading.grader import ScriptRunner, run_script, script_env
from agentic_eval.packs.sandbox import (
    PRISTINE_AUTHOR,
    PRISTINE_DATE,
    PRISTINE_MESSAGE,
    Sandbox,
    find_generator,
    materialize_sandbox,
)
from agentic_eval.packs.task import Task, load_tasks

CLI = [sys.executable, "-m", "agentic_eval.cli"]


def fmt(values: list[float]) -> str:
    return f"median {statistics.median(values):.3f}s (spread {min(values):.3f}-{max(values):.3f}s, n={len(values)})"


def timed(cmd: list[str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return time.perf_counter() - start, proc


def bare_sandbox(task: Task, seed: int, root: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Generator and git init/add/commit from a plain script: (the scripts' environment, git's)."""
    root.mkdir()
    variables = find_generator(task.meta.sandbox.generator, task.pack_dir)(root, seed, dict(task.meta.sandbox.params))
    variables = {**variables, "seed": seed}
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME=PRISTINE_AUTHOR[0], GIT_AUTHOR_EMAIL=PRISTINE_AUTHOR[1], GIT_AUTHOR_DATE=PRISTINE_DATE,
        GIT_COMMITTER_NAME=PRISTINE_AUTHOR[0], GIT_COMMITTER_EMAIL=PRISTINE_AUTHOR[1],
        GIT_COMMITTER_DATE=PRISTINE_DATE,
    )
    for cmd in (["git", "init", "-q", "-b", "main"], ["git", "add", "--all"],
                ["git", "commit", "-q", "--no-verify", "-m", PRISTINE_MESSAGE]):
        subprocess.run(cmd, cwd=root, env=env, check=True, capture_output=True)
    vars_file = root.parent / f"{root.name}.vars.json"
    vars_file.write_text(json.dumps(variables))
    sandbox = Sandbox(path=root, seed=seed, variables=variables, pristine_commit="")
    return script_env(task, sandbox, vars_file), env


def floor_once(task: Task, seed: int, root: Path) -> float:
    """The bare floor: generator, git init/add/commit, grader, from a plain script's point of view."""
    start = time.perf_counter()
    script, _ = bare_sandbox(task, seed, root)
    run_script(task.grader_path, root, script, task.meta.limits.grader_timeout_s)
    return time.perf_counter() - start


def harness_once(task: Task, seed: int, root: Path) -> float:
    start = time.perf_counter()
    sandbox = materialize_sandbox(task, seed, root)
    with ScriptRunner(task, sandbox) as runner:
        runner.grade()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--tasks", default=None, help="pack folder (default: the core pack)")
    args = parser.parse_args()
    tasks_args = ["--tasks", args.tasks] if args.tasks else []
    tasks = load_tasks([args.tasks] if args.tasks else None).tasks
    if not tasks:
        print("no tasks found", file=sys.stderr)
        return 1
    first = tasks[0]

    help_t: list[float] = []
    first_task_t: list[float] = []
    validate_t: list[float] = []
    floor_t: list[float] = []
    harness_t: list[float] = []
    tmp = Path(tempfile.mkdtemp(prefix="ae-bench-"))
    try:
        for r in range(args.rounds):
            t, _ = timed([*CLI, "--help"])
            help_t.append(t)
            # Time to first task: the CLI's whole wall time for one task, less that task's own work.
            t_cli, proc = timed([*CLI, "validate", *tasks_args, "--task", first.id, "--json", "--no-redteam"])
            assert proc.returncode in (0, 1), proc.stderr
            start = time.perf_counter()
            from agentic_eval.validation.validate import ValidateOptions, validate_task

            validate_task(first, ValidateOptions(redteam=False))
            first_task_t.append(max(0.0, t_cli - (time.perf_counter() - start)))
            t, proc = timed([*CLI, "validate", *tasks_args, "--repeat", "3", "--no-redteam"])
            last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr.strip()
            validate_t.append(t)
            # Per-task sandbox + grade, harness and floor interleaved task by task.
            per_floor = per_harness = 0.0
            for i, task in enumerate(tasks):
                order = (floor_once, harness_once) if (r + i) % 2 == 0 else (harness_once, floor_once)
                for fn in order:
                    elapsed = fn(task, 0, tmp / f"{fn.__name__}-{r}-{i}")
                    if fn is floor_once:
                        per_floor += elapsed
                    else:
                        per_harness += elapsed
            floor_t.append(per_floor / len(tasks))
            harness_t.append(per_harness / len(tasks))
            print(f"round {r + 1}/{args.rounds}: validate --repeat 3 -> {last} in {t:.2f}s", file=sys.stderr)
            for child in tmp.iterdir():
                shutil.rmtree(child, ignore_errors=True) if child.is_dir() else child.unlink()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    ratio = statistics.median(harness_t) / statistics.median(floor_t)
    print(f"tasks: {len(tasks)} ({'core pack' if not args.tasks else args.tasks}), rounds: {args.rounds}")
    print(f"agentic-eval --help:              {fmt(help_t)}   goal < 1 s")
    print(f"CLI start to first task:          {fmt(first_task_t)}   goal < 1 s")
    print(f"validate --repeat 3 (whole pack): {fmt(validate_t)}   goal < 15 s")
    print(f"sandbox + grade, harness:         {fmt(harness_t)} per task")
    print(f"sandbox + grade, bare floor:      {fmt(floor_t)} per task")
    print(f"ratio harness / floor:            {ratio:.2f}x   goal <= 1.3x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
