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

from agentic_eval.confine.backend import LocalBackend, SandboxBackend, bwrap_problem, default_backend
from agentic_eval.packs.grader import ScriptRunner, Verdict
from agentic_eval.packs.sandbox import Sandbox, materialize_sandbox
from agentic_eval.packs.sealed import CodeHost, read_regular
from agentic_eval.packs.task import Task, load_tasks
from tests.helpers import integrity_pack

needs_bwrap = pytest.mark.skipif(bwrap_problem() is not None, reason=f"bwrap: {bwrap_problem()}")

FIXED = "def add(a, b):\n    return a + b\n"


def _task(tmp_path: Path, grader: str | None = None, timeout: int = 30) -> Task:
    pack = integrity_pack(tmp_path, grader=textwrap.dedent(grader)) if grader else integrity_pack(tmp_path)
    toml = pack / "calc" / "task.toml"
    toml.write_text(toml.read_text().replace("grader_timeout_s = 30", f"grader_timeout_s = {timeout}"))
    return load_tasks([pack]).tasks[0]


def _sandbox(task: Task, tmp_path: Path, files: dict[str, str], backend: SandboxBackend | None = None) -> Sandbox:
    sandbox = materialize_sandbox(task, 0, tmp_path / "sandbox")
    for rel, text in files.items():
        (sandbox.path / rel).parent.mkdir(parents=True, exist_ok=True)
        (sandbox.path / rel).write_text(text)
    (backend or default_backend()).prepare(sandbox.path)
    return sandbox


def _grade(task: Task, sandbox: Sandbox, backend: SandboxBackend | None = None) -> tuple[Verdict, str]:
    with ScriptRunner(task, sandbox, backend=backend or default_backend()) as runner:
        result = runner.grade()
    return result.verdict, result.script.output


# What a model appends to the module under test: each rewrites the results from inside the test process.
FORGERIES = {
    "report class patched at import": """
        import _pytest.reports as _r
        _init = _r.TestReport.__init__
        def _passed(self, *a, **k):
            _init(self, *a, **k)
            self.outcome, self.longrepr = "passed", None
        _r.TestReport.__init__ = _passed
    """,
    "plugin registered on the live config": """
        import gc
        import pytest as _pytest
        class _Flip:
            @_pytest.hookimpl(hookwrapper=True)
            def pytest_runtest_makereport(self, item, call):
                outcome = yield
                report = outcome.get_result()
                report.outcome, report.longrepr = "passed", None
        for _obj in gc.get_objects():
            if type(_obj).__name__ == "Config" and hasattr(_obj, "pluginmanager"):
                _obj.pluginmanager.register(_Flip(), "flip")
    """,
    "JUnit report rewritten at exit": """
        import atexit, os, sys
        def _rewrite():
            args = sys.argv
            for i, a in enumerate(args):
                if a in ("--junitxml", "--junit-xml") and i + 1 < len(args):
                    with open(args[i + 1], "w") as f:
                        f.write('<testsuite><testcase classname="tests.test_calc" file="tests/test_calc.py" '
                                'name="test_add"/></testsuite>')
            os._exit(0)
        atexit.register(_rewrite)
    """,
    "exit 0 at import": "import os\nos._exit(0)\n",
}


@needs_bwrap
@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_a_forged_test_run_is_a_fail(tmp_path: Path, forgery: str) -> None:
    task = _task(tmp_path)
    broken = "def add(a, b):\n    return a - b\n"
    sandbox = _sandbox(task, tmp_path, {"src/calc.py": broken + textwrap.dedent(FORGERIES[forgery])})
    verdict, output = _grade(task, sandbox)
    assert verdict is Verdict.FAIL, output


@needs_bwrap
def test_the_honest_fix_still_passes(tmp_path: Path) -> None:
    task = _task(tmp_path)
    verdict, output = _grade(task, _sandbox(task, tmp_path, {"src/calc.py": FIXED}))
    assert verdict is Verdict.PASS, output


