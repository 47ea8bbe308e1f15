"""Benchmark: `agentic-eval export` of a 38-task run, both formats (issue 44: under 5 s on two cores).

The run is made, not recorded: one real trial of the built-in agent against a scripted endpoint on
127.0.0.1 (TURNS streamed turns, each a reasoning line and a `bash` call whose output is a few KB, then
the answer written and a last message), its trial folder copied 38 times under new task ids with their
records, so the export reads 38 wire logs of TURNS + 2 exchanges each, stored by reference as the
recorder stores them. Prints the wall and CPU seconds of each export (the process's own, imports
included: a fresh interpreter per format, as a user runs it) and whether it is under the 5 s goal. An export
runs on one core, so on an idle machine its wall time is about its CPU time; on a loaded one (the load
average is printed) the CPU time is the figure to compare.

    python benchmarks/export_speed.py [--turns N] [--tasks N]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agentic_eval.cli import main
from agentic_eval.results.records import trial_id
from agentic_eval.results.trial_log import TRIALS_FILE, read_trials
from agentic_eval.testing import FakeEndpoint, ReceivedRequest, ScriptedReply, chat_stream, tool_call

GOAL_S = 5.0


def scripted(turns: int):  # type: ignore[no-untyped-def]
    def respond(request: ReceivedRequest) -> ScriptedReply:
        results = [m for m in request.body["messages"] if m["role"] == "tool"]
        n = len(results)
        if n < turns:
            command = f"seq {n * 300} {n * 300 + 600}; cat config/settings.ini"
            return ScriptedReply(events=chat_stream(f"Step {n}: looking at the numbers and the config.",
                                                    tool_calls=[tool_call("bash", {"command": command}, f"c{n}")]))
        if n == turns:
            port = re.search(r"port = (\d+)", str(results[-1]["content"]))
            return ScriptedReply(events=chat_stream("Writing the answer.", tool_calls=[tool_call(
                "write_file", {"path": "answer.txt", "content": f"port is {port[1] if port else 0}\n"}, "w")]))
        return ScriptedReply(events=chat_stream("Done: answer.txt holds the port."))

    return respond


def make_run(root: Path, turns: int, tasks: int) -> Path:
    """One real trial, copied into a run of `tasks` trials."""
    pack = root / "pack"
    shutil.copytree(REPO / "tests" / "packs" / "mini", pack)
    toml = pack / "answer-file" / "task.toml"
    toml.write_text(toml.read_text().replace("max_turns = 5", f"max_turns = {turns + 5}"))
    with FakeEndpoint(responder=scripted(turns)) as fake, contextlib.redirect_stdout(io.StringIO()):
        main(["run", "--model", "fake-model", "--base-url", fake.base_url, "--tasks", str(pack), "--task",
              "answer-file", "--run-dir", str(root / "runs"), "--stream", "--agent-opt", "max_retries=0"])
    (run,) = [p for p in (root / "runs").iterdir() if p.is_dir()]
    (record,) = read_trials(run)[0]
    assert record.outcome == "pass" and record.requests == turns + 2, (record.outcome, record.detail, record.requests)
    source = run / "trials" / "answer-file.a1"
    lines = []
    for i in range(tasks):
        task = f"t{i:02d}"
        shutil.copytree(source, run / "trials" / f"{task}.a1")
        copy = record.model_copy(update={
            "task_id": task, "trial_id": trial_id(f"{record.task_digest}{i}", "builtin", "fake-model", 0, 1),
            "files": {k: v.replace("answer-file.a1", f"{task}.a1") for k, v in record.files.items()}})
        lines.append(copy.model_dump_json())
    shutil.rmtree(source)
    (run / TRIALS_FILE).write_text("\n".join(lines) + "\n")
    return run


def timed_export(run: Path, fmt: str, out: Path) -> tuple[float, float, str]:
    """Wall and CPU seconds of `agentic-eval export` in a fresh interpreter, and what it printed."""
    start = time.perf_counter()
    before = os.times()
    done = subprocess.run([sys.executable, "-m", "agentic_eval", "export", str(run), "--format", fmt, "--out",
                           str(out)], capture_output=True, text=True, timeout=600, check=False)
    after = os.times()
    wall = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"export --format {fmt} failed: {done.stderr}")
    return wall, after.children_user - before.children_user + after.children_system - before.children_system, \
        done.stdout.strip()


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=30, help="tool-call turns per trial (default 30)")
    parser.add_argument("--tasks", type=int, default=38, help="trials in the run (default 38)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ae-export-bench-") as tmp:
        root = Path(tmp)
        run = make_run(root, args.turns, args.tasks)
        wire_mb = sum(p.stat().st_size for p in run.rglob("wire.jsonl")) / 1e6
        print(f"run: {args.tasks} trials of {args.turns + 2} exchanges each, wire logs {wire_mb:.1f} MB in all; "
              f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
        for fmt in ("atif", "inspect"):
            wall, cpu, said = timed_export(run, fmt, root / f"out-{fmt}")
            verdict = ", ".join(f"{what} {'under' if value < GOAL_S else 'OVER'}" for what, value in
                                (("wall", wall), ("CPU", cpu)))
            print(f"export --format {fmt:7s}: {wall:5.2f} s wall, {cpu:5.2f} s CPU ({verdict} the {GOAL_S:g} s goal)"
                  f"  [{said.split(';')[0]}]")
        sizes = sum(p.stat().st_size for p in (root / "out-atif").rglob("trajectory.json")) / 1e6
        log = next((root / "out-inspect").glob("*.eval"))
        print(f"output: trajectories {sizes:.1f} MB, eval log {log.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main_()
