"""Benchmark: the docker sandbox against bwrap and local, -j on one engine, and two engines.

Starts private Docker engines (scripts/dockerd.sh, as root) unless DOCKER_HOST answers, and prints:
- per trial, `run --agent oracle` over a few core tasks with each backend, interleaved rounds (median of
  each trial's recorded duration);
- the built-in agent against a scripted endpoint with a fixed latency per request (three requests per
  trial): wall time at -j 1 and -j 4 on one engine, and the speed-up against ideal; the same with the
  local backend, which shows how far the harness itself scales on this machine's cores;
- two engines: how 8 trials spread over them.

Goals (issue 17): at most 0.7 s per trial on overlay2 when idle; -j 4 at least 0.8 of ideal. Both
engines share this machine's cores, so the two-engine figures show the spreading, not throughput.

    python benchmarks/bench_docker.py [--rounds N] [--latency S]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agentic_eval.testing import FakeEndpoint, ReceivedRequest, ScriptedReply, chat_body, tool_call

TASKS = ["json-set-port", "fix-failing-test", "yaml-scale-deploy", "read-config-answer"]


def start_engine(folder: Path) -> str:
    out = subprocess.run(["bash", str(REPO / "scripts" / "dockerd.sh"), "start", str(folder)], capture_output=True,
                         text=True, check=True, timeout=120).stdout
    return out.strip().split("=", 1)[1]


def stop_engine(folder: Path) -> None:
    subprocess.run(["bash", str(REPO / "scripts" / "dockerd.sh"), "stop", str(folder)], capture_output=True,
                   timeout=120, check=False)


def run(args: list[str], env: dict[str, str]) -> dict:
    proc = subprocess.run([sys.executable, "-m", "agentic_eval.cli", "run", "--json", *args], capture_output=True,
                          text=True, env=env, timeout=1800, check=False)
    if not proc.stdout.strip():
        raise SystemExit(f"run failed: {proc.stderr[-500:]}")
    return json.loads(proc.stdout)


def three_turns(request: ReceivedRequest) -> ScriptedReply:
    time.sleep(LATENCY)
    done = sum(1 for m in request.body["messages"] if m["role"] == "tool")
    if done < 2:
        return ScriptedReply(body=chat_body(None, tool_calls=[tool_call("bash", {"command": "git status --short"},
                                                                        f"c{done}")]))
    return ScriptedReply(body=chat_body("Done."))


LATENCY = 0.5


def main() -> None:
    global LATENCY
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.5, help="scripted endpoint latency per request")
    args = parser.parse_args()
    LATENCY = args.latency
    work = Path(tempfile.mkdtemp(prefix="bench-docker-"))
    folders = [Path("/tmp") / f"ae-bench-dockerd-{os.getpid()}-{i}" for i in (1, 2)]
    env = dict(os.environ)
    try:
        env["DOCKER_HOST"] = first = start_engine(folders[0])
        subprocess.run([sys.executable, "-m", "agentic_eval.cli", "sandbox", "build"], env=env, check=True,
                       capture_output=True, timeout=1800)
        picked = [a for t in TASKS for a in ("--task", t)]
        per_trial: dict[str, list[float]] = {"local": [], "bwrap": [], "docker": []}
        for r in range(args.rounds):
            for kind in per_trial:
                data = run(["--agent", "oracle", "--sandbox", kind, *picked, "--run-dir", str(work / f"o{r}{kind}")],
                           env)
                assert data["passed"] == len(TASKS), (kind, data["outcomes"])
                per_trial[kind] += [t["duration_s"] for t in data["trials"]]
        print(f"oracle, per trial ({len(TASKS)} core tasks x {args.rounds} rounds, median [min-max]):")
        for kind, values in per_trial.items():
            print(f"  {kind:6s} {statistics.median(values):6.3f} s  [{min(values):.3f}-{max(values):.3f}]")
        base = statistics.median(per_trial["local"])
        print(f"  docker - local: {statistics.median(per_trial['docker']) - base:+.3f} s per trial; "
              f"bwrap - local: {statistics.median(per_trial['bwrap']) - base:+.3f} s")

        trials = 8
        print(f"built-in agent, {trials} trials x 3 requests at {LATENCY:g} s (wall of the whole run):")
        with FakeEndpoint(responder=three_turns) as fake:
            pack = ["--tasks", str(REPO / "tests" / "packs" / "mini")]
            for kind in ("docker", "local"):  # local: how far the harness itself scales on these cores
                walls = {}
                for jobs in (1, 4):
                    t0 = time.monotonic()
                    data = run(["--model", "fake-model", "--base-url", fake.base_url, *pack, "--attempts",
                                str(trials), "-j", str(jobs), "--sandbox", kind, "--run-dir",
                                str(work / f"j{jobs}{kind}"), "--agent-opt", "max_retries=0"], env)
                    walls[jobs] = time.monotonic() - t0
                    assert data["unscored"] == 0, data["outcomes"]
                ideal = walls[1] / 4
                print(f"  {kind:6s} -j 1 {walls[1]:.1f} s, -j 4 {walls[4]:.1f} s: {ideal / walls[4]:.2f} of ideal"
                      + (" (one engine)" if kind == "docker" else ""))

        second = start_engine(folders[1])
        data = run(["--agent", "oracle", "--sandbox", "docker", "--docker-host", first, "--docker-host", second,
                    "--task", "json-set-port", "--attempts", "8", "-j", "4", "--run-dir", str(work / "two")], env)
        spread: dict[str, int] = {}
        for t in data["trials"]:
            spread[t.get("sandbox_engine", "?")] = spread.get(t.get("sandbox_engine", "?"), 0) + 1
        print("two engines, 8 oracle trials at -j 4: " + ", ".join(f"{k}: {v}" for k, v in spread.items()))
    finally:
        for folder in folders:
            stop_engine(folder)
        subprocess.run(["rm", "-rf", str(work), *map(str, folders)], check=False)


if __name__ == "__main__":
    main()