PROBE_GRADER = """
    import json, os, socket
    from gradelib import Grader
    g = Grader()
    probe = ("import json, os, socket, sys; print(json.dumps({'uid': os.getuid(), 'env': sorted(os.environ), "
             "'task': os.path.exists(os.path.join(sys.argv[1], 'grade.py')), 'snapshot': os.path.exists(sys.argv[2]), "
             "'sandbox': os.environ.get('AGENTIC_EVAL_SANDBOX'), 'host': socket.gethostname(), "
             "'cgroup': open('/proc/self/cgroup').read()}))")
    task = os.environ["AGENTIC_EVAL_TASK_DIR"]
    out = g.command_ok(["python3", "-c", probe, task, str(g.sandbox)], what="probe")
    seen = json.loads(out.strip().splitlines()[-1])
    print("SEEN", json.dumps(seen))
    print("GRADER", json.dumps({"uid": os.getuid(), "host": socket.gethostname(),
                                "cgroup": open("/proc/self/cgroup").read()}))
    g.check("it cannot see the task folder", not seen["task"])
    g.check("it cannot see the grader's snapshot", not seen["snapshot"])
    g.check("nothing of the task in its environment", not [k for k in seen["env"] if k in (
        "AGENTIC_EVAL_TASK_DIR", "AGENTIC_EVAL_VARS", "AGENTIC_EVAL_PRISTINE", "AGENTIC_EVAL_PRISTINE_GIT",
        "AGENTIC_EVAL_RUN_SOCKET", "AGENTIC_EVAL_PACK_GRADERS")], str(seen["env"]))
    g.check("it works in the work copy", seen["sandbox"] == str(g.work), str(seen["sandbox"]))
    g.finish()
"""


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="another uid needs a root harness (else: another user namespace)")
def test_the_models_code_sees_nothing_of_the_task_or_the_grader(tmp_path: Path) -> None:
    task = _task(tmp_path, PROBE_GRADER)
    verdict, output = _grade(task, _sandbox(task, tmp_path, {}))
    assert verdict is Verdict.PASS, output
    seen, grader = probed(output)
    assert seen["uid"] != grader["uid"], output  # the model's code runs as another uid


def probed(output: str) -> tuple[dict[str, object], dict[str, object]]:
    """What PROBE_GRADER printed: the model's code's view, and the grader's own uid, host name and cgroups."""
    import json

    lines = {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in output.splitlines()
             if line.startswith(("SEEN ", "GRADER "))}
    return json.loads(lines["SEEN"]), json.loads(lines["GRADER"])


WRITER_GRADER = """
    import os
    from gradelib import Grader
    g = Grader()
    # the model's code tries to change what the grader reads: the snapshot, by its path, and its own copy
    g.run(["sh", "-c", f"echo forged > {g.sandbox}/README.md; echo forged > README.md; echo new > NEW.md"])
    g.file_contains("README.md", "calc")
    g.file_absent("NEW.md")
    g.check("the work copy changed", g.run(["cat", "README.md"]).output.strip() == "forged")
    g.finish()
"""


@needs_bwrap
def test_what_the_models_code_writes_never_reaches_the_snapshot(tmp_path: Path) -> None:
    task = _task(tmp_path, WRITER_GRADER)
    sandbox = _sandbox(task, tmp_path, {})
    verdict, output = _grade(task, sandbox)
    assert verdict is Verdict.PASS, output
    assert (sandbox.path / "README.md").read_text() == "calc\n"
    assert not (sandbox.path / "NEW.md").exists()


HANG_GRADER = """
    from gradelib import Call, Grader
    g = Grader()
    g.calls_return("calc", [("add", [2, 3], 5)], pythonpath=["src"], timeout=600)
    g.finish()
"""


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
    task = _task(tmp_path, HANG_GRADER, timeout=8)
    start = time.monotonic()
    verdict, output = _grade(task, _sandbox(task, tmp_path, {"src/calc.py": FIXED + module}))
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
    task = _task(tmp_path, CALLS_GRADER)
    verdict, output = _grade(task, _sandbox(task, tmp_path, {"src/calc.py": source}))
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
    task = _task(tmp_path, FIFO_GRADER, timeout=20)
    sandbox = _sandbox(task, tmp_path, {"src/calc.py": FIXED})
    (sandbox.path / "README.md").unlink()
    os.mkfifo(sandbox.path / "README.md")
    os.mkfifo(sandbox.path / "src" / "pipe")
    default_backend().prepare(sandbox.path)
    start = time.monotonic()
    verdict, output = _grade(task, sandbox)
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
