"""CLI agent adapters: the real CLIs against a scripted endpoint on 127.0.0.1, through the runner.

Tests marked `agent_cli` run each installed CLI (`agentic-eval agents install NAME`) on the mini
pack's answer-file task, with its traffic going through the wire recorder to a fake endpoint that
answers by policy (what the request holds, not the order it came in): one structured tool call
that writes the answer, then a final message. The same with an endpoint that only writes invented
XML: the trial fails and a text tool call is counted. Under CI (CI=true) a missing CLI is a
failure; locally it is a skip. The rest of the file needs no CLI.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from agentic_eval.agents.adapters import installable_tools
from agentic_eval.agents.adapters.wirelog import wire_facts
from agentic_eval.cli import main
from agentic_eval.confine.host import BwrapBackend, bwrap_problem
from agentic_eval.results.records import TrialResult
from agentic_eval.results.trial_log import read_trials
from agentic_eval.testing import (
    FakeEndpoint,
    ReceivedRequest,
    ScriptedReply,
    responses_stream,
)
from tests.helpers import (  # before the tests isolate HOME: it reads where the CLIs are installed
    CLI_TOOLS,
    MODEL_CACHE_AT_IMPORT,
    Policy,
    PolicyEndpoint,
    chat_reply,
    ci_installed_clis,
    kill_when_running,
    require_cli,
    run_trial,
    script_run,
    shell_call,
    tiny_port,
    tool_call_policy,
    tool_names,
    trial_dir,
    wire_requests,
)


def invented_xml_policy(port: int) -> Policy:
    """Every turn is prose holding a tool call written as invented XML (named after an offered shell
    tool), the collapse the published campaign saw; without tools, a Hermes `<tool_call>` block."""

    def policy(req: ReceivedRequest) -> ScriptedReply:
        body = req.body or {}
        names = tool_names(body)
        if names:
            name, args = shell_call(names, f"echo 'port is {port}' > answer.txt")
            key, value = next((k, v) for k, v in args.items() if k in ("command", "cmd", "commands"))
            value = value[-1] if isinstance(value, list) else value
            text = f"I will write the file now.\n<{name}>\n<{key}>{value}</{key}>\n</{name}>"
        else:
            call = {"name": "write_file", "arguments": {"path": "answer.txt", "content": f"port is {port}"}}
            text = f"I will write the file now.\n<tool_call>\n{json.dumps(call)}\n</tool_call>"
        if req.path.rstrip("/").endswith("/responses"):
            return ScriptedReply(events=responses_stream(text), named_events=True)
        return chat_reply(body, content=text)

    return policy


def no_responses_policy(req: ReceivedRequest) -> ScriptedReply:
    """A chat-only server: /v1/responses does not exist."""
    return ScriptedReply(status=404, body={"error": {"message": "Not Found", "type": "not_found"}})


# ---------------------------------------------------------------- running one trial through the CLI


@pytest.fixture
def pack(mini_pack: Path) -> Path:
    """The mini pack with a time limit that leaves room for a CLI's start-up on a slow machine."""
    toml = mini_pack / "answer-file" / "task.toml"
    toml.write_text(toml.read_text().replace("agent_timeout_s = 60", "agent_timeout_s = 240"))
    return mini_pack


def describe(run_dir: Path, result: TrialResult) -> str:
    """What went over the wire, for the test log: request sizes and tools offered."""
    parts = []
    for rec in wire_requests(run_dir, result):
        body = rec["request"] if isinstance(rec["request"], dict) else {}
        parts.append(f"{rec['path']} {len(json.dumps(body))} B, tools {tool_names(body)}, stream {body.get('stream')}")
    return "; ".join(parts)


CLI_NAMES = [name for name in CLI_TOOLS if name != "claude-code"]
"""The CLIs that speak OpenAI APIs; claude-code speaks the Messages API (tests/test_claude_code.py)."""


# ---------------------------------------------------------------- the real CLIs


