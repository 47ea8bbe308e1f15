"""Sealed grading (issue 25): the model's code runs apart from the grader and cannot write its verdict.

Each test builds the grading-integrity task (calc.add broken), edits its sandbox the way a cheating model
would, and grades it through the real ScriptRunner under the default backend (bwrap where it works): what
the model's code does while it is graded must end in a scored fail, never a pass or an unscored error.
tests/test_docker_backend.py runs the same helpers and graders under the docker backend.
"""

from __future__ import annotations

import os
import stat
import textwrap
import time
from pathlib import Path

import pytest

from agentic_eval.confine.host import LocalBackend, bwrap_problem
from agentic_eval.confine.registry import default_backend
from agentic_eval.grading.grader import Verdict
from agentic_eval.grading.sealed import CodeHost, read_regular
from tests.helpers import (
    FIXED,
    FORGERIES,
    HANG_GRADER,
    PROBE_GRADER,
    WRITER_GRADER,
    probed,
    sealed_grade,
    sealed_sandbox,
    sealed_task,
)

needs_bwrap = pytest.mark.skipif(bwrap_problem() is not None, reason=f"bwrap: {bwrap_problem()}")

@needs_bwrap
@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_a_forged_test_run_is_a_fail(tmp_path: Path, forgery: str) -> None:
    task = sealed_task(tmp_path)
    broken = "def add(a, b):\n    return a - b\n"
    sandbox = sealed_sandbox(task, tmp_path, {"src/calc.py": broken + textwrap.dedent(FORGERIES[forgery])})
    verdict, output = sealed_grade(task, sandbox)
    assert verdict is Verdict.FAIL, output


@needs_bwrap
def test_the_honest_fix_still_passes(tmp_path: Path) -> None:
    task = sealed_task(tmp_path)
    verdict, output = sealed_grade(task, sealed_sandbox(task, tmp_path, {"src/calc.py": FIXED}))
    assert verdict is Verdict.PASS, output


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="another uid needs a root harness (else: another user namespace)")
def test_the_models_code_sees_nothing_of_the_task_or_the_grader(tmp_path: Path) -> None:
    task = sealed_task(tmp_path, PROBE_GRADER)
    verdict, output = sealed_grade(task, sealed_sandbox(task, tmp_path, {}))
    assert verdict is Verdict.PASS, output
    seen, grader = probed(output)
    assert seen["uid"] != grader["uid"], output  # the model's code runs as another uid


@needs_bwrap
def test_what_the_models_code_writes_never_reaches_the_snapshot(tmp_path: Path) -> None:
    task = sealed_task(tmp_path, WRITER_GRADER)
    sandbox = sealed_sandbox(task, tmp_path, {})
    verdict, output = sealed_grade(task, sandbox)
    assert verdict is Verdict.PASS, output
    assert (sandbox.path / "README.md").read_text() == "calc\n"
    assert not (sandbox.path / "NEW.md").exists()


@needs_bwrap
@pytest.mark.parametrize("module", [
    "import time\ntime.sleep(600)\n",
    "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nos.killpg(0, signal.SIGKILL)\n",
    "import os\nos._exit(1)\n",
    "while True:\n    pass\n",
])
def test_code_that_hangs_or_kills_is_a_scored_fail(tmp_path: Path, module: str) -> None:
    """The call asks for 600 s, the grader has 8: the command is cut before the grader's time is up, so
    the grader still says fail (never a grader_error that resume would retry)."""
    task = sealed_task(tmp_path, HANG_GRADER, timeout=8)
    start = time.monotonic()
    verdict, output = sealed_grade(task, sealed_sandbox(task, tmp_path, {"src/calc.py": FIXED + module}))
    assert verdict is Verdict.FAIL, output
    assert time.monotonic() - start < 30


CALLS_GRADER = """
    from gradelib import Call, Grader, Raises, Returns
    g = Grader()
    g.calls_return("calc", [
        ("add", [2, 3], 5),
        ("add", [0.5, 0.25], 0.75),
        (Call("add", ("a", "b")), "ab"),
        (Call("Box", (3,)), Returns()),
        (Call("$3.get"), 3),
        ("div", [1, 0], Raises("ArithmeticError")),
    ], pythonpath=["src"])
    g.finish()
"""
CALC = FIXED + """
class Box:
    def __init__(self, v):
        self.v = v
    def get(self):
        return self.v
def div(a, b):
    return a / b
"""


@pytest.mark.parametrize("source, passes", [
    (CALC, True),
    # an object that equals everything does not cross: it is not plain data
    (CALC + "class _Any:\n    def __eq__(self, o):\n        return True\n"
            "_real = add\ndef add(a, b):\n    return _Any()\n", False),
    (CALC.replace("return a + b", "return int(a + b)"), False),  # 0.75 -> 0: the type and value differ
    (CALC.replace("return a / b", "return None"), False),
    (CALC + "\nraise NotImplementedError\n", False),
])
def test_calls_compare_plain_data_in_the_grader(tmp_path: Path, source: str, passes: bool) -> None:
    task = sealed_task(tmp_path, CALLS_GRADER)
    verdict, output = sealed_grade(task, sealed_sandbox(task, tmp_path, {"src/calc.py": source}))
    assert verdict is (Verdict.PASS if passes else Verdict.FAIL), output


