"""`agentic-eval export RUN --format atif|inspect --out DIR`: a run's trials for the field's tools.

RUN is a run folder, a run id under --run-dir, or a folder holding runs (a campaign folder, a runs folder):
every agent run under it. `atif` writes `DIR/<run id>/<task>.a<attempt>/trajectory.json` per trial (Harbor's
Agent Trajectory Interchange Format); `inspect` writes `DIR/<run id>.eval` per run and the folder's listing,
for `inspect view --log-dir DIR`. docs/export.md says what each field holds.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from agentic_eval.cli.args import check_run_files
from agentic_eval.errors import AgenticEvalError
from agentic_eval.plural import counted

FORMATS = ("atif", "inspect")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("export", help="write a run's trials as ATIF trajectories or an Inspect eval log")
    p.add_argument("run", metavar="RUN", help="a run folder or id, or a folder of runs (a campaign's): all of them")
    p.add_argument("--format", required=True, choices=FORMATS,
                   help="atif: one trajectory.json per trial (Harbor); inspect: one eval log per run (inspect view)")
    p.add_argument("--out", required=True, metavar="DIR", help="folder to write into (made if missing)")
    p.add_argument("--run-dir", default="runs", metavar="DIR", help="where run ids are looked up (default ./runs)")
    p.set_defaults(handler=handle)


def find_runs(given: str, runs_root: Path) -> list[Path]:
    """The agent run folders RUN names: itself, or every run folder under it (never inside a trial's folder,
    where a kept sandbox holds whatever the model wrote)."""
    from agentic_eval.results.run_folder import RUN_FILE, inside_run, is_run, resolve_agent_run

    path = Path(given)
    if is_run(path) or not path.is_dir():
        return [resolve_agent_run(given, runs_root, to="export")]
    found = []
    for folder, subfolders, files in os.walk(path):
        if RUN_FILE in files:
            found.append(Path(folder))
            subfolders.clear()  # a run's own folders (trials/...) hold no runs
        else:
            subfolders.sort()
    if not found:
        raise AgenticEvalError(inside_run(path) or f"{given}: no run folder in it (a run folder holds {RUN_FILE}); "
                               "give a run, or a folder of runs such as a campaign's")
    return sorted(found)


def _names(runs: list[Any], root: Path) -> list[str]:
    """Each run's name in the output: its run id, or where two runs share one (a copied run), its path under
    RUN with '/' as '__'. The writers map a name that is not one safe file name to a safe one."""
    ids = [run.config.run_id for run in runs]
    if len(set(ids)) == len(ids):
        return ids
    return [str(run.run_dir.relative_to(root)).replace(os.sep, "__") if run.run_dir.is_relative_to(root)
            else run.run_dir.name for run in runs]


def _warn(line: str) -> None:
    print(f"agentic-eval: warning: {line}", file=sys.stderr)


def handle(args: argparse.Namespace) -> int:
    from agentic_eval.export.trials import read_run

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise AgenticEvalError(f"--out {out}: is a file; give a folder")
    folders = find_runs(args.run, Path(args.run_dir))
    for folder in folders:
        check_run_files(folder)  # a FIFO or /dev/zero for run.json or trials.jsonl: one line, never a hang
    runs = [read_run(folder) for folder in folders]
    for run in runs:
        for warning in run.warnings:
            _warn(warning)
    trials = sum(len(run.records) for run in runs)
    names = _names(runs, Path(args.run))
    if args.format == "inspect":
        from agentic_eval.export.inspect_log import export_inspect, require_inspect

        require_inspect()
        written = export_inspect(runs, out, names, warn=_warn)
        print(f"wrote {counted(len(written), 'Inspect log')} ({counted(trials, 'trial')}) to {out}; "
              f"view them with: inspect view --log-dir {out}")
        return 0
    from agentic_eval.export.atif import export_atif
    from agentic_eval.runfiles import safe_name, shown

    count = 0
    for run, given in zip(runs, names, strict=True):
        name, changed = safe_name(given)
        if changed:  # a run id such as ../../x or /abs from a run folder someone handed over
            _warn(f"run {shown(given)}: not a safe folder name; written under {out / name}")
        count += len(export_atif(run, out / name, warn=_warn, root=out))
    print(f"wrote {counted(count, 'ATIF trajectory', 'ATIF trajectories')} ({counted(len(runs), 'run')}) under {out}")
    return 0
