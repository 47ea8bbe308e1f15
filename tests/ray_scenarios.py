"""The Ray scenarios of tests/test_ray_cluster.py, run as one script inside a private network namespace that
holds only loopback (Ray binds the machine's own address otherwise): one real cluster (a head without CPUs and
worker nodes, each its own raylet, all on 127.0.0.1), the driver and a scripted endpoint. Prints one JSON
object of what it saw on its last line; the test asserts on it.

    python tests/ray_scenarios.py WORK_DIR
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from ray.cluster_utils import Cluster

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the shared test helpers, as tests.helpers

from agentic_eval.results.trial_log import read_trials
from agentic_eval.runner import resume_run, start_run
from agentic_eval.testing import FakeEndpoint
from tests.helpers import make_pack, solver

MINI = Path(__file__).resolve().parent / "packs" / "mini"
KEY = "sk-ray-test-0123456789abcdef"
TAG = f"{os.getpid()}"
"""In the slow task's id: its trial folders under /tmp are found by it, never another test's."""


def node(cluster: Cluster, cpus: int, **extra: Any) -> Any:
    return cluster.add_node(num_cpus=cpus, node_ip_address="127.0.0.1", **extra)


def records(run_dir: Path) -> list[dict[str, Any]]:
    return [r.model_dump() for r in read_trials(run_dir)[0]]


def outcomes(run_dir: Path) -> dict[str, str]:
    return {r["trial_id"]: r["outcome"] for r in records(run_dir)}


def wait_for(check: Any, what: str, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {limit} s for {what}")
        time.sleep(0.1)


def trial_running(task_id: str, before: set[str]) -> Any:
    """Whether a new trial folder of `task_id` is under the temp folder (the node started the trial)."""
    import tempfile

    def check() -> bool:
        return bool({p.name for p in Path(tempfile.gettempdir()).glob(f"ae-trial-{task_id}-*")} - before)
    return check


def trial_dirs(task_id: str) -> set[str]:
    import tempfile

    return {p.name for p in Path(tempfile.gettempdir()).glob(f"ae-trial-{task_id}-*")}


def main(work: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    tools = work / "tools"  # a program the driver and one node have, the other node lacks
    tools.mkdir()
    (tools / f"ae-ray-tool-{TAG}").write_text("#!/bin/sh\nexit 0\n")
    (tools / f"ae-ray-tool-{TAG}").chmod(0o755)
    plain_path = os.environ["PATH"]
    os.environ["PATH"] = f"{tools}:{plain_path}"

    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 0, "node_ip_address": "127.0.0.1", "include_dashboard": False, "temp_dir": str(work / "ray")})
    try:
        address = cluster.address
        small = node(cluster, 1, env_vars={"PATH": plain_path})  # lacks the tool
        runs = work / "runs"

        # A node that lacks what a task's grader requires ends the trial before it starts, naming itself.
        needs = make_pack(MINI, 1, dest=work / "needs")
        toml = needs / "t0" / "task.toml"
        text = toml.read_text().replace('answers = [', f'requires = ["program:ae-ray-tool-{TAG}"]\nanswers = [')
        toml.write_text(text)
        refused = start_run(agent="oracle", tasks=[needs], runs_root=runs / "needs", ray_address=address)
        out["refused"] = records(refused.run_dir)
        out["small_node"] = small.node_id[:12]

        # Trials spread over two nodes: the same trial ids and outcomes as a local run (oracle and nop).
        big = node(cluster, 2, env_vars={"PATH": f"{tools}:{plain_path}"})
        pack = make_pack(MINI, 3, dest=work / "pack3")
        for agent in ("oracle", "nop"):
            here = start_run(agent=agent, tasks=[pack], jobs=2, runs_root=runs / f"local-{agent}")
            there = start_run(agent=agent, tasks=[pack], jobs=3, runs_root=runs / f"ray-{agent}", ray_address=address)
            out[f"{agent}_local"] = outcomes(here.run_dir)
            out[f"{agent}_ray"] = outcomes(there.run_dir)
            out[f"{agent}_nodes"] = sorted({r["node"] for r in records(there.run_dir)})
            out[f"{agent}_files"] = sorted(str(p.relative_to(there.run_dir)) for p in
                                           (there.run_dir / "trials").rglob("*") if p.is_file())

        # A built-in task whose fix and grader import gradelib, which imports agentic_eval: on the node they get
        # the package the node runs (the job's working_dir), whatever the install here. The mini pack's grader
        # imports nothing of ours, which hid that an editable install's (a .pth naming the source checkout, which
        # a confined grader cannot read) left gradelib without agentic_eval.packs on every node.
        core = start_run(agent="oracle", tasks=["core"], task_ids=["json-set-port"], runs_root=runs / "core",
                         ray_address=address)
        out["gradelib"] = records(core.run_dir)
        out["gradelib_grader"] = (core.run_dir / "trials" / "json-set-port.a1" / "grader.txt").read_text()[-2000:]

        # The built-in agent on a node: the key reaches the endpoint through the node's wire recorder, the wire
        # log comes back to the run folder, and the key is in none of it.
        with FakeEndpoint(responder=solver) as fake:
            built = start_run(model=fake.model, base_url=fake.base_url, api_key=KEY, tasks=[pack], task_ids=["t0"],
                              runs_root=runs / "builtin", ray_address=address)
            out["builtin"] = records(built.run_dir)
            out["builtin_auth"] = sorted({r.headers.get("Authorization", r.headers.get("authorization", ""))
                                          for r in fake.requests if r.method == "POST"})
            folder = built.run_dir / "trials" / "t0.a1"
            out["builtin_files"] = sorted(p.name for p in folder.iterdir())
            # A campaign file's ray_address puts its agent runs' trials on the cluster too.
            from agentic_eval.campaign import run_campaign

            spec = work / "spread.toml"
            spec.write_text(f'packs = ["{pack}"]\ntasks = ["t1"]\nagents = ["oracle"]\ninstruments = []\n'
                            f'ray_address = "{address}"\n\n[[models]]\nname = "{fake.model}"\n'
                            f'base_url = "{fake.base_url}"\n')
            campaign = run_campaign(spec, runs / "campaign")
            out["campaign"] = [r for p in sorted(campaign.folder.rglob("trials.jsonl")) for r in records(p.parent)]
            out["key_in_run_folder"] = any(KEY.encode() in p.read_bytes() for p in built.run_dir.rglob("*")
                                           if p.is_file())

        # The backend is made on the nodes, not here: an engine no node reaches refuses each trial, naming the node.
        unreachable = start_run(agent="nop", tasks=[pack], task_ids=["t0"], runs_root=runs / "no-engine",
                                sandbox="docker", docker_hosts=["unix:///nonexistent-ae-ray/docker.sock"],
                                ray_address=address)
        out["no_engine"] = records(unreachable.run_dir)

        # The package the nodes run is the driver's copy, shipped by Ray (working_dir), built-in packs inside.
        import ray

        from agentic_eval.runner.cluster import join_cluster

        join_cluster(address)  # joined by the runs above already: the same connection, the same package

        @ray.remote(num_cpus=1)
        def where() -> tuple[str, str]:
            import agentic_eval
            from agentic_eval.paths import builtin_root

            return agentic_eval.__file__, str(builtin_root())

        out["node_package"], out["node_builtin"] = ray.get(where.remote(), timeout=120)

        # A node killed mid-trial: the trial runs again on another node, and its record says so. The slow task
        # asks for 2 CPUs, which only the `big` nodes have.
        slow = make_pack(MINI, 1, fix_sleep=3, dest=work / "slow")
        task_id = f"slow{TAG}"
        shutil.move(slow / "t0", slow / task_id)
        toml = slow / task_id / "task.toml"
        toml.write_text(toml.read_text().replace('id = "t0"', f'id = "{task_id}"')
                        .replace("max_turns = 5", "max_turns = 5\ncpus = 2"))
        result: dict[str, Any] = {}

        def run_slow(name: str) -> None:
            result[name] = start_run(agent="oracle", tasks=[slow], runs_root=runs / name, ray_address=address)

        before = trial_dirs(task_id)
        thread = threading.Thread(target=run_slow, args=("retried",))
        thread.start()
        wait_for(trial_running(task_id, before), "the slow trial to start")
        time.sleep(1.0)
        cluster.remove_node(big)
        out["killed_first"] = big.node_id[:12]
        big = node(cluster, 2)
        thread.join(timeout=120)
        out["retried"] = records(result["retried"].run_dir)

        # A driver killed mid-run (kill -9): its run resumes from its folder, on the cluster.
        before = trial_dirs(task_id)
        code = ("import sys; from agentic_eval.runner import start_run; "
                "start_run(agent='oracle', tasks=[sys.argv[1]], runs_root=sys.argv[2], ray_address=sys.argv[3])")
        driver = subprocess.Popen([sys.executable, "-c", code, str(slow), str(runs / "killed"), address],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for(trial_running(task_id, before), "the killed driver's trial to start")
            time.sleep(1.0)
        finally:
            driver.kill()
            driver.wait(timeout=60)
        [killed_run] = (runs / "killed").iterdir()
        out["killed_driver_records"] = records(killed_run)
        out["killed_driver_resumed"] = records(resume_run(killed_run, ray_address=address).run_dir)

        # Lost twice: unscored, the node as cause; --resume runs it again.
        before = trial_dirs(task_id)
        thread = threading.Thread(target=run_slow, args=("lost",))
        thread.start()
        wait_for(trial_running(task_id, before), "the slow trial to start")
        time.sleep(1.0)
        before = trial_dirs(task_id)
        cluster.remove_node(big)
        out["killed_second"] = big.node_id[:12]
        big = node(cluster, 2)
        wait_for(trial_running(task_id, before), "the slow trial's second try to start")
        time.sleep(1.0)
        cluster.remove_node(big)
        out["killed_third"] = big.node_id[:12]
        thread.join(timeout=120)
        out["lost"] = records(result["lost"].run_dir)
        node(cluster, 2)
        resumed = resume_run(result["lost"].run_dir, ray_address=address)
        out["resumed"] = records(resumed.run_dir)
    finally:
        import ray

        ray.shutdown()  # the runs left this process joined (as a campaign's runs share one connection)
        cluster.shutdown()
    return out


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1])), default=str))
