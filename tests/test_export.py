"""`agentic-eval export` (issue 44): runs of the built-in agent, opencode and claude-code against the scripted
endpoint, exported as ATIF trajectories checked by Harbor's own validator and trajectory models, and as
Inspect eval logs read back by inspect-ai's own reader and served by `inspect view`.

Harbor's package asks for Python >= 3.12; its trajectory models and validator need only pydantic, so
scripts/install.sh installs it with --no-deps --ignore-requires-python (pinned) and they are imported from
it here. Without it (or without inspect-ai) those checks skip locally, and fail under CI, which installs both.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentic_eval.cli import main
from agentic_eval.results.trial_log import read_trials
from agentic_eval.testing import ReceivedRequest, ScriptedReply
from tests.helpers import (
    SEED_XML,
    PolicyEndpoint,
    answer,
    claude_trial,
    make_pack,
    needed_tool,
    require_cli,
    run_cli,
    run_trial,
    solver,
    tiny_port,
)

FAST = ("--agent-opt", "max_retries=0")


def validate_atif(path: Path) -> dict[str, Any]:
    """The trajectory, after Harbor's validator and its Trajectory model accepted it."""
    validator = needed_tool("harbor.utils.trajectory_validator", "Harbor's ATIF validator").TrajectoryValidator()
    assert validator.validate(path), validator.get_errors()
    data = json.loads(path.read_text())
    models = needed_tool("harbor.models.trajectories", "Harbor's ATIF models")
    assert models.Trajectory.model_validate(data).schema_version == data["schema_version"] == "ATIF-v1.8"
    return data


def read_log(path: Path) -> Any:
    return needed_tool("inspect_ai.log", "inspect-ai's log reader").read_eval_log(str(path))


def export(*args: str) -> None:
    assert main(["export", *args]) == 0


def runs_in(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir())


def agent_steps(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in data["steps"] if s["source"] == "agent"]


def check_both(run: Path, out: Path) -> tuple[list[dict[str, Any]], Any]:
    """Export one run both ways; every trajectory valid, the log read back with one sample per trial."""
    export(str(run), "--format", "atif", "--out", str(out / "atif"))
    export(str(run), "--format", "inspect", "--out", str(out / "inspect"))
    records, _ = read_trials(run)
    trajectories = [validate_atif(out / "atif" / run.name / f"{r.task_id}.a{r.attempt}" / "trajectory.json")
                    for r in records]
    log = read_log(out / "inspect" / f"{run.name}.eval")
    assert log.eval.model == records[0].model and log.eval.solver == records[0].agent
    assert sorted((s.id, s.epoch) for s in log.samples) == sorted((r.task_id, r.attempt) for r in records)
    return trajectories, log


# ---------------------------------------------------------------- the built-in agent


def endpoint_500(request: ReceivedRequest) -> ScriptedReply:
    return ScriptedReply(status=500, body={"error": {"message": "CUDA out of memory"}})


