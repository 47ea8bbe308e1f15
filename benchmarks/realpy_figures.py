"""Figures for docs/realpy.md: per project and task, generation time per seed, mutations tried / valid / kept,
and how often two seeds give the same task. Usage: python benchmarks/realpy_figures.py [SEEDS] > out.json"""

from __future__ import annotations

import json
import sys
import time
import tomllib
from pathlib import Path

from agentic_eval.realpy.plant import plant
from agentic_eval.realpy.project import PROJECTS, load_json, project_root


def main() -> None:
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    out: dict[str, object] = {}
    for task in sorted(Path("tasks/realpy").iterdir()):
        params = tomllib.loads((task / "task.toml").read_text())["sandbox"]["params"]
        project = PROJECTS[params["project"]]
        kept, times = [], []
        for seed in range(seeds):
            start = time.monotonic()
            try:
                kept.append(plant(project, seed, tuple(params["kinds"])).site.id)
            except Exception as exc:  # noqa: BLE001 - a figure, not a verdict
                kept.append(f"error: {exc}")
            times.append(round(time.monotonic() - start, 1))
        out[task.name] = {"kept": kept, "distinct": len(set(kept)), "seconds": times}
        print(task.name, out[task.name], file=sys.stderr, flush=True)
    for name, project in PROJECTS.items():
        verdicts = load_json(project_root(project) / "validation.json")
        out[name] = {"tried": len(verdicts), "valid": sum(1 for v in verdicts.values() if v.get("ok")),
                     "baseline_seconds": load_json(project_root(project) / "baseline.json").get("seconds")}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
