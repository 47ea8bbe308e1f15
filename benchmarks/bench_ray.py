"""Benchmark: what a trial costs over a Ray cluster (`run --ray`) against the local executor, at -j 1 and -j 4.

Starts a Ray cluster on this machine (a head without CPUs and two worker nodes of 2 CPUs, each its own
raylet), inside a private network namespace holding only loopback (the script runs itself again under
`unshare -n`), then runs the same oracle trials (N copies of the mini task) locally and on the cluster,
interleaved over rounds, and prints per setting the median wall time per trial and the difference.

A Ray run's wall time includes joining the cluster (the driver's `ray.init`, the package's upload, which
Ray skips when its content is already there) and the workers' start for the run's runtime environment:
fixed per run, so the 1-trial runs are printed apart to show it. All nodes share this machine's cores with
the driver, so the figures are an upper bound of the overhead, not of a cluster's throughput.

    python benchmarks/bench_ray.py [--trials N] [--rounds R]
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
sys.path.insert(0, str(REPO))  # the shared test helpers live in tests/

MINI = REPO / "tests" / "packs" / "mini"
INSIDE = "AE_BENCH_RAY_INSIDE"


def timed_run(**settings: object) -> float:
    from agentic_eval.runner import start_run

    start = time.perf_counter()
    done = start_run(agent="oracle", **settings)  # type: ignore[arg-type]
    wall = time.perf_counter() - start
    assert done.passed == len(done.trials_run), done.outcomes
    return wall


def main(trials: int, rounds: int) -> None:
    from ray.cluster_utils import Cluster

    from tests.helpers import make_pack

    work = Path(tempfile.mkdtemp(prefix="ae-bench-ray-"))
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 0, "node_ip_address": "127.0.0.1", "include_dashboard": False, "temp_dir": str(work / "ray")})
    try:
        for _ in range(2):
            cluster.add_node(num_cpus=2, node_ip_address="127.0.0.1")
        pack = make_pack(MINI, trials, dest=work / "pack")
        one = ["t0"]
        timed_run(tasks=[pack], task_ids=one, runs_root=work / "warm", ray_address=cluster.address)  # upload, workers
        walls: dict[str, list[float]] = {}
        for n in range(rounds):
            for jobs in (1, 4):
                for where in ("local", "ray"):
                    ray = {"ray_address": cluster.address} if where == "ray" else {}
                    wall = timed_run(tasks=[pack], jobs=jobs, runs_root=work / f"{where}{jobs}-{n}", **ray)
                    walls.setdefault(f"{where} -j {jobs}", []).append(wall / trials)
            for where in ("local", "ray"):
                ray = {"ray_address": cluster.address} if where == "ray" else {}
                wall = timed_run(tasks=[pack], task_ids=one, runs_root=work / f"{where}one-{n}", **ray)
                walls.setdefault(f"{where} 1 trial", []).append(wall)
    finally:
        cluster.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    median = {k: statistics.median(v) for k, v in walls.items()}
    print(f"oracle, {trials} mini trials per run, {rounds} rounds interleaved, 2 worker nodes x 2 CPUs "
          f"on {os.cpu_count()} cores; load {os.getloadavg()[0]:.1f}")
    for jobs in (1, 4):
        local, ray = median[f"local -j {jobs}"], median[f"ray -j {jobs}"]
        print(f"-j {jobs}: local {local:.3f} s/trial, ray {ray:.3f} s/trial, overhead {ray - local:+.3f} s/trial "
              f"({ray / local:.2f}x)")
    local, ray = median["local 1 trial"], median["ray 1 trial"]
    print(f"a 1-trial run (its fixed cost: join, runtime env, shutdown): local {local:.3f} s, ray {ray:.3f} s, "
          f"{ray - local:+.3f} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if os.environ.get(INSIDE) != "1":  # Ray binds the machine's address: keep it to loopback in a namespace
        script = 'ip link set lo up && exec "$0" "$@"'
        sys.exit(subprocess.run(["unshare", "-n", "sh", "-c", script, sys.executable, *sys.argv],
                                env={**os.environ, INSIDE: "1"}, check=False).returncode)
    main(args.trials, args.rounds)
