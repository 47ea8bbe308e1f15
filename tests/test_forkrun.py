"""The fork server for gradelib's pytest runs (grading/forkrun.py, issue 39's grading time): nothing of one run reaches
another (a test that remembers across runs, or looks beside it, finds nothing), and a server that ends makes its runs
no evidence, never a pass. Runs only where it is used: a root harness on bwrap."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.confine.backend import Confinement
from agentic_eval.confine.host import BwrapBackend, bwrap_problem
from agentic_eval.grading import forkrun
from agentic_eval.grading.sealed import CodeHost, decode
from tests.helpers import gradelib, write

PROBE = Path(__file__).parent / "data" / "forkrun" / "remember_probe.py"
needs_root_bwrap = pytest.mark.skipif(bwrap_problem() is not None or os.geteuid() != 0,
                                      reason="the fork server runs for a root harness on bwrap only")


def _host(tmp_path: Path, files: dict[str, str | bytes]) -> CodeHost:
    write(tmp_path / "snap", files)
    return CodeHost(tmp_path / "snap", tmp_path / "host", BwrapBackend(), lanes=2)


def _pytest_argv(host: CodeHost, *tests: str) -> list[str]:
    return [sys.executable, "-I", "-B", "-c", forkrun.PYTEST_BOOT, str(host.work / "src"), "-q", "-x",
            *gradelib.PYTEST_PLUGINS_OFF, "--noconftest", "--rootdir", str(host.work), *tests]


def _remembering(host: CodeHost) -> dict[str, Any]:
    report = f"{host.scratch}/report.json"
    response = host.run({"argv": _pytest_argv(host, "tests/test_remember.py"), "apart": True, "timeout": 60,
                         "collect": [report]})
    data = response["files"].get(report)
    assert data is not None, response
    return {"exit": response["exit"], **json.loads(decode(data))}


def test_only_gradelibs_exact_pytest_run_is_forked() -> None:
    argv = [sys.executable, "-I", "-B", "-c", forkrun.PYTEST_BOOT, "/w/src:/w/lib", "-q", "tests"]
    assert forkrun.pytest_run(argv) == (["/w/src", "/w/lib"], ["-q", "tests"])
    assert forkrun.pytest_run([*argv[:4], forkrun.PYTEST_BOOT + "\n", *argv[5:]]) is None
    assert forkrun.pytest_run([argv[0], "-B", "-I", *argv[3:]]) is None
    assert gradelib._PYTEST_BOOT == forkrun.PYTEST_BOOT


@needs_root_bwrap
def test_a_test_that_remembers_finds_nothing_of_a_run_before_or_beside_it(tmp_path: Path) -> None:
    """Marks in /tmp, /dev/shm, the scratch folder, the copy's parents, a process left running, a loopback listener,
    an abstract unix socket, a key in the session and user keyrings, a SysV segment, a pty: two runs one after the
    other, then two side by side, each find none of another's (and each sees its own: the looking works). No process
    of another uid (the server, its children) and no socket fd is in a run's sight."""
    host = _host(tmp_path, {"tests/test_remember.py": PROBE.read_text()})
    try:
        reports = [_remembering(host), _remembering(host)]
        beside: list[dict[str, Any]] = []
        threads = [threading.Thread(target=lambda: beside.append(_remembering(host))) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        reports += beside
        assert len(reports) == 4 and host.forked == 4
        for report in reports:
            assert report["exit"] == 0 and report["before"] == {} and report["beside"] == {}, report
            assert {"tmp", "scratch", "process", "tcp", "abstract", "key-session", "key-user", "sysv-shm",
                    "pts"} <= set(report["own"]), report
            assert report["others"] == {} and report["pid"] == 2, report  # pytest is PID 2, as under bwrap
            assert report["name"] == "agent" and report["lanes"] == 1, report  # who it is; its own lane alone
        assert len({report["uid"] for report in reports}) == 4  # a uid per run
    finally:
        host.close()


@needs_root_bwrap
def test_the_remembering_test_finds_a_run_that_shares_its_place(tmp_path: Path) -> None:
    """The control: two runs of the probe in one bwrap (one PID, network, IPC namespace and /tmp, one uid): the
    second finds the first's marks, so the test above would see a channel if there were one."""
    write(tmp_path / "w", {"tests/test_remember.py": PROBE.read_text()})
    backend = BwrapBackend()
    inner = [sys.executable, "-I", "-B", "-c", forkrun.PYTEST_BOOT, "", "-q", "-p", "no:cacheprovider",
             "--rootdir", str(tmp_path / "w"), "tests/test_remember.py"]
    script = 'mkdir -p "$HOME"; "$@"; echo "first $?"; "$@"; echo "second $?"; cat "$HOME/../report.json"'
    argv = backend.wrap(["sh", "-c", script, "sh", *inner], cwd=tmp_path / "w",
                        spec=Confinement(writable=(tmp_path / "w",)))
    import subprocess

    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "w/h/home")}
    done = subprocess.run(argv, cwd=tmp_path / "w", env=env, capture_output=True, text=True, timeout=120, check=False)
    assert "first 0" in done.stdout and "second 1" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"tmp", "process", "tcp", "abstract", "key-user", "sysv-shm"} <= set(report["before"]), report
    assert any(k.startswith("pts ") for k in report["before"]), report