@pytest.mark.agent_cli
@pytest.mark.parametrize("agent", CLI_NAMES)
def test_cli_carries_out_a_structured_tool_call(agent: str, pack: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    require_cli(agent, monkeypatch)
    with PolicyEndpoint(tool_call_policy(tiny_port())) as fake:
        result = run_trial(agent, fake, pack, tmp_path / "runs")
    print(f"{agent}: {result.outcome} in {result.agent_duration_s:.1f}s; {describe(tmp_path / 'runs', result)}")
    folder = trial_dir(tmp_path / "runs", result)
    assert result.outcome == "pass", (result.detail, (folder / "agent_stderr.txt").read_text()[-2000:])
    assert result.agent_status == "completed"
    assert (folder / "agent_version.txt").read_text().split()[-1] == CLI_TOOLS[agent].version
    assert result.agent_version.split()[-1] == CLI_TOOLS[agent].version  # in the trial's record too
    assert {"agent_stderr", "agent_command", "transcript"} <= set(result.files)
    assert "sk-test" not in (folder / "agent_command.txt").read_text()
    requests = wire_requests(tmp_path / "runs", result)
    assert requests and result.requests == len(requests)
    assert result.agent_turns == len(requests)
    if agent == "aider":
        assert result.stop_reason == "no_tool_calls_by_design"
        assert result.turns.prose >= 1 and result.turns.tool_call == 0
        assert "tools" not in requests[0]["request"]
    else:
        assert result.turns.tool_call >= 1 and result.turns.text_tool_call == 0
        assert tool_names(requests[0]["request"]), "the CLI offered no tools"
    if agent == "codex":
        assert all(r["path"].endswith("/responses") for r in requests)
    else:
        assert all(r["path"].endswith("/chat/completions") for r in requests)
    assert all(r["stream"] == (agent != "mini-swe-agent") for r in requests)
    assert result.files.get("transcript")


@pytest.mark.agent_cli
# kilo is an opencode fork run by OpencodeAgent's code (15-40 s of start-up a run): opencode's run covers the path
@pytest.mark.parametrize("agent", [name for name in CLI_NAMES if name != "kilo"])
def test_cli_trial_fails_on_invented_xml_and_counts_text_calls(agent: str, pack: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    require_cli(agent, monkeypatch)
    with PolicyEndpoint(invented_xml_policy(tiny_port())) as fake:
        result = run_trial(agent, fake, pack, tmp_path / "runs")
    print(f"{agent}: {result.outcome} ({result.detail}); turns {result.turns}; families {result.text_call_families}")
    assert result.outcome == "fail", result.detail
    assert result.turns.text_tool_call >= 1 and result.turns.tool_call == 0
    assert result.text_call_families
    (run,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    assert main(["report", str(run), "--json"]) == 0


@pytest.mark.agent_cli
def test_codex_without_responses_api_is_an_agent_error(pack: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    require_cli("codex", monkeypatch)
    with PolicyEndpoint(no_responses_policy) as fake:
        result = run_trial("codex", fake, pack, tmp_path / "runs")
    assert result.outcome == "agent_error"
    assert "/v1/responses" in result.detail and "Responses API" in result.detail



@pytest.mark.real_model_long
@pytest.mark.timeout(3000)
@pytest.mark.parametrize("emulate", [None, "llama.cpp:hermes_2_pro"], ids=["plain", "emulated"])
def test_opencode_against_the_real_local_model(request: pytest.FixtureRequest, pack: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch, emulate: str | None) -> None:
    """opencode on the packaged small model (serve-local): its ~7,000-token first request takes
    minutes of prompt processing on a CPU. Whatever the model does, the trial must end scored, with
    every turn on the wire classified; `emulated`: the what-if run, the model's JSON text calls handed to opencode
    as structured calls by a parser that reads both forms it was seen to write (fenced JSON to the probe;
    comma-joined objects under opencode's prompt, which xlam does not read): llama.cpp's Hermes 2 Pro format,
    the one a `--jinja` server picks for a Qwen2.5 template. Select with `-m real_model_long`."""
    if "real_model_long" not in (request.config.getoption("-m") or ""):
        pytest.skip("runs opencode on the real local model (many minutes on a CPU): select with -m real_model_long")
    require_cli("opencode", monkeypatch)
    local_server = pytest.importorskip("agentic_eval.local.server")
    monkeypatch.setenv("AGENTIC_EVAL_CACHE", str(MODEL_CACHE_AT_IMPORT))
    toml = pack / "answer-file" / "task.toml"
    toml.write_text(toml.read_text().replace("agent_timeout_s = 240", "agent_timeout_s = 2400"))
    t0 = time.monotonic()
    with local_server.LocalServer(threads=2, ctx=16384) as server:
        code = main(["run", "--agent", "opencode", "--model", server.model, "--base-url", server.base_url,
                     "--tasks", str(pack), "--task", "answer-file", "--run-dir", str(tmp_path / "runs"),
                     "--agent-opt", "context=16384", "--agent-opt", "max_output=1024", "--json",
                     *(["--emulate-parser", emulate] if emulate else [])])
    assert code == 0
    (run,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    (result,) = read_trials(run)[0]
    print(f"opencode on {server.model}: {result.outcome} ({result.detail}) in {time.monotonic() - t0:.0f}s; "
          f"turns {result.turns}; families {result.text_call_families}; {describe(tmp_path / 'runs', result)}")
    if emulate:  # what the model wrote, and what opencode got
        for rec in wire_requests(tmp_path / "runs", result):
            reply = rec["response"] if isinstance(rec["response"], dict) else {}
            said = ((reply.get("choices") or [{}])[0].get("message") or {}).get("content")
            print(f"  {rec['status']} {str(said)[:300]!r} emulated: {(rec.get('emulated') or {}).get('rewritten')} "
                  f"error: {rec.get('error')}")
    assert result.outcome in ("pass", "fail"), result.detail
    assert result.requests >= 1 and result.turns.unclassified == 0
    assert result.emulate_parser == emulate

# ------------------------------------------------- the shared base, with a stand-in CLI (no install needed)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"


def _pids(folder: Path) -> list[int]:
    return [int(p.read_text()) for p in sorted(folder.glob("*.pid"))]


SPAWN_AND_HANG = """\
sleep 300 & echo $! > "$TRIAL_DIR/child.pid"
setsid sleep 300 & echo $! > "$TRIAL_DIR/escaped.pid"
echo started
sleep 300
"""


def test_timeout_kills_the_group_and_escaped_children(pack: Path, tmp_path: Path) -> None:
    t0 = time.monotonic()
    outcome, ctx = script_run(tmp_path, pack, SPAWN_AND_HANG, timeout_s=1.5)
    assert outcome.status == "timeout" and "1.5s" in outcome.detail
    assert time.monotonic() - t0 < 15
    pids = _pids(ctx.trial_dir)
    assert len(pids) == 2 and not any(_alive(p) for p in pids)
    assert (ctx.trial_dir / "agent_stdout.txt").read_text() == "started\n"


def test_cancel_stops_the_cli(pack: Path, tmp_path: Path) -> None:
    outcome, ctx = script_run(tmp_path, pack, SPAWN_AND_HANG, timeout_s=60, cancel_after_s=1.0)
    assert outcome.status == "cancelled"
    assert not any(_alive(p) for p in _pids(ctx.trial_dir))


def test_crash_is_an_agent_error_with_the_last_stderr_line(pack: Path, tmp_path: Path) -> None:
    outcome, _ = script_run(tmp_path, pack, 'echo "loading" >&2\necho "fatal: no such model" >&2\nexit 3\n')
    assert outcome.status == "agent_error"
    assert outcome.detail == "script exited 3: fatal: no such model"


def test_endpoint_failure_on_the_wire_is_an_endpoint_error(pack: Path, tmp_path: Path) -> None:
    record = {"method": "POST", "path": "/v1/chat/completions", "status": 503, "error": None,
              "response": {"error": {"message": "overloaded"}}}
    body = f"echo '{json.dumps(record)}' > \"$TRIAL_DIR/wire.jsonl\"\nexit 1\n"
    outcome, _ = script_run(tmp_path, pack, body)
    assert outcome.status == "endpoint_error"
    assert "HTTP 503" in outcome.detail and "overloaded" in outcome.detail
    assert outcome.turns == 1


def test_cli_runs_isolated_in_the_sandbox(pack: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "outer-secret")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:1")
    body = 'env > "$TRIAL_DIR/env.txt"\npwd > "$TRIAL_DIR/cwd.txt"\nread -t 1 line && echo "stdin: $line"\necho ok\n'
    outcome, ctx = script_run(tmp_path, pack, body)
    assert outcome.status == "completed" and outcome.transcript == ctx.trial_dir / "agent_stdout.txt"
    env = dict(ln.split("=", 1) for ln in (ctx.trial_dir / "env.txt").read_text().splitlines() if "=" in ln)
    home = Path(env["HOME"])
    assert home.is_relative_to(ctx.trial_dir) and (home / ".npmrc").is_file()
    assert all(Path(env[k]).is_relative_to(home) and Path(env[k]).is_dir()
               for k in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME"))
    assert "OPENAI_API_KEY" not in env and "HTTPS_PROXY" not in env
    assert env["DO_NOT_TRACK"] == "1" and env["npm_config_offline"] == "true"
    assert Path((ctx.trial_dir / "cwd.txt").read_text().strip()) == ctx.sandbox.path
    assert (ctx.trial_dir / "agent_stdout.txt").read_text() == "ok\n"
    assert (ctx.trial_dir / "agent_version.txt").read_text() == "script-cli 1.2.3\n"


CONFINED_PROBE = """\
id -u
echo forged > "$TRIAL_DIR/forged.txt" 2>/dev/null || echo "trial folder: refused"
echo "its transcript" > "$TRIAL_DIR/cli_output.txt"
echo kept > "$HOME/note.txt" && echo "home: writable"
python3 - "$BASE_URL" "$OTHER_PORT" <<'PY'
import socket, sys, urllib.request
try:
    urllib.request.urlopen(sys.argv[1] + "/models", timeout=5)
    print("recorder: reached")
except urllib.error.HTTPError:
    print("recorder: reached")
except OSError as exc:
    print("recorder: NOT reached", exc)
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=2)
    print("other port: CONNECTED")
except OSError:
    print("other port: refused")
PY
"""


def test_a_confined_cli_reaches_the_recorder_and_nothing_else(pack: Path, tmp_path: Path) -> None:
    if bwrap_problem() is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"bubblewrap must work in CI: {bwrap_problem()}")
        pytest.skip(f"bubblewrap cannot run here: {bwrap_problem()}")
    import socket

    tmp_path.chmod(0o755)  # the stand-in CLI lives here, and the confined uid runs it
    other = socket.socket()
    other.bind(("127.0.0.1", 0))
    other.listen(4)
    other.settimeout(0.1)
    with FakeEndpoint() as fake:
        body = (f"export BASE_URL={fake.base_url} OTHER_PORT={other.getsockname()[1]}\n" + CONFINED_PROBE)
        outcome, ctx = script_run(tmp_path, pack, body, backend=BwrapBackend(), base_url=fake.base_url)
        asked = [r.path for r in fake.requests]
    try:
        other.accept()
        accepted = True
    except OSError:
        accepted = False
    other.close()
    out = (ctx.trial_dir / "agent_stdout.txt").read_text()
    assert outcome.status == "completed", (out, (ctx.trial_dir / "agent_stderr.txt").read_text())
    assert "recorder: reached" in out and "/v1/models" in asked
    assert "other port: refused" in out and not accepted
    assert "trial folder: refused" in out and not (ctx.trial_dir / "forged.txt").exists()
    assert "home: writable" in out
    assert (ctx.trial_dir / "cli_output.txt").read_text() == "its transcript\n"  # the output it declared
    assert int(out.split()[0]) >= 1000 or os.geteuid() != 0


KILLED_MID_TRIAL = """\
import sys
from pathlib import Path

from agentic_eval.confine.host import BwrapBackend
from tests.helpers import script_run

script_run(Path(sys.argv[1]), Path(sys.argv[2]), "sleep " + sys.argv[3] + "\\n", timeout_s=120, backend=BwrapBackend(),
           base_url="http://127.0.0.1:18080/v1")  # (a port the confined uid may listen on)
"""


def test_a_confined_cli_killed_mid_trial_leaves_nothing_the_next_run_does_not_remove(pack: Path,
                                                                                       tmp_path: Path) -> None:
    """kill -9 of the harness while a confined CLI runs: its wire socket folder (and, as root, the run's passwd
    and group folder) stays in the temp folder, marked; the next run's cleanup removes them."""
    if bwrap_problem() is not None:
        pytest.skip(f"bubblewrap cannot run here: {bwrap_problem()}")
    import subprocess
    import sys

    from agentic_eval.leftovers import clean_dead_runs
    from tests.helpers import running, unique_sleep

    tmp_path.chmod(0o755)  # the stand-in CLI lives here, and the confined uid runs it
    temp_root, work = tmp_path / "tmp", tmp_path / "work"
    temp_root.mkdir()
    work.mkdir(mode=0o755)
    marker = unique_sleep(6)
    env = {**os.environ, "TMPDIR": str(temp_root),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parents[1]), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen([sys.executable, "-c", KILLED_MID_TRIAL, str(work), str(pack), marker], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    kill_when_running(proc, marker, 60, "the CLI never started")
    left = sorted(path.name for path in temp_root.iterdir())
    assert any(name.startswith("ae-wire-") for name in left), left
    cleanup = clean_dead_runs(temp_root)
    assert sorted(path.name for path in cleanup.folders) == left and not cleanup.errors
    assert list(temp_root.iterdir()) == []
    for _ in range(100):  # the CLI died with its sandbox (bwrap --die-with-parent), or was killed just now
        if not running(f"sleep {marker}"):
            break
        time.sleep(0.1)
    assert running(f"sleep {marker}") == []


def test_missing_cli_names_the_install_command(pack: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTIC_EVAL_TOOLS", str(tmp_path / "no-tools"))
    with FakeEndpoint() as fake:
        result = run_trial("opencode", fake, pack, tmp_path / "runs")
    assert result.outcome == "agent_error"
    assert result.detail.endswith("install it with: agentic-eval agents install opencode")


def test_wire_facts_see_a_missing_responses_route(tmp_path: Path) -> None:
    records = [
        {"method": "GET", "path": "/v1/models", "status": 200, "response": {}},
        {"method": "POST", "path": "/v1/responses", "status": 404, "response": {"error": {"message": "Not Found"}}},
    ]
    wire = tmp_path / "wire.jsonl"
    wire.write_text("".join(json.dumps(r) + "\n" for r in records) + "not json\n")
    facts = wire_facts(wire)
    assert facts.model_calls == 1 and facts.not_found_paths == ["/v1/responses"]
    assert facts.last_model_failure == "HTTP 404 on POST /v1/responses: Not Found"
    assert wire_facts(tmp_path / "absent.jsonl").model_calls == 0


def test_agents_list_and_install_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("AGENTIC_EVAL_TOOLS", str(tmp_path / "tools"))
    assert main(["agents", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["tools_dir"] == str(tmp_path / "tools")
    rows = {r["name"]: r for r in listed["agents"]}
    assert {"oracle", "nop", *CLI_TOOLS} <= set(rows)
    for name in CLI_TOOLS:
        assert rows[name]["kind"] == "cli" and rows[name]["installed"] is False
        assert rows[name]["install"] == f"agentic-eval agents install {name}"
    assert rows["nop"]["kind"] == "builtin" and rows["nop"]["installed"] is None
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["agents", "list"]) == 0
    out = capsys.readouterr().out
    install = next(line for line in out.splitlines() if line.startswith("install with: agentic-eval agents install "))
    assert set(CLI_TOOLS) <= set(install.split()), install  # none installed in this tools folder
    table = out.split("tools folder:")[0]
    assert max(len(line) for line in table.splitlines()) <= 80, table
    assert main(["agents", "install", "no-such-cli"]) == 2
    assert "no CLI to install for no-such-cli" in capsys.readouterr().err


THIRD_PARTY = '''"""A third-party CLI adapter, as a plugin would ship it."""
from agentic_eval.agents.adapters import CliAgent, CliTool

TOOL = CliTool(agent="toy-cli", kind="pypi", package="toy-cli", version="1.2.3", binary="toy",
               speaks="chat completions (a test's toy)")


class ToyAgent(CliAgent):
    name = "toy-cli"
    tool = TOOL
'''


def _register_third_party(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Install the toy adapter the way pip would: its module and a dist-info whose entry point joins
    the `agentic_eval.agents` group, on sys.path."""
    site.mkdir()
    (site / "toy_cli_adapter.py").write_text(THIRD_PARTY, encoding="utf-8")
    info = site / "toy_cli_adapter-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-cli-adapter\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[agentic_eval.agents]\ntoy-cli = toy_cli_adapter:ToyAgent\n",
                                           encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))


def test_a_third_party_cli_agent_is_listed_and_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """One registry: an adapter registered through an entry point shows in `agents list` and is accepted
    by `agents install` (here already at its pinned version in the tools folder, so nothing is fetched)."""
    _register_third_party(tmp_path / "site", monkeypatch)
    monkeypatch.setenv("AGENTIC_EVAL_TOOLS", str(tmp_path / "tools"))
    tools = installable_tools()
    assert "toy-cli" in tools and list(tools)[-1] == "toy-cli"  # PyPI after npm, then by name
    assert main(["agents", "list", "--json"]) == 0
    row = next(r for r in json.loads(capsys.readouterr().out)["agents"] if r["name"] == "toy-cli")
    assert (row["kind"], row["installed"], row["install"]) == ("cli", False, "agentic-eval agents install toy-cli")
    assert row["target"] == "toy_cli_adapter:ToyAgent"
    home = tmp_path / "tools" / "toy-cli"  # what its install leaves: the venv's executable and dist-info
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "toy").write_text("#!/bin/sh\n", encoding="utf-8")
    (home / "bin" / "toy").chmod(0o755)
    (home / "lib" / "python3" / "site-packages" / "toy_cli-1.2.3.dist-info").mkdir(parents=True)
    assert main(["agents", "install", "toy-cli"]) == 0
    assert capsys.readouterr().out.strip() == "toy-cli: toy-cli 1.2.3 (already installed)"
    assert main(["agents", "list", "--json"]) == 0
    row = next(r for r in json.loads(capsys.readouterr().out)["agents"] if r["name"] == "toy-cli")
    assert (row["installed"], row["version"]) == (True, "1.2.3")


def test_ci_installs_the_fast_clis() -> None:
    assert {"opencode", "codex", "qwen-code"} <= ci_installed_clis()


def test_install_steps_stay_in_the_tools_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTIC_EVAL_TOOLS", str(tmp_path))
    (npm_step,) = CLI_TOOLS["opencode"].install_steps()
    assert npm_step[1:4] == ["install", "--prefix", str(tmp_path / "opencode")]
    assert npm_step[-1] == "opencode-ai@1.18.33"
    venv, pip = CLI_TOOLS["aider"].install_steps()
    assert venv[1:] == ["-m", "venv", str(tmp_path / "aider")]
    assert pip[0] == str(tmp_path / "aider" / "bin" / "python") and pip[-1] == "aider-chat==0.86.2"
    assert CLI_TOOLS["mini-swe-agent"].executable == tmp_path / "mini-swe-agent" / "bin" / "mini"
