"""A fail cannot be dodged on the agent's side: an agent run the model itself ended early is graded (its outcome is
the grader's pass or fail, the cause in `detail`, `fault` 'model'), while what the endpoint, the harness or the
task caused stays unscored with `fault` naming that side.

Real runs through the runner: the built-in agent against a scripted model on 127.0.0.1, and a stand-in agent CLI
(a shell script driven by the CliAgent base class, confined by the default backend) that does what a model's
commands would: run out the clock, kill the CLI from inside, fill the context until the endpoint refuses."""

from __future__ import annotations

import json
import stat
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.agents.adapters import CliAgent, CliTool, Invocation
from agentic_eval.agents.base import AgentContext, AgentOptions, AgentOutcome
from agentic_eval.confine.host import LocalBackend, bwrap_problem
from agentic_eval.confine.registry import default_backend
from agentic_eval.endpoint import Endpoint
from agentic_eval.faults import Ruling, WireEnd, is_context_refusal, model_items, rule_agent_end
from agentic_eval.packs.task import load_tasks
from agentic_eval.results.records import TrialResult
from agentic_eval.results.run_folder import prepare_run
from agentic_eval.runner import RunSettings, execute_plan, make_run_config
from agentic_eval.testing import FakeEndpoint, ReceivedRequest, ScriptedReply, chat_body, tool_call
from agentic_eval.wire.exchange import EndpointClock
from agentic_eval.wire.recorder import WireRecorder
from tests.helpers import answer, make_pack, run_cli, solver, tool_results, unique_sleep

FAST = ("--agent-opt", "max_retries=0")


def _short_clock(pack: Path, seconds: int) -> Path:
    for toml in pack.glob("*/task.toml"):
        toml.write_text(toml.read_text().replace("agent_timeout_s = 60", f"agent_timeout_s = {seconds}"))
    return pack


def _builtin(fake: FakeEndpoint, pack: Path, runs: Path, *extra: str) -> list[dict[str, Any]]:
    code, data = run_cli("run", "--model", "fake-model", "--base-url", fake.base_url, "--api-key", "sk-secret",
                         "--tasks", str(pack), "--run-dir", str(runs), "--json", *FAST, *extra)
    assert code == (0 if data["unscored"] < len(data["trials"]) else 1)
    return list(data["trials"])


# ---------------------------------------------------------------- the clock: whose time ran out


def test_a_model_that_runs_out_the_clock_in_its_own_command_is_graded(scripted: Any, mini_pack: Path,
                                                                      tmp_path: Path) -> None:
    """It writes the answer, then hangs in a command: the tree is graded (a pass here), the timeout noted."""
    marker = unique_sleep(7)

    def writes_then_hangs(request: ReceivedRequest) -> ScriptedReply:
        if len(tool_results(request)) < 2:
            return solver(request)  # read the config, write the answer
        return answer(tool_calls=[tool_call("bash", {"command": f"sleep {marker}"}, "c9")])

    trials = _builtin(scripted(writes_then_hangs), _short_clock(make_pack(mini_pack, 1), 3), tmp_path / "runs",
                      "--agent-opt", "bash_timeout_s=60")
    (trial,) = trials
    assert (trial["outcome"], trial["fault"], trial["agent_status"]) == ("pass", "model", "timeout")
    assert "time limit of 3s reached" in trial["detail"] and "model's own commands" in trial["detail"]
    assert trial["grader_verdict"] == "pass"


def test_a_hanging_command_with_nothing_done_is_a_scored_fail(scripted: Any, mini_pack: Path, tmp_path: Path) -> None:
    def hangs(request: ReceivedRequest) -> ScriptedReply:
        return answer(tool_calls=[tool_call("bash", {"command": "sleep 600"}, "c1")])

    (trial,) = _builtin(scripted(hangs), _short_clock(make_pack(mini_pack, 1), 2), tmp_path / "runs")
    assert (trial["outcome"], trial["fault"], trial["grader_verdict"]) == ("fail", "model", "fail")


def test_a_slow_endpoint_at_the_deadline_stays_unscored(scripted: Any, mini_pack: Path, tmp_path: Path) -> None:
    def slow_second_turn(request: ReceivedRequest) -> ScriptedReply:
        if tool_results(request):
            return ScriptedReply(body=chat_body("late"), delay_s=30)
        return solver(request)

    (trial,) = _builtin(scripted(slow_second_turn), _short_clock(make_pack(mini_pack, 1), 3), tmp_path / "runs")
    assert (trial["outcome"], trial["fault"]) == ("agent_timeout", "endpoint"), trial
    assert "in flight" in trial["fault_reason"]