@needs_root_bwrap
def test_a_warmed_servers_exit_output_and_timeout_are_as_a_process_of_its_own_and_its_end_is_no_evidence(
        tmp_path: Path) -> None:
    import mutation

    host = _host(tmp_path, {"tests/test_ok.py": "def test_ok():\n    print('said')\n",
                            "tests/test_no.py": "def test_no():\n    assert 2 + 2 == 5\n",
                            "tests/test_slow.py": "import time\n\ndef test_slow():\n    time.sleep(60)\n"})
    try:
        assert host.run({"warm": "pytest", "python": sys.executable})["exit"] == 0  # started meanwhile, used below
        ok = host.run({"argv": [*_pytest_argv(host, "tests/test_ok.py"), "-s"], "apart": True, "timeout": 60})
        no = host.run({"argv": _pytest_argv(host, "tests/test_no.py"), "apart": True, "timeout": 60})
        assert (ok["exit"], no["exit"]) == (0, 1) and "said" in ok["output"] and "1 failed" in no["output"], (ok, no)
        slow = host.run({"argv": _pytest_argv(host, "tests/test_slow.py"), "apart": True, "timeout": 3})
        assert (slow["exit"], slow["stopped_by"]) == (None, "timed out after 3s"), slow
        assert host.forked == 3
        server = host._fork_server
        assert server is not None and server._proc is not None
        answers: list[dict[str, Any]] = []
        runner = threading.Thread(target=lambda: answers.append(host.run(
            {"argv": _pytest_argv(host, "tests/test_slow.py"), "apart": True, "timeout": 60})))
        runner.start()
        time.sleep(2.0)  # the run is in flight (the verdict holds either way: before it, it is no evidence too)
        server._proc.kill()
        runner.join(60)
        for _ in range(200):  # bounded: the server's keeper thread notices at once
            if server.broken:
                break
            time.sleep(0.05)
        later = host.run({"argv": _pytest_argv(host, "tests/test_ok.py"), "apart": True, "timeout": 60})
        for answer in (*answers, later):
            assert answer["exit"] is None and answer["stopped_by"].startswith("no evidence"), answer
            run = gradelib.RunResult(answer["exit"], answer["output"], answer["stopped_by"])
            assert mutation._outcome(run, 60.0)[0] is None  # neither a pass nor a fail: the check fails
    finally:
        host.close()


