"""Benchmark: environment tasks on the docker backend (issue 30).

Prints, measured side by side in one run on the engine DOCKER_HOST names (start one with
`bash scripts/dockerd.sh start DIR`):

* the image build of a task's Dockerfile, cold (a context never built: a fresh RUN layer) and cached
  (the same context again: found by its hash, no build);
* the wall time of an oracle trial of an environment task (its image cached: the workdir copied out of
  the image, the pristine commit, its container, a snapshot of it for the reward verifier) against an
  oracle trial of a generator task on the same backend, each the median of N runs.

    DOCKER_HOST=unix:///tmp/x/docker.sock python benchmarks/bench_environment_tasks.py [N]
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HARBOR = REPO / "tests" / "packs" / "harbor"


def bench_build(backend: object) -> None:
    from agentic_eval.confine.env_images import EnvironmentBuilder

    engine = backend.engines[0]  # type: ignore[attr-defined]
    builder = EnvironmentBuilder(engine.image, "suite", log=lambda line: None)
    with tempfile.TemporaryDirectory(prefix="ae-bench-env-") as tmp:
        folder = Path(tmp) / "environment"
        folder.mkdir()
        (folder / "Dockerfile").write_text("FROM debian:bookworm-slim\nWORKDIR /app\n"
                                           f"RUN echo {uuid.uuid4().hex} > /app/stamp && mkdir -p /app/data\n")
        for label in ("cold", "cached"):
            start = time.perf_counter()
            tag, how = builder.build(engine.client, Path(tmp), "environment/Dockerfile", 300, "bench")
            print(f"image build {label:6s}: {time.perf_counter() - start:7.2f} s  ({how})")
        engine.client.images.remove(tag, force=True)


def bench_trials(runs: int) -> None:
    from agentic_eval.runner import start_run

    tasks = {"environment task (tally-words)": ([str(HARBOR)], ["tally-words"]),
             "generator task (json-set-port)": (None, ["json-set-port"])}
    times: dict[str, list[float]] = {label: [] for label in tasks}
    root = Path(tempfile.mkdtemp(prefix="ae-bench-runs-"))
    try:
        for _ in range(runs):
            for label, (paths, ids) in tasks.items():  # interleaved: both see the same load on the machine
                outcome = start_run(agent="oracle", tasks=paths, task_ids=ids, runs_root=root,
                                    sandbox=_choice() if paths else "docker")
                (result,) = outcome.trials_run
                assert result.outcome == "pass", (label, result.outcome, result.detail)
                times[label].append(result.duration_s)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    for label, values in times.items():
        print(f"oracle trial, {label:32s}: median {statistics.median(values):6.2f} s over {len(values)} "
              f"(min {min(values):.2f}, max {max(values):.2f})")


def _choice() -> object:
    from agentic_eval.runner.settings import SandboxChoice

    return SandboxChoice("docker", {"base_image": "suite"})


def main() -> None:
    from agentic_eval.confine.docker import DockerBackend

    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    backend = DockerBackend(base_image="suite")
    try:
        bench_build(backend)
    finally:
        backend.close_all()
    bench_trials(runs)


if __name__ == "__main__":
    main()
