"""The docker sandbox backend against real Docker engines: private dockerd instances started here (or the
one DOCKER_HOST names), the suite's image built from Debian's packages, commands run the way the harness
runs them (the backend's command line, as a process group)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from agentic_eval.paths import cache_dir
from tests.helpers import (  # before the tests isolate HOME: it reads where the CLIs are installed
    CLI_TOOLS,
    DOCKERD,
    PolicyEndpoint,
    chat_reply,
    docker_engine,
    kill_when_running,
    no_docker_engine,
    require_cli,
    run_trial,
    shell_call,
    start_docker_engine,
    stop_docker_engine,
    tiny_port,
    tool_names,
    trial_dir,
    wire_requests,
)

REPO = Path(__file__).resolve().parents[1]
LABEL = "agentic-eval.sandbox"
IMAGE_CACHE = str(cache_dir())
"""The user's cache, read before the tests isolate HOME: the image's root filesystem is built once, not per run."""


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Docker engine: DOCKER_HOST's when it answers, else a private one started for these tests."""
    os.environ.setdefault("AGENTIC_EVAL_CACHE", IMAGE_CACHE)
    yield from docker_engine("dockerd")


@dataclass(frozen=True)
class Spec:
    writable: tuple[Path, ...] = ()
    readable: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()


@pytest.fixture(scope="module")
def backend(engine: str) -> Iterator[object]:
    from agentic_eval.confine.docker import DockerBackend

    b = DockerBackend(hosts=[engine])
    yield b
    b.close_all()


def _sandbox(tmp_path: Path) -> Path:
    sandbox = tmp_path / "sandbox"
    sandbox.mkdir()
    (sandbox / "a.txt").write_text("hello\n")
    return sandbox


def run(backend: object, sandbox: Path, command: str, spec: Spec | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    argv = backend.wrap(["bash", "-c", command], cwd=sandbox, spec=spec or Spec(writable=(sandbox,)))  # type: ignore[attr-defined]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, start_new_session=True,
                          env=env or {"PATH": os.environ["PATH"], "TASK_VAR": "v1"}, check=False)


def test_a_closed_backend_is_not_kept_for_exit(backend: object, tmp_path: Path) -> None:
    """Its containers are closed at exit while it has any; close_all drops it (the atexit hook kept every backend
    ever made, closed or not, for the life of the process)."""
    from agentic_eval.confine import docker

    assert run(backend, _sandbox(tmp_path), "true").returncode == 0
    assert id(backend) in docker._OPEN
    backend.close_all()  # type: ignore[attr-defined]
    assert id(backend) not in docker._OPEN


def test_commands_run_confined_in_the_sandbox(backend: object, tmp_path: Path) -> None:
    sandbox = _sandbox(tmp_path)
    proc = run(backend, sandbox, "id -u; cat a.txt; echo $TASK_VAR; echo written > b.txt; "
                                 "grep CapEff /proc/self/status; cat /proc/1/cmdline | tr '\\0' ' '")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split("\n")
    assert lines[:3] == ["65534", "hello", "v1"]
    assert "0000000000000000" in proc.stdout  # no capabilities
    assert "docker-init" in proc.stdout or "init" in proc.stdout
    assert (sandbox / "b.txt").read_text() == "written\n"  # the same tree the harness grades


@pytest.mark.parametrize("command", [
    "touch /etc/owned",
    "cat /root/.bashrc || cat /etc/shadow",
    "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", 22), 2)'",
    "python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 53), 2)'",
    f"ls {REPO}/tests",
    "ls /var/run/docker.sock",
], ids=["write-root", "read-secrets", "host-loopback", "network", "host-files", "docker-socket"])
def test_what_a_command_cannot_do(backend: object, tmp_path: Path, command: str) -> None:
    proc = run(backend, _sandbox(tmp_path), command)
    assert proc.returncode != 0, proc.stdout


def test_hidden_folders_under_a_mount_are_covered(backend: object, tmp_path: Path) -> None:
    """What an agent's command asks to have hidden (the built-in packs and graders, under the mounted package
    when agentic-eval is a wheel) is an empty, read-only folder at both places the package appears."""
    import agentic_eval

    package = Path(agentic_eval.__file__).resolve().parent
    hidden = package / "packs"
    sandbox = _sandbox(tmp_path)
    alias = f"/opt/agentic-eval/agentic_eval/{hidden.name}"
    command = (f"ls -A {hidden} | wc -l; ls -A {alias} | wc -l; ls {package}/confine | grep -c docker; "
               f"touch {hidden}/x 2>/dev/null || echo refused")
    proc = run(backend, sandbox, command, spec=Spec(writable=(sandbox,), hidden=(hidden,)))
    modules = str(sum("docker" in p.name for p in (package / "confine").iterdir()))  # the package itself is seen
    assert proc.stdout.split() == ["0", "0", modules, "refused"], proc.stderr
    shown = run(backend, sandbox, f"ls {hidden}")  # a phase that hides nothing (the grader's) sees it
    assert "task.py" in shown.stdout.split()


