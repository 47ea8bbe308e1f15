"""`agentic-eval run` with the built-in agent, end to end: the real runner, real sandboxes and wire
recorder, and a scripted model on 127.0.0.1 that reads each conversation and answers like a model
that solves the task, writes invented XML, never calls a tool, or an endpoint that fails."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.results.trial_log import read_trials
from agentic_eval.testing import (
    FakeEndpoint,
    ReceivedRequest,
    ScriptedReply,
    chat_body,
    tool_call,
)
from agentic_eval.wire.recorder import read_wire_log
from tests.helpers import (
    SEED_XML,
    SolverThatDies,
    answer,
    make_pack,
    run_cli,
    running,
    solver,
    tool_results,
    unique_sleep,
)

Responder = Callable[[ReceivedRequest], ScriptedReply]
FAST = ("--agent-opt", "max_retries=0")


def xml_writer(request: ReceivedRequest) -> ScriptedReply:
    return answer(SEED_XML)


def prose_writer(request: ReceivedRequest) -> ScriptedReply:
    return answer("The port is set in config/settings.ini; open it and copy the number into answer.txt.")


def _run(fake: FakeEndpoint, pack: Path, runs: Path, *extra: str, expect: int = 0) -> dict[str, Any]:
    code, data = run_cli("run", "--model", "fake-model", "--base-url", fake.base_url, "--api-key", "sk-secret-xyz",
                         "--tasks", str(pack), "--run-dir", str(runs), "--json", *extra)
    assert code == expect  # 1: no trial was scored
    return data


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_structured_calls_solve_every_task(scripted: Any, mini_pack: Path, tmp_path: Path, stream: bool) -> None:
    fake = scripted(solver)
    data = _run(fake, make_pack(mini_pack, 3), tmp_path / "runs", "-j", "2", *FAST, *(["--stream"] if stream else []))
    assert (data["tasks"], data["passed"], data["unscored"]) == (3, 3, 0)
    assert (data["tool_call_tasks"], data["text_tool_call_tasks"]) == (3, 0)
    run_dir = tmp_path / "runs" / data["run_id"]
    for trial in data["trials"]:
        assert trial["outcome"] == "pass" and trial["requests"] == 3
        wire = read_wire_log(run_dir / trial["files"]["wire"])
        assert [r.path for r in wire if r.method == "POST"] == ["/v1/chat/completions"] * 3
        assert (run_dir / trial["files"]["transcript"]).is_file()
        assert "port is" in (run_dir / trial["files"]["diff"]).read_text()
    assert "sk-secret-xyz" not in "".join(p.read_text(errors="replace") for p in run_dir.rglob("*") if p.is_file())


def test_invented_xml_passes_nothing_and_counts_as_text_calls(scripted: Any, mini_pack: Path, tmp_path: Path) -> None:
    fake = scripted(xml_writer)
    data = _run(fake, make_pack(mini_pack, 3), tmp_path / "runs", *FAST)
    assert (data["tasks"], data["passed"], data["unscored"]) == (3, 0, 0)
    assert (data["text_tool_call_tasks"], data["tool_call_tasks"]) == (3, 0)
    assert all(t["outcome"] == "fail" and t["stop_reason"] == "no_tool_call" for t in data["trials"])
    assert data["text_call_families"]
    assert all("unterminated_think" in t["flags"] for t in data["trials"])


def test_lenient_mode_executes_the_invented_xml(scripted: Any, mini_pack: Path, tmp_path: Path) -> None:
    def xml_then_done(request: ReceivedRequest) -> ScriptedReply:
        fed_back = [m for m in request.body["messages"] if m["role"] == "user" and "as text" in str(m["content"])]
        return answer("All done." if fed_back else SEED_XML)

    fake = scripted(xml_then_done)
    data = _run(fake, make_pack(mini_pack, 1), tmp_path / "runs", *FAST, "--lenient-text-calls")
    (trial,) = data["trials"]
    assert data["lenient_text_calls"] is True and trial["requests"] == 2
    assert trial["outcome"] == "fail"  # it searched through the text call, but never wrote the answer
    second = [r for r in fake.requests if r.method == "POST"][1].body["messages"][-1]["content"]
    assert re.search(r"config/settings.ini:\d+:port = \d+", second)  # <Grep> really ran in the sandbox


def test_a_model_that_never_calls_a_tool_fails(scripted: Any, mini_pack: Path, tmp_path: Path) -> None:
    fake = scripted(prose_writer)
    data = _run(fake, make_pack(mini_pack, 2), tmp_path / "runs", *FAST)
    assert (data["passed"], data["unscored"], data["outcomes"]["fail"]) == (0, 0, 2)
    assert (data["text_tool_call_tasks"], data["tool_call_tasks"]) == (0, 0)
    assert all(t["turns"]["prose"] == 1 for t in data["trials"])


ENDPOINT_FAILURES: dict[str, tuple[ScriptedReply, str, str]] = {
    "http_500": (ScriptedReply(status=500, body={"error": {"message": "CUDA out of memory"}}), "endpoint_error",
                 "500"),
    "garbage": (ScriptedReply(body="<html>502 Bad Gateway</html>"), "endpoint_error", "not JSON"),
    "garbage_json": (ScriptedReply(body={"hello": "world"}), "endpoint_error", "not a chat completion"),
    "too_slow": (ScriptedReply(body=chat_body("late"), delay_s=20), "agent_timeout", "time limit"),
    "dies_mid_request": (ScriptedReply(drop=True), "endpoint_error", "disconnected"),
}


@pytest.mark.parametrize("case", ENDPOINT_FAILURES)
def test_endpoint_failures_are_unscored_with_their_cause(scripted: Any, mini_pack: Path, tmp_path: Path,
                                                         case: str) -> None:
    reply, outcome, cause = ENDPOINT_FAILURES[case]
    fake = scripted(lambda request: reply)
    pack = make_pack(mini_pack, 2)
    for toml in pack.glob("*/task.toml"):
        toml.write_text(toml.read_text().replace("agent_timeout_s = 60", "agent_timeout_s = 2"))
    t0 = time.monotonic()
    data = _run(fake, pack, tmp_path / "runs", *FAST, "-j", "2", expect=1)
    assert time.monotonic() - t0 < 15  # a slow endpoint costs the time limit, not its 20 s delay
    assert (data["passed"], data["unscored"], data["outcomes"][outcome]) == (0, 2, 2), data["trials"]
    for trial in data["trials"]:
        assert trial["outcome"] == outcome and cause.lower() in trial["detail"].lower(), trial["detail"]
        assert trial["fault"] == "endpoint", trial  # the endpoint's doing, named in the record
        (exchange,) = read_wire_log(tmp_path / "runs" / data["run_id"] / trial["files"]["wire"])
        if case == "too_slow":  # the abandoned request is in the log, cut short, and did not hold the trial up
            assert exchange.status is None and "stopped before the exchange ended" in (exchange.error or "")
    assert "fail" not in data["outcomes"] or data["outcomes"]["fail"] == 0


def test_endpoint_down_is_one_line_before_any_trial(mini_pack: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from agentic_eval.cli import main

    with FakeEndpoint() as fake:
        dead = fake.base_url
    runs = tmp_path / "runs"
    assert main(["run", "--model", "m", "--base-url", dead, "--tasks", str(mini_pack), "--run-dir", str(runs)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "cannot reach" in err
    assert not runs.exists() or not list(runs.glob("*/trials.jsonl"))


def test_wrong_model_names_the_listed_ones(scripted: Any, mini_pack: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    from agentic_eval.cli import main

    fake = scripted(solver)
    assert main(["run", "--model", "qwen3-coder", "--base-url", fake.base_url, "--tasks", str(mini_pack),
                 "--run-dir", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err
    assert "qwen3-coder" in err and "fake-model" in err


def test_endpoint_dying_mid_run_leaves_the_rest_unscored_then_resume_finishes(
        scripted: Any, mini_pack: Path, tmp_path: Path) -> None:
    dies = SolverThatDies(3)  # the first trial's three turns, then the server is gone
    fake = dies.fake = scripted(dies)
    runs = tmp_path / "runs"
    first = _run(fake, make_pack(mini_pack, 3), runs, *FAST)
    assert (first["passed"], first["unscored"]) == (1, 2)
    assert {t["outcome"] for t in first["trials"] if t["outcome"] != "pass"} == {"endpoint_error"}
    # the endpoint comes back on another port: resume reruns only the unscored trials
    again_fake = scripted(solver)
    code, again = run_cli("run", "--resume", first["run_id"], "--run-dir", str(runs), "--base-url",
                          again_fake.base_url, "--json", *FAST)
    assert code == 0 and (again["passed"], again["unscored"]) == (3, 0)
    records, _ = read_trials(runs / first["run_id"])
    assert len(records) == 5  # 3 first, then the 2 unscored again


def test_a_hanging_command_is_the_models_timeout_graded_and_leaves_no_process(scripted: Any, mini_pack: Path,
                                                                             tmp_path: Path) -> None:
    """The time ran out in the model's own command, not in the endpoint: its doing, so the tree is graded (was an
    unscored agent_timeout, which resume retried: a fail the model could dodge by hanging)."""
    marker = unique_sleep(5)

    def hangs(request: ReceivedRequest) -> ScriptedReply:
        return answer(tool_calls=[tool_call("bash", {"command": f"sleep {marker} & sleep {marker}"}, "c1")])

    fake = scripted(hangs)
    pack = make_pack(mini_pack, 1)
    toml = pack / "t0" / "task.toml"
    toml.write_text(toml.read_text().replace("agent_timeout_s = 60", "agent_timeout_s = 2"))
    data = _run(fake, pack, tmp_path / "runs", *FAST)
    (trial,) = data["trials"]
    assert (trial["outcome"], trial["fault"], trial["agent_status"]) == ("fail", "model", "timeout")
    assert "time limit" in trial["detail"] and "model's own commands" in trial["detail"]
    assert running(f"sleep {marker}") == []


def test_escape_attempts_through_every_path_tool_are_refused(scripted: Any, mini_pack: Path,
                                                             tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOPSECRET\n")
    up = "../" * 30 + str(outside).lstrip("/")
    attempts = [
        tool_call("bash", {"command": f"ln -s {outside} link"}, "c0"),  # allowed: the link lives in the sandbox
        tool_call("read_file", {"path": up + "/secret.txt"}, "c1"),
        tool_call("read_file", {"path": str(outside / "secret.txt")}, "c2"),
        tool_call("read_file", {"path": "link/secret.txt"}, "c3"),
        tool_call("write_file", {"path": str(outside / "new.txt"), "content": "x"}, "c4"),
        tool_call("write_file", {"path": "link/new.txt", "content": "x"}, "c5"),
        tool_call("edit_file", {"path": "link/secret.txt", "old_string": "TOP", "new_string": "NOT"}, "c6"),
        tool_call("edit_file", {"path": up + "/secret.txt", "old_string": "TOP", "new_string": "NOT"}, "c7"),
        tool_call("list_dir", {"path": up}, "c8"),
        tool_call("list_dir", {"path": "link"}, "c9"),
        tool_call("grep", {"pattern": "TOPSECRET", "path": up}, "c10"),
        tool_call("grep", {"pattern": "TOPSECRET", "path": "link"}, "c11"),
    ]

    def escaper(request: ReceivedRequest) -> ScriptedReply:
        return answer("done") if tool_results(request) else answer(tool_calls=attempts)

    fake = scripted(escaper)
    data = _run(fake, make_pack(mini_pack, 1), tmp_path / "runs", *FAST)
    assert data["trials"][0]["outcome"] == "fail"
    results = tool_results([r for r in fake.requests if r.method == "POST"][-1])
    assert len(results) == len(attempts)
    for call, result in zip(attempts[1:], results[1:], strict=True):
        assert "outside the sandbox" in result or "refused" in result.lower(), (call, result)
        assert "TOPSECRET" not in result, (call, result)
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "TOPSECRET\n"


def test_report_compares_the_runs(scripted: Any, mini_pack: Path, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    from agentic_eval.cli import main

    runs = tmp_path / "runs"
    pack = make_pack(mini_pack, 2)
    good = _run(scripted(solver), pack, runs, *FAST)
    bad = _run(scripted(xml_writer), pack, runs, *FAST)
    capsys.readouterr()
    assert main(["report", "--run-dir", str(runs), "--json"]) == 0
    by_id = {x["run_id"]: x for x in map(json.loads, capsys.readouterr().out.splitlines())}
    assert (by_id[good["run_id"]]["passed"], by_id[good["run_id"]]["tool_call_tasks"]) == (2, 2)
    assert (by_id[bad["run_id"]]["passed"], by_id[bad["run_id"]]["text_tool_call_tasks"]) == (0, 2)
    assert main(["report", "--run-dir", str(runs)]) == 0
    table = capsys.readouterr().out
    assert "t0" in table and "t1" in table


def test_ctrl_c_kills_running_agents_keeps_finished_trials_and_resumes(scripted: Any, mini_pack: Path,
                                                                       tmp_path: Path) -> None:
    import signal
    import sys

    marker = unique_sleep(6)
    healthy = tmp_path / "healthy"

    def hangs_until_healthy(request: ReceivedRequest) -> ScriptedReply:
        if healthy.exists() or request.body["messages"][1]["content"].find("t0") >= 0:
            return solver(request)
        if tool_results(request):
            return answer("waited")
        return answer(tool_calls=[tool_call("bash", {"command": f"sleep {marker}"}, "c1")])

    fake = scripted(hangs_until_healthy)
    pack = make_pack(mini_pack, 3)
    (pack / "t0" / "instruction.md").write_text((pack / "t0" / "instruction.md").read_text() + "(task t0)\n")
    runs = tmp_path / "runs"
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentic_eval.cli", "run", "--model", "fake-model", "--base-url", fake.base_url,
         "--tasks", str(pack), "--run-dir", str(runs), "-j", "3", *FAST],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # two agents stuck in `sleep`, t0 finished
            sleeping = running(f"sleep {marker}")
            done = list(runs.glob("*/trials.jsonl"))
            if len(sleeping) == 2 and done and done[0].read_text().strip():
                break
            time.sleep(0.1)
        else:
            pytest.fail("the run did not reach two hanging agents and one finished trial")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    assert proc.returncode == 130, err
    assert "resume with: agentic-eval run --resume" in err
    assert running(f"sleep {marker}") == []  # the running agents' commands were killed
    (run_dir,) = [p.parent for p in runs.glob("*/run.json")]
    records, _ = read_trials(run_dir)
    assert [(r.task_id, r.outcome) for r in records] == [("t0", "pass")]  # finished kept, interrupted not recorded
    healthy.touch()
    code, again = run_cli("run", "--resume", str(run_dir), "--base-url", fake.base_url, "--json", *FAST)
    assert code == 0 and (again["tasks"], again["passed"]) == (3, 3)
    records, _ = read_trials(run_dir)
    assert sorted(r.task_id for r in records) == ["t0", "t1", "t2"]
