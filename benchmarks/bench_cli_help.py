"""How long `agentic-eval --help` takes, and how long building the parser takes inside it.

Every command module is imported for its `register` while the parser is built, so this is the
figure the one-module-per-command layout must keep low. Bytecode is cached in a temporary prefix
(as an installed package has it), whatever PYTHONDONTWRITEBYTECODE says.

    python benchmarks/bench_cli_help.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ("import time; t = time.perf_counter(); from agentic_eval.cli import build_parser; build_parser(); "
         "print((time.perf_counter() - t) * 1000)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=21)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory(prefix="ae-pyc-") as pyc:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(PYTHONPATH=str(ROOT), PYTHONPYCACHEPREFIX=pyc)
        help_cmd = [sys.executable, "-m", "agentic_eval.cli", "--help"]
        subprocess.run(help_cmd, env=env, cwd=ROOT, capture_output=True, check=True)  # warm the bytecode cache
        wall = []
        for _ in range(runs):
            t = time.perf_counter()
            subprocess.run(help_cmd, env=env, cwd=ROOT, capture_output=True, check=True)
            wall.append((time.perf_counter() - t) * 1000)
        build = [float(subprocess.run([sys.executable, "-c", BUILD], env=env, cwd=ROOT, capture_output=True,
                                      text=True, check=True).stdout) for _ in range(runs)]
    print(f"agentic-eval --help: median {statistics.median(wall):.0f} ms, min {min(wall):.0f} ms ({runs} runs)")
    print(f"  import agentic_eval.cli + build_parser(): median {statistics.median(build):.1f} ms, "
          f"min {min(build):.1f} ms")


if __name__ == "__main__":
    main()
