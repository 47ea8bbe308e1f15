"""The relay serves only its agent (issue 26): a confined CLI's tools cannot send requests of their own through
it, and cannot read the trial's key. A request from any process of the sandbox but the CLI's own is answered
403, never forwarded, recorded in the trial's refused.jsonl and counted on the trial (`tool_requests`), which
`report` names. Shown with a scripted CLI (a Python program whose child calls the relay) under bwrap, and
with each real CLI installed here, whose own shell tool runs a script that looks everywhere for the key and
the relay and calls it."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.agents.adapters import Invocation
from agentic_eval.agents.base import AgentContext, AgentOptions
from agentic_eval.cli import main
from agentic_eval.confine.host import BwrapBackend, bwrap_problem
from agentic_eval.confine.origin import REFUSED_FILE, holders, process, refused_requests, socket_inode
from agentic_eval.packs.sandbox import materialize_sandbox
from agentic_eval.packs.task import load_task
from agentic_eval.testing import FakeEndpoint, ReceivedRequest, ScriptedReply, chat_body, responses_stream, tool_call
from tests.helpers import (
    CLI_TOOLS,
    MODEL,
    PolicyEndpoint,
    ScriptedCli,
    chat_reply,
    require_cli,
    run_trial,
    shell_call,
    tool_names,
    trial_dir,
)

STOLEN = "A TURN OF THE TOOLS' OWN"


def needs_bwrap() -> None:
    if bwrap_problem() is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"bubblewrap must work in CI: {bwrap_problem()}")
        pytest.skip(f"bubblewrap cannot run here: {bwrap_problem()}")


# ---------------------------------------------------------------- finding who holds a connection


def test_the_holder_of_a_loopback_connection_is_found() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server, socket.create_connection(server.getsockname()) as client:
        accepted, _ = server.accept()
        with accepted:
            inode = socket_inode(os.getpid(), client.getsockname(), server.getsockname())
            assert inode == os.fstat(client.fileno()).st_ino
            assert [p.pid for p in holders(inode, os.getpid())] == [os.getpid()]
            me = process(os.getpid())
            assert me is not None and me.inner_pid == os.getpid() and "python" in me.command
    assert socket_inode(os.getpid(), ("127.0.0.1", 1), ("127.0.0.1", 2)) is None


def test_a_flood_of_refusals_is_counted_whole_in_bounded_lines(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from agentic_eval.confine import origin

    monkeypatch.setattr(origin, "MAX_LOGGED", 2)
    log = origin.RefusalLog(tmp_path / REFUSED_FILE)
    for _ in range(5):
        log.write("request", origin.Verdict(False, why="a tool"), "POST /v1/chat/completions")
    log.close()
    assert len((tmp_path / REFUSED_FILE).read_text().splitlines()) == 3
    assert refused_requests(tmp_path) == log.count == 5
    assert refused_requests(tmp_path / "none") == 0


# ---------------------------------------------------------------- a scripted CLI whose child calls the relay


SCRIPTED_CLI = r'''#!/usr/bin/env python3
"""A stand-in CLI: it calls the endpoint itself, lets a child of its own call it (as its shell tool would),
calls it again, and tries the harness's socket directly."""
import json, os, socket, subprocess, sys, urllib.error, urllib.request
if sys.argv[1:] == ["--version"]:
    print("scripted-cli 1.0")
    sys.exit(0)


def call(said):
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": said}]}).encode()
    request = urllib.request.Request(os.environ["BASE_URL"] + "/chat/completions", data=body, method="POST",
                                     headers={"Content-Type": "application/json", "Authorization": "Bearer the-key"})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return f"status {reply.status}"
    except urllib.error.HTTPError as exc:
        return f"status {exc.code} {json.loads(exc.read())['error']['code']}"


if sys.argv[1:2] == ["--call"]:
    print(call(sys.argv[2]))
    sys.exit(0)