# ---------------------------------------------------------------- the context: who filled it

REFUSALS = {  # what each server answers when a request does not fit its context
    "vllm": (400, {"object": "error", "type": "BadRequestError", "code": 400,
                   "message": "This model's maximum context length is 32768 tokens. However, your request has "
                              "40211 input tokens. Please reduce the length of the input messages."}),
    "vllm_max_tokens": (400, {"error": {"message": "'max_tokens' or 'max_completion_tokens' is too large: 8000. "
                                                   "This model's maximum context length is 4096 tokens and your "
                                                   "request has 2778 input tokens (8000 > 4096 - 2778).",
                                        "type": "BadRequestError", "code": 400}}),
    "sglang": (400, {"object": "error", "code": 400, "type": "BadRequestError",
                     "message": "The input (40211 tokens) is longer than the model's context length (32768 tokens)."}),
    "llama.cpp": (400, {"error": {"code": 400, "type": "exceed_context_size_error", "n_prompt_tokens": 40211,
                                  "n_ctx": 32768, "message": "request (40211 tokens) exceeds the available context "
                                                             "size (32768 tokens), try increasing it"}}),
    "openai": (400, {"error": {"message": "Your messages resulted in 140000 tokens.", "type": "invalid_request_error",
                               "param": "messages", "code": "context_length_exceeded"}}),
    "too_large": (413, "<html><body><h1>413 Request Entity Too Large</h1></body></html>"),
}


@pytest.mark.parametrize("server", REFUSALS)
def test_a_context_the_model_filled_is_its_doing(scripted: Any, mini_pack: Path, tmp_path: Path, server: str) -> None:
    status, body = REFUSALS[server]

    def refuses_after_the_answer(request: ReceivedRequest) -> ScriptedReply:
        if len(tool_results(request)) < 2:
            return solver(request)
        return ScriptedReply(status=status, body=body)

    (trial,) = _builtin(scripted(refuses_after_the_answer), make_pack(mini_pack, 1), tmp_path / "runs")
    assert (trial["outcome"], trial["fault"], trial["agent_status"]) == ("pass", "model", "endpoint_error"), trial
    assert "longer than its context after accepting 2" in trial["detail"]
    assert f"HTTP {status}" in trial["detail"]


