"""Benchmark: what confinement costs, `bwrap` against `local`.

Prints, from interleaved rounds (medians and spreads):
- per command: `true`, `git status`, `python3 -c 1` through each backend, and the built-in agent's
  `bash` and `read_file` tool calls (each a process of its own);
- per trial: `agentic-eval run --agent oracle` over the core pack (sandbox, confined reference fix,
  confined grader, confined diff), and the built-in agent against a scripted endpoint on 127.0.0.1
  (three requests per trial) — each trial's recorded duration.

Goals (issue 16): at most 15 ms added per command, at most 5 % per core-pack trial.

    python benchmarks/bench_sandbox.py [--rounds N] [--commands N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # the shared test helpers live in tests/

from agentic_eval.agents.builtin.tools import ToolLimits, execute_tool
from agentic_eval.confine.backend import Confinement
from agentic_eval.confine.host import BwrapBackend, LocalBackend, bwrap_problem
from agentic_eval.confine.process import run_command
from agentic_eval.packs.sandbox import commit_pristine
from agentic_eval.results.trial_log import read_trials
from agentic_eval.testing import FakeEndpoint
from tests.helpers import make_pack, solver

CLI = [sys.executable, "-m", "agentic_eval.cli"]
MINI = REPO / "tests" / "packs" / "mini"
COMMANDS = {"true": ["true"], "git status": ["git", "-c", "safe.directory=*", "status", "--short"],
            "python3 -c 1": ["python3", "-c", "1"]}


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:7.1f} ms (spread {min(values) * 1000:.1f}-{max(values) * 1000:.1f})"


def per_command(n: int) -> None:
    backends = {"local": LocalBackend(), "bwrap": BwrapBackend()}
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        for i in range(20):
            (root / f"m{i}.py").write_text(f"VALUE = {i}\n" * 50)
        commit_pristine(root)
        backends["bwrap"].prepare(root)
        spec = Confinement(writable=(root,))
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp"}
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(n):
            for name, backend in backends.items():
                for label, argv in COMMANDS.items():
                    t0 = time.perf_counter()
                    run_command(backend, argv, cwd=root, env=env, spec=spec, timeout_s=30)
                    times.setdefault((label, name), []).append(time.perf_counter() - t0)
                limits = ToolLimits(backend=backend)
                for label, tool, args in (("bash tool: ls", "bash", {"command": "ls"}),
                                          ("read_file tool", "read_file", {"path": "m3.py"})):
                    t0 = time.perf_counter()
                    execute_tool(root, tool, args, limits)
                    times.setdefault((label, name), []).append(time.perf_counter() - t0)
        print(f"per command (n={n} each)")
        for label in [*COMMANDS, "bash tool: ls", "read_file tool"]:
            local, bwrap = times[(label, "local")], times[(label, "bwrap")]
            added = (statistics.median(bwrap) - statistics.median(local)) * 1000
            print(f"  {label:16} local {ms(local)}   bwrap {ms(bwrap)}   added {added:5.1f} ms")


def trial_durations(args: list[str], runs: Path) -> list[float]:
    subprocess.run([*CLI, "run", *args, "--run-dir", str(runs), "--json"], check=True, capture_output=True)
    run_dir = max(runs.glob("*/run.json"), key=lambda p: p.stat().st_mtime).parent
    records, _ = read_trials(run_dir)
    return [r.duration_s for r in records]


def per_trial(rounds: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as tmp:
        base = Path(tmp)
        mini = base / "mini"
        import shutil

        shutil.copytree(MINI, mini)
        pack = make_pack(mini, 3)
        kinds: dict[tuple[str, str], list[float]] = {}
        with FakeEndpoint(responder=solver) as fake:
            for r in range(rounds):
                for sandbox in ("local", "bwrap"):
                    kinds.setdefault(("oracle, core pack", sandbox), []).extend(trial_durations(
                        ["--model", "m", "--agent", "oracle", "--sandbox", sandbox], base / f"runs-{r}"))
                    kinds.setdefault(("builtin, scripted", sandbox), []).extend(trial_durations(
                        ["--model", "fake-model", "--base-url", fake.base_url, "--tasks", str(pack),
                         "--agent-opt", "max_retries=0", "--sandbox", sandbox], base / f"runs-{r}"))
        print(f"per trial (recorded duration_s; {rounds} rounds, interleaved)")
        for label in ("oracle, core pack", "builtin, scripted"):
            local, bwrap = kinds[(label, "local")], kinds[(label, "bwrap")]
            ratio = statistics.median(bwrap) / statistics.median(local)
            print(f"  {label:18} local {ms(local)}   bwrap {ms(bwrap)}   bwrap/local {ratio:.3f} "
                  f"({(ratio - 1) * 100:+.1f} %)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="trial rounds per backend (default 3)")
    parser.add_argument("--commands", type=int, default=30, help="runs of each command per backend (default 30)")
    args = parser.parse_args()
    problem = bwrap_problem()
    if problem is not None:
        print(f"bwrap cannot run here: {problem}")
        return 1
    per_command(args.commands)
    per_trial(args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
