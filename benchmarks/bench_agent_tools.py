"""Benchmark: the built-in agent's own per-trial costs that do not depend on the model, side by side.

Prints, from one interleaved run (medians over rounds, with their spread):
- a `read_file` + `write_file` pair of tool calls, each call its own confined process (what the tools do
  without a worker, and what the docker backend still does) against the run's `FileToolWorker` serving
  both over a pipe, per backend (local, bwrap where it works): wall time and CPU seconds (this process
  and every process it waited for: so not the worker's own, which runs on; under bwrap the sandboxed
  processes' CPU is not always counted). The worker starts once per trial, outside the pairs;
- stopping the wire recorder after one exchange (once per built-in agent trial): the recorder as it is,
  against the same recorder on uvicorn's own `Server` (its main loop looks at `should_exit` every 0.1 s
  and its shutdown sleeps 0.1 s).

    python benchmarks/bench_agent_tools.py [--rounds N]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from unittest import mock

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import httpx
import uvicorn

from agentic_eval.agents.builtin.tools import FileToolWorker, ToolLimits, execute_tool
from agentic_eval.confine.host import bwrap_problem
from agentic_eval.confine.registry import get_backend
from agentic_eval.testing import FakeEndpoint, ScriptedReply
from agentic_eval.wire import recorder


class _UvicornServer(uvicorn.Server):
    """uvicorn's own server, asked to stop the way it documents: `should_exit`."""

    def wake(self) -> None:
        self.should_exit = True


def cpu_now() -> float:
    """CPU seconds of this process and of every process it waited for (bwrap's own; what bwrap started in its
    PID namespace is not always counted)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(work: Callable[[], object]) -> tuple[float, float]:
    start, cpu = time.perf_counter(), cpu_now()
    work()
    return time.perf_counter() - start, cpu_now() - cpu


def spread(values: list[float], unit: float = 1000.0) -> str:
    return f"{statistics.median(values) * unit:7.1f} (spread {min(values) * unit:.1f}-{max(values) * unit:.1f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds (default 15)")
    args = parser.parse_args()
    backends = ["local", *(["bwrap"] if bwrap_problem() is None else [])]
    tmp = Path(tempfile.mkdtemp(prefix="ae-bench-tools-"))
    figures: dict[str, tuple[list[float], list[float]]] = {}

    def note(label: str, wall: float, cpu: float) -> None:
        walls, cpus = figures.setdefault(label, ([], []))
        walls.append(wall)
        cpus.append(cpu)

    try:
        setups = []
        for name in backends:
            root = tmp / name / "sandbox"
            root.mkdir(parents=True)
            (root / "notes.txt").write_text("one\ntwo\n")
            backend = get_backend(name)
            backend.prepare(root)
            base = ToolLimits(bash_timeout_s=30, backend=backend)
            worker = FileToolWorker(root, base)
            setups.append((name, root, base, dataclasses.replace(base, worker=worker), worker))
        for _, root, _, served, _ in setups:  # the worker's own start is paid once per trial: not in the pairs
            execute_tool(root, "list_dir", {}, served)
        with FakeEndpoint(responder=lambda request: ScriptedReply(body={"choices": []})) as fake:
            for r in range(args.rounds):
                for name, root, base, served, _ in setups:
                    for label, limits in ((f"{name} process per call", base), (f"{name} worker", served)):
                        def pair(limits: ToolLimits = limits, root: Path = root, r: int = r) -> None:
                            assert not execute_tool(root, "read_file", {"path": "notes.txt"}, limits).is_error
                            assert not execute_tool(root, "write_file", {"path": f"w{r}.txt", "content": "x"},
                                                    limits).is_error
                        note(label, *timed(pair))
                for label, server in (("recorder stop, uvicorn.Server", _UvicornServer),
                                      ("recorder stop, as it is", recorder._PromptServer)):
                    with mock.patch.object(recorder, "_PromptServer", server):
                        wire = recorder.WireRecorder(fake.base_url, tmp / f"wire-{r}.jsonl")
                        wire.start()
                        httpx.post(f"{wire.base_url}/chat/completions", json={"model": fake.model, "messages": []},
                                   timeout=30)
                        note(label, *timed(wire.stop))
        for *_, worker in setups:
            worker.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{args.rounds} interleaved rounds, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; "
          "medians (spread min-max), ms")
    for label, (walls, cpus) in figures.items():
        what = "read_file + write_file" if "recorder" not in label else ""
        print(f"{label:32s} {what:22s} wall {spread(walls)}  CPU {spread(cpus)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
