"""Figures for docs/realpy.md: per project and task, generation time per seed, mutations tried / valid / kept,
and how often two seeds give the same task (per task and per project: pairs of seeds of one task that plant the
same mutation). Usage: python benchmarks/realpy_figures.py [SEEDS [PROJECT...]] > out.json"""

from __future__ import annotations

import json
import sys
import time
import tomllib
from collections import Counter
from itertools import combinations
from pathlib import Path

from agentic_eval.realpy.plant import plant
from agentic_eval.realpy.project import PROJECTS, load_json, state_root


def main() -> None:
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    only = set(sys.argv[2:]) or set(PROJECTS)
    out: dict[str, object] = {}
    same: Counter[str] = Counter()
    pairs: Counter[str] = Counter()
    for task in sorted(Path("tasks/realpy").iterdir()):
        if not (task / "task.toml").is_file():
            continue
        params = tomllib.loads((task / "task.toml").read_text())["sandbox"]["params"]
        if params["project"] not in only:
            continue
        project = PROJECTS[params["project"]]
        kept, times = [], []
        for seed in range(seeds):
            start = time.monotonic()
            try:
                kept.append(plant(project, seed, tuple(params["kinds"])).site.id)
            except Exception as exc:  # noqa: BLE001 - a figure, not a verdict
                kept.append(f"error: {exc}")
            times.append(round(time.monotonic() - start, 1))
        alike = sum(1 for a, b in combinations(kept, 2) if a == b)
        same[project.name] += alike
        pairs[project.name] += seeds * (seeds - 1) // 2
        out[task.name] = {"kept": kept, "distinct": len(set(kept)), "same_pairs": alike,
                          "kinds": dict(Counter(k.split(":")[0] for k in kept)), "seconds": times}
        print(task.name, out[task.name], file=sys.stderr, flush=True)
    for name, project in PROJECTS.items():
        if name not in only:
            continue
        verdicts = load_json(state_root(project) / "validation.json")
        out[name] = {"tried": len(verdicts), "valid": sum(1 for v in verdicts.values() if v.get("ok")),
                     "rejected": dict(Counter(str(v.get("why", ""))[:24] for v in verdicts.values()
                                              if not v.get("ok"))),
                     "same_pairs": f"{same[name]} of {pairs[name]}",
                     "baseline_seconds": load_json(state_root(project) / "baseline.json").get("seconds")}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
