"""Benchmark: what a trial costs over a Ray cluster (`run --ray`) against the local executor, at -j 1 and -j 4.

Starts a Ray cluster on this machine (a head without CPUs and two worker nodes of 2 CPUs, each its own
raylet), inside a private network namespace holding only loopback (the script runs itself again under
`unshare -n`), then runs the same oracle trials (N copies of the mini task) locally and on the cluster,
interleaved over rounds, and prints per setting the median wall time per trial, the time to the run's
first record (a Ray run's includes joining the cluster: the driver's `ray.init`, staging and hashing the
package, whose upload Ray skips when its content is already there, and each node's worker start for the
run's runtime environment) and the time per trial after it (the steady pace). All nodes share this machine's cores with
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
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # the shared test helpers live in tests/

MINI = REPO / "tests" / "packs" / "mini"
INSIDE = "AE_BENCH_RAY_INSIDE"


def timed_run(**settings: Any) -> tuple[float, float, float, float]:
    """A run's wall time, the time to its first record, the time from its first record to its last, and the
    median of its trials' own duration (the record's duration_s: on the node, for a Ray run)."""
    from agentic_eval.runner import start_run

    seen: list[float] = []
    start = time.perf_counter()
    done = start_run(agent="oracle", on_result=lambda _: seen.append(time.perf_counter()), **settings)
    wall = time.perf_counter() - start
    assert done.passed == len(done.trials_run), done.outcomes
    return wall, seen[0] - start, seen[-1] - seen[0], statistics.median(r.duration_s for r in done.trials_run)


def main(trials: int, rounds: int) -> None:
    from ray.cluster_utils import Cluster

    from tests.helpers import make_pack

    work = Path(tempfile.mkdtemp(prefix="ae-bench-ray-"))
    (work / "tmp" / "ray").mkdir(parents=True)  # this run's temp folder, the nodes' too: nothing left in /tmp
    os.environ["TMPDIR"] = str(work / "tmp")
    tempfile.tempdir = None  # read TMPDIR again
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 0, "node_ip_address": "127.0.0.1", "include_dashboard": False, "temp_dir": str(work / "ray")})
    try:
        for _ in range(2):
            cluster.add_node(num_cpus=2, node_ip_address="127.0.0.1")
        pack = make_pack(MINI, trials, dest=work / "pack")
        timed_run(tasks=[pack], task_ids=["t0"], runs_root=work / "warm", ray_address=cluster.address)  # upload once
        walls: dict[str, list[tuple[float, float, float, float]]] = {}
        for n in range(rounds):
            for jobs in (1, 4):
                for where in ("local", "ray"):
                    on = {"ray_address": cluster.address} if where == "ray" else {}
                    walls.setdefault(f"{where} -j {jobs}", []).append(
                        timed_run(tasks=[pack], jobs=jobs, runs_root=work / f"{where}{jobs}-{n}", **on))
    finally:
        import ray

        ray.shutdown()  # the runs left this process joined (as a campaign's runs share one connection)
        cluster.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    print(f"oracle, {trials} mini trials per run, {rounds} rounds interleaved, 2 worker nodes x 2 CPUs "
          f"on {os.cpu_count()} cores; load {os.getloadavg()[0]:.1f} at the end")
    print("setting      wall/trial   to 1st record   then per trial   a trial's own   (medians)")
    for jobs in (1, 4):
        for where in ("local", "ray"):
            runs = walls[f"{where} -j {jobs}"]
            wall = statistics.median(r[0] for r in runs) / trials
            first = statistics.median(r[1] for r in runs)
            pace = statistics.median(r[2] for r in runs) / (trials - 1)
            own = statistics.median(r[3] for r in runs)
            print(f"{where:5s} -j {jobs}   {wall:8.3f} s   {first:11.3f} s   {pace:12.3f} s   {own:9.3f} s")


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