FIFO_GRADER = """
    from gradelib import Grader
    g = Grader()
    g.file_contains("README.md", "calc")
    g.pytest_passes(["tests"], pythonpath=["src"])
    g.finish()
"""


@needs_bwrap
def test_fifos_in_the_tree_block_nothing(tmp_path: Path) -> None:
    task = sealed_task(tmp_path, FIFO_GRADER, timeout=20)
    sandbox = sealed_sandbox(task, tmp_path, {"src/calc.py": FIXED})
    (sandbox.path / "README.md").unlink()
    os.mkfifo(sandbox.path / "README.md")
    os.mkfifo(sandbox.path / "src" / "pipe")
    default_backend().prepare(sandbox.path)
    start = time.monotonic()
    verdict, output = sealed_grade(task, sandbox)
    assert verdict is Verdict.FAIL, output
    assert "README.md contains 'calc': no such file" in output
    assert time.monotonic() - start < 15


def test_collected_files_never_follow_links_or_open_fifos(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "d").mkdir(parents=True)
    (root / "plain.txt").write_text("ok")
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    (root / "link.txt").symlink_to(secret)
    (root / "dirlink").symlink_to(tmp_path)
    os.mkfifo(root / "fifo")
    assert read_regular(root, "plain.txt", 100) == (b"ok", "")
    assert read_regular(root, "link.txt", 100)[0] is None
    assert read_regular(root, "dirlink/secret.txt", 100)[0] is None
    assert read_regular(root, "fifo", 100) == (None, "not a regular file")
    assert read_regular(root, "../secret.txt", 100)[0] is None
    assert read_regular(root, "plain.txt", 1)[0] is None


def test_files_given_never_follow_a_planted_link(tmp_path: Path) -> None:
    """A link the model's code left in its work copy must not lead the harness's writes out of it."""
    snapshot = tmp_path / "snap"
    snapshot.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    host = CodeHost(snapshot, tmp_path / "host", LocalBackend())
    try:
        host.run({"argv": ["ln", "-s", str(outside), "out"]})
        response = host.run({"argv": ["true"], "files": {"out/x.txt": "aGk="}})
        assert response["exit"] is None and "could not be placed" in response["stopped_by"], response
        assert not (outside / "x.txt").exists()
        (host.scratch / "x").mkdir()
        response = host.run({"argv": ["true"], "collect": ["out"], "files": {f"{host.scratch}/x/y": "aGk="}})
        assert response["files"] == {"out": None}
        assert stat.S_ISREG(os.lstat(host.scratch / "x" / "y").st_mode)
    finally:
        host.close()


def test_a_fresh_copy_empties_the_folders_in_place(tmp_path: Path) -> None:
    """A fresh copy refills the work and scratch folders without replacing them (a container binds them), and
    removes links the model's code left without following them."""
    snapshot = tmp_path / "snap"
    snapshot.mkdir()
    (snapshot / "a.txt").write_text("a")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    host = CodeHost(snapshot, tmp_path / "host", LocalBackend())
    try:
        host.run({"argv": ["sh", "-c", f"echo x > a.txt; mkdir -p d; echo y > d/f; ln -s {outside} out; "
                                       f"ln -s {outside} {host.scratch}/out; echo z > {host.scratch}/z"]})
        folders = [os.stat(p).st_ino for p in (host.work, host.scratch)]
        host.run({"argv": ["true"], "fresh": True})
        assert [os.stat(p).st_ino for p in (host.work, host.scratch)] == folders
        assert sorted(os.listdir(host.work)) == ["a.txt"] and (host.work / "a.txt").read_text() == "a"
        assert sorted(os.listdir(host.scratch)) == ["home"]
        assert (outside / "keep.txt").read_text() == "keep"
    finally:
        host.close()


def test_nothing_is_copied_or_run_once_the_graders_time_is_up(tmp_path: Path) -> None:
    snapshot = tmp_path / "snap"
    snapshot.mkdir()
    host = CodeHost(snapshot, tmp_path / "host", LocalBackend())
    try:
        host.deadline = time.monotonic() - 1
        response = host.run({"argv": ["touch", str(tmp_path / "ran")], "fresh": True})
        assert response["exit"] is None and "time is up" in response["stopped_by"]
        assert not host.work.exists() and not (tmp_path / "ran").exists()
    finally:
        host.close()


def test_close_ends_a_command_still_running(tmp_path: Path) -> None:
    """A grader that was stopped leaves its command running in the host: close() cancels it and returns once it
    has ended, so the backend's container (docker) goes after it, never while it starts."""
    import threading

    from agentic_eval.grading.sealed import request

    snapshot = tmp_path / "snap"
    snapshot.mkdir()
    host = CodeHost(snapshot, tmp_path / "host", LocalBackend())
    threading.Thread(target=lambda: request({"argv": ["sleep", "60"], "timeout": 60}, str(host.socket_path)),
                     daemon=True).start()
    deadline = time.monotonic() + 10
    while not host._lock.locked():  # the command has started
        assert time.monotonic() < deadline
        time.sleep(0.01)
    start = time.monotonic()
    host.close()
    assert time.monotonic() - start < 5
    assert not host._lock.locked()
