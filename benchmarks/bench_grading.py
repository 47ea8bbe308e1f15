"""Benchmark: what grading one trial costs now (grader on ground truth, isolated Python, safe git,
diff.patch from the pristine store) against how it was graded before (gradelib reading the sandbox's
own git, the harness's environment, `git add` + `git diff` in the sandbox for diff.patch).

For every task of the pack, one sandbox with the reference fix applied; then, interleaved per round,
the grader and the diff run once the current way and once the old way, on that same sandbox. The old
gradelib is read from git history (`--before`, default the last commit before the change).

    python benchmarks/bench_grading.py [--rounds N] [--tasks PATH] [--before REV]

Goal (issue 13): grading costs within +10 % of before.
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
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agentic_eval.grading.grader import ScriptRunner, run_script
from agentic_eval.grading.snapshot import take_snapshot
from agentic_eval.packs.builtin import core_pack_dir
from agentic_eval.packs.sandbox import materialize_sandbox
from agentic_eval.packs.task import Task, load_tasks

DEFAULT_BEFORE = "6f5e622"


def old_gradelib(rev: str, dest: Path) -> Path:
    text = subprocess.run(["git", "show", f"{rev}:graders/gradelib.py"], cwd=REPO, capture_output=True,
                          text=True, check=True).stdout
    (dest / "gradelib.py").write_text(text, encoding="utf-8")
    return dest


def grade_now(task: Task, sandbox: object, diff: Path) -> float:
    t0 = time.perf_counter()
    with ScriptRunner(task, sandbox) as runner:  # type: ignore[arg-type]
        result = runner.grade()
    take_snapshot(sandbox.path, sandbox.pristine_store, sandbox.pristine_commit, diff.parent)  # type: ignore[attr-defined]
    assert result.verdict.value == "pass", result.script.output
    return time.perf_counter() - t0


def grade_before(task: Task, sandbox: object, diff: Path, gradelib_dir: Path, vars_file: Path) -> float:
    path: Path = sandbox.path  # type: ignore[attr-defined]
    env = dict(os.environ, PYTHONPATH=f"{gradelib_dir}{os.pathsep}{task.pack_dir / 'graders'}",
               AGENTIC_EVAL_VARS=str(vars_file), AGENTIC_EVAL_TASK_DIR=str(task.dir), AGENTIC_EVAL_SANDBOX=str(path),
               AGENTIC_EVAL_PYTHON=sys.executable, PYTHONDONTWRITEBYTECODE="1")
    t0 = time.perf_counter()
    result = run_script(task.grader_path, path, env, 120)
    subprocess.run(["git", "add", "--all"], cwd=path, capture_output=True, check=False)
    out = subprocess.run(["git", "diff", "--cached", "--binary", sandbox.pristine_commit],  # type: ignore[attr-defined]
                         cwd=path, capture_output=True, check=False).stdout
    diff.write_bytes(out)
    elapsed = time.perf_counter() - t0
    subprocess.run(["git", "reset", "-q"], cwd=path, capture_output=True, check=False)  # as it was
    assert result.exit_code == 0, result.output
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tasks", default=None, help="pack (default: the core pack)")
    parser.add_argument("--before", default=DEFAULT_BEFORE, help=f"git revision of the old gradelib ({DEFAULT_BEFORE})")
    args = parser.parse_args()
    tasks = load_tasks([Path(args.tasks)] if args.tasks else [core_pack_dir()]).tasks
    work = Path(tempfile.mkdtemp(prefix="bench-grading-"))
    try:
        gradelib_dir = old_gradelib(args.before, work)
        prepared = []
        for task in tasks:
            sandbox = materialize_sandbox(task, 0, work / task.id / "sandbox")
            with ScriptRunner(task, sandbox) as runner:
                fix = runner.apply_fix()
                assert fix.exit_code == 0, fix.output
            vars_file = work / task.id / "vars.json"
            import json

            vars_file.write_text(json.dumps(sandbox.variables))
            prepared.append((task, sandbox, vars_file))
        now: list[float] = []
        before: list[float] = []
        for _ in range(args.rounds):
            round_now = round_before = 0.0
            for task, sandbox, vars_file in prepared:
                diff = work / task.id / "diff.patch"
                round_before += grade_before(task, sandbox, diff, gradelib_dir, vars_file)
                round_now += grade_now(task, sandbox, diff)
            now.append(round_now / len(prepared))
            before.append(round_before / len(prepared))
        med_now, med_before = statistics.median(now), statistics.median(before)
        print(f"grading + diff per trial, {len(prepared)} tasks x {args.rounds} rounds (median of rounds):")
        print(f"  before ({args.before}): {med_before * 1000:7.1f} ms  (rounds: "
              + ", ".join(f"{x * 1000:.0f}" for x in before) + ")")
        print(f"  now:              {med_now * 1000:7.1f} ms  (rounds: "
              + ", ".join(f"{x * 1000:.0f}" for x in now) + ")")
        print(f"  ratio now/before: {med_now / med_before:.2f}x (goal: at most 1.10x)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
