"""Benchmark: what validate's red team (issue 25) costs, on every built-in pack at --repeat 1.

Runs `agentic-eval validate --repeat 1 --json` over the built-in packs (or --tasks) with the red team
and without, and prints each one's wall time and the CPU time of everything it ran (the harness,
sandboxes and graders, measured by a cgroup of its own when run as root: rusage misses what runs
under bwrap), then the red-team attempts' time summed over the tasks. On a machine shared with other
work the wall time grows but the CPU time does not: on an idle machine of C cores the red team needs
about max(CPU / C, the longest grader time limit a waiting attempt runs out).

Goal (issue 25): validate with the red team on all built-in packs at --repeat 1 under 3 minutes on
two cores.

    python benchmarks/bench_redteam.py [--tasks PATH] [-j N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

CLI = [sys.executable, "-m", "agentic_eval.cli"]


class CpuGroup:
    """A cgroup (v1 cpuacct or v2) holding one command's whole process tree, to read its CPU time; None
    where cgroups cannot be made (not root)."""

    def __init__(self) -> None:
        name = f"ae-bench-redteam-{os.getpid()}"
        v1, v2 = Path("/sys/fs/cgroup/cpuacct"), Path("/sys/fs/cgroup")
        self.path: Path | None = None
        self.v1 = v1.is_dir()
        try:
            self.path = (v1 if self.v1 else v2) / name
            self.path.mkdir()
        except OSError:
            self.path = None

    def enter(self) -> None:  # in the child, before exec
        if self.path is not None:
            (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def cpu_s(self) -> float | None:
        if self.path is None:
            return None
        if self.v1:
            return int((self.path / "cpuacct.usage").read_text()) / 1e9
        stat = dict(line.split() for line in (self.path / "cpu.stat").read_text().splitlines())
        return int(stat["usage_usec"]) / 1e6

    def remove(self) -> None:
        if self.path is not None:
            try:
                self.path.rmdir()
            except OSError:  # a process still in it: left for the machine's own cleanup
                pass


def run(args: list[str]) -> tuple[float, float | None, dict]:
    """(wall s, CPU s of the whole process tree or None, the JSON report) of one validate run."""
    group = CpuGroup()
    start = time.perf_counter()
    try:
        proc = subprocess.run([*CLI, "validate", "--repeat", "1", "--json", *args], capture_output=True, text=True,
                              timeout=3600, check=False, preexec_fn=group.enter)
        wall = time.perf_counter() - start
        cpu = group.cpu_s()
    finally:
        group.remove()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"validate failed: {proc.stderr.strip()[-2000:]}")
    return wall, cpu, json.loads(proc.stdout)


def cpu_text(cpu: float | None) -> str:
    return "n/a (not root)" if cpu is None else f"{cpu:6.1f}s"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", action="append", default=[], help="pack folder (default: the built-in packs)")
    parser.add_argument("-j", "--jobs", default=None, help="validate -j (default its own)")
    args = parser.parse_args()
    extra = [a for path in args.tasks for a in ("--tasks", path)] + (["-j", args.jobs] if args.jobs else [])
    print(f"cores: {os.cpu_count()}, load average before: {os.getloadavg()[0]:.1f}")
    wall0, cpu0, plain = run([*extra, "--no-redteam"])
    wall1, cpu1, red = run(extra)
    print(f"tasks: {len(plain['tasks'])}; red-team attempts: {len(red['redteam'] or [])}")
    print(f"validate --repeat 1 --no-redteam: wall {wall0:6.1f}s, CPU {cpu_text(cpu0)}, {plain['bad']} bad")
    print(f"validate --repeat 1 (red team):   wall {wall1:6.1f}s, CPU {cpu_text(cpu1)}, {red['bad']} bad   "
          "goal < 180 s")
    per: dict[str, list[float]] = defaultdict(list)
    for task in red["tasks"]:
        for attempt in task["redteam"] or []:
            per[attempt["attempt"]].append(attempt["duration_s"])
    print("red-team attempts, time summed over the tasks (each on its own sandbox; waiting ones overlap):")
    for name, times in sorted(per.items(), key=lambda kv: -sum(kv[1])):
        print(f"  {name:20} {len(times):3} runs  {sum(times):7.1f}s  max {max(times):6.1f}s")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
