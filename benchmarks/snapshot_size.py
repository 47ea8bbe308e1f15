"""Benchmark: the snapshot of a tree the model filled with small files (issue 39).

A model that leaves 120,000 small files must not make the snapshot (diff.patch and tree.json, taken before
grading: grading/snapshot.py) run for minutes: it was quadratic (a set rebuilt per path), 63 s at 30k files.
Prints, for 30k, 60k and 120k new files spread over folders of a committed repo, the snapshot's time (and the
diff's and the manifest's apart), and whether the largest stays under the goal.

Goal: 120,000 files snapshot in under 10 s on two cores.

    python benchmarks/snapshot_size.py [--sizes 30000,60000,120000] [--goal-s 10]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agentic_eval.grading.snapshot import take_snapshot, write_diff, write_manifest
from agentic_eval.packs import pristine
from agentic_eval.packs.sandbox import commit_pristine, pristine_store_for
from agentic_eval.trees import remove_tree


def fill(root: Path, files: int, per_folder: int = 1000) -> None:
    """`files` new files of a few bytes each, `per_folder` to a folder."""
    for i in range(files):
        folder = root / "junk" / f"f{i // per_folder:04d}"
        if i % per_folder == 0:
            folder.mkdir(parents=True)
        fd = os.open(folder / f"n{i}.txt", os.O_WRONLY | os.O_CREAT, 0o644)
        os.write(fd, b"%d\n" % i)
        os.close(fd)


def one(files: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench-snapshot-") as tmp:
        root = Path(tmp) / "sandbox"
        root.mkdir()
        for i in range(20):
            (root / f"m{i}.py").write_text(f"VALUE = {i}\n" * 20)
        commit = commit_pristine(root)
        store = pristine_store_for(root)
        if not (store / "HEAD").exists():
            pristine.save_pristine(root, store)
        fill(root, files)
        out = Path(tmp) / "out"
        out.mkdir()
        t0 = time.perf_counter()
        write_diff(root, store, commit, out / "d.patch")
        t1 = time.perf_counter()
        write_manifest(root, out / "t.json")
        t2 = time.perf_counter()
        c2 = cpu()
        take_snapshot(root, store, commit, out)
        t3 = time.perf_counter()
        c3 = cpu()
        remove_tree(root)
        return {"diff": t1 - t0, "manifest": t2 - t1, "snapshot": t3 - t2, "cpu": c3 - c2}


def cpu() -> float:
    """CPU seconds of this process and its finished children (git): what the snapshot costs on an idle
    machine, whatever else the machine is doing."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="30000,60000,120000", help="numbers of files, comma-separated")
    parser.add_argument("--goal-s", type=float, default=10.0, help="the largest size's snapshot goal, in seconds")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    print(f"{'files':>8}  {'diff.patch':>10}  {'tree.json':>9}  {'snapshot':>8}  {'its cpu':>8}   "
          f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    last = 0.0
    for n in sizes:
        r = one(n)
        last = r["snapshot"]
        print(f"{n:>8}  {r['diff']:>9.2f}s  {r['manifest']:>8.2f}s  {r['snapshot']:>7.2f}s  {r['cpu']:>7.2f}s",
              flush=True)
    ok = last < args.goal_s
    print(f"goal: {sizes[-1]} files in under {args.goal_s:g}s: {'met' if ok else 'NOT met'} ({last:.2f}s)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
