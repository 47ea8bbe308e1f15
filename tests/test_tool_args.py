"""What the model causes is scored: a tool call whose arguments the tool cannot use is a tool error
the model sees, and the trial goes on; an agent that deletes or corrupts its repository fails."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.agents.builtin.tools import ToolLimits, execute_tool
from agentic_eval.results.records import TrialResult
from agentic_eval.results.trial_log import read_trials
from agentic_eval.testing import (
    FakeEndpoint,
    ReceivedRequest,
    ScriptedReply,
    chat_body,
    chat_stream,
    tool_call,
)
from agentic_eval.wire.recorder import read_wire_log
from tests.helpers import make_pack, run_cli

DEEP = "[" * 3000 + "]" * 3000  # deeper than the JSON reader recurses
HUGE = "1" + "0" * 5000

BAD_CALLS: list[tuple[str, str]] = [  # (tool name, raw arguments text as the model sent it)
    ("read_file", json.dumps({"path": "config/settings.ini\x00"})),
    ("list_dir", json.dumps({"path": "\x00"})),
    ("write_file", json.dumps({"path": "x\ud800.txt", "content": "y"})),
    ("write_file", json.dumps({"path": "x.txt", "content": "lone \udfff surrogate"})),
    ("edit_file", json.dumps({"path": "config/settings.ini", "old_string": "port", "new_string": "\ud800"})),
    ("bash", json.dumps({"command": "echo hi\x00there"})),
    ("bash", json.dumps({"command": "echo \ud800"})),
    ("grep", json.dumps({"pattern": "port\x00", "glob": "*\x00"})),
    ("read_file", '{"path": ' + DEEP + "}"),
    ("read_file", DEEP),
    ("read_file", json.dumps({"path": 5})),
    ("read_file", json.dumps({"path": ["config/settings.ini"]})),
    ("bash", json.dumps({"command": {"x": 1}})),
    ("read_file", '{"path": "config/settings.ini", "offset": ' + HUGE + "}"),
    ("read_file", '{"path": "config/settings.ini", "limit": 1e999}'),
    ("bash", '{"command": "sleep 30", "timeout": NaN}'),
    ("bash", '{"command": "sleep 30", "timeout": Infinity}'),
    ("bash", '{"command": "sleep 30", "timeout": 1e999}'),
    ("read\ud800", json.dumps({"path": "x"})),
    ("read_file", "[1, 2]"),
    ("read_file", "null"),
    ("read_file", '"\\ud800"'),
]


def _reply(request: ReceivedRequest, content: str | None = None, calls: list[dict[str, Any]] | None = None
           ) -> ScriptedReply:
    if request.body.get("stream"):
        return ScriptedReply(events=chat_stream(content, tool_calls=calls or []))
    return ScriptedReply(body=chat_body(content, tool_calls=calls or []))


def _bad_then_solve(request: ReceivedRequest) -> ScriptedReply:
    results = [m for m in request.body["messages"] if m["role"] == "tool"]
    n = len(results)
    if n < len(BAD_CALLS):
        name, args = BAD_CALLS[n]
        return _reply(request, "thinking \ud800 aloud", [tool_call(name, args, f"c{n}")])
    if n == len(BAD_CALLS):
        return _reply(request, None, [tool_call("read_file", {"path": "config/settings.ini"}, "r")])
    if n == len(BAD_CALLS) + 1:
        port = results[-1]["content"].split("port = ")[1].split()[0]
        return _reply(request, None, [tool_call("write_file", {"path": "answer.txt", "content": f"port is {port}\n"},
                                                "w")])
    return _reply(request, "Done.")


def _run(fake: FakeEndpoint, pack: Path, runs: Path, *extra: str) -> dict[str, Any]:
    _, data = run_cli("run", "--model", "fake-model", "--base-url", fake.base_url, "--tasks", str(pack),
                         "--run-dir", str(runs), "--json", "--agent-opt", "max_retries=0", *extra)
    return data


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_unusable_tool_arguments_are_tool_errors_and_the_trial_goes_on(
        scripted: Any, mini_pack: Path, tmp_path: Path, stream: bool) -> None:
    fake = scripted(_bad_then_solve)
    pack = make_pack(mini_pack, 1)
    toml = pack / "t0" / "task.toml"
    toml.write_text(toml.read_text().replace("max_turns = 5", f"max_turns = {len(BAD_CALLS) + 5}"))
    data = _run(fake, pack, tmp_path / "runs", *(["--stream"] if stream else []))
    (trial,) = data["trials"]
    assert trial["outcome"] == "pass", trial["detail"]
    last = [r for r in fake.requests if r.method == "POST"][-1].body["messages"]
    results = [m["content"] for m in last if m["role"] == "tool"]
    assert len(results) == len(BAD_CALLS) + 2
    for (name, _), text in zip(BAD_CALLS, results, strict=False):
        assert text.startswith(("error:", "unknown tool")), (name, text[:200])
    run_dir = tmp_path / "runs" / data["run_id"]
    assert len(read_wire_log(run_dir / trial["files"]["wire"])) == trial["requests"] == len(BAD_CALLS) + 3
    assert read_trials(run_dir) == ([TrialResult.model_validate(trial)], [])


def _tool(tmp_path: Path, name: str, args: Any) -> Any:
    (tmp_path / "f.txt").write_text("a\nb\n")
    return execute_tool(tmp_path, name, args, ToolLimits(bash_timeout_s=5))


@pytest.mark.parametrize("name,args", BAD_CALLS, ids=[f"{i}-{n.encode('ascii', 'replace').decode()}"
                                                      for i, (n, _) in enumerate(BAD_CALLS)])
def test_each_bad_call_is_an_error_result(tmp_path: Path, name: str, args: str) -> None:
    result = _tool(tmp_path, name, args)
    assert result.is_error, result.text
    result.text.encode("utf-8")  # the model can be sent it


@pytest.mark.parametrize("args", [
    {"path": "f.txt", "offset": True}, {"path": "f.txt", "limit": -1}, {"path": "f.txt", "offset": 1.5},
    {"path": "f.txt", "limit": float("inf")}, {"path": "f.txt", "limit": float("nan")},
])
def test_wrong_numbers_given_as_values_are_error_results(tmp_path: Path, args: dict[str, Any]) -> None:
    assert _tool(tmp_path, "read_file", args).is_error


def test_good_calls_still_work(tmp_path: Path) -> None:
    assert _tool(tmp_path, "read_file", {"path": "f.txt", "offset": 2, "limit": 1.0}).text.startswith("b")
    assert not _tool(tmp_path, "write_file", {"path": "g.txt", "content": "nul \x00 inside content is data"}).is_error
    assert (tmp_path / "g.txt").read_text() == "nul \x00 inside content is data"
    assert _tool(tmp_path, "bash", {"command": "echo ok", "timeout": 3}).text.startswith("ok")


@pytest.mark.parametrize("command", [
    "rm -rf .git", 'cd .. && rm -rf "$OLDPWD"', "echo junk > .git/HEAD", "printf 'DIRC junk' > .git/index",
    "rm -rf .git && echo 'gitdir: /tmp' > .git",
    ("git -c user.name=a -c user.email=a@b commit -q --amend -m x --allow-empty && git reflog expire --expire=now"
     " --all && git gc -q --prune=now"),
], ids=["rm-git", "rm-repo", "bad-head", "bad-index", "git-file", "pristine-pruned"])
def test_an_agent_that_breaks_its_repository_fails(scripted: Any, mini_pack: Path, tmp_path: Path,
                                                    command: str) -> None:
    def breaker(request: ReceivedRequest) -> ScriptedReply:
        if not any(m["role"] == "tool" for m in request.body["messages"]):
            return _reply(request, None, [tool_call("bash", {"command": command})])
        return _reply(request, "Done.")

    fake = scripted(breaker)
    data = _run(fake, make_pack(mini_pack, 1), tmp_path / "runs")
    (trial,) = data["trials"]
    assert (trial["outcome"], trial["agent_status"]) == ("fail", "completed"), trial["detail"]
    assert trial["detail"].startswith("the agent deleted/corrupted the repository"), trial["detail"]
    assert data["unscored"] == 0 and trial["fault"] == "model"
    # what it left is on record all the same, taken before anything else ran
    assert (tmp_path / "runs" / data["run_id"] / trial["files"]["diff"]).is_file()


@pytest.mark.parametrize("lenient", [False, True], ids=["strict", "lenient"])
def test_invalid_unicode_in_a_reply_without_tool_calls_is_scored(scripted: Any, mini_pack: Path, tmp_path: Path,
                                                                 lenient: bool) -> None:
    def broken_text(request: ReceivedRequest) -> ScriptedReply:
        if any(m["role"] == "user" and "as text" in str(m["content"]) for m in request.body["messages"]):
            return _reply(request, "Done.")
        body = chat_body('I will \udfff read it: <read_file path="config/\ud800settings.ini"/>',
                         reasoning_content="thinking \ud800")
        return ScriptedReply(body=body)

    fake = scripted(broken_text)
    data = _run(fake, make_pack(mini_pack, 1), tmp_path / "runs", *(["--lenient-text-calls"] if lenient else []))
    (trial,) = data["trials"]
    assert trial["outcome"] == "fail", trial["detail"]


def test_a_catastrophic_grep_pattern_is_an_error_not_a_hang(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("x" * 5000 + "\n")
    result = execute_tool(tmp_path, "grep", {"pattern": "(x|xx)+y"}, ToolLimits(bash_timeout_s=1))
    assert result.is_error and ("took longer" in result.text or "timed out" in result.text)


def test_fifos_and_huge_files_are_errors_not_hangs(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "pipe")
    with open(tmp_path / "huge.txt", "wb") as fh:
        fh.truncate(10**11)  # sparse: 100 GB that take no disk
    for name, args in (("read_file", {"path": "pipe"}), ("write_file", {"path": "pipe", "content": "x"}),
                       ("edit_file", {"path": "pipe", "old_string": "a", "new_string": "b"}),
                       ("read_file", {"path": "huge.txt"}), ("grep", {"pattern": "x", "path": "pipe"})):
        result = execute_tool(tmp_path, name, args, ToolLimits(bash_timeout_s=5))
        assert result.is_error or result.text == "no matches", (name, result.text)
