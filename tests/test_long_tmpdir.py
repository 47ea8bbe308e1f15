"""A long temp folder (TMPDIR) is no harness error: the unix sockets the harness makes there (the sealed
grader's run.sock, a confined CLI's wire.sock) are longer than the 107 bytes a socket's path may be, and are
bound and reached through /proc/self/fd (confine/relay.py's `at_unix_path`), by the harness and by the confined
side (the relay in a bwrap sandbox or a container, gradelib's `request`). Shown with both ends of the grader's
socket, the oracle and the built-in agent against the scripted endpoint under each sandbox, and a scripted CLI
behind the relay; and the one-line error where even that cannot help."""

from __future__ import annotations

import os
import socket
import stat
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentic_eval import leftovers
from agentic_eval.agents.base import AgentContext, AgentOptions
from agentic_eval.confine.host import BwrapBackend, bwrap_problem
from agentic_eval.confine.relay import LINK_FOLDER_PREFIX, UNIX_PATH_MAX, UnixPathTooLong, at_unix_path
from agentic_eval.leftovers import clean_socket_links
from agentic_eval.packs.sandbox import materialize_sandbox
from agentic_eval.packs.task import load_task
from agentic_eval.paths import cache_dir
from agentic_eval.testing import FakeEndpoint, ScriptedReply, chat_body
from tests.helpers import MODEL, ScriptedCli, docker_engine, run_cli, solver

IMAGE_CACHE = str(cache_dir())
"""The user's cache, read before the tests isolate HOME: the docker image is built once, not per run."""
LONG = 90
"""Characters of the temp folder the tests use: with ae-grading-XXXXXXXX/sock/run.sock, over 107 bytes."""


@pytest.fixture
def long_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """TMPDIR, for this process and the processes it starts, a folder of LONG characters (or more)."""
    folder = tmp_path / ("t" * max(8, LONG - len(str(tmp_path)) - 1))
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def needs_bwrap() -> None:
    if bwrap_problem() is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"bubblewrap must work in CI: {bwrap_problem()}")
        pytest.skip(f"bubblewrap cannot run here: {bwrap_problem()}")


# ---------------------------------------------------------------- the socket itself


def test_a_socket_past_the_limit_is_bound_and_reached_where_it_is(tmp_path: Path) -> None:
    folder = tmp_path / ("f" * 120)
    folder.mkdir()
    path = str(folder / "run.sock")
    assert len(os.fsencode(path)) > UNIX_PATH_MAX
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        at_unix_path(listener.bind, path)
        listener.listen(1)
        assert stat.S_ISSOCK(os.stat(path).st_mode)  # in the folder itself, nowhere else
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            at_unix_path(client.connect, path)
            accepted, _ = listener.accept()
            with accepted:
                accepted.sendall(b"hello")
                assert client.recv(5) == b"hello"
    assert sorted(p.name for p in folder.iterdir()) == ["run.sock"]
    assert str(folder) not in _open_files()  # the folder's O_PATH descriptor is closed


