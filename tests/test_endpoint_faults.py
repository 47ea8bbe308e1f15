"""Endpoint faults (issue 20): every byte an endpoint sends ends in a recorded, classified, correctly
attributed outcome. Driven by the scripted endpoint on 127.0.0.1, the real agent loop, the real recorder."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentic_eval.agents.base import AgentContext, AgentOptions, AgentOutcome
from agentic_eval.agents.builtin.loop import BuiltinAgent
from agentic_eval.classify.summary import summarize_wire_log
from agentic_eval.confine.host import bwrap_problem
from agentic_eval.errors import AgenticEvalError
from agentic_eval.leftovers import (
    OWNER_FILE,
    TRIAL_FOLDER_PREFIX,
    MarkedTempDir,
    clean_dead_runs,
    mark_trial_folder,
    process_start_token,
)
from agentic_eval.packs.sandbox import materialize_sandbox
from agentic_eval.packs.task import load_task
from agentic_eval.testing import (
    FakeEndpoint,
    ReceivedRequest,
    ScriptedReply,
    chat_body,
    chat_stream,
    tool_call,
)
from agentic_eval.wire.recorder import WireRecorder, read_wire_log
from agentic_eval.wire.refs import LONG_STRING, RequestResolver
from tests.helpers import make_pack, running, unique_sleep

MINI_TASK = Path(__file__).parent / "packs" / "mini" / "answer-file"


@pytest.fixture
def fake() -> Iterator[FakeEndpoint]:
    with FakeEndpoint() as endpoint:
        yield endpoint


def run_builtin(fake: FakeEndpoint, tmp_path: Path, *, stream: bool, max_turns: int = 3,
                base_url: str | None = None) -> AgentOutcome:
    task = load_task(MINI_TASK)
    sandbox = materialize_sandbox(task, 7, tmp_path / "sandbox")
    ctx = AgentContext(task=task, sandbox=sandbox, instruction=task.render_instruction(sandbox.variables),
                       base_url=base_url or fake.base_url, api_key="k", model="fake-model", timeout_s=20,
                       max_turns=max_turns, trial_dir=tmp_path / "trial",
                       options=AgentOptions(stream=stream, extra={"max_retries": 0}), cancel=threading.Event())
    return BuiltinAgent().run(ctx)


def chunk(**fields: Any) -> dict[str, Any]:
    return {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "fake-model", **fields}


# ---------------------------------------------------------------- 1, 2: the built-in agent


def test_a_whole_completion_where_a_stream_was_asked_for_is_accepted(
        fake: FakeEndpoint, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    path = "notes.txt"
    fake.enqueue(ScriptedReply(body=chat_body(tool_calls=[tool_call("write_file", {"path": path, "content": "x"})])),
                 ScriptedReply(body=chat_body("Done.")))
    outcome = run_builtin(fake, tmp_path, stream=True)
    assert (outcome.status, outcome.stop_reason, outcome.turns) == ("completed", "no_tool_call", 2)
    assert all(request.body["stream"] is True for request in fake.requests)
    notes = [line for line in capfd.readouterr().err.splitlines() if "server ignored stream: true" in line]
    assert len(notes) <= 1  # once per process: an earlier test may have printed it already
    transcript = [json.loads(line) for line in (tmp_path / "trial" / "transcript.jsonl").read_text().splitlines()]
    assert sum(entry["kind"] == "note" for entry in transcript) == 2


BAD_STREAM_REPLIES = {
    "json_but_not_a_completion": (ScriptedReply(body={"error": "nope"}), True,
                                  "not an event stream (application/json)"),
    "text_for_a_stream": (ScriptedReply(body="hello"), True, "and the body is not JSON"),
    "message_is_a_string": (ScriptedReply(body={"choices": [{"message": "hello"}]}), False,
                            "message is not an object"),
    "tool_calls_is_a_number": (ScriptedReply(body={"choices": [{"message": {"content": "x", "tool_calls": 5}}]}),
                               False, "message.tool_calls is not a list"),
    "finish_reason_is_a_number": (ScriptedReply(body={"choices": [{"message": {"content": "x"},
                                                                  "finish_reason": 3}]}), False,
                                  "finish_reason is not a string"),
    "choices_is_a_string": (ScriptedReply(events=[chunk(choices="x"), "[DONE]"]), True,
                            "malformed stream chunk: choices"),
    "delta_is_a_string": (ScriptedReply(events=[chunk(choices=[{"index": 0, "delta": "x"}]), "[DONE]"]), True,
                          "malformed stream chunk: choices.0.delta"),
    "tool_calls_chunk_is_a_number": (ScriptedReply(events=[chunk(choices=[{"index": 0, "delta": {"tool_calls": 5}}]),
                                                           "[DONE]"]), True, "choices.0.delta.tool_calls"),
    "content_is_a_number": (ScriptedReply(events=[chunk(choices=[{"index": 0, "delta": {"content": 5},
                                                                  "finish_reason": "stop"}]), "[DONE]"]), True,
                            "choices.0.delta.content"),
    "chunk_is_a_list": (ScriptedReply(events=["[1, 2]", "[DONE]"]), True, "not a JSON object"),
    "no_chunk_at_all": (ScriptedReply(events=["[DONE]"]), True, "without any completion chunk"),
    "error_inside_the_stream": (ScriptedReply(events=[{"error": {"message": "engine overloaded"}}]), True,
                                "error in the stream: engine overloaded"),
    "deep_json_body": (ScriptedReply(body=("[" * 100_000 + "]" * 100_000).encode()), False,
                       "reply is JSON nested deeper than 64 levels"),
    "deep_json_chunk": (ScriptedReply(events=["[" * 100_000 + "]" * 100_000]), True,
                        "a stream event is JSON nested deeper than 64 levels"),
}


@pytest.mark.parametrize("case", sorted(BAD_STREAM_REPLIES))
def test_a_reply_of_the_wrong_shape_is_an_endpoint_error(case: str, fake: FakeEndpoint, tmp_path: Path) -> None:
    scripted, stream, expected = BAD_STREAM_REPLIES[case]
    fake.enqueue(scripted)
    outcome = run_builtin(fake, tmp_path, stream=stream)
    assert outcome.status == "endpoint_error", outcome.detail
    assert expected in outcome.detail and "\n" not in outcome.detail


def test_an_unknown_finish_reason_in_a_stream_is_kept(fake: FakeEndpoint, tmp_path: Path) -> None:
    events = chat_stream("All done.", finish_reason="abort")
    fake.enqueue(ScriptedReply(events=events))
    outcome = run_builtin(fake, tmp_path, stream=True)
    assert (outcome.status, outcome.stop_reason) == ("completed", "no_tool_call")


# ---------------------------------------------------------------- 7: options


def test_max_tokens_zero_is_refused_before_any_trial() -> None:
    with pytest.raises(AgenticEvalError, match="max_tokens=0: expected .*at least 1"):
        BuiltinAgent.check_options({"max_tokens": "0"})
    BuiltinAgent.check_options({"max_tokens": "1"})


# ---------------------------------------------------------------- 3: the recorder never loses an exchange


def through_recorder(fake: FakeEndpoint, log_path: Path, bodies: list[dict[str, Any]]) -> list[httpx.Response]:
    with WireRecorder(fake.base_url, log_path) as recorder:
        return [httpx.post(recorder.base_url + "/chat/completions", json=body, timeout=10) for body in bodies]


MALFORMED_STREAMS: dict[str, list[Any]] = {
    "choices_is_a_string": [chunk(choices="x"), "[DONE]"],
    "choice_is_a_string": [chunk(choices=["x"]), "[DONE]"],
    "tool_calls_is_a_number": [chunk(choices=[{"index": 0, "delta": {"tool_calls": 5}}]), "[DONE]"],
    "index_is_a_list": [chunk(choices=[{"index": [1], "delta": {"content": "x"}}]), "[DONE]"],
    "name_turns_into_a_list": [
        chunk(choices=[{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"name": "a"}}]}}]),
        chunk(choices=[{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"name": ["b"]}}]}}]), "[DONE]"],
    "responses_output_of_numbers": [{"type": "response.completed", "response": {"output": [1, 2]}}],
    "responses_part_index_a_billion": [{"type": "response.output_text.delta", "output_index": 0,
                                        "content_index": 10**9, "delta": "x"}],
    "responses_failed_with_a_number": [{"type": "response.failed", "response": 5}],
    "deeply_nested_delta": [chunk(choices=[{"index": 0, "delta": {"content": "x", "extra": json.loads(
        "[" * 80 + "]" * 80)}, "finish_reason": "stop"}]), "[DONE]"],
    "json_nested_100000_deep": ["[" * 100_000 + "]" * 100_000, "[DONE]"],
}


@pytest.mark.parametrize("case", sorted(MALFORMED_STREAMS))
def test_a_malformed_stream_is_recorded_and_classified_as_such(
        case: str, fake: FakeEndpoint, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    events = MALFORMED_STREAMS[case]
    fake.enqueue(ScriptedReply(events=events), ScriptedReply(events=chat_stream("after")))
    log_path = tmp_path / "wire.jsonl"
    replies = through_recorder(fake, log_path, [{"model": "m", "messages": [], "stream": True}] * 2)
    assert [reply.status_code for reply in replies] == [200, 200]
    assert "Traceback" not in capfd.readouterr().err
    first, second = read_wire_log(log_path)
    assert len(first.events) == len(events) or first.raw_reply
    if first.raw_reply:
        assert first.error and "kept as received" in first.error and isinstance(first.response, str)
    assert second.response["choices"][0]["message"]["content"] == "after"
    summary = summarize_wire_log(log_path)
    assert summary.requests == 2 and summary.turns.prose == 1
    assert summary.turns.unclassified == 1 and len(summary.errors) == 1


def test_a_reply_nested_too_deep_is_kept_raw_and_marked(fake: FakeEndpoint, tmp_path: Path) -> None:
    deep = {**chat_body("x"), "extra": json.loads("[" * 80 + "]" * 80)}
    fake.enqueue(ScriptedReply(body=deep), ScriptedReply(events=MALFORMED_STREAMS["deeply_nested_delta"]))
    log_path = tmp_path / "wire.jsonl"
    through_recorder(fake, log_path, [{"model": "m", "messages": []}, {"model": "m", "messages": [], "stream": True}])
    whole, streamed = read_wire_log(log_path)
    assert isinstance(whole.response, str) and json.loads(whole.response) == deep  # kept whole, as text
    assert streamed.raw_reply and "nests deeper than 64 levels" in (streamed.error or "")
    assert summarize_wire_log(log_path).turns.unclassified == 2


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full to stand for a full disk")
def test_a_full_disk_is_one_line_not_a_traceback(fake: FakeEndpoint, capfd: pytest.CaptureFixture[str]) -> None:
    fake.enqueue(ScriptedReply(body=chat_body("one")), ScriptedReply(events=chat_stream("two")))
    with WireRecorder(fake.base_url, "/dev/full") as recorder:
        replies = [httpx.post(recorder.base_url + "/chat/completions", json={"model": "m", "messages": [],
                                                                            "stream": stream}, timeout=10)
                   for stream in (False, True)]
    assert [reply.status_code for reply in replies] == [200, 200]  # the agent is not hurt by it
    err = capfd.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if "wire recorder: cannot write /dev/full" in line]
    assert len(lines) == 1 and "No space left on device" in lines[0]
    assert recorder.records_written == 0


# ---------------------------------------------------------------- 4: a long trial's log stays linear


def test_requests_are_stored_by_reference_and_read_back_whole(fake: FakeEndpoint, tmp_path: Path) -> None:
    big = "y" * 200_000
    writes = [tool_call("write_file", {"path": f"f{n}.txt", "content": big + str(n)}, f"call_{n}") for n in range(4)]
    fake.enqueue(*[ScriptedReply(body=chat_body(tool_calls=[call])) for call in writes],
                 ScriptedReply(body=chat_body("All four written.")))
    log_path = tmp_path / "trial" / "wire.jsonl"
    with WireRecorder(fake.base_url, log_path) as recorder:
        outcome = run_builtin(fake, tmp_path, stream=False, max_turns=6, base_url=recorder.base_url)
    assert (outcome.status, outcome.turns) == ("completed", 5), outcome.detail
    records = read_wire_log(log_path)
    assert [record.request for record in records] == [request.body for request in fake.requests]
    assert all(record.request_ref is None and record.error is None for record in records)
    stored = [json.loads(line) for line in log_path.read_text().splitlines()]
    assert stored[0]["request_ref"] is None
    assert all(line["request_ref"]["base"] == previous["id"] for previous, line in itertools.pairwise(stored))
    assert all(len(line["request"]["messages"]) == 2 and "tools" not in line["request"] for line in stored[1:])
    # the model's own arguments, sent back in the history, are a reference to the reply that said them:
    # each 200 kB write is on the record once, not once per later request
    assert all(line["request_ref"]["from_response"] == [[[0, "tool_calls", 0, "function", "arguments"],
                                                         ["choices", 0, "message", "tool_calls", 0, "function",
                                                          "arguments"]]] for line in stored[1:])
    assert log_path.stat().st_size < 1.2 * 4 * len(json.dumps(big))
    # and classify reads the shortened log as the whole one
    summary = summarize_wire_log(log_path)
    assert (summary.turns.tool_call, summary.turns.prose, summary.errors) == (4, 1, [])
    (tmp_path / "whole.jsonl").write_text("".join(record.model_dump_json() + "\n" for record in records))
    labels = [classify_cli_labels(path) for path in (log_path, tmp_path / "whole.jsonl")]
    assert labels[0] == labels[1] == ["tool_call"] * 4 + ["prose"]


def classify_cli_labels(path: Path) -> list[str]:
    done = subprocess.run([sys.executable, "-m", "agentic_eval.cli", "classify", "--json", str(path)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return [json.loads(line)["label"] for line in done.stdout.splitlines()]


def test_a_version_1_log_and_a_torn_last_line_still_load(tmp_path: Path) -> None:
    v1 = {"format_version": 1, "id": "a", "seq": 0, "method": "POST", "path": "/v1/chat/completions",
          "request": {"messages": [{"role": "user", "content": "hi"}]}, "status": 200,
          "response": chat_body("Hello."), "stream": False, "events": [], "error": None,
          "timings": {"started_at": 1.0, "end_s": 0.1}, "usage": None}
    log_path = tmp_path / "wire.jsonl"
    log_path.write_text(json.dumps(v1) + "\n" + json.dumps(v1)[:50])
    with pytest.raises(ValueError, match="wire.jsonl:2: not a wire record"):
        read_wire_log(log_path)
    errors: list[str] = []
    (record,) = read_wire_log(log_path, errors)
    assert record.request == v1["request"] and errors and errors[0].startswith("line 2: not a wire record")
    summary = summarize_wire_log(log_path)
    assert summary.turns.prose == 1 and len(summary.errors) == 1


def test_a_reference_to_a_missing_record_is_one_bad_line(tmp_path: Path) -> None:
    line = {"id": "b", "request": {"messages": [{"role": "user", "content": "again"}]},
            "request_ref": {"base": "gone", "key": "messages", "prefix": 3, "same": []},
            "response": chat_body("Hello.")}
    path = tmp_path / "wire.jsonl"
    path.write_text(json.dumps(line) + "\n" + json.dumps({**line, "id": "c", "request_ref": None}) + "\n")
    done = subprocess.run([sys.executable, "-m", "agentic_eval.cli", "classify", str(path)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and "wire.jsonl:1: request stored by reference" in done.stderr


# ---------------------------------------------------------------- 6: classify, one line per bad record


def test_classify_prints_one_line_per_bad_record(tmp_path: Path) -> None:
    good = {"id": "ok", "request": {}, "response": chat_body("Fine.")}
    lines = [json.dumps(good),
             json.dumps({"id": "a", "request": {"tools": 5}, "response": {"choices": ["x"]}}),
             json.dumps({"id": "b", "request": None, "response": {"output": [1, 2]}}),
             json.dumps({"id": "c", "request": {}, "response": {"choices": [{"message": "hello"}]}}),
             "[" * 100_000 + "]" * 100_000,
             json.dumps({"id": ["x"], "request": {}, "response": {**chat_body("deep"),
                                                                 "x": json.loads("[" * 900 + "]" * 900)}}),
             json.dumps(good)]
    path = tmp_path / "wire.jsonl"
    path.write_text("\n".join(lines) + "\n")
    done = subprocess.run([sys.executable, "-m", "agentic_eval.cli", "classify", "--json", str(path)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    errors = done.stderr.splitlines()
    assert [line.split(":")[2] for line in errors] == ["2", "3", "4", "5"]
    assert "choices[0] is not an object" in errors[0] and "nested too deep" in errors[3]
    outputs = [json.loads(line) for line in done.stdout.splitlines()]
    assert [output.get("label") for output in outputs] == ["prose", None, None, None, None, "prose", "prose"]


# ---------------------------------------------------------------- 5: leftovers of a dead run


def test_only_dead_runs_folders_are_cleaned_and_their_processes_killed(tmp_path: Path) -> None:
    root = tmp_path / "tmp"
    live, dead, unmarked, other = (root / f"{TRIAL_FOLDER_PREFIX}{name}" for name in ("live", "dead", "unmarked", "x"))
    # a trial's other temp folders, by the same rule: a live run's, a dead one's, one without a mark
    live_grading, dead_wire, unmarked_home = root / "ae-grading-live", root / "ae-wire-dead", root / "ae-home-x"
    for folder in (live, dead, unmarked, other, live_grading, dead_wire, unmarked_home):
        (folder / "sandbox").mkdir(parents=True)
    assert mark_trial_folder(live) and mark_trial_folder(live_grading)  # this process: alive
    for folder in (dead, dead_wire):
        (folder / OWNER_FILE).write_text(json.dumps({"pid": os.getpid(), "start": "0"}))  # our pid, reused: dead
    marker = unique_sleep(8)
    inside = subprocess.Popen(["sleep", marker], cwd=dead / "sandbox", start_new_session=True)
    owner = subprocess.Popen(["sleep", unique_sleep(9)], start_new_session=True)  # another live run's process
    try:
        (other / OWNER_FILE).write_text(json.dumps({"pid": owner.pid, "start": process_start_token(owner.pid)}))
        cleanup = clean_dead_runs(root)
        assert cleanup.folders == [dead, dead_wire] and cleanup.killed == [inside.pid]
        assert inside.wait(timeout=10) == -signal.SIGKILL
        assert sorted(root.iterdir()) == sorted([live, unmarked, other, live_grading, unmarked_home])
        assert "removed 2 temp folder(s) of dead runs" in cleanup.describe()
        assert clean_dead_runs(root).describe() == ""  # nothing left to do
    finally:
        for proc in (inside, owner):
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)


def test_a_marked_temp_dir_hands_out_its_inner_folder_and_refuses_an_unknown_prefix(tmp_path: Path) -> None:
    made = MarkedTempDir("ae-wire-", inner="wire")
    try:
        assert Path(made.name) == made.top / "wire" and Path(made.name).is_dir()
        assert sorted(p.name for p in made.top.iterdir()) == [OWNER_FILE, "wire"]  # the mark beside, not inside
    finally:
        made.cleanup()
    assert not made.top.exists()
    with pytest.raises(ValueError, match="prefix"):
        MarkedTempDir("ae-other-")


@pytest.mark.skipif(os.geteuid() != 0, reason="mounts a tmpfs: root only (without root nothing is mounted)")
def test_a_dead_runs_mounts_are_unmounted_before_its_folders_go(tmp_path: Path) -> None:
    """As root the docker backend's capped sandbox (inside the trial folder) and grading folder are tmpfs mounts,
    marked beneath and on the mount. A space in the path: /proc/self/mountinfo escapes it."""
    root = tmp_path / "temp dir"
    trial, grading = root / f"{TRIAL_FOLDER_PREFIX}t-dead", root / "ae-grading-dead"
    points = [trial / "sandbox", grading]
    dead = json.dumps({"pid": os.getpid(), "start": "0"})
    for folder in (*points, trial):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / OWNER_FILE).write_text(dead)
    try:
        for point in points:
            subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "ae-test", str(point)], check=True, timeout=30)
        (grading / OWNER_FILE).write_text(dead)  # on the mount, as the backend marks it
        (trial / "sandbox" / "file").write_text("the model's")
        cleanup = clean_dead_runs(root)
        assert cleanup.folders == [grading, trial] and not cleanup.errors
        assert list(root.iterdir()) == []
        assert not any(str(root) in line for line in Path("/proc/self/mounts").read_text().splitlines())
    finally:
        for point in points:
            if os.path.ismount(point):
                subprocess.run(["umount", "--lazy", str(point)], check=False, timeout=30)


@pytest.mark.parametrize("sandbox", ["local", "bwrap"])
def test_kill_9_leftovers_are_cleaned_by_the_resume(sandbox: str, mini_pack: Path, tmp_path: Path) -> None:
    """The built-in agent's run killed while the model's command runs leaves its trial folder and, under --sandbox
    local, the command's HOME and the command itself (bwrap's commands die with the run), as root under bwrap the
    run's passwd and group files: the resume removes every one, and kills what runs in them."""
    if sandbox == "bwrap" and bwrap_problem() is not None:
        pytest.skip(f"bubblewrap cannot run here: {bwrap_problem()}")
    marker = unique_sleep(7)
    healthy = tmp_path / "healthy"

    def responder(request: ReceivedRequest) -> ScriptedReply:
        results = [m for m in request.body["messages"] if m["role"] == "tool"]
        if not healthy.exists() and not results:
            return ScriptedReply(body=chat_body(tool_calls=[tool_call("bash", {"command": f"sleep {marker}"})]))
        return ScriptedReply(body=chat_body("Giving up."))

    temp_root = tmp_path / "tmp"
    temp_root.mkdir()
    env = {**os.environ, "TMPDIR": str(temp_root)}
    runs = tmp_path / "runs"
    command = [sys.executable, "-m", "agentic_eval.cli", "run", "--model", "fake-model", "--tasks",
               str(make_pack(mini_pack, 1)), "--run-dir", str(runs), "--agent-opt", "max_retries=0",
               "--sandbox", sandbox]
    with FakeEndpoint(responder=responder) as fake:
        proc = subprocess.Popen([*command, "--base-url", fake.base_url], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            deadline = time.monotonic() + 60
            while not running(f"sleep {marker}") and time.monotonic() < deadline:
                time.sleep(0.1)
            assert running(f"sleep {marker}"), "the model's command never started"
            os.kill(proc.pid, signal.SIGKILL)  # the run dies; its temp folders (and, local, the command) stay
            proc.wait(timeout=10)
            left = sorted(path.name for path in temp_root.iterdir())
            expected = {TRIAL_FOLDER_PREFIX, *(["ae-home-"] if sandbox == "local" else []),
                        *(["ae-identity-"] if sandbox == "bwrap" and os.geteuid() == 0 else [])}
            assert {name[:name.index("-", 3) + 1] for name in left} == expected, left
            for _ in range(100):  # bwrap's command dies with the run: a moment later
                if sandbox == "local" or not running(f"sleep {marker}"):
                    break
                time.sleep(0.1)
            assert bool(running(f"sleep {marker}")) == (sandbox == "local")
            healthy.touch()
            (run_dir,) = [path.parent for path in runs.glob("*/run.json")]
            resume = subprocess.run([sys.executable, "-m", "agentic_eval.cli", "run", "--resume", str(run_dir),
                                     "--base-url", fake.base_url, "--agent-opt", "max_retries=0"], env=env,
                                    capture_output=True, text=True, timeout=120, check=False)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
            for pid in running(f"sleep {marker}"):
                os.kill(int(pid), signal.SIGKILL)
    assert f"removed {len(left)} temp folder(s) of dead runs" in resume.stderr, resume.stderr
    assert all(name in resume.stderr for name in left)
    assert ("killed 1 leftover process(es)" in resume.stderr) == (sandbox == "local")
    assert running(f"sleep {marker}") == []
    assert list(temp_root.iterdir()) == []  # nothing of the killed run, and the resume cleaned up after itself


def test_a_compressed_reply_that_inflates_too_far_is_not_inflated(
        fake: FakeEndpoint, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gzip

    from agentic_eval.wire import exchange

    monkeypatch.setattr(exchange, "MAX_INFLATED_BYTES", 50_000)
    bomb = gzip.compress(json.dumps(chat_body("z" * 200_000)).encode())
    small = gzip.compress(json.dumps(chat_body("fine")).encode())
    fake.enqueue(*(ScriptedReply(body=body, headers={"Content-Encoding": "gzip", "Content-Type": "application/json"})
                   for body in (bomb, small)))
    log_path = tmp_path / "wire.jsonl"
    through_recorder(fake, log_path, [{"model": "m", "messages": []}] * 2)
    bombed, fine = read_wire_log(log_path)
    assert bombed.response is None and "inflating past 50000 bytes" in (bombed.error or "")
    assert fine.response["choices"][0]["message"]["content"] == "fine" and fine.error is None


@pytest.mark.parametrize("from_response", [
    [[[0, "content"], ["choices", 0, "message", "nope"]]],  # no such place in the reply
    [[[5, "content"], ["choices", 0, "message", "content"]]],  # no such place in the request
    [[[0, "role"], ["choices", 0, "message", "content"]]],  # the place in the request is not blank
    "x",
])
def test_a_reference_into_the_reply_that_does_not_fit_is_named(from_response: Any) -> None:
    resolver = RequestResolver()
    base = {"messages": [{"role": "user", "content": "hi"}]}
    reply = chat_body("z" * LONG_STRING)
    assert resolver.resolve("a", base, None, reply) == (base, None)
    stored = {"messages": [{"role": "assistant", "content": ""}]}
    ref = {"base": "a", "key": "messages", "prefix": 1, "same": [], "from_response": from_response}
    whole, problem = resolver.resolve("b", stored, ref, None)
    assert problem is not None and "from_response" in problem
    fitting = {**ref, "from_response": [[[0, "content"], ["choices", 0, "message", "content"]]]}
    whole, problem = resolver.resolve("c", {"messages": [{"role": "assistant", "content": ""}]}, fitting, None)
    assert problem is None and whole["messages"] == [*base["messages"],
                                                     {"role": "assistant", "content": "z" * LONG_STRING}]
