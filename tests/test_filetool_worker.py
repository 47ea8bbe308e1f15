"""The built-in agent's file tool worker: one confined process serving a run's file tool calls, run for
real through the local and bwrap backends."""

from __future__ import annotations

import dataclasses
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentic_eval.agents.builtin.tools import FileToolWorker, ToolLimits, execute_tool
from agentic_eval.confine.host import bwrap_problem, sandbox_uid
from agentic_eval.confine.process import signal_group
from agentic_eval.confine.registry import get_backend


def _backends() -> list[str]:
    if bwrap_problem() is None or os.environ.get("CI") == "true":
        return ["local", "bwrap"]
    return ["local"]


def _tree(pid: int) -> list[int]:
    """`pid` and its descendants, from /proc."""
    found: list[int] = []
    todo = [pid]
    while todo and len(found) < 100:
        found.append(current := todo.pop())
        for task in Path(f"/proc/{current}/task").iterdir():
            todo.extend(int(child) for child in (task / "children").read_text().split())
    return found


@pytest.fixture(params=_backends())
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, ToolLimits]]:
    root = tmp_path / "sandbox"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def add(a, b):\n    return a - b\n")
    (tmp_path / "outside.txt").write_text("secret\n")
    (root / "link").symlink_to(tmp_path / "outside.txt")
    backend = get_backend(request.param)
    backend.prepare(root)
    base = ToolLimits(bash_timeout_s=10, file_tool_timeout_s=10, backend=backend)
    limits = dataclasses.replace(base, worker=FileToolWorker(root, base))
    try:
        yield root, limits
    finally:
        limits.worker.close()


def test_one_worker_serves_every_file_tool_with_the_same_checks(served: tuple[Path, ToolLimits]) -> None:
    root, limits = served
    calls = [("read_file", {"path": "src/app.py"}, "return a - b", False),
             ("edit_file", {"path": "src/app.py", "old_string": "a - b", "new_string": "a + b"}, "replaced 1", False),
             ("write_file", {"path": "new/notes.txt", "content": "one\ntwo\n"}, "wrote 8 bytes", False),
             ("grep", {"pattern": "a \\+ b"}, "src/app.py:2:", False),
             ("list_dir", {}, "new/", False),
             ("read_file", {"path": "../outside.txt"}, "outside the repository", True),
             ("read_file", {"path": "link"}, "outside the repository", True),
             ("write_file", {"path": "/etc/evil", "content": "x"}, "outside the repository", True),
             ("write_file", {"path": "big.txt", "content": "b" * 1_000_000}, "wrote 1000000 bytes", False)]
    for name, args, expected, is_error in calls:
        result = execute_tool(root, name, args, limits)
        assert (expected in result.text, result.is_error) == (True, is_error), (name, result)
    assert (root / "new" / "notes.txt").read_text() == "one\ntwo\n"
    assert (root / "big.txt").read_text() == "b" * 1_000_000  # more than a pipe holds, written whole
    assert "a + b" in (root / "src" / "app.py").read_text()
    assert (root / "new" / "notes.txt").stat().st_uid == (sandbox_uid(root) if limits.backend.confined
                                                          else os.getuid())
    assert limits.worker.started == 1
    assert not (root.parent / "evil").exists()


def test_a_hung_or_killed_worker_fails_that_call_only(served: tuple[Path, ToolLimits]) -> None:
    root, limits = served
    (root / "big.txt").write_text("a" * 40 + "\n")
    quick = dataclasses.replace(limits, file_tool_timeout_s=1.0)
    hung = execute_tool(root, "grep", {"pattern": "(a*)*b"}, quick)  # catastrophic backtracking: never answers
    assert hung.is_error and "timed out" in hung.text and "was killed" in hung.text
    assert execute_tool(root, "read_file", {"path": "src/app.py"}, limits).text.startswith("def add")
    assert limits.worker.started == 2
    # Killed between calls (its process group gone): the next call starts a new worker and succeeds.
    signal_group(limits.worker._proc.pid)
    limits.worker._proc.wait()
    assert execute_tool(root, "list_dir", {"path": "src"}, limits).text == "app.py"
    assert limits.worker.started == 3
    # Stopped (it reads nothing more): a request larger than a pipe holds cannot hang the call past its time.
    for pid in _tree(limits.worker._proc.pid):  # bwrap's child runs in a session of its own
        os.kill(pid, signal.SIGSTOP)
    stuck = execute_tool(root, "write_file", {"path": "w.txt", "content": "w" * 1_000_000}, quick)
    assert stuck.is_error and "timed out" in stuck.text
    assert execute_tool(root, "read_file", {"path": "big.txt"}, limits).text == "a" * 40 + "\n"
    assert limits.worker.started == 4
    # Cancelled mid-call: that call's error, at once.
    cancel = threading.Event()
    cancel.set()
    stopped = execute_tool(root, "read_file", {"path": "src/app.py"}, dataclasses.replace(limits, cancel=cancel))
    assert stopped.is_error and "cancelled" in stopped.text
    limits.worker.close()
    assert limits.worker._proc is None
