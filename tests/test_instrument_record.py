"""Instruments record their own runs: a Python caller of an instrument gets the run `agentic-eval report`
reads, the same as the CLI records; the report knows the instruments from their one table."""

from __future__ import annotations

import json
import shlex
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.cli import main
from agentic_eval.endpoint import resolve_endpoint
from agentic_eval.instruments import cold_start, registry, speed, think_check
from agentic_eval.instruments import metrics as m
from agentic_eval.results.instrument_runs import read_instrument_run
from agentic_eval.results.run_folder import INSTRUMENT_FILE, RESULT_FILE
from tests.fake_vllm import FakeVllm, FakeVllmConfig

FAST_GATE = m.GatePolicy(idle_scrapes=2, scrape_interval_s=0.02, idle_timeout_s=5.0, settle_timeout_s=2.0,
                         stale_window_s=0.5)
SLOW_SERVER = Path(__file__).parent / "data" / "slow_server.py"


def report_md(runs: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["report", "--run-dir", str(runs), "--format", "md"]) == 0
    return capsys.readouterr().out


def column(md: str, title: str, model: str) -> str:
    """The cell of `model`'s row under `title` in the report's "By model" table."""
    lines = [line for line in md.splitlines() if line.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    row = next(line for line in lines if line.strip("|").split("|")[0].strip() == model)
    return [c.strip() for c in row.strip("|").split("|")][header.index(title)]


def same_shape(a: Path, b: Path) -> None:
    """Two recorded runs of one instrument with the same settings: the same files, fields and settings."""
    assert sorted(p.name for p in a.iterdir()) == sorted(p.name for p in b.iterdir())
    ia, ib = (json.loads((d / INSTRUMENT_FILE).read_text()) for d in (a, b))
    assert list(ia) == list(ib) and list(ia["headline"]) == list(ib["headline"])
    assert (ia["kind"], ia["model"], ia["base_url"], ia["settings"]) == (ib["kind"], ib["model"], ib["base_url"],
                                                                         ib["settings"])
    ra, rb = (json.loads((d / RESULT_FILE).read_text()) for d in (a, b))
    assert list(ra) == list(rb)


def test_think_check_from_python_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    with FakeVllm(FakeVllmConfig(decode_tok_s=5000)) as fake:
        endpoint = resolve_endpoint(fake.base_url, "sk-test")
        config = think_check.ThinkCheckConfig(model=fake.config.model, problems=2, seed=3, max_tokens_on=8,
                                             max_tokens_off=8)
        result = think_check.run_think_check(endpoint, config)
        run_dir = think_check.record(result, runs, base_url=endpoint.base_url)
        # the CLI with the same settings records the same shape of run
        assert main(["think-check", "--model", fake.config.model, "--base-url", fake.base_url, "--api-key", "sk-test",
                     "--problems", "2", "--seed", "3", "--json", "--run-dir", str(tmp_path / "cli")]) == 0
    cli_dir = Path(json.loads(capsys.readouterr().out)["run_dir"])
    meta = read_instrument_run(run_dir)
    assert run_dir.parent == runs and meta.kind == "think_check" and meta.model == "fake-model"
    assert meta.settings == {"problems": 2, "seed": 3}
    assert meta.headline_text == think_check.headline(result).text
    same_shape(run_dir, cli_dir)
    md = report_md(runs, capsys)
    assert column(md, "think-check", "fake-model") == meta.headline_text


def test_speed_from_python_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    with FakeVllm(FakeVllmConfig(decode_tok_s=400)) as fake:
        config = speed.SpeedConfig(base_url=fake.base_url, model=fake.config.model, workloads=("free_gen",), reps=2,
                                   warmup=0, max_tokens=24, gate=FAST_GATE)
        report = speed.measure_speed(config)
        run_dir = speed.record(report, runs, config=config)
    meta = read_instrument_run(run_dir)
    assert meta.kind == "speed" and meta.headline["unit"] == "tok/s" and meta.headline["workload"] == "free_gen"
    assert isinstance(meta.headline["value"], float) and meta.headline_text.startswith("free_gen ")
    assert meta.settings == {"workloads": ["free_gen"], "reps": 2, "warmup": 0, "max_tokens": 24,
                             "long_ctx_tokens": 50000, "prefill_sweep": False}
    saved = json.loads((run_dir / RESULT_FILE).read_text())
    assert saved["model"] == "fake-model" and saved["details"]["samples"]  # every sample kept with the result
    assert column(report_md(runs, capsys), "speed", "fake-model") == meta.headline_text


def test_cold_start_from_python_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    cmd = (f"{shlex.quote(sys.executable)} {shlex.quote(str(SLOW_SERVER))} --port {port} --listen-delay 0.05 "
           f"--models-delay 0.05 --token-delay 0.05 --child-pid-file {shlex.quote(str(tmp_path / 'pid'))}")
    endpoint = resolve_endpoint(f"http://127.0.0.1:{port}/v1", "sk-test")
    result = cold_start.measure_cold_start(endpoint, cold_start.ColdStartConfig(cmd=cmd))
    run_dir = cold_start.record(result, tmp_path / "runs", base_url=endpoint.base_url)
    meta = read_instrument_run(run_dir)
    assert meta.settings == {"mode": "command", "cmd": cmd, "repeat": 1} and meta.model == "slow-model"
    assert meta.headline_text.endswith("s to first token")
    assert column(report_md(tmp_path / "runs", capsys), "cold start", "slow-model") == meta.headline_text


def test_secrets_in_the_base_url_stay_out_of_the_record(tmp_path: Path) -> None:
    """record() scrubs what the endpoint's own URL carries, wherever the result quoted it."""
    result = think_check.ThinkCheckResult(
        model="m", base_url="http://127.0.0.1:9/v1", server_kind="vllm", switch="s", seed=0, problems=1,
        on=think_check.ModeSummary(mode="on"), off=think_check.ModeSummary(mode="off"),
        attempts=[think_check.Attempt(problem_id="p", mode="on", expected=1,
                                     error="ConnectError: http://me:s3cret-pw@127.0.0.1:9/v1/chat/completions")])
    run_dir = think_check.record(result, tmp_path, base_url="http://me:s3cret-pw@127.0.0.1:9/v1")
    for name in (INSTRUMENT_FILE, RESULT_FILE):
        assert "s3cret-pw" not in (run_dir / name).read_text()


def test_a_kind_not_in_the_table_is_refused_by_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result: dict[str, Any] = {"total": {"passed": 1, "cases": 2}, "seed": 0}
    from agentic_eval.instruments import battery

    good = battery.record(result, tmp_path, base_url="http://127.0.0.1:9/v1", model="m")
    odd = tmp_path / "odd"
    odd.mkdir()
    meta = json.loads((good / INSTRUMENT_FILE).read_text())
    (odd / INSTRUMENT_FILE).write_text(json.dumps({**meta, "kind": "ctxlen", "run_id": "odd"}))
    assert main(["report", "--run-dir", str(tmp_path), "--format", "md"]) == 0
    out, err = capsys.readouterr()
    expected = " or ".join([", ".join(repr(k) for k in registry.kinds()[:-1]), repr(registry.kinds()[-1])])
    assert f"skipped {odd}: {odd / INSTRUMENT_FILE}: unreadable (kind: Input should be {expected})" in err
    assert expected == "'tooling', 'forms', 'speed', 'think_check', 'cold_start' or 'bfcl'"  # pydantic's words
    assert column(out, "tool-call battery", "m") == "1/2 (50.0 %)"
    assert main(["report", str(odd)]) == 2  # named: its problem is the answer, in one line
    assert capsys.readouterr().err.count("\n") == 1