print(call("the agent's first request"))
child = subprocess.run([sys.executable, __file__, "--call", "STOLEN"], capture_output=True, text=True)
print(f"child {child.stdout.strip()} {child.stderr.strip()[-200:]}".strip())
print(call("the agent's second request"))
relay = open(f"/proc/{os.getppid()}/cmdline", "rb").read().split(b"\0")
path = next(part.decode() for part in relay if part.endswith(b".sock"))
around = socket.socket(socket.AF_UNIX)
around.connect(path)
around.settimeout(5)
print("around the relay:", around.recv(1) == b"" and "closed")
'''


def test_a_scripted_clis_child_is_refused_and_recorded(mini_pack: Path, tmp_path: Path) -> None:
    needs_bwrap()
    tmp_path.chmod(0o755)  # the stand-in CLI lives here, and the confined uid runs it
    program = tmp_path / "scripted-cli"
    program.write_text(SCRIPTED_CLI.replace("STOLEN", STOLEN))
    program.chmod(program.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    task = load_task(mini_pack / "answer-file")
    sandbox = materialize_sandbox(task, 0, tmp_path / "sandbox")
    trial = tmp_path / "trial"
    trial.mkdir()
    with FakeEndpoint(responder=lambda request: ScriptedReply(body=chat_body("ok"))) as fake:
        ctx = AgentContext(task=task, sandbox=sandbox, instruction="do it", base_url=fake.base_url, api_key="the-key",
                           model=MODEL, timeout_s=120, max_turns=5, trial_dir=trial,
                           options=AgentOptions(extra={"bin": str(program)}), backend=BwrapBackend(),
                           cancel=threading.Event())
        outcome = ScriptedCli().run(ctx)
        asked = [json.loads(r.raw_body)["messages"][0]["content"] for r in fake.requests]
    out = (trial / "agent_stdout.txt").read_text()
    assert outcome.status == "completed", (out, (trial / "agent_stderr.txt").read_text())
    assert asked == ["the agent's first request", "the agent's second request"]  # the child's never went out
    assert out.splitlines() == ["status 200", "child status 403 not_the_agent", "status 200",
                                "around the relay: closed"]
    refused = [json.loads(line) for line in (trial / REFUSED_FILE).read_text().splitlines()]
    assert [entry["what"] for entry in refused] == ["request", "wire socket"]
    assert refused[0]["request"] == "POST /v1/chat/completions" and "--call" in refused[0]["by"][0]["command"]
    assert "not the agent's own" in refused[0]["why"] and "scripted-cli" in refused[0]["why"]
    assert "scripted-cli" in refused[1]["by"][0]["command"]
    assert refused_requests(trial) == 2


# ---------------------------------------------------------------- the real CLIs


THIEF = textwrap.dedent('''\
    import json, os, re, urllib.error, urllib.request
    KEY, URL = re.compile(r"ae-trial-[0-9a-f]{32}"), re.compile(r"http://127\\.0\\.0\\.1:\\d+/v1")
    keys, urls = set(), set()
    def look(text):
        keys.update(KEY.findall(text))
        urls.update(URL.findall(text))
    look(json.dumps(dict(os.environ)))
    for pid in filter(str.isdigit, os.listdir("/proc")):
        for name in ("environ", "cmdline"):
            try:
                look(open(f"/proc/{pid}/{name}", "rb").read().decode("utf-8", "replace"))
            except OSError:
                pass
    for top in (os.path.expanduser("~"), os.getcwd(), "/tmp"):
        for folder, _, files in os.walk(top):
            for name in files:
                try:
                    look(open(os.path.join(folder, name), "rb").read(1 << 20).decode("utf-8", "replace"))
                except OSError:
                    pass
    print("KEYS FOUND", len(keys), "RELAYS FOUND", len(urls))
    for url in urls:
        body = json.dumps({"model": "fake-model", "messages": [{"role": "user", "content": "STOLEN"}]}).encode()
        request = urllib.request.Request(url + "/chat/completions", data=body, method="POST", headers={
            "Content-Type": "application/json", "Authorization": "Bearer " + (min(keys) if keys else "none")})
        try:
            with urllib.request.urlopen(request, timeout=20) as reply:
                print("THE ENDPOINT ANSWERED", reply.status)
        except urllib.error.HTTPError as exc:
            print("REFUSED", exc.code)
        except OSError as exc:
            print("UNREACHABLE", exc)
    ''').replace("STOLEN", STOLEN)
THIEF_COMMAND = f"echo {base64.b64encode(THIEF.encode()).decode()} | base64 -d | python3 - 2>&1"


def thief_policy(stolen: list[str]) -> Any:
    """The model asks the CLI's shell tool to run THIEF once, then ends; a request of the thief's own is noted."""

    def policy(request: ReceivedRequest) -> ScriptedReply:
        body = request.body or {}
        if STOLEN in json.dumps(body):
            stolen.append(request.path)
            return ScriptedReply(body=chat_body("stolen"))
        names = tool_names(body)
        if request.path.rstrip("/").endswith("/responses"):
            done = any(isinstance(i, dict) and i.get("type") == "function_call_output" for i in body.get("input", []))
            events = (responses_stream("Done.") if done
                      else responses_stream(function_calls=[shell_call(names, THIEF_COMMAND)]))
            return ScriptedReply(events=events, named_events=True)
        if not names:
            return chat_reply(body, content="ok")
        if not any(m.get("role") == "tool" for m in body.get("messages", [])):
            name, args = shell_call(names, THIEF_COMMAND)
            return chat_reply(body, content="Looking around.", tool_calls=[tool_call(name, args, "call_1")])
        return chat_reply(body, content="Done.")

    return policy


KEY_HIDDEN = ("opencode", "codex", "qwen-code", "kilo", "cline")
"""The CLIs whose key the tools cannot read: they take it from a file the harness empties at their first request."""


def needs_docker() -> None:
    """A docker engine at DOCKER_HOST (tests/test_docker_backend.py starts one of its own; scripts/dockerd.sh
    starts one by hand) and the sandbox image in the user's cache; else a skip."""
    host = os.environ.get("DOCKER_HOST", "")
    try:
        answered = bool(host) and subprocess.run(["docker", "version"], capture_output=True, timeout=20,
                                                 check=False).returncode == 0
    except (OSError, subprocess.SubprocessError):
        answered = False
    if not answered:
        pytest.skip("no docker engine at DOCKER_HOST (start one with scripts/dockerd.sh)")


# aider's model makes no tool calls; claude-code's thief is in tests/test_claude_code.py (helpers.PROBE: its relay's
# URL has no /v1, and its tools' shell is Bash)
THIEVES = sorted(set(CLI_TOOLS) - {"aider", "claude-code"})
ON_DOCKER = "cline"
"""Every CLI's own tool route runs under bwrap (whose relay checks the origin as docker's does); the docker backend's
origin check (the relay in front of a container) runs once, with the CLI of the shortest trial: a second CLI there
adds no route the bwrap runs lack, only a minute of the suite's time."""


@pytest.mark.agent_cli
@pytest.mark.parametrize(("agent", "sandbox"), [pytest.param(agent, "bwrap", id=f"{agent}-bwrap") for agent in THIEVES]
                         + [pytest.param(ON_DOCKER, "docker", id=f"{ON_DOCKER}-docker")])
def test_a_real_clis_tools_cannot_call_the_endpoint(agent: str, sandbox: str, mini_pack: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    if sandbox == "docker":
        needs_docker()
    else:
        needs_bwrap()
    require_cli(agent, monkeypatch)
    toml = mini_pack / "answer-file" / "task.toml"
    toml.write_text(toml.read_text().replace("agent_timeout_s = 60", "agent_timeout_s = 240"))
    stolen: list[str] = []
    with PolicyEndpoint(thief_policy(stolen)) as fake:
        result = run_trial(agent, fake, mini_pack, tmp_path / "runs", "--sandbox", sandbox)
    folder = trial_dir(tmp_path / "runs", result)
    wire = (folder / "wire.jsonl").read_text()
    assert stolen == [] and STOLEN not in wire  # never forwarded, never recorded as the agent's
    assert result.tool_requests >= 1 and result.requests >= 2, (result.detail, wire[-2000:])
    refused = [json.loads(line) for line in (folder / REFUSED_FILE).read_text().splitlines()]
    assert refused[0]["request"] == "POST /v1/chat/completions" and "python3" in refused[0]["by"][0]["command"]
    seen = wire.replace("\\n", "\n")  # what the thief printed went back to the model in the next request
    assert "REFUSED 403" in seen and "THE ENDPOINT ANSWERED" not in seen
    if agent in KEY_HIDDEN:
        assert "KEYS FOUND 0" in seen
    placeholder = re.compile(r"ae-trial-[0-9a-f]{32}")  # (the sandbox's folder is ae-trial-TASK-...)
    leftovers = [p for p in (folder / "agent_home").rglob("*") if p.is_file()
                 and placeholder.search(p.read_text(encoding="utf-8", errors="replace"))]
    assert leftovers == [] or agent not in KEY_HIDDEN  # the key was in HOME only until the first request
    # the report in this process: what it reads is the run's records, the same whichever process reads them
    capsys.readouterr()
    assert main(["report", str(folder.parents[1]), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tool_request_trials"] == 1
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["report", str(folder.parents[1])]) == 0
    assert "the agent's tools sent their own requests to the endpoint in 1 trial" in capsys.readouterr().out


LIST_CONFIG = '''#!/usr/bin/env python3
import os, sys
if sys.argv[1:] == ["--version"]:
    print("scripted-cli 1.0")
    sys.exit(0)
