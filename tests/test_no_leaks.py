"""A campaign of thousands of trials runs in one process: a trial must leave none of its file descriptors, threads,
child processes or marked temp folders behind it. A few per trial would end a long campaign in EMFILE, which
agentic_eval.faults rules the machine's fault: every later trial unscored."""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from agentic_eval.confine.host import bwrap_problem
from agentic_eval.confine.relay_harness import UnixRelay
from agentic_eval.leftovers import TEMP_FOLDER_PREFIXES
from agentic_eval.runner import start_run

CORE = Path(__file__).parent.parent / "tasks" / "core"
TASK = "add-function-with-test"
"""A core task whose gradelib grader runs the model's tests with pytest: on a root harness on bwrap through the fork
server (grading/forkrun.py), elsewhere as processes of their own; on every backend through the grader's code host."""


def _children() -> int:
    """This process's child processes (Linux: /proc)."""
    me, count = os.getpid(), 0
    for entry in os.listdir("/proc"):
        try:
            stat = Path("/proc", entry, "stat").read_text() if entry.isdigit() else ""
        except OSError:
            continue
        count += bool(stat) and int(stat.rsplit(")", 1)[1].split()[1]) == me
    return count


def _own_temp_folders() -> int:
    """The marked temp folders of this process (a trial's, a grading's, a wire socket's...) but its one identity
    folder, which lives as long as the process."""
    count = 0
    for entry in Path(tempfile.gettempdir()).iterdir():
        if not entry.name.startswith(TEMP_FOLDER_PREFIXES) or entry.name.startswith("ae-identity-"):
            continue
        try:
            count += json.loads((entry / "owner.json").read_text())["pid"] == os.getpid()
        except (OSError, ValueError, KeyError):
            continue
    return count


def _fd_kinds() -> list[str]:
    """What this process's fds are ('pipe', 'socket', a path), for the failure message."""
    kinds = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            kinds.append(os.readlink(f"/proc/self/fd/{fd}").split(":[")[0])
        except OSError:
            continue
    return sorted(kinds)


def _counts() -> dict[str, int]:
    return {"fds": len(os.listdir("/proc/self/fd")), "threads": threading.active_count(),
            "native threads": len(os.listdir("/proc/self/task")), "children": _children(),
            "temp folders": _own_temp_folders()}


def test_trials_leave_no_fds_threads_processes_or_temp_folders(tmp_path: Path) -> None:
    sandbox = "bwrap" if bwrap_problem() is None else "local"

    def campaign(attempts: int) -> None:
        done = start_run(agent="oracle", tasks=[str(CORE)], task_ids=[TASK], attempts=attempts, sandbox=sandbox,
                         runs_root=tmp_path / "runs", log=lambda text, style=None: None)
        assert done.outcomes == {"pass": attempts}

    def cli_relays(count: int) -> None:  # what a CLI agent's trial adds: its way out to the wire recorder
        for _ in range(count):
            folder = Path(tempfile.mkdtemp(dir=tmp_path))
            UnixRelay(folder, "127.0.0.1", 9).close()

    campaign(1)  # what a process makes once (lazy imports, its identity folder, the remover's thread) is made here
    cli_relays(1)
    base, base_fds, base_threads = _counts(), _fd_kinds(), [t.name for t in threading.enumerate()]
    campaign(3)
    cli_relays(3)
    counts = _counts()
    for _ in range(300):  # a trial's folders are removed off its path: give the remover its moment (bounded)
        if all(counts[key] <= base[key] + 1 for key in base) and counts["temp folders"] <= base["temp folders"]:
            break
        time.sleep(0.1)
        counts = _counts()
    grown = {key: (base[key], counts[key]) for key in base if counts[key] > base[key] + (key != "temp folders")}
    new_fds = Counter(_fd_kinds()) - Counter(base_fds)
    new_threads = Counter(t.name for t in threading.enumerate()) - Counter(base_threads)
    assert not grown, (f"after 3 trials on {sandbox} and 3 CLI relays (before, after): {grown}; "
                       f"new fds: {dict(new_fds)}, new threads: {dict(new_threads)}")