def test_a_request_the_model_grew_past_the_relays_limit_is_its_doing(scripted: Any, mini_pack: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The wire relay refuses a body over its limit unread (413): after requests it took, only the model's turns and
    reads grew it, so the tree is graded, not left unscored for --resume to retry."""
    monkeypatch.setenv("AGENTIC_EVAL_MAX_REQUEST_MB", "0.25")

    def answers_then_says_too_much(request: ReceivedRequest) -> ScriptedReply:
        if len(tool_results(request)) < 2:
            return solver(request)
        return answer(tool_calls=[tool_call("bash", {"command": "true " + "x" * 300_000}, "c9")])

    fake = scripted(answers_then_says_too_much)
    (trial,) = _builtin(fake, make_pack(mini_pack, 1), tmp_path / "runs")
    assert (trial["outcome"], trial["fault"], trial["agent_status"]) == ("pass", "model", "endpoint_error"), trial
    assert "HTTP 413" in trial["detail"] and "relay's limit of 256 KiB" in trial["detail"]
    assert sum(r.method == "POST" for r in fake.requests) == 3  # the fourth never reached the endpoint


def test_a_context_too_small_for_the_first_request_is_the_endpoints(scripted: Any, mini_pack: Path,
                                                                    tmp_path: Path) -> None:
    status, body = REFUSALS["vllm"]
    (trial,) = _builtin(scripted(lambda request: ScriptedReply(status=status, body=body)), make_pack(mini_pack, 1),
                        tmp_path / "runs")
    assert (trial["outcome"], trial["fault"]) == ("endpoint_error", "endpoint")
    assert "cannot hold the agent's own prompt" in trial["fault_reason"]


def test_other_refusals_stay_endpoint_errors(scripted: Any, mini_pack: Path, tmp_path: Path) -> None:
    def refuses_the_tools(request: ReceivedRequest) -> ScriptedReply:
        if tool_results(request):
            return ScriptedReply(status=400, body={"error": {"message": "tool_choice auto requires "
                                                                        "--enable-auto-tool-choice"}})
        return solver(request)

    (trial,) = _builtin(scripted(refuses_the_tools), make_pack(mini_pack, 1), tmp_path / "runs")
    assert (trial["outcome"], trial["fault"]) == ("endpoint_error", "endpoint")


@pytest.mark.parametrize("status, body, refused", [
    (400, {"error": {"message": "This model's maximum context length is 8192 tokens"}}, True),
    (400, "the request exceeds the available context size, try increasing it", True),
    (413, "", True),
    (400, {"error": {"message": "invalid JSON schema for tool read_file"}}, False),
    (429, {"error": {"message": "too many tokens per minute: rate limited"}}, False),
    (500, {"error": {"message": "maximum context length exceeded while scheduling"}}, False),
])
def test_context_refusals_are_recognized_by_status_and_words(status: int, body: Any, refused: bool) -> None:
    assert is_context_refusal(status, body) is refused


def test_the_rules_in_one_table() -> None:
    def end(status: str, **kw: Any) -> Ruling:
        return rule_agent_end(AgentOutcome(status, detail="d", **kw), uses_model=True)

    assert rule_agent_end(AgentOutcome("timeout", waiting_for_endpoint=False), uses_model=False).unscored == \
        "agent_timeout"  # a model-free agent's (the reference fix's) time is the task's
    assert end("completed") == Ruling(None)
    assert (end("timeout", waiting_for_endpoint=False).unscored, end("timeout", waiting_for_endpoint=False).fault) \
        == (None, "model")
    assert end("timeout", waiting_for_endpoint=True).fault == "endpoint"
    assert end("agent_error", signal=9).fault == "model"
    assert end("agent_error").unscored == "agent_error" and end("agent_error").fault == "harness"
    filled = WireEnd(context_refusal=True, accepted_before=3, model_items=5, first_items=0, message="HTTP 400")
    assert rule_agent_end(AgentOutcome("endpoint_error"), uses_model=True, wire=filled).fault == "model"
    assert rule_agent_end(AgentOutcome("agent_error"), uses_model=True, wire=filled).unscored is None
    first = WireEnd(context_refusal=True, accepted_before=0)
    assert rule_agent_end(AgentOutcome("endpoint_error"), uses_model=True, wire=first).unscored == "endpoint_error"
    few_shot = WireEnd(context_refusal=True, accepted_before=1, model_items=4, first_items=4)  # nothing new of its
    assert rule_agent_end(AgentOutcome("endpoint_error"), uses_model=True, wire=few_shot).fault == "endpoint"


# ---------------------------------------------------------------- the wire recorder's clock


def test_the_endpoint_clock_joins_close_spans_and_answers_after_the_fact() -> None:
    clock = EndpointClock()
    t0 = time.monotonic()
    clock.enter()
    assert clock.busy() and clock.busy_at(t0 + 0.001)
    clock.leave()
    clock.enter()  # at once: one span (a stream's chunks handed on between waits)
    clock.leave()
    assert len(clock._spans) == 1 and not clock.busy()
    time.sleep(0.1)
    between = time.monotonic()
    time.sleep(0.1)
    clock.enter()
    clock.leave()
    assert len(clock._spans) == 2 and not clock.busy_at(between) and clock.busy_at(clock._spans[0][1])


def test_the_recorder_knows_when_it_waited_on_the_endpoint(tmp_path: Path) -> None:
    import httpx

    with FakeEndpoint([ScriptedReply(body=chat_body("slow"), delay_s=1.0)]) as fake:
        recorder = WireRecorder(fake.base_url, tmp_path / "wire.jsonl", client_key="trial-key")
        with recorder:
            refused = httpx.post(recorder.base_url + "/chat/completions", json={}, timeout=10)
            after_refusal = time.monotonic()
            started = time.monotonic()
            worker = threading.Thread(target=httpx.post, args=(recorder.base_url + "/chat/completions",),
                                      kwargs={"json": {}, "timeout": 10,
                                              "headers": {"Authorization": "Bearer trial-key"}})
            worker.start()
            time.sleep(0.5)
            assert recorder.clock.busy()
            worker.join(10)
            ended = time.monotonic()
    assert refused.status_code == 401 and not recorder.endpoint_busy_at(after_refusal)  # never forwarded
    assert recorder.endpoint_busy_at(started + 0.5) and not recorder.endpoint_busy_at(ended + 0.01)


# ---------------------------------------------------------------- a stand-in agent CLI, confined


class ShellCli(CliAgent):
    """A CliAgent whose "CLI" is a shell script (`--agent-opt bin=PATH`): what a model's commands could do."""

    name = "shell-cli"
    tool = CliTool(agent="shell-cli", kind="npm", package="shell-cli", version="0", binary="shell-cli",
                   speaks="nothing")

    def invocation(self, ctx: AgentContext, home: Path, executable: str) -> Invocation:
        return Invocation(argv=[executable], env={"BASE_URL": ctx.base_url, "KEY": ctx.api_key},
                          secrets=(ctx.api_key,))


ASK = """# One process makes every chat request, as a real CLI does (the relay serves only the process that made the
# first one); ask() hands it a request, with a 2nd argument after a read, and waits for its answer.
coproc ASKER { python3 -u -c '
import json, os, sys, urllib.request, urllib.error
for line in sys.stdin:
    args = json.loads(line)
    messages = [{"role": "system", "content": "You are a coding agent."}, {"role": "user", "content": args[0]}]
    if len(args) > 1:  # the model asked to read a file, and its content came back
        call = {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}
        messages += [{"role": "assistant", "content": None, "tool_calls": [call]},
                     {"role": "tool", "tool_call_id": "c1", "content": args[1]}]
    body = json.dumps({"model": "fake-model", "messages": messages}).encode()
    req = urllib.request.Request(os.environ["BASE_URL"] + "/chat/completions", data=body, headers={
        "Authorization": "Bearer " + os.environ["KEY"], "Content-Type": "application/json"})
    try:
        urllib.request.urlopen(req, timeout=120).read()
        print("ok")
    except urllib.error.HTTPError as exc:
        print("HTTP", exc.code)
'; }
ask() {
    printf '%s\\n' "$(python3 -c 'import json, sys; print(json.dumps(sys.argv[1:]))' "$@")" >&"${ASKER[1]}"
    local answer
    read -r answer <&"${ASKER[0]}" || answer="no answer"
    [ "$answer" = ok ] || { echo "$answer" >&2; return 1; }
}
write_answer() { echo "port is $(sed -n 's/^port = //p' config/settings.ini)" > answer.txt; }
"""


def _cli_trial(tmp_path: Path, mini_pack: Path, fake: FakeEndpoint, body: str, *, timeout_s: int = 60,
               backend: Any = None) -> TrialResult:
    tmp_path.chmod(0o755)  # the stand-in CLI lives here, and the confined uid runs it
    script = tmp_path / "shell-cli"
    script.write_text('#!/usr/bin/env bash\n[ "$1" = --version ] && { echo "shell-cli 0"; exit 0; }\n' + ASK + body)
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    pack = _short_clock(make_pack(mini_pack, 1), timeout_s)
    tasks = load_tasks([str(pack)]).tasks
    backend = backend or default_backend()
    endpoint = Endpoint(fake.base_url, "sk-real")
    options = AgentOptions(extra={"bin": str(script)})
    agent = ShellCli()
    settings = RunSettings(model="fake-model", agent=agent.name, agent_options=options)
    config = make_run_config(settings, run_id="dodges", endpoint=endpoint, tasks=tasks, sandbox=backend.name)
    plan = prepare_run(tmp_path / "runs" / "dodges", config, tasks, resume=False)
    (result,) = execute_plan(plan, agent=agent, endpoint=endpoint, options=options, jobs=1, backend=backend)
    return result


def _backends() -> list[Any]:
    return [pytest.param(None, id="confined"), pytest.param(LocalBackend(), id="local")]


@pytest.mark.parametrize("backend", _backends())
def test_a_cli_killed_from_inside_is_graded(tmp_path: Path, mini_pack: Path, backend: Any) -> None:
    if backend is None and bwrap_problem():
        pytest.skip(bwrap_problem())
    with FakeEndpoint(responder=lambda r: ScriptedReply(body=chat_body("ok"))) as fake:
        result = _cli_trial(tmp_path, mini_pack, fake, 'ask "hi"\nwrite_answer\nbash -c \'kill -9 $PPID\'\n'
                            "sleep 5\n", backend=backend)
    assert (result.outcome, result.fault, result.agent_status) == ("pass", "model", "agent_error"), result.detail
    assert "died by signal 9 (SIGKILL), sent from inside its sandbox" in result.detail


def test_a_cli_that_runs_out_the_clock_in_its_own_commands_is_graded(tmp_path: Path, mini_pack: Path) -> None:
    with FakeEndpoint(responder=lambda r: ScriptedReply(body=chat_body("ok"))) as fake:
        result = _cli_trial(tmp_path, mini_pack, fake, 'ask "hi"\nsleep 600\n', timeout_s=3)
    assert (result.outcome, result.fault, result.agent_status) == ("fail", "model", "timeout"), result.detail
    assert "still running after 3s" in result.detail and "model's own commands" in result.detail


def test_a_cli_waiting_on_a_slow_endpoint_at_its_deadline_stays_unscored(tmp_path: Path, mini_pack: Path) -> None:
    replies = [ScriptedReply(body=chat_body("ok")), ScriptedReply(body=chat_body("late"), delay_s=30)]
    with FakeEndpoint(replies) as fake:
        t0 = time.monotonic()
        result = _cli_trial(tmp_path, mini_pack, fake, 'ask "hi"\nwrite_answer\nask "and now?"\n', timeout_s=4)
        assert time.monotonic() - t0 < 25
    assert (result.outcome, result.fault, result.agent_status) == ("agent_timeout", "endpoint", "timeout")
    assert result.grader_verdict == "pass"  # graded all the same, and recorded: not the outcome


def test_a_cli_whose_context_the_model_filled_is_graded(tmp_path: Path, mini_pack: Path) -> None:
    status, body = REFUSALS["llama.cpp"]
    replies = [ScriptedReply(body=chat_body("ok")), ScriptedReply(status=status, body=body)]
    with FakeEndpoint(replies) as fake:
        result = _cli_trial(tmp_path, mini_pack, fake, 'ask "hi"\nwrite_answer\nask "hi" "$(head -c 100000 '
                            '/dev/zero | tr "\\0" x)" || exit 1\n')
    assert (result.outcome, result.fault) == ("pass", "model"), (result.outcome, result.detail)
    assert "exceeds the available context size" in result.detail
    wire = [json.loads(line) for line in (tmp_path / "runs" / "dodges" / result.files["wire"]).read_text().splitlines()]
    assert [r["status"] for r in wire] == [200, 400]


def test_a_cli_whose_own_prompt_does_not_fit_is_the_endpoints(tmp_path: Path, mini_pack: Path) -> None:
    """A small request first (a title, say), accepted; then the agent's own first prompt, refused: the context
    is too small for the agent, and none of it is the model's doing."""
    status, body = REFUSALS["vllm"]
    replies = [ScriptedReply(body=chat_body("a title")), ScriptedReply(status=status, body=body)]
    with FakeEndpoint(replies) as fake:
        result = _cli_trial(tmp_path, mini_pack, fake, 'ask "title?"\nask "$(head -c 100000 /dev/zero | tr "\\0" '
                            'x)" || exit 1\n')
    assert (result.outcome, result.fault) == ("endpoint_error", "endpoint"), (result.outcome, result.detail)
    assert "serve a longer context" in result.fault_reason and "maximum context length" in result.detail


def test_what_counts_as_the_models_own_in_a_request() -> None:
    chat = {"messages": [{"role": "system"}, {"role": "user"}, {"role": "assistant"}, {"role": "tool"}]}
    responses = {"input": [{"role": "user", "content": "x"}, {"type": "function_call"},
                           {"type": "function_call_output"}, {"type": "message", "role": "assistant"}]}
    counts = (model_items(chat), model_items(responses), model_items({"input": "text"}), model_items(None))
    assert counts == (2, 3, 0, 0)


# ---------------------------------------------------------------- the report says whose fault


def test_the_report_names_whose_fault_each_unscored_trial_was(scripted: Any, mini_pack: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    from agentic_eval.cli import main

    status, body = REFUSALS["vllm"]

    def refuses_after_the_answer(request: ReceivedRequest) -> ScriptedReply:
        return solver(request) if len(tool_results(request)) < 2 else ScriptedReply(status=status, body=body)

    runs = tmp_path / "runs"
    pack = make_pack(mini_pack, 1)
    (filled,) = _builtin(scripted(refuses_after_the_answer), pack, runs)
    (down,) = _builtin(scripted(lambda r: ScriptedReply(status=503, body={"error": {"message": "overloaded"}})),
                       pack, runs)
    capsys.readouterr()
    assert main(["report", "--run-dir", str(runs), "--json"]) == 0
    by_id = {x["run_id"]: x for x in map(json.loads, capsys.readouterr().out.splitlines())}
    assert by_id[filled["run_id"]]["ended_by_the_model"] == 1 and by_id[filled["run_id"]]["unscored_causes"] == {}
    assert by_id[down["run_id"]]["unscored_causes"] == {"endpoint_error (endpoint)": 1}
    assert main(["report", "--run-dir", str(runs)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "endpoint_error (endpoint) 1" in text
    assert f"{filled['run_id']}: 1 trial graded although the model ended its agent's run itself" in text
    assert "in parentheses, whose fault they were." in text
    assert main(["report", "--run-dir", str(runs), "--html", str(tmp_path / "report.html")]) == 0
    page = (tmp_path / "report.html").read_text()
    assert "endpoint_error (fault: endpoint: " in page and "pass (fault: model: the endpoint refused" in page