def _open_files() -> set[str]:
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            found.add(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:  # the listing's own descriptor, closed by now
            pass
    return found


def test_without_proc_a_link_under_tmp_leads_there_and_goes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As on macOS (no O_PATH, no /proc): through a link to the folder in a 0700 folder of its own under /tmp."""
    folder = tmp_path / ("f" * 120)
    folder.mkdir()
    path = str(folder / "run.sock")
    before = set(Path("/tmp").glob(f"{LINK_FOLDER_PREFIX}*"))
    monkeypatch.delattr(os, "O_PATH")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        at_unix_path(listener.bind, path)
        listener.listen(1)
        assert stat.S_ISSOCK(os.stat(path).st_mode)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            at_unix_path(client.connect, path)
            accepted, _ = listener.accept()
            accepted.close()
    assert set(Path("/tmp").glob(f"{LINK_FOLDER_PREFIX}*")) <= before  # each link folder went with its call


def test_a_link_folder_a_killed_run_left_is_removed_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    (target / "keep.txt").write_text("keep")
    stale, fresh = tmp_path / f"{LINK_FOLDER_PREFIX}stale", tmp_path / f"{LINK_FOLDER_PREFIX}fresh"
    for folder in (stale, fresh):
        folder.mkdir(mode=0o700)
        (folder / "d").symlink_to(target)
    os.utime(stale, (0, 0))
    assert clean_socket_links(tmp_path) == [stale]
    assert not stale.exists() and (fresh / "d").is_symlink() and (target / "keep.txt").read_text() == "keep"
    assert leftovers.LINK_FOLDER_PREFIX == LINK_FOLDER_PREFIX  # repeated there: relay.py cannot be imported by it


def test_a_path_that_cannot_be_shortened_is_one_clear_line(tmp_path: Path) -> None:
    long_name = str(tmp_path / ("n" * 110))  # the name alone is too long, /proc/self/fd or a link
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock, pytest.raises(UnixPathTooLong) as caught:
        at_unix_path(sock.bind, long_name)
    message = str(caught.value)
    assert long_name in message and "TMPDIR" in message and "\n" not in message
    assert not os.path.exists(long_name)


def test_a_grader_reaches_its_code_host_in_a_long_tmpdir(long_tmp: Path) -> None:
    """Both ends of grading/sealed.py's socket: the harness's CodeHost binds it in a grading folder of the long
    temp folder, gradelib's `request` connects to the path the grader is told."""
    from agentic_eval.confine.host import LocalBackend
    from agentic_eval.grading.sealed import SOCKET_ENV, CodeHost, decode, request

    snapshot = long_tmp / "snap"
    snapshot.mkdir()
    (snapshot / "a.txt").write_text("from the tree\n")
    with tempfile.TemporaryDirectory(prefix="ae-grading-") as folder:
        host = CodeHost(snapshot, Path(folder), LocalBackend())
        try:
            assert len(os.fsencode(host.env[SOCKET_ENV])) > UNIX_PATH_MAX
            response = request({"argv": ["cat", "a.txt"], "collect": ["a.txt"]}, host.env[SOCKET_ENV], timeout=30)
        finally:
            host.close()
    assert (response["exit"], response["output"]) == (0, "from the tree\n"), response
    assert decode(response["files"]["a.txt"]) == b"from the tree\n"


def test_a_docker_engine_at_a_path_too_long_is_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentic_eval.confine.docker_image import client_for
    from agentic_eval.errors import AgenticEvalError

    path = "/tmp/" + "e" * 110 + "/docker.sock"
    monkeypatch.setenv("DOCKER_HOST", f"unix://{path}")
    with pytest.raises(AgenticEvalError) as caught:
        client_for()
    assert path in str(caught.value) and "ln -s" in str(caught.value) and "\n" not in str(caught.value)


# ---------------------------------------------------------------- whole runs in a long TMPDIR


def _outcomes(data: dict[str, Any]) -> list[tuple[str, str]]:
    return [(t["outcome"], t["detail"]) for t in data["trials"]]


@pytest.mark.parametrize("sandbox", ["local", "bwrap"])
def test_the_oracle_and_the_builtin_agent_pass_in_a_long_tmpdir(sandbox: str, long_tmp: Path, mini_pack: Path,
                                                                tmp_path: Path) -> None:
    if sandbox == "bwrap":
        needs_bwrap()
    runs = long_tmp / "runs"
    code, oracle = run_cli("run", "--model", "m", "--agent", "oracle", "--tasks", str(mini_pack), "--sandbox", sandbox,
                           "--run-dir", str(runs), "--json")
    assert (code, _outcomes(oracle)) == (0, [("pass", "fix_applied")])
    with FakeEndpoint(responder=solver) as fake:
        code, built_in = run_cli("run", "--model", MODEL, "--base-url", fake.base_url, "--api-key", "sk-test",
                                 "--tasks", str(mini_pack), "--sandbox", sandbox, "--run-dir", str(runs), "--json",
                                 "--agent-opt", "max_retries=0")
    assert code == 0 and [o for o, _ in _outcomes(built_in)] == ["pass"], built_in["trials"]
    left = sorted(p.name for p in long_tmp.iterdir() if not p.name.startswith("ae-identity-"))  # (the process's own)
    assert left == ["runs"]  # every trial's temp folders (and sockets) are gone


SCRIPTED_CLI = r'''#!/usr/bin/env python3
"""A stand-in CLI: one request to the endpoint, through the sandbox's relay."""
import json, os, sys, urllib.request
if sys.argv[1:] == ["--version"]:
    print("scripted-cli 1.0")
    sys.exit(0)
body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hello"}]}).encode()
request = urllib.request.Request(os.environ["BASE_URL"] + "/chat/completions", data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
with urllib.request.urlopen(request, timeout=30) as reply:
    print(f"status {reply.status}")
'''


@pytest.mark.parametrize("sandbox", ["bwrap", "docker"])
def test_a_confined_cli_reaches_its_endpoint_through_a_relay_in_a_long_tmpdir(
        sandbox: str, long_tmp: Path, mini_pack: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """The relay (confine/relay.py, in the sandbox) connects to the harness's wire.sock, bound in at its long path."""
    if sandbox == "bwrap":
        needs_bwrap()
        backend: Any = BwrapBackend()
    else:
        from agentic_eval.confine.docker import DockerBackend

        backend = DockerBackend(hosts=[request.getfixturevalue("engine")])
    tmp_path.chmod(0o755)  # the stand-in CLI lives here, and the confined uid runs it
    program = tmp_path / "scripted-cli"
    program.write_text(SCRIPTED_CLI)
    program.chmod(0o755)
    task = load_task(mini_pack / "answer-file")
    tree = materialize_sandbox(task, 0, tmp_path / "sandbox")
    trial = tmp_path / "trial"
    trial.mkdir()
    agent = ScriptedCli()
    try:
        with FakeEndpoint(responder=lambda request: ScriptedReply(body=chat_body("ok"))) as fake:
            ctx = AgentContext(task=task, sandbox=tree, instruction="do it", base_url=fake.base_url, api_key="key",
                               model=MODEL, timeout_s=120, max_turns=5, trial_dir=trial,
                               options=AgentOptions(extra={"bin": str(program)}), backend=backend,
                               cancel=threading.Event())
            backend.trial_start(tree.path)
            backend.agent_start(tree.path, agent)
            outcome = agent.run(ctx)
            backend.trial_end(tree.path)
            assert len(fake.requests) == 1
    finally:
        backend.close_all()
    out = (trial / "agent_stdout.txt").read_text()
    assert outcome.status == "completed" and out == "status 200\n", (out, (trial / "agent_stderr.txt").read_text())
    assert not list(long_tmp.glob("ae-wire-*"))  # the relay's folder, and its socket, are gone


# ---------------------------------------------------------------- docker: the grader's container connects


@pytest.fixture(scope="module")
def engine() -> Iterator[str]:
    os.environ.setdefault("AGENTIC_EVAL_CACHE", IMAGE_CACHE)
    yield from docker_engine("longtmp")


def test_the_oracle_passes_in_containers_in_a_long_tmpdir(engine: str, long_tmp: Path, mini_pack: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", engine)
    monkeypatch.setenv("AGENTIC_EVAL_CACHE", IMAGE_CACHE)
    code, oracle = run_cli("run", "--model", "m", "--agent", "oracle", "--tasks", str(mini_pack), "--sandbox", "docker",
                           "--run-dir", str(long_tmp / "runs"), "--json")
    assert (code, _outcomes(oracle)) == (0, [("pass", "fix_applied")])