def test_builtin_runs_export_with_labels_outcomes_and_unscored_kept_apart(scripted: Any, mini_pack: Path,
                                                                         tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    for responder, tasks, extra in ((solver, 2, ("--stream", "--atif")), (lambda r: answer(SEED_XML), 1, ()),
                                    (endpoint_500, 1, ())):
        pack = make_pack(mini_pack, tasks, dest=tmp_path / f"pack{len(runs_in(runs)) if runs.exists() else 0}")
        run_cli("run", "--model", "fake-model", "--base-url", scripted(responder).base_url, "--tasks", str(pack),
                "--run-dir", str(runs), "--api-key", "sk-secret-xyz", *FAST, *extra)
        time.sleep(1.1)  # run ids are to the second
    solved, xml, failed = runs_in(runs)

    trajectories, log = check_both(solved, tmp_path / "out")
    for data in trajectories:
        assert [s["source"] for s in data["steps"]] == ["system", "user", "agent", "agent", "agent"]
        first, second, last = agent_steps(data)
        call = first["tool_calls"][0]
        assert (call["function_name"], call["arguments"]) == ("read_file", {"path": "config/settings.ini"})
        result = first["observation"]["results"][0]
        assert result["source_call_id"] == call["tool_call_id"] and "port = " in result["content"]
        assert second["tool_calls"][0]["arguments"]["content"].startswith("port is ")
        assert [s["extra"]["agentic_eval"]["label"] for s in (first, second, last)] == ["tool_call"] * 2 + ["prose"]
        assert first["metrics"]["prompt_tokens"] == 10 and first["llm_call_count"] == 1
        assert data["final_metrics"]["total_completion_tokens"] == 15 and data["final_metrics"]["total_steps"] == 5
        ours = data["extra"]["agentic_eval"]
        assert ours["outcome"] == "pass" and ours["scored"] and ours["task_digest"] and "port is" in ours["diff"]
        assert data["agent"]["tool_definitions"][0]["function"]["name"] == "read_file"
    # run --atif wrote the same trajectories beside each wire log as the trials ended
    for record in read_trials(solved)[0]:
        written = validate_atif(solved / "trials" / f"{record.task_id}.a{record.attempt}" / "trajectory.json")
        assert written["steps"] == next(t for t in trajectories if t["trajectory_id"] == record.trial_id)["steps"]
    sample = log.samples[0]
    assert sample.scores["agentic_eval"].value == "pass" and sample.error is None
    assert [m.role for m in sample.messages] == ["system", "user", "assistant", "tool", "assistant", "tool",
                                                 "assistant"]
    assert sample.messages[2].tool_calls[0].function == "read_file"
    assert sample.messages[3].tool_call_id == sample.messages[2].tool_calls[0].id
    assert sample.messages[2].metadata["agentic_eval"]["label"] == "tool_call"
    assert sample.metadata["turn_labels"] == ["tool_call", "tool_call", "prose"]
    assert "port is" in sample.metadata["diff"]
    assert log.results.scores[0].metrics["pass_rate"].value == 1.0

    (data,), log = check_both(xml, tmp_path / "out")
    (turn,) = agent_steps(data)
    assert "tool_calls" not in turn and turn["message"] == SEED_XML  # written as text: stays text
    assert turn["extra"]["agentic_eval"]["label"] == "text_tool_call"
    assert turn["extra"]["agentic_eval"]["family"] == "invented_xml" and turn["extra"]["agentic_eval"]["text_calls"]
    assert data["extra"]["agentic_eval"]["outcome"] == "fail"
    assert log.samples[0].scores["agentic_eval"].value == "fail"
    assert log.samples[0].metadata["turn_labels"] == ["text_tool_call"]

    (data,), log = check_both(failed, tmp_path / "out")
    assert not agent_steps(data)
    error_step = data["steps"][-1]
    assert error_step["source"] == "system" and "status 500" in error_step["message"]
    assert data["extra"]["agentic_eval"]["outcome"] == "endpoint_error" and not data["extra"]["agentic_eval"]["scored"]
    sample = log.samples[0]
    assert sample.scores["agentic_eval"].value == "unscored"  # never a fail
    assert sample.error is not None and "endpoint_error" in sample.error.message
    metrics = log.results.scores[0].metrics
    assert (metrics["scored"].value, metrics["unscored"].value) == (0, 1)
    assert log.results.scores[0].unscored_samples == 1

    # the folder of runs (a campaign's, here the runs folder): one log per run, listed together
    export(str(runs), "--format", "inspect", "--out", str(tmp_path / "all"))
    listing = json.loads((tmp_path / "all" / "logs.json").read_text())
    assert sorted(Path(name).name for name in listing) == sorted(f"{r.name}.eval" for r in (solved, xml, failed))
    inspect_log = needed_tool("inspect_ai.log", "inspect-ai's log listing")
    assert len(inspect_log.list_eval_logs(str(tmp_path / "all"))) == 3
    export(str(runs), "--format", "atif", "--out", str(tmp_path / "all-atif"))
    assert len(list((tmp_path / "all-atif").rglob("trajectory.json"))) == 4
    exported = [p for p in tmp_path.rglob("*") if p.suffix in (".json", ".eval") and "runs" not in p.parts]
    texts = [read_log(p).model_dump_json() if p.suffix == ".eval" else p.read_text() for p in exported]
    assert len(texts) > 10 and not [t for t in texts if "sk-secret-xyz" in t]  # the key is never exported
    for copy in ("a", "b"):  # two copies of one run: named by their place, neither overwrites the other
        shutil.copytree(solved, tmp_path / "copies" / copy / solved.name)
    export(str(tmp_path / "copies"), "--format", "atif", "--out", str(tmp_path / "copies-atif"))
    assert sorted(p.name for p in (tmp_path / "copies-atif").iterdir()) == [f"a__{solved.name}", f"b__{solved.name}"]


def test_bad_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    assert main(["export", str(tmp_path / "empty"), "--format", "atif", "--out", str(tmp_path / "o")]) == 2
    assert "no run folder in it" in capsys.readouterr().err
    assert main(["export", str(tmp_path / "missing"), "--format", "atif", "--out", str(tmp_path / "o")]) == 2
    assert "not found" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["export", str(tmp_path), "--format", "csv", "--out", str(tmp_path / "o")])
    run = tmp_path / "runs" / "r"
    run.mkdir(parents=True)
    (run / "run.json").write_text("{}")
    os.mkfifo(run / "trials.jsonl")  # would hang a reader: refused first
    assert main(["export", str(tmp_path / "runs"), "--format", "atif", "--out", str(tmp_path / "o")]) == 2
    assert "is a FIFO" in capsys.readouterr().err
    (tmp_path / "file").write_text("")
    assert main(["export", str(run), "--format", "atif", "--out", str(tmp_path / "file")]) == 2
    assert "is a file; give a folder" in capsys.readouterr().err