print(sorted(os.listdir(os.environ["CONFIG"])))
'''


def test_a_clis_machine_wide_settings_are_not_in_its_sandbox(mini_pack: Path, tmp_path: Path) -> None:
    """A CLI's managed or system settings folder (/etc/claude-code and the like: `system_config`) is an empty
    folder in its bwrap sandbox, whose /etc is this machine's: its hooks and permissions do not reach the run."""
    needs_bwrap()
    if os.geteuid() != 0:
        pytest.skip("makes a folder under /etc")
    config = Path(f"/etc/ae-test-config-{os.getpid()}")
    config.mkdir()
    (config / "managed-settings.json").write_text('{"hooks": {}}')
    tmp_path.chmod(0o755)
    program = tmp_path / "scripted-cli"
    program.write_text(LIST_CONFIG)
    program.chmod(0o755)

    class Lister(ScriptedCli):
        def invocation(self, ctx: AgentContext, home: Path, executable: str) -> Invocation:
            return Invocation(argv=[executable], env={"CONFIG": str(config)})

    class Hiding(Lister):
        system_config = (str(config),)

    task = load_task(mini_pack / "answer-file")
    tree = materialize_sandbox(task, 0, tmp_path / "sandbox")
    try:
        outcomes = []
        for agent in (Hiding(), Lister()):
            trial = tmp_path / f"trial-{agent.system_config != ()}"
            trial.mkdir()
            with FakeEndpoint() as fake:
                ctx = AgentContext(task=task, sandbox=tree, instruction="do it", base_url=fake.base_url, api_key="k",
                                   model=MODEL, timeout_s=120, max_turns=5, trial_dir=trial,
                                   options=AgentOptions(extra={"bin": str(program)}), backend=BwrapBackend(),
                                   cancel=threading.Event())
                outcome = agent.run(ctx)
            outcomes.append((outcome.status, (trial / "agent_stdout.txt").read_text().strip()))
    finally:
        shutil.rmtree(config)
    assert outcomes == [("completed", "[]"), ("completed", "['managed-settings.json']")]