def test_the_images_own_copies_of_a_realpy_project_are_hidden(backend: object, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A realpy task hides the copies of its project on this machine; a container sees the image's /usr, whose own
    copies (Debian's python3-more-itertools, a module file) are found in the image by the project's own sources
    (listed among the hidden paths, in realpy's cache) and seen empty. Before, on docker, the image's more-itertools
    8.10 was readable (an oracle for borrow-a-copy) and even shadowed the sandbox's own package while graded: validate
    found the reference fix of all three more-itertools tasks failing."""
    from agentic_eval.confine import docker_copies

    sandbox = _sandbox(tmp_path)
    dist = "/usr/lib/python3/dist-packages"
    tree = tmp_path / "realpy" / "project-1.0" / "tree"  # the project's own sources: the image's, copied out
    for rel in ("more_itertools/more.py", "typing_extensions.py"):
        proc = run(backend, sandbox, f"cat {dist}/{rel}")
        if proc.returncode != 0:
            pytest.skip(f"this image has no {dist}/{rel}")
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(proc.stdout)
    monkeypatch.setattr(docker_copies, "projects_cache", lambda: tmp_path / "realpy")
    look = (f"ls -A {dist}/more_itertools | wc -l; wc -c < {dist}/typing_extensions.py; "
            "python3 -c 'import more_itertools as m; print(m.__file__)'; touch /tmp/ok && echo writes")
    hidden = (tree / "more_itertools", tree / "typing_extensions.py")
    proc = run(backend, sandbox, look, spec=Spec(writable=(sandbox,), hidden=hidden))
    assert proc.stdout.split() == ["0", "0", "None", "writes"], proc.stderr  # an empty namespace package
    files, size, module, _ = run(backend, sandbox, look).stdout.split()  # a phase hiding none of it (the grader's)
    assert (files != "0", size != "0", module) == (True, True, f"{dist}/more_itertools/__init__.py")


def test_what_covers_the_images_copies_and_what_they_are_found_by(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder under another copy is covered with it, as is a file in it; a wheel elsewhere gets its own empty file.
    Only the projects' own sources (in realpy's cache) say what to look for: nothing for a task of another pack."""
    from agentic_eval.confine import docker_copies

    found = {"/a/more_itertools": True, "/a/more_itertools/x/more_itertools": True, "/a/more_itertools/w.whl": False,
             "/b/setuptools-1.whl": False}
    assert docker_copies.covering(found) == docker_copies.ImageHidden(("/a/more_itertools",), ("/b/setuptools-1.whl",))
    monkeypatch.setattr(docker_copies, "projects_cache", lambda: tmp_path / "realpy")
    source = tmp_path / "realpy" / "p-1" / "tree" / "parse.py"
    source.parent.mkdir(parents=True)
    source.write_text("".join(f"def f{n}():\n    pass\n" for n in range(5)))
    elsewhere = tmp_path / "pack" / "grade.py"  # a hidden task folder's file: the harness's, not a project's
    elsewhere.parent.mkdir()
    elsewhere.write_text(source.read_text())
    assert docker_copies.wanted_from([source, elsewhere]) == {"parse.py": tuple(f"f{n}" for n in range(5))}
    assert docker_copies.wanted_from([elsewhere, elsewhere.parent]) == {}


def test_a_verifiers_artifacts_are_streamed_and_bounded() -> None:
    """A fresh verifier gets the declared artifacts of the agent's container as a stream, never whole in memory,
    and none past the limit (sparse files archive at their full size: 1 GiB of nothing in a declared folder took
    2.1 GiB of the harness's memory and passed; now it is left out, 77 MiB, a scored fail)."""
    from agentic_eval.confine.docker_env import copy_artifacts

    class Client:
        def __init__(self) -> None:
            self.api, self.put = self, []

        def get_archive(self, _container: str, path: str) -> tuple[Iterator[bytes], dict[str, Any]]:
            return (b"x" * 100 for _ in range(3 if path == "/small" else 50)), {}  # the SDK's is a generator

        def put_archive(self, _container: str, parent: str, data: Iterator[bytes]) -> None:
            assert not isinstance(data, bytes)
            self.put.append((parent, sum(map(len, data))))

    client = Client()
    missing = copy_artifacts(client, "a", "v", ["/small", "/srv/big", "/small"], limit=1000)
    assert client.put == [("/", 300), ("/", 300)]  # the second /small fits in what the first left
    assert len(missing) == 1 and missing[0].startswith("/srv/big: left out, over the 0 MiB"), missing


def test_no_secret_value_on_any_command_line(backend: object, tmp_path: Path) -> None:
    sandbox = _sandbox(tmp_path)
    argv = backend.wrap(["true"], cwd=sandbox, spec=Spec(writable=(sandbox,)))  # type: ignore[attr-defined]
    env = {"PATH": os.environ["PATH"], "SOME_TOKEN": "tok-8675309"}
    proc = subprocess.Popen(argv, env=env, start_new_session=True)
    proc.wait(timeout=60)
    assert not any("tok-8675309" in a for a in argv)
    check = run(backend, sandbox, "echo $SOME_TOKEN", env=env)
    assert check.stdout.strip() == "tok-8675309"  # passed by name, read from the environment


def test_a_new_phase_starts_after_every_process_of_the_last_is_gone(backend: object, tmp_path: Path) -> None:
    sandbox = _sandbox(tmp_path)
    marker = "sleep 7777"
    assert run(backend, sandbox, f"(setsid {marker} > /dev/null 2>&1 &) ; echo left").returncode == 0
    agent_ps = run(backend, sandbox, "ps ax -o args").stdout
    assert marker in agent_ps
    extra = tmp_path / "task"
    extra.mkdir()
    (extra / "hidden.txt").write_text("hidden test data\n")
    extra.chmod(0o755)
    grading = Spec(writable=(sandbox,), readable=(extra,))
    proc = run(backend, sandbox, f"ps ax -o args; cat {extra}/hidden.txt; touch {extra}/x", spec=grading)
    assert marker not in proc.stdout
    assert "hidden test data" in proc.stdout
    assert not (extra / "x").exists()  # read-only


def test_close_removes_the_container(backend: object, tmp_path: Path, engine: str) -> None:
    import docker

    sandbox = _sandbox(tmp_path)
    assert run(backend, sandbox, "true").returncode == 0
    client = docker.DockerClient(base_url=engine)
    label = f"agentic-eval.sandbox={sandbox}"
    assert client.api.containers(all=True, filters={"label": label})
    backend.close(sandbox)  # type: ignore[attr-defined]
    assert not client.api.containers(filters={"label": label})  # killed at once: nothing of it runs
    deadline = time.monotonic() + 30
    while client.api.containers(all=True, filters={"label": label}):  # removed in the background
        assert time.monotonic() < deadline
        time.sleep(0.1)


FORK_BOMB = """
import os, time
children = []
try:
    for _ in range(700):
        pid = os.fork()
        if pid == 0:  # a child holds its process slot, away from the output the run waits on
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            os.dup2(1, 2)
            time.sleep(30)
            os._exit(0)
        children.append(pid)
except OSError as exc:
    print("refused after", len(children), "forks:", exc)
for pid in children:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
"""
"""700 processes at once, each kept: the sandbox's process limit refuses a fork on the way, and the children are
ended then (a shell's fork bomb made the run wait out its children's sleep and bash's fork retries, half a minute)."""


def test_limits_hold(backend: object, tmp_path: Path) -> None:
    sandbox = _sandbox(tmp_path)
    fork_bomb = run(backend, sandbox, f"python3 -c '{FORK_BOMB}'")
    assert fork_bomb.returncode == 0, fork_bomb.stderr
    refused = re.fullmatch(r"refused after (\d+) forks: \[Errno 11\] Resource temporarily unavailable\n",
                           fork_bomb.stdout)
    assert refused and int(refused[1]) < 700, fork_bomb.stdout
    memory = run(backend, sandbox, "python3 -c 'x = bytearray(6 * 1024**3)'")
    assert memory.returncode != 0


def test_trials_spread_over_engines_and_a_lost_engine_costs_only_its_trials(engine: str, tmp_path: Path) -> None:
    """Two engines on this machine: sandboxes go by free capacity (within one of even); when one engine
    dies its running sandbox's commands fail, and new sandboxes go to the engine that is left."""
    from agentic_eval.confine.docker import DockerBackend

    if os.geteuid() != 0 or shutil.which("dockerd") is None:
        no_docker_engine("a second engine needs root and docker.io")
    folder = Path("/tmp") / f"ae-test-dockerd2-{os.getpid()}"
    second = start_docker_engine(folder)
    try:
        backend = DockerBackend(hosts=[engine, second], slots_per_engine=4)
        sandboxes = []
        for i in range(6):
            sandbox = tmp_path / f"s{i}"
            sandbox.mkdir()
            assert run(backend, sandbox, "true").returncode == 0
            sandboxes.append(sandbox)
        placed = [backend.describe(s)["engine"] for s in sandboxes]
        assert abs(placed.count(engine) - placed.count(second)) <= 1
        subprocess.run(["bash", str(DOCKERD), "stop", str(folder)], capture_output=True, timeout=90, check=False)
        on_second = [s for s, where in zip(sandboxes, placed) if where == second]
        assert run(backend, on_second[0], "true").returncode != 0  # its trial fails: unscored upstream
        late = tmp_path / "late"
        late.mkdir()
        deadline = time.monotonic() + 30
        while True:  # the first start on the dead engine marks it lost; the next goes elsewhere
            try:
                proc = run(backend, late, "true")
                break
            except Exception:  # noqa: BLE001
                assert time.monotonic() < deadline
        assert proc.returncode == 0 and backend.describe(late)["engine"] == engine
        backend.close_all()
    finally:
        stop_docker_engine(folder)


def test_helper_refuses_a_bad_command_line() -> None:
    proc = subprocess.run([sys.executable, "-m", "agentic_eval.confine.docker_exec", "docker"], capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 2 and "usage" in proc.stderr


def test_stdin_output_and_exit_status_pass_through(backend: object, tmp_path: Path) -> None:
    sandbox = _sandbox(tmp_path)
    argv = backend.wrap(["bash", "-c", "cat; echo to-err >&2; exit 3"], cwd=sandbox,  # type: ignore[attr-defined]
                        spec=Spec(writable=(sandbox,)))
    proc = subprocess.run(argv, input="from stdin\n" * 20000, capture_output=True, text=True, timeout=60,
                          env={"PATH": os.environ["PATH"]}, check=False)
    assert (proc.returncode, proc.stdout, proc.stderr) == (3, "from stdin\n" * 20000, "to-err\n")


def test_the_file_tools_work_in_the_container(backend: object, tmp_path: Path) -> None:
    """The file tools read their request on stdin: the helper forwards it."""
    from agentic_eval.agents.builtin.tools import ToolLimits, read_file, write_file

    sandbox = _sandbox(tmp_path)
    limits = ToolLimits(backend=backend)
    write_file(sandbox, {"path": "new.txt", "content": "from a tool\n"}, limits)
    assert (sandbox / "new.txt").read_text() == "from a tool\n"
    assert "hello" in read_file(sandbox, {"path": "a.txt"}, limits)


def test_a_warm_container_serves_the_first_command_or_is_discarded(engine: str, tmp_path: Path) -> None:
    """warm() starts the sandbox's first container ahead; a first command that needs other mounts gets a
    fresh one, the warm one is removed, and after a few such misses no more are started."""
    import docker

    from agentic_eval.confine.docker import DockerBackend

    backend = DockerBackend(hosts=[engine])
    client = docker.DockerClient(base_url=engine)
    try:
        sandbox = _sandbox(tmp_path)
        backend.warm(sandbox)  # type: ignore[attr-defined]
        label = f"agentic-eval.sandbox={sandbox}"
        deadline = time.monotonic() + 60
        while not client.api.containers(filters={"label": label}):  # started before any command
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert run(backend, sandbox, "true").returncode == 0
        assert backend._warm_used == 1 and backend._warm_wasted == 0  # type: ignore[attr-defined]
        backend.close(sandbox)  # type: ignore[attr-defined]
        backend.release(sandbox)  # type: ignore[attr-defined]  # the trial's end: its grader's container goes
        task = tmp_path / "task"  # too big to copy into a warm container (a sparse 17 MiB file): mounted, so a miss
        task.mkdir()
        with open(task / "big", "wb") as f:
            f.truncate(17 << 20)
        for i in range(4):
            other = tmp_path / f"o{i}"
            other.mkdir()
            backend.warm(other)  # type: ignore[attr-defined]
            assert run(backend, other, f"ls {task}", spec=Spec(writable=(other,), readable=(task,))).returncode == 0
            backend.close(other)  # type: ignore[attr-defined]
            backend.release(other)  # type: ignore[attr-defined]
            deadline = time.monotonic() + 30
            while client.api.containers(filters={"label": f"agentic-eval.sandbox={other}"}):  # none left running
                assert time.monotonic() < deadline
                time.sleep(0.05)
        assert backend._warm_wasted == 3 and not backend._warm  # type: ignore[attr-defined]
    finally:
        backend.close_all()


# ----- whole runs with --sandbox docker


@pytest.fixture
def docker_env(engine: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("DOCKER_HOST", engine)
    monkeypatch.setenv("AGENTIC_EVAL_CACHE", IMAGE_CACHE)
    return engine


def test_oracle_passes_and_nop_fails_in_containers(docker_env: str, tmp_path: Path, mini_pack: Path) -> None:
    """Graded sealed: the grader in a container of its own with the sandbox read-only, the tests of the core,
    node and ops tasks (pytest, node --test, a CI script) in another, on a work copy."""
    from tests.helpers import run_cli

    tasks = ["json-set-port", "fix-failing-test", "git-commit-release", "node-fix-failing-test", "ops-fix-red-ci"]
    picked = [arg for t in tasks for arg in ("--task", t)]
    for agent, outcome in (("oracle", "pass"), ("nop", "fail")):
        for selection, count in ((picked, len(tasks)), (["--tasks", str(mini_pack)], 1)):
            code, data = run_cli("run", "--agent", agent, "--sandbox", "docker", *selection, "--run-dir",
                                 str(tmp_path / "runs"), "-j", "2", "--json")
            assert [t["outcome"] for t in data["trials"]] == [outcome] * count, data["trials"]
            for trial in data["trials"]:
                assert trial["sandbox"] == "docker" and trial["sandbox_engine"] == docker_env
                assert trial["sandbox_image"].startswith("sha256:")
    import docker

    def left() -> list[str]:
        found = docker.DockerClient(base_url=docker_env).api.containers(all=True, filters={"label": LABEL})
        return [c["Id"] for c in found if "/ae-trial-" in c["Labels"]["agentic-eval.sandbox"]
                or "/ae-grading-" in c["Labels"]["agentic-eval.sandbox"]]

    deadline = time.monotonic() + 30
    while left():  # every trial's removed (in the background, within moments)
        assert time.monotonic() < deadline
        time.sleep(0.1)


def test_builtin_agent_in_containers_honest_pass_and_attacks_fail(docker_env: str, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The grading-integrity task: the honest fix passes, a planted pytest and a rewritten history fail,
    and a process the agent left behind is gone before the grader runs."""
    from agentic_eval.testing import FakeEndpoint
    from tests.helpers import ATTACKS, commands_then_done, integrity_pack, run_cli

    cases = {
        "honest": (["sed -i 's/a - b/a + b/' src/calc.py", "(setsid sleep 600 > /dev/null 2>&1 &); echo bg"], "pass"),
        "fake-pytest-on-pythonpath": (ATTACKS["fake-pytest-on-pythonpath"], "fail"),
        "amend-the-root-commit": (ATTACKS["amend-the-root-commit"], "fail"),
    }
    for name, (commands, expected) in cases.items():
        pack = integrity_pack(tmp_path / name)
        with FakeEndpoint(responder=commands_then_done(commands)) as fake:
            code, data = run_cli("run", "--model", "fake-model", "--base-url", fake.base_url, "--tasks", str(pack),
                                 "--sandbox", "docker", "--run-dir", str(tmp_path / name / "runs"), "--json",
                                 "--agent-opt", "max_retries=0")
        (trial,) = data["trials"]
        assert trial["outcome"] == expected, (name, trial)


def test_a_killed_runs_containers_are_removed_by_the_next_run(docker_env: str, mini_pack: Path,
                                                             tmp_path: Path) -> None:
    """A run killed with SIGKILL while the model's command runs leaves its containers on the engine (the agent's,
    the grader's started ahead); the next run on that engine removes them and says so. A container labelled
    with a live process (this test's), one of another machine (another boot id) and one without the owner
    labels (an older version's) survive it."""
    import re

    import docker

    from agentic_eval.confine.docker_image import recipe
    from agentic_eval.leftovers import process_start_token, this_machine
    from agentic_eval.testing import FakeEndpoint, ScriptedReply, chat_body, tool_call
    from tests.helpers import make_pack, running, unique_sleep

    marker = unique_sleep(8)
    temp_root = tmp_path / "tmp"
    temp_root.mkdir()
    env = {**os.environ, "TMPDIR": str(temp_root)}
    client = docker.DockerClient(base_url=docker_env, timeout=60)
    survivors: list[str] = []

    def owned_by(pid: int) -> list[dict]:  # (the survivors made below name the killed run's pid too)
        found = client.api.containers(all=True, filters={"label": [LABEL, f"agentic-eval.pid={pid}"]})
        return [c for c in found if c["Id"] not in survivors]

    with FakeEndpoint(responder=lambda request: ScriptedReply(
            body=chat_body(tool_calls=[tool_call("bash", {"command": f"sleep {marker}"})]))) as fake:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentic_eval.cli", "run", "--model", "fake-model", "--base-url", fake.base_url,
             "--tasks", str(make_pack(mini_pack, 1)), "--run-dir", str(tmp_path / "runs"), "--agent-opt",
             "max_retries=0", "--sandbox", "docker"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        # the run dies mid-trial: its containers stay on the engine
        kill_when_running(proc, marker, 120, "the model's command never started in its container")
    try:
        left = owned_by(proc.pid)
        assert len(left) >= 2, left  # the agent's and, started beside it, the grader's
        assert running(f"sleep {marker}")  # the model's command runs on in its container
        killed = left[0]["Labels"]
        image = recipe().tag
        machine = this_machine()
        assert machine is not None and killed["agentic-eval.machine"] == machine
        for name, labels in (
                ("live", {"agentic-eval.pid": str(os.getpid()), "agentic-eval.start": process_start_token(os.getpid()),
                          "agentic-eval.machine": machine}),
                ("other-machine", {**killed, "agentic-eval.machine": "0" * 36 + machine[36:]}),
                ("old", {"agentic-eval.pid": str(proc.pid)})):
            container = client.containers.run(image, ["sleep", "300"], detach=True, init=True, network_mode="none",
                                              labels={**labels, LABEL: f"{tmp_path}/{name}"})
            survivors.append(container.id)
        after = subprocess.run(
            [sys.executable, "-m", "agentic_eval.cli", "run", "--agent", "nop", "--sandbox", "docker", "--tasks",
             str(mini_pack), "--run-dir", str(tmp_path / "runs2")],
            env=env, capture_output=True, text=True, timeout=300, check=False)
        said = re.search(rf"removed (\d+) container\(s\) of dead runs on {re.escape(docker_env)}\n", after.stderr)
        assert said and int(said[1]) >= len(left), after.stderr  # (and any other dead run's on this engine)
        assert owned_by(proc.pid) == [], after.stderr
        assert running(f"sleep {marker}") == []
        assert {c["Id"] for c in client.api.containers(filters={"id": survivors})} == set(survivors)
    finally:
        for container_id in survivors + [c["Id"] for c in owned_by(proc.pid)]:
            try:
                client.api.remove_container(container_id, force=True)
            except docker.errors.NotFound:
                pass
        client.close()


def test_a_dead_runs_environment_containers_and_networks_are_removed(docker_env: str, tmp_path: Path) -> None:
    """An environment task's containers (its own image's, its services') and its network carry the same owner
    labels: a dead owner's go, the network after its containers; a live owner's stay."""
    import docker

    from agentic_eval.confine.docker import Engine, remove_dead_runs
    from agentic_eval.confine.docker_env import LABEL as ENV_LABEL
    from agentic_eval.confine.docker_image import recipe
    from agentic_eval.leftovers import owner_labels, process_start_token, this_machine

    gone = subprocess.Popen(["sleep", "60"])  # a run process that will have died
    dead = {"agentic-eval.pid": str(gone.pid), "agentic-eval.start": process_start_token(gone.pid) or "",
            "agentic-eval.machine": this_machine() or ""}
    gone.kill()
    gone.wait(timeout=10)
    client = docker.DockerClient(base_url=docker_env, timeout=60)
    made: list[Any] = []
    try:
        for owner in (dead, owner_labels()):
            labels = {ENV_LABEL: f"{tmp_path}/{owner['agentic-eval.pid']}", **owner}
            network = client.networks.create(f"ae-test-{owner['agentic-eval.pid']}-{os.getpid()}", internal=True,
                                              labels=labels)
            container = client.containers.run(recipe().tag, ["sleep", "300"], detach=True, init=True,
                                              network=network.name, labels=labels)
            made += [container, network]
        said = remove_dead_runs(Engine(docker_env, client, recipe().tag, 1))
        assert re.search(r"removed \d+ container\(s\) and \d+ network\(s\) of dead runs", said), said
        ids = {c["Id"] for c in client.api.containers(all=True)} | {n["Id"] for n in client.api.networks()}
        assert [thing.id in ids for thing in made] == [False, False, True, True]
    finally:
        for thing in made[0::2] + made[1::2]:  # the containers, then their networks
            with contextlib.suppress(docker.errors.NotFound):
                thing.remove(**({"force": True} if thing in made[0::2] else {}))
        client.close()


def test_an_engine_that_errs_while_dead_runs_are_looked_for_is_one_warning() -> None:
    """The run goes on: the engine's error is a line of its output."""
    from agentic_eval.confine.docker import Engine, remove_dead_runs

    gone = "unix:///nonexistent/ae-docker.sock"
    said = remove_dead_runs(Engine(gone, None, "image", 1), timeout_s=5)
    assert said.startswith(f"warning: could not remove the containers of dead runs on {gone}: "), said
    assert "\n" not in said


def test_a_pypi_cli_agent_is_refused_in_one_line(docker_env: str, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """aider runs from a virtual environment of this machine's Python, which the image does not hold."""
    from tests.helpers import run_cli

    code, _ = run_cli("run", "--agent", "aider", "--model", "m", "--sandbox", "docker", "--task", "json-set-port",
                      "--run-dir", str(tmp_path / "runs"))
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "cannot run in the docker sandbox" in err[0], err
    assert "--sandbox bwrap" in err[0]
    assert not (tmp_path / "runs").exists()


def test_only_npm_clis_are_refused() -> None:
    from agentic_eval.agents.adapters import installable_tools
    from agentic_eval.agents.base import load_agent
    from agentic_eval.confine.docker import cli_refusal

    for name, tool in installable_tools().items():
        assert (cli_refusal(load_agent(name)) == "") == (tool.kind == "npm"), name


def _escape_policy(port: int, probes: str) -> object:
    """One shell call that writes the answer and runs `probes`, then a final message; a request without
    tools (a title) gets prose."""
    from agentic_eval.testing import tool_call

    def policy(req: object) -> object:
        body = getattr(req, "body", None) or {}
        names = tool_names(body)
        if not names:
            return chat_reply(body, content="Answer file")
        if not any(m.get("role") == "tool" for m in body.get("messages", [])):
            name, args = shell_call(names, f"echo 'port is {port}' > answer.txt; {probes}")
            return chat_reply(body, content="Writing the answer.", tool_calls=[tool_call(name, args, "call_1")])
        return chat_reply(body, content="Done: answer.txt holds the port.")

    return policy


def _tool_results(record: dict[str, object]) -> str:
    """The tool results a recorded chat request carried back to the model."""
    body = record.get("request")
    messages = body.get("messages", []) if isinstance(body, dict) else []
    return "\n".join(str(m.get("content")) for m in messages if isinstance(m, dict) and m.get("role") == "tool")


@pytest.mark.agent_cli
@pytest.mark.parametrize("agent", ["qwen-code", "opencode", "cline"])
def test_a_node_cli_agent_runs_in_a_container_and_reaches_only_the_wire(
        agent: str, docker_env: str, mini_pack: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real CLI (qwen-code: a Node script; opencode and cline: the binaries their npm packages ship) in the
    trial's container: its requests reach the endpoint through the per-trial relay and the wire recorder, and
    the command the scripted model has it run can reach nothing else: not the endpoint's own port on 127.0.0.1
    (node's fetch), not its tools folder (mounted read-only), not the harness's files."""
    require_cli(agent, monkeypatch)
    toml = mini_pack / "answer-file" / "task.toml"
    toml.write_text(toml.read_text().replace("agent_timeout_s = 60", "agent_timeout_s = 240"))
    tools = CLI_TOOLS[agent].home
    with PolicyEndpoint(_escape_policy(tiny_port(), "")) as fake:  # the port to escape to: the endpoint's own
        port = urlsplit(fake.base_url).port
        probes = (f"node -e \"fetch('http://127.0.0.1:{port}/v1/models').then(() => console.log('fetch-' + "
                  f"'reached'), () => console.log('fetch-' + 'refused'))\"; "
                  f"touch {tools}/owned 2>/dev/null && w=written || w=refused; echo \"write-$w\"; "
                  f"ls {REPO}/tests > /dev/null 2>&1 && r=listed || r=refused; echo \"read-$r\"; "
                  "echo \"uid-$(id -u) init-$(cat /proc/1/comm)\"")
        fake.responder = _escape_policy(tiny_port(), probes)
        result = run_trial(agent, fake, mini_pack, tmp_path / "runs", "--sandbox", "docker")
    folder = trial_dir(tmp_path / "runs", result)
    assert result.outcome == "pass", (result.detail, (folder / "agent_stderr.txt").read_text()[-2000:])
    assert result.sandbox == "docker" and result.sandbox_engine == docker_env
    requests = wire_requests(tmp_path / "runs", result)
    assert len(requests) >= 2 and result.requests == len(requests)  # every model call went through the recorder
    seen = "\n".join(_tool_results(r) for r in requests)
    assert "uid-65534 init-docker-init" in seen, seen  # it ran as the container's user, under its init
    for probe in ("fetch", "write", "read"):
        assert f"{probe}-refused" in seen, (probe, seen)
    assert not (tools / "owned").exists()


@pytest.mark.agent_cli
def test_claude_code_runs_in_a_container_through_the_translation(
        docker_env: str, mini_pack: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Claude Code (the native binary its npm package ships) in the trial's container, against a chat-only
    endpoint: its Messages requests reach the endpoint through the relay and the recorder's translation."""
    import json

    from tests.helpers import PLACEHOLDER, claude_trial, messages_calls

    require_cli("claude-code", monkeypatch)
    toml = mini_pack / "answer-file" / "task.toml"
    toml.write_text(toml.read_text().replace("agent_timeout_s = 60", "agent_timeout_s = 240"))
    result = claude_trial("solver", False, mini_pack, tmp_path / "runs", "--sandbox", "docker")
    assert result.sandbox == "docker" and result.sandbox_engine == docker_env
    assert result.outcome == "pass", result.detail
    assert result.wire_api == "anthropic-messages->chat-completions" and result.turns.tool_call >= 1
    results = json.dumps(messages_calls(tmp_path / "runs", result)[-1]["request"]["messages"][-1])
    assert "probe-done" in results and not PLACEHOLDER.search(results), results  # no key to be found
    assert "relay-403" in results and result.tool_requests == 1, results  # its Bash calling the relay: refused


def test_the_work_dir_is_capped_and_a_full_one_is_reported(engine: str, tmp_path: Path) -> None:
    """As root the sandbox moves onto a tmpfs of the cap's size at its own path: writing past it fails with
    no space left, the backend reports it full, and release() leaves a plain folder (kept when asked)."""
    from agentic_eval.confine.docker import DockerBackend, DockerLimits

    if os.geteuid() != 0:
        pytest.skip("the capped work dir needs root (a tmpfs mount)")
    sockets = _sockets()
    backend = DockerBackend(hosts=[engine], limits=DockerLimits(work_size="48m"))
    try:
        sandbox = _sandbox(tmp_path)
        backend.cap_disk(sandbox)
        backend.prepare(sandbox)
        assert os.path.ismount(sandbox) and (sandbox / "a.txt").read_text() == "hello\n"
        assert backend.disk_full(sandbox) == ""
        proc = run(backend, sandbox, "dd if=/dev/zero of=big bs=1M count=100; cat a.txt")
        assert "No space left on device" in proc.stderr and proc.stdout == "hello\n"
        assert (sandbox / "big").stat().st_size < 48 << 20
        assert "size cap (48m)" in backend.disk_full(sandbox)
        backend.make_room(sandbox)  # before grading: room the model never had
        assert backend.disk_full(sandbox) == ""
        # what the model leaves for the kept copy: a setuid program linked twice (it takes room once, as in the cap)
        leave = ("dd if=/dev/zero of=more bs=1M count=100 status=none && cp /bin/true t && chmod 6755 t && ln t t2 "
                 "&& mkdir g && chmod 2777 g")
        assert run(backend, sandbox, leave).returncode == 0
        backend.close(sandbox)
        assert backend.room_taken(sandbox, 1 << 20) == ""  # not graded yet: running out of room is not in its copy
        with backend.grading_folder(sandbox) as folder:  # the model's code, graded, runs on a copy capped too
            assert os.path.ismount(folder)
            st = os.statvfs(folder)
            size = st.f_blocks * st.f_frsize
            assert size == (48 << 20) + (256 << 20) and st.f_files == size // 4096
            work = folder / "work"  # made with it, as the scratch folder
            backend.prepare(work)
            proc = run(backend, work, "dd if=/dev/zero of=big bs=1M count=400", spec=Spec(writable=(work,)))
            assert "No space left on device" in proc.stderr
            backend.close(work)
        _gone(folder)
        assert not os.path.ismount(folder)
        # the code host running out of room in that copy (a count of what the model's tree and code held there) is
        # the model's doing: nothing else fills it; the harness's own files elsewhere (no count) are not
        taken = backend.room_taken(sandbox, 300 << 20)
        assert "the model's code filled its grading folder (its room or its files)" in taken
        assert backend.room_taken(sandbox, 0) == ""
        backend.release(sandbox, keep=True)
        assert not os.path.ismount(sandbox) and (sandbox / "a.txt").read_text() == "hello\n"
        kept, link = (sandbox / "t").stat(), (sandbox / "t2").stat()  # copied as root: links kept, never setuid
        assert kept.st_ino == link.st_ino and not kept.st_mode & (stat.S_ISUID | stat.S_ISGID), oct(kept.st_mode)
        assert not (sandbox / "g").stat().st_mode & stat.S_ISGID  # nor a setgid folder of root's group
        assert backend.room_taken(sandbox, 300 << 20) == ""  # its grading forgotten with the trial
        other = tmp_path / "other"
        other.mkdir()
        backend.cap_disk(other)
        backend.prepare(other)
        # files are capped too (48m: 12288 inodes), so using them all up is no way out either
        proc = run(backend, other, "mkdir many && cd many && seq 1 20000 | xargs touch")
        assert "No space left on device" in proc.stderr
        assert "used up its files" in backend.disk_full(other)
        backend.make_room(other)
        assert backend.disk_full(other) == "" and backend.room_taken(other, 1 << 20) == ""  # never graded
        assert run(backend, other, "mkdir more && cd more && seq 1 5000 | xargs touch").returncode == 0
        backend.close(other)
        backend.release(other)
        assert not other.exists() and not os.path.ismount(other)
    finally:
        backend.close_all()
    # its connections to the engine closed too (7-13 stayed before: a long test session ran out of fds); two of
    # slack for other tests' threads in this worker, which open and close sockets of their own meanwhile
    assert _sockets() <= sockets + 2


def _sockets() -> int:
    """Sockets this process holds."""
    held = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            held += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
    return held


def test_a_model_that_fills_its_disk_fails_scored(docker_env: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch, short_tmp: Path) -> None:
    from agentic_eval.testing import FakeEndpoint
    from tests.helpers import commands_then_done, integrity_pack, run_cli

    if os.geteuid() != 0:
        pytest.skip("the capped work dir needs root (a tmpfs mount)")
    def work_mounts() -> int:  # this test's own: another run on the machine may have capped work dirs too
        return sum(1 for line in Path("/proc/mounts").read_text().splitlines()
                   if line.startswith("agentic-eval-work ") and str(short_tmp) in line)

    monkeypatch.setattr(tempfile, "tempdir", str(short_tmp))  # the trial's sandbox, and its mount

    monkeypatch.setenv("AGENTIC_EVAL_DOCKER_WORK_SIZE", "40m")
    before = work_mounts()
    pack = integrity_pack(tmp_path / "fill")
    with FakeEndpoint(responder=commands_then_done(["sed -i 's/a - b/a + b/' src/calc.py",
                                                    "dd if=/dev/zero of=fill bs=1M count=200"])) as fake:
        _code, data = run_cli("run", "--model", "fake-model", "--base-url", fake.base_url, "--tasks", str(pack),
                             "--sandbox", "docker", "--run-dir", str(tmp_path / "runs"), "--json",
                             "--agent-opt", "max_retries=0")
    (trial,) = data["trials"]
    assert trial["outcome"] == "fail" and "size cap (40m)" in trial["detail"], trial
    assert work_mounts() == before  # released at the end of the trial


FILL_GRADER = """
from gradelib import Grader
g = Grader(run_all=True)
g.command_ok(["python3", "prep.py"])
g.pytest_passes(["tests"])
g.finish()
"""
FILL_PREP = ("import itertools\nfor n in itertools.count():\n    try:\n"
             "        open('zz%d' % n, 'wb').write(b'x' * (1 << 20))\n    except OSError:\n        break\n")


def test_a_model_whose_code_fills_its_grading_copy_fails_scored(docker_env: str, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The grader runs the model's prep.py, which fills the capped copy it runs on; the grader's next files cannot
    be placed there. Nothing but the model's tree and code fills that copy: the model's scored fail, named."""
    from agentic_eval.testing import FakeEndpoint
    from tests.helpers import commands_then_done, integrity_pack, run_cli

    if os.geteuid() != 0:
        pytest.skip("the capped work dir needs root (a tmpfs mount)")
    monkeypatch.setenv("AGENTIC_EVAL_DOCKER_WORK_SIZE", "40m")
    pack = integrity_pack(tmp_path / "fill", grader=FILL_GRADER)
    commands = ["sed -i 's/a - b/a + b/' src/calc.py", f"cat > prep.py <<'EOF'\n{FILL_PREP}EOF"]
    with FakeEndpoint(responder=commands_then_done(commands)) as fake:
        _code, data = run_cli("run", "--model", "fake-model", "--base-url", fake.base_url, "--tasks", str(pack),
                             "--sandbox", "docker", "--run-dir", str(tmp_path / "runs"), "--json",
                             "--agent-opt", "max_retries=0")
    (trial,) = data["trials"]
    assert (trial["outcome"], trial["fault"]) == ("fail", "model"), trial  # before: a fail said "timed out after 60s"
    assert "the model's code filled its grading folder (its room or its files)" in trial["detail"], trial
    assert "could not be placed: [Errno 28] No space left on device" in trial["detail"], trial


def _gone(path: Path) -> None:
    """Wait until `path` is removed (in the background, within moments)."""
    deadline = time.monotonic() + 30
    while path.exists():
        assert time.monotonic() < deadline, path
        time.sleep(0.05)


def _listen(folder: Path) -> socket.socket:
    """A unix socket listening in `folder` as grading/sealed.py's CodeHost does (mode 0666), answering b"answer"."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(folder / "run.sock"))
    os.chmod(folder / "run.sock", 0o666)
    listener.listen(4)

    def serve() -> None:
        try:
            while True:
                client, _ = listener.accept()
                client.sendall(b"answer")
                client.close()
        except OSError:
            return

    threading.Thread(target=serve, daemon=True).start()
    return listener


CONNECT = ("python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); "
           "print(s.recv(16).decode())' {}")


def test_code_that_fills_the_disk_while_graded_fails_scored(docker_env: str, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch, short_tmp: Path) -> None:
    """The model's code, run while it is graded, fills its capped copy (not this machine's disk): its test
    run cannot even write its report, a scored fail; the grading folder is unmounted and removed after."""
    from agentic_eval.testing import FakeEndpoint
    from tests.helpers import commands_then_done, integrity_pack, run_cli

    if os.geteuid() != 0:
        pytest.skip("the capped work dir needs root (a tmpfs mount)")

    def grading_mounts() -> int:
        return sum(1 for line in Path("/proc/mounts").read_text().splitlines()
                   if line.startswith("agentic-eval-grading ") and str(short_tmp) in line)

    monkeypatch.setattr(tempfile, "tempdir", str(short_tmp))  # the trial's folders, and their mounts
    monkeypatch.setenv("AGENTIC_EVAL_DOCKER_WORK_SIZE", "40m")
    pack = integrity_pack(tmp_path / "fill")
    filler = "import os\nos.system('dd if=/dev/zero of=fill bs=1M count=400 status=none')\n"
    with FakeEndpoint(responder=commands_then_done(["sed -i 's/a - b/a + b/' src/calc.py",
                                                    f"printf \"{filler}\" >> src/calc.py"])) as fake:
        _code, data = run_cli("run", "--model", "fake-model", "--base-url", fake.base_url, "--tasks", str(pack),
                             "--sandbox", "docker", "--run-dir", str(tmp_path / "runs"), "--json",
                             "--agent-opt", "max_retries=0")
    (trial,) = data["trials"]
    assert trial["outcome"] == "fail" and trial["grader_verdict"] == "fail", trial
    grader = (tmp_path / "runs" / trial["run_id"] / trial["files"]["grader"]).read_text()
    assert "No space left on device" in grader or "wrote no report" in grader, grader
    assert grading_mounts() == 0 and not list(short_tmp.glob("ae-grading-*"))


def test_the_graders_container_is_started_during_the_first_phase(engine: str, tmp_path: Path) -> None:
    """A trial's grader gets a container started while its first phase ran (no command ran in it before the
    first was killed): the sealed grader's, with the sandbox read-only and nothing writable, and the socket
    folder of the trial's grading folder (made ahead) bound in, through which it reaches a listener made
    there only when grading starts; a small folder it does not mount is copied into its /tmp, read-only,
    root-owned."""
    import tempfile

    import docker

    from agentic_eval.confine.docker import DockerBackend

    backend = DockerBackend(hosts=[engine])
    client = docker.DockerClient(base_url=engine)
    try:
        sandbox = _sandbox(tmp_path)
        task = tmp_path / "task"
        task.mkdir()
        (task / "t.txt").write_text("task file\n")
        backend.warm(sandbox, first=False, readable=[task])  # type: ignore[attr-defined]
        assert run(backend, sandbox, "(setsid sleep 7777 > /dev/null 2>&1 &); echo first").returncode == 0
        label = f"agentic-eval.sandbox={sandbox}"
        deadline = time.monotonic() + 60
        while len(client.api.containers(filters={"label": label})) < 2:  # the grader's, beside the first
            assert time.monotonic() < deadline
            time.sleep(0.05)
        backend.close(sandbox)  # type: ignore[attr-defined]
        # under /tmp whatever TMPDIR says: only a folder under /tmp can be copied into the container's private /tmp
        with backend.grading_folder(sandbox) as folder, \
                tempfile.TemporaryDirectory(prefix="ae-test-vars-", dir="/tmp") as vars_folder:  # type: ignore[attr-defined]
            sock = folder / "sock"
            assert sock.is_dir() and not any(sock.iterdir())  # made ahead, empty until grading
            listener = _listen(sock)
            (Path(vars_folder) / "vars.json").write_text('{"x": 1}\n')
            os.chmod(vars_folder, 0o755)
            spec = Spec(readable=(sandbox, task, Path(vars_folder), sock))
            command = (f"ps ax -o args; cat {task}/t.txt {vars_folder}/vars.json; stat -c '%u %A' "
                       f"{vars_folder}/vars.json; touch {vars_folder}/x || echo refused; "
                       "touch a.txt 2>/dev/null || echo sandbox-read-only; cat a.txt; "
                       + CONNECT.format(sock / "run.sock"))
            proc = run(backend, sandbox, command, spec=spec)
            listener.close()
        _gone(folder)  # removed once graded (after the unused container of the model's code, in the background)
        assert "sleep 7777" not in proc.stdout
        assert "task file" in proc.stdout and '{"x": 1}' in proc.stdout
        assert "0 -r--r--r--" in proc.stdout and "refused" in proc.stdout
        assert "sandbox-read-only" in proc.stdout and "hello" in proc.stdout and not (sandbox / "x").exists()
        assert proc.stdout.rstrip().endswith("answer"), proc.stdout + proc.stderr  # connect() through the bind
        assert backend._warm_used == 1 and backend._warm_wasted == 0  # type: ignore[attr-defined]
        grader = backend._phases[str(sandbox)].container.id  # type: ignore[attr-defined]
        backend.close(sandbox)  # type: ignore[attr-defined]  # the grader's container ends in the background
        backend.wrap(["true"], cwd=sandbox, spec=Spec(writable=(sandbox,)))  # type: ignore[attr-defined]
        assert not client.api.containers(all=True, filters={"id": grader})  # gone before a next phase's command
        backend.close(sandbox)  # type: ignore[attr-defined]
        backend.release(sandbox)  # type: ignore[attr-defined]
        assert not client.api.containers(filters={"label": label})
    finally:
        backend.close_all()


def test_the_graders_warm_container_serves_no_other_phase(engine: str, tmp_path: Path) -> None:
    """The grader's warm container mounts the sandbox read-only: a next phase that is not the grader's (the
    sandbox writable) gets a fresh container, and the warm one counts as wasted; release() removes the
    trial's grading folder made ahead."""
    import docker

    from agentic_eval.confine.docker import DockerBackend

    backend = DockerBackend(hosts=[engine])
    client = docker.DockerClient(base_url=engine)
    try:
        sandbox = _sandbox(tmp_path)
        backend.warm(sandbox, first=False)  # type: ignore[attr-defined]
        assert run(backend, sandbox, "echo first").returncode == 0
        label = f"agentic-eval.sandbox={sandbox}"
        deadline = time.monotonic() + 60
        while len(client.api.containers(filters={"label": label})) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        made = list(backend._grading.values())  # type: ignore[attr-defined]
        assert len(made) == 1 and (made[0] / "sock").is_dir()
        backend.close(sandbox)  # type: ignore[attr-defined]
        proc = run(backend, sandbox, "touch b.txt && echo wrote")
        assert proc.stdout.strip() == "wrote" and (sandbox / "b.txt").exists()
        assert backend._warm_used == 0 and backend._warm_wasted == 1  # type: ignore[attr-defined]
        backend.close(sandbox)  # type: ignore[attr-defined]
        backend.release(sandbox)  # type: ignore[attr-defined]
        assert not backend._grading  # type: ignore[attr-defined]
        _gone(made[0])
    finally:
        backend.close_all()


def test_a_folder_holding_a_socket_is_never_copied_into_a_warm_container(engine: str, tmp_path: Path) -> None:
    """A socket copied into a container reaches nothing: a grader whose socket folder the warm container does not
    bind (not the trial's grading folder) gets a fresh container that binds it, and the warm one is wasted."""
    import docker

    from agentic_eval.confine.docker import DockerBackend

    backend = DockerBackend(hosts=[engine])
    client = docker.DockerClient(base_url=engine)
    try:
        sandbox = _sandbox(tmp_path)
        backend.warm(sandbox, first=False)  # type: ignore[attr-defined]
        assert run(backend, sandbox, "echo first").returncode == 0
        deadline = time.monotonic() + 60
        while len(client.api.containers(filters={"label": f"agentic-eval.sandbox={sandbox}"})) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        backend.close(sandbox)  # type: ignore[attr-defined]
        sock = tmp_path / "elsewhere"
        sock.mkdir(mode=0o755)
        listener = _listen(sock)
        try:
            proc = run(backend, sandbox, CONNECT.format(sock / "run.sock"), spec=Spec(readable=(sandbox, sock)))
        finally:
            listener.close()
        assert proc.stdout.strip() == "answer", proc.stdout + proc.stderr
        assert backend._warm_used == 0 and backend._warm_wasted == 1  # type: ignore[attr-defined]
        backend.close(sandbox)  # type: ignore[attr-defined]
        backend.release(sandbox)  # type: ignore[attr-defined]
    finally:
        backend.close_all()


def test_a_phase_with_nothing_writable_sees_its_cwd_read_only(backend: object, tmp_path: Path) -> None:
    """A command with no writable path (the sealed grader) runs in a phase of its own: the previous phase's
    processes are gone, its cwd (the sandbox) is mounted read-only, and a unix socket in a read-only folder
    it reads can be connected to."""
    sandbox = _sandbox(tmp_path)
    assert run(backend, sandbox, "(setsid sleep 7777 > /dev/null 2>&1 &); echo agent").returncode == 0
    sock = tmp_path / "sock"
    sock.mkdir(mode=0o755)
    listener = _listen(sock)
    try:
        proc = run(backend, sandbox, "ps ax -o args; cat a.txt; touch a.txt 2>/dev/null || echo read-only; "
                                     + CONNECT.format(sock / "run.sock"), spec=Spec(readable=(sock,)))
    finally:
        listener.close()
    assert "sleep 7777" not in proc.stdout
    assert "hello" in proc.stdout and "read-only" in proc.stdout
    assert proc.stdout.rstrip().endswith("answer"), proc.stdout + proc.stderr
    backend.close(sandbox)  # type: ignore[attr-defined]


# ----- sealed grading (issue 25) under docker: tests/test_sealed.py's helpers and graders


def _sealed_grade(backend: object, task: object, sandbox: object) -> tuple[object, str]:
    from tests.helpers import sealed_grade

    try:
        return sealed_grade(task, sandbox, backend)  # type: ignore[arg-type]
    finally:
        backend.close(sandbox.path)  # type: ignore[attr-defined]  # the grader's container
        left = [k for k in backend._phases if "/ae-grading-" in k]  # type: ignore[attr-defined]
        assert not left, left  # the model's code's containers went with its CodeHost


@pytest.mark.parametrize("forgery", ["", "report class patched at import", "plugin registered on the live config",
                                     "JUnit report rewritten at exit", "exit 0 at import"],
                         ids=["honest", "report-class", "live-plugin", "junit-at-exit", "exit-0"])
def test_a_forged_test_run_is_a_scored_fail_in_containers(backend: object, tmp_path: Path, forgery: str) -> None:
    """tests/test_sealed.py's forgeries, appended to the broken module: the grader says fail. The honest fix
    (no forgery) passes."""
    from agentic_eval.grading.grader import Verdict
    from tests.helpers import FIXED, FORGERIES, sealed_sandbox, sealed_task

    task = sealed_task(tmp_path)
    source = "def add(a, b):\n    return a - b\n" + textwrap.dedent(FORGERIES[forgery]) if forgery else FIXED
    sandbox = sealed_sandbox(task, tmp_path, {"src/calc.py": source}, backend)  # type: ignore[arg-type]
    verdict, output = _sealed_grade(backend, task, sandbox)
    assert verdict is (Verdict.FAIL if forgery else Verdict.PASS), output


@pytest.mark.parametrize("forge", [False, True], ids=["hostile-git-config", "forged-pristine-objects"])
def test_plain_git_in_a_grader_reads_the_agents_repository_safely_in_containers(backend: object, tmp_path: Path,
                                                                                forge: bool) -> None:
    """tests/test_grader_git.py's hostile repository, graded in a container: the exec helper keeps the grader's
    `git` (the safe view) first on the image's PATH."""
    from agentic_eval.grading.grader import Verdict
    from tests.helpers import grade_edited, hostile_git, oldgit_task

    verdict, output = grade_edited(oldgit_task(), tmp_path, lambda sandbox: hostile_git(sandbox, forge=forge), backend)  # type: ignore[arg-type]
    assert verdict is (Verdict.FAIL if forge else Verdict.PASS), output
    assert f"ignored=True untouched={not forge}" in output and "PWNED" not in output, output


def test_the_models_code_runs_in_another_container_and_sees_nothing_of_the_task(backend: object,
                                                                                tmp_path: Path) -> None:
    from agentic_eval.grading.grader import Verdict
    from tests.helpers import PROBE_GRADER, probed, sealed_sandbox, sealed_task

    task = sealed_task(tmp_path, PROBE_GRADER)
    verdict, output = _sealed_grade(backend, task, sealed_sandbox(task, tmp_path, {}, backend))  # type: ignore[arg-type]
    assert verdict is Verdict.PASS, output  # no task folder, snapshot or task variable in its sight
    seen, grader = probed(output)
    assert seen["host"] != grader["host"] and seen["cgroup"] != grader["cgroup"], output
    assert seen["uid"] == grader["uid"] == 65534


MOUNTS_GRADER = """
    import json, os
    from gradelib import Grader
    g = Grader()
    out = g.command_ok(["cat", "/proc/self/mountinfo"], what="mounts")
    print("MODEL", json.dumps(out))
    print("GRADER", json.dumps(open("/proc/self/mountinfo").read()))
    print("STORE", os.environ.get("AGENTIC_EVAL_PRISTINE_GIT"))
    print("VARS", os.environ.get("AGENTIC_EVAL_VARS"))
    print("SOCKET", os.environ.get("AGENTIC_EVAL_RUN_SOCKET"))
    g.finish()
"""


def _mount_points(mountinfo: str) -> dict[str, str]:
    """Mount point -> its options, from /proc/self/mountinfo."""
    return {fields[4]: fields[5] for fields in (line.split() for line in mountinfo.splitlines()) if len(fields) > 5}


def test_what_each_container_mounts(backend: object, tmp_path: Path) -> None:
    """The grader's container binds the sandbox read-only; the model's code's container binds its work copy
    and scratch folder, and nothing of the task, the pristine store, the grader's variables or its socket."""
    import json

    from agentic_eval.grading.grader import Verdict
    from tests.helpers import sealed_sandbox, sealed_task

    task = sealed_task(tmp_path, MOUNTS_GRADER)
    sandbox = sealed_sandbox(task, tmp_path, {}, backend)  # type: ignore[arg-type]
    verdict, output = _sealed_grade(backend, task, sandbox)
    assert verdict is Verdict.PASS, output
    said = {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in output.splitlines() if " " in line}
    grader, model = _mount_points(json.loads(said["GRADER"])), _mount_points(json.loads(said["MODEL"]))
    assert grader[str(sandbox.path)].split(",")[0] == "ro", grader
    assert not [m for m, opts in grader.items() if opts.split(",")[0] == "rw" and m.startswith(str(tmp_path))]
    secret = [str(task.dir), str(task.pack_dir), said["STORE"], str(Path(said["VARS"]).parent),
              str(Path(said["SOCKET"]).parent), str(sandbox.path)]
    assert not [m for m in model for s in secret if m == s or m.startswith(s + "/")], (secret, model)
    work = [m for m in model if m.endswith("/work")]
    assert len(work) == 1 and model[work[0]].split(",")[0] == "rw" and work[0] + "/" not in str(sandbox.path)


def test_what_the_models_code_writes_never_reaches_the_sandbox_in_containers(backend: object,
                                                                             tmp_path: Path) -> None:
    from agentic_eval.grading.grader import Verdict
    from tests.helpers import WRITER_GRADER, sealed_sandbox, sealed_task

    task = sealed_task(tmp_path, WRITER_GRADER)
    sandbox = sealed_sandbox(task, tmp_path, {}, backend)  # type: ignore[arg-type]
    verdict, output = _sealed_grade(backend, task, sandbox)
    assert verdict is Verdict.PASS, output
    assert (sandbox.path / "README.md").read_text() == "calc\n"
    assert not (sandbox.path / "NEW.md").exists()


FRESH_GRADER = """
    import json
    from gradelib import Grader
    g = Grader()
    host = g.run(["sh", "-c", "kill -9 -1; hostname"]).output.strip()
    g.run(["sh", "-c", "(setsid sleep 7777 > /dev/null 2>&1 &); echo left > LEFT"])
    after = g.run(["sh", "-c", "ps ax -o args; hostname; ls"])
    fresh = g.run(["sh", "-c", "ps ax -o args; hostname; ls"], fresh=True)
    print("SAID", json.dumps({"host": host, "after": after.output, "fresh": fresh.output}))
    g.check("all ran", None not in (after.exit_code, fresh.exit_code))
    g.finish()
"""


def test_a_fresh_copy_keeps_the_container_but_no_process(backend: object, tmp_path: Path) -> None:
    """The model's code's `kill -9 -1` cannot end its container (whose own processes run as another uid); a
    fresh work copy ends every process the earlier commands left and empties the copy, in the same container."""
    import json

    from agentic_eval.grading.grader import Verdict
    from tests.helpers import sealed_sandbox, sealed_task

    task = sealed_task(tmp_path, FRESH_GRADER)
    verdict, output = _sealed_grade(backend, task, sealed_sandbox(task, tmp_path, {}, backend))  # type: ignore[arg-type]
    said = json.loads(next(line for line in output.splitlines() if line.startswith("SAID "))[5:])
    assert verdict is Verdict.PASS, output
    assert "sleep 7777" in said["after"] and "LEFT" in said["after"].split()  # the container survived the kill
    assert "sleep 7777" not in said["fresh"] and "LEFT" not in said["fresh"].split(), said["fresh"]
    assert said["host"] in said["after"].split() and said["host"] in said["fresh"].split()  # one container


@pytest.mark.parametrize("module", [
    "import time\ntime.sleep(600)\n",
    "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nos.killpg(0, signal.SIGKILL)\n",
    "while True:\n    pass\n",
], ids=["sleeps", "kills", "spins"])
def test_code_that_hangs_or_kills_is_a_scored_fail_in_containers(backend: object, tmp_path: Path,
                                                                 module: str) -> None:
    from agentic_eval.grading.grader import Verdict
    from tests.helpers import FIXED, HANG_GRADER, sealed_sandbox, sealed_task

    task = sealed_task(tmp_path, HANG_GRADER, timeout=10)
    start = time.monotonic()
    sandbox = sealed_sandbox(task, tmp_path, {"src/calc.py": FIXED + module}, backend)  # type: ignore[arg-type]
    verdict, output = _sealed_grade(backend, task, sandbox)
    assert verdict is Verdict.FAIL, output
    assert time.monotonic() - start < 40


def test_a_forged_suite_that_spares_the_canaries_is_a_fail_in_containers(backend: object, tmp_path: Path) -> None:
    """tests/test_twins.py's forged suite (a real fix, format_money broken, the repo's own tests' reports flipped):
    the twins, judged in the grader's container, fail it and name the forged test."""
    from tests.helpers import assert_forgery_caught, core_task, forged_suite, grade_forged

    task = core_task("fix-failing-test")
    sandbox = forged_suite(task, tmp_path / "sandbox", backend)  # type: ignore[arg-type]
    try:
        assert_forgery_caught(grade_forged(task, sandbox, backend))  # type: ignore[arg-type]
    finally:
        backend.close(sandbox.path)  # type: ignore[attr-defined]