# ---------------------------------------------------------------- CLI agents


@pytest.mark.agent_cli
@pytest.mark.parametrize("agent", ["opencode", "codex"])  # chat completions; the Responses API
def test_cli_agent_run_exports(agent: str, mini_pack: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_cli(agent, monkeypatch)
    from tests.helpers import tool_call_policy

    toml = mini_pack / "answer-file" / "task.toml"
    toml.write_text(toml.read_text().replace("agent_timeout_s = 60", "agent_timeout_s = 240"))
    with PolicyEndpoint(tool_call_policy(tiny_port())) as fake:
        result = run_trial(agent, fake, mini_pack, tmp_path / "runs")
    assert result.outcome == "pass", result.detail
    (run,) = runs_in(tmp_path / "runs")
    (data,), log = check_both(run, tmp_path / "out")
    steps = agent_steps(data)
    calls = [c for s in steps for c in s.get("tool_calls", [])]
    assert calls and any("answer.txt" in json.dumps(c["arguments"]) for c in calls)
    answered = {r["source_call_id"] for s in steps for r in s.get("observation", {}).get("results", [])}
    assert {c["tool_call_id"] for c in calls} <= answered  # every call's result came back on the wire
    assert {s["extra"]["agentic_eval"]["label"] for s in steps} >= {"tool_call"}
    assert len(steps) == result.turns.tool_call + result.turns.text_tool_call + result.turns.prose + result.turns.empty
    assert log.samples[0].scores["agentic_eval"].value == "pass"


@pytest.mark.agent_cli
@pytest.mark.parametrize("native", [True, False], ids=["native", "translated"])
def test_claude_code_run_exports(native: bool, mini_pack: Path, tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    require_cli("claude-code", monkeypatch)
    toml = mini_pack / "answer-file" / "task.toml"
    toml.write_text(toml.read_text().replace("agent_timeout_s = 60", "agent_timeout_s = 240"))
    result = claude_trial("solver", native, mini_pack, tmp_path / "runs")
    assert result.outcome == "pass", result.detail
    (run,) = runs_in(tmp_path / "runs")
    (data,), log = check_both(run, tmp_path / "out")
    steps = agent_steps(data)
    bash = [c for s in steps for c in s.get("tool_calls", []) if c["function_name"] == "Bash"]
    assert bash and "answer.txt" in bash[0]["arguments"]["command"]
    owner = next(s for s in steps if bash[0] in s.get("tool_calls", []))
    assert owner["observation"]["results"][0]["source_call_id"] == bash[0]["tool_call_id"]
    assert all(s["extra"]["agentic_eval"]["api"] == "messages" for s in steps)
    assert data["agent"]["extra"]["agentic_eval"]["wire_api"] == result.wire_api
    assert not any(s.get("is_copied_context") for s in steps)  # each request continues the last one
    sample = log.samples[0]
    assert sample.scores["agentic_eval"].value == "pass"
    assert any(m.role == "tool" and m.tool_call_id == bash[0]["tool_call_id"] for m in sample.messages)


# ---------------------------------------------------------------- inspect view, looked at in Chromium


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_http(url: str, process: subprocess.Popen[bytes]) -> Any:
    """The JSON at `url` once the server that `process` is answers (a minute at most)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            reply = httpx.get(url, timeout=5)
            if reply.status_code == 200:
                return reply.json()
        except (httpx.HTTPError, ValueError):
            pass
        assert process.poll() is None, f"{process.args[0]} ended early"
        time.sleep(0.5)
    raise AssertionError(f"{url} did not answer")


def look(url: str, png: Path, profile: Path, wait_for: list[str], timeout_s: float = 60.0) -> str:
    """Open `url` in headless Chromium (driven over its DevTools protocol, as the viewer loads its data after
    the page), wait until its text shows every string of `wait_for`, save a screenshot; returns the text."""
    import asyncio
    import base64

    aiohttp = needed_tool("aiohttp", "talking to Chromium's DevTools")
    port = _free_port()
    scratch = tempfile.mkdtemp(prefix="chr-")  # its org.chromium.* folder (a socket's path: short), removed after it
    browser = subprocess.Popen([str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                                f"--remote-debugging-port={port}", f"--user-data-dir={profile}",
                                "--window-size=1400,900", "about:blank"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                               env={**os.environ, "TMPDIR": scratch})

    async def drive(ws_url: str) -> str:
        async with aiohttp.ClientSession() as session, session.ws_connect(ws_url, max_msg_size=0) as ws:
            sent = 0

            async def call(method: str, **params: Any) -> dict[str, Any]:
                nonlocal sent
                sent += 1
                await ws.send_json({"id": sent, "method": method, "params": params})
                while True:
                    message = await asyncio.wait_for(ws.receive_json(), timeout_s)
                    if message.get("id") == sent:
                        return dict(message.get("result", {}))

            await call("Page.navigate", url=url)
            text, deadline = "", time.monotonic() + timeout_s
            while time.monotonic() < deadline and not all(w in text for w in wait_for):
                await asyncio.sleep(0.5)
                found = await call("Runtime.evaluate", expression="document.body ? document.body.innerText : ''",
                                   returnByValue=True)
                text = str(found.get("result", {}).get("value", ""))
            await asyncio.sleep(0.5)  # the last paint
            png.write_bytes(base64.b64decode((await call("Page.captureScreenshot", format="png"))["data"]))
            return text

    try:
        pages = _wait_http(f"http://127.0.0.1:{port}/json/list", browser)
        return asyncio.run(drive(next(p["webSocketDebuggerUrl"] for p in pages if p.get("type") == "page")))
    finally:
        os.killpg(browser.pid, signal.SIGTERM)
        browser.wait(timeout=30)
        shutil.rmtree(scratch, ignore_errors=True)


def mixed_model() -> Any:
    """The first conversation solves its task, the second writes its calls as invented XML, the third meets an
    endpoint that fails (one run, -j 1: tasks in order)."""
    conversations: list[int] = []

    def respond(request: ReceivedRequest) -> ScriptedReply:
        if not any(m.get("role") == "assistant" for m in request.body["messages"]):
            conversations.append(len(conversations))
        kind = conversations[-1]
        return solver(request) if kind == 0 else answer(SEED_XML) if kind == 1 else endpoint_500(request)

    return respond


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (scripts/install.sh installs it)")
def test_inspect_view_shows_the_exported_run(scripted: Any, mini_pack: Path, tmp_path: Path) -> None:
    needed_tool("inspect_ai", "inspect view")
    pack = make_pack(mini_pack, 3)
    run_cli("run", "--model", "fake-model", "--base-url", scripted(mixed_model()).base_url, "--tasks", str(pack),
            "--run-dir", str(tmp_path / "runs"), *FAST)
    (run,) = runs_in(tmp_path / "runs")
    assert [r.outcome for r in read_trials(run)[0]] == ["pass", "fail", "endpoint_error"]
    export(str(run), "--format", "inspect", "--out", str(tmp_path / "logs"))
    port = _free_port()
    view = subprocess.Popen([sys.executable, "-m", "inspect_ai", "view", "--log-dir", str(tmp_path / "logs"),
                             "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        listing = _wait_http(f"http://127.0.0.1:{port}/api/log-files", view)
        assert f"{run.name}.eval" in json.dumps(listing)
        log_url = f"http://127.0.0.1:{port}/#/logs/{run.name}.eval"
        text = look(log_url, tmp_path / "inspect-view-run.png", tmp_path / "profile1", ["t0", "t1", "t2", "PASS_RATE"])
        assert "agentic-eval/pack3" in text and "fake-model" in text and "pass" in text and "fail" in text
        text = look(f"{log_url}/samples/sample/t1/1/messages", tmp_path / "inspect-view-sample.png",
                    tmp_path / "profile2", ["Grep", "invented_xml"])
        assert "<Grep><pattern>port</pattern></Grep>" in text  # the text call, as the model wrote it
        assert "text_tool_call · invented_xml" in text  # and our label of the turn
        for png in tmp_path.glob("inspect-view-*.png"):
            assert png.read_bytes().startswith(b"\x89PNG") and png.stat().st_size > 10_000
    finally:
        os.killpg(view.pid, signal.SIGTERM)
        view.wait(timeout=30)