@needs_root_bwrap
def test_a_harness_holding_over_1024_files_still_forks_its_runs(tmp_path: Path) -> None:
    """A long campaign (or a test worker) holds many files: the run's socket then has an fd select() cannot take."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"this process may open only {hard} files")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200) if soft != resource.RLIM_INFINITY else soft, hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    host = _host(tmp_path, {"tests/test_ok.py": "def test_ok():\n    pass\n"})
    try:
        response = host.run({"argv": _pytest_argv(host, "tests/test_ok.py"), "apart": True, "timeout": 60})
        assert response["exit"] == 0 and host.forked == 1, response
    finally:
        host.close()
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@needs_root_bwrap
def test_a_python_that_lives_under_tmp_is_there_for_its_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A venv under /tmp (as CI's, or a test's) is bound into the server under its /tmp; each run's fresh /tmp puts
    it back as it was (read-only), so that what pytest or the tests import late is found."""
    import subprocess

    from agentic_eval.confine import host as confine_host

    venv = tmp_path / "venv"  # under /tmp: pytest's own temporary folders are
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "late_probe.py").write_text("VALUE = 42\n", encoding="utf-8")
    roots = confine_host.python_roots()  # the harness's Python, and this venv as if it were the harness's
    monkeypatch.setattr(confine_host, "python_roots", lambda: [*roots, venv])
    host = _host(tmp_path, {"tests/test_late.py": (
        "import os, sys\n\ndef test_late():\n    import late_probe\n    assert late_probe.VALUE == 42\n"
        "    try:\n        open(os.path.join(sys.prefix, 'written'), 'w')\n    except OSError:\n        return\n"
        "    raise AssertionError('the Python root is writable')\n")})
    try:
        argv = [python, *_pytest_argv(host, "tests/test_late.py")[1:]]
        response = host.run({"argv": argv, "apart": True, "timeout": 60})
        assert response["exit"] == 0 and host.forked == 1, response
    finally:
        host.close()


@needs_root_bwrap
def test_a_run_sees_none_of_the_harness_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fork keeps the environment block its server was started with (/proc/self/environ, and PID 1's): that block
    holds only what a run started on its own gets, never the harness's keys or settings."""
    monkeypatch.setenv("AE_HARNESS_SECRET", "s3cr3t-of-the-harness")
    host = _host(tmp_path, {"tests/test_env.py": (
        "import os\n\ndef test_env():\n"
        "    seen = [open(p, 'rb').read() for p in ('/proc/self/environ', '/proc/1/environ')]\n"
        "    assert not any(b's3cr3t' in block for block in seen), seen\n"
        "    assert 'AE_HARNESS_SECRET' not in os.environ\n")})
    try:
        response = host.run({"argv": _pytest_argv(host, "tests/test_env.py"), "apart": True, "timeout": 60})
        assert response["exit"] == 0 and host.forked == 1, response
    finally:
        host.close()


@needs_root_bwrap
@pytest.mark.parametrize("forked", [True, False])
def test_a_run_sees_no_uids_kernel_key_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forked: bool) -> None:
    """/proc/key-users lists every uid's key counts, which no namespace hides: a run that adds keys and one that
    counts the uids there would tell how many ran before it. Both ways of running cover it with an empty file."""
    if not forked:
        monkeypatch.setenv(forkrun.SWITCH_ENV, "0")
    host = _host(tmp_path, {"tests/test_keys.py": (
        "import os\n\ndef test_keys():\n    for p in ('/proc/key-users', '/proc/keys'):\n"
        "        assert not os.path.exists(p) or open(p, 'rb').read() == b'', p\n")})
    try:
        response = host.run({"argv": _pytest_argv(host, "tests/test_keys.py"), "apart": True, "timeout": 60})
        assert response["exit"] == 0 and host.forked == int(forked), response["output"]
    finally:
        host.close()


@needs_root_bwrap
def test_switched_off_a_run_is_a_process_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(forkrun.SWITCH_ENV, "0")
    host = _host(tmp_path, {"tests/test_ok.py": "def test_ok():\n    pass\n"})
    try:
        response = host.run({"argv": _pytest_argv(host, "tests/test_ok.py"), "apart": True, "timeout": 60})
        assert response["exit"] == 0 and host.forked == 0 and host._fork_server is None
    finally:
        host.close()
