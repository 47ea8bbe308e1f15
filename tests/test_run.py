"""The campaign runner with model-free agents: outcomes, durability, resume, report."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentic_eval.cli import main
from agentic_eval.results.trial_log import read_trials
from tests.helpers import make_pack, run_cli, running, unique_sleep


def test_oracle_passes_and_nop_fails(mini_pack: Path, tmp_path: Path) -> None:
    pack = make_pack(mini_pack, 3)
    runs = tmp_path / "runs"
    code, oracle = run_cli("run", "--model", "m", "--agent", "oracle", "--tasks", str(pack), "--run-dir", str(runs),
                           "-j", "2", "--json")
    assert code == 0
    assert (oracle["tasks"], oracle["passed"], oracle["unscored"]) == (3, 3, 0)
    code, nop = run_cli("run", "--model", "m", "--agent", "nop", "--tasks", str(pack), "--run-dir", str(runs), "--json")
    assert (nop["tasks"], nop["passed"], nop["unscored"], nop["outcomes"]["fail"]) == (3, 0, 0, 3)
    trial = oracle["trials"][0]
    run_dir = runs / oracle["run_id"]
    for key in ("grader", "diff"):
        assert (run_dir / trial["files"][key]).is_file()
    assert "port is" in (run_dir / trial["files"]["diff"]).read_text()
    config = json.loads((run_dir / "run.json").read_text())
    assert config["model"] == "m" and config["agent"] == "oracle" and config["packs"][0]["tasks"] == ["t0", "t1", "t2"]


def test_hanging_agent_is_agent_timeout_and_leaves_no_process(mini_pack: Path, tmp_path: Path) -> None:
    pack = make_pack(mini_pack, 1)
    marker = unique_sleep(4)
    solve = pack / "t0" / "solve.sh"
    solve.write_text(f"#!/usr/bin/env bash\nsleep {marker} &\nsleep {marker}\n")
    toml = pack / "t0" / "task.toml"
    toml.write_text(toml.read_text().replace("agent_timeout_s = 60", "agent_timeout_s = 1"))
    code, data = run_cli("run", "--model", "m", "--agent", "oracle", "--tasks", str(pack), "--run-dir",
                         str(tmp_path / "runs"), "--json")
    assert data["outcomes"]["agent_timeout"] == 1 and data["passed"] == 0
    assert data["trials"][0]["detail"].startswith("reference fix still running")
    assert data["trials"][0]["fault"] == "grader"  # no model: the task's own fix ran out of time
    assert running(f"sleep {marker}") == []


def test_grader_error_is_unscored(mini_pack: Path, tmp_path: Path) -> None:
    pack = make_pack(mini_pack, 2)
    (pack / "t1" / "grade.py").write_text("import sys\nsys.exit(5)\n")
    code, data = run_cli("run", "--model", "m", "--agent", "oracle", "--tasks", str(pack), "--run-dir",
                         str(tmp_path / "runs"), "--json")
    assert data["passed"] == 1 and data["unscored"] == 1 and data["outcomes"]["grader_error"] == 1
    bad = next(t for t in data["trials"] if t["task_id"] == "t1")
    assert bad["detail"] == "grader error: exit 5"
    assert (bad["fault"], bad["fault_reason"]) == ("grader", "exit 5")
    assert {t["fault"] for t in data["trials"] if t["task_id"] == "t0"} == {""}  # an ordinary pass


def test_broken_generator_is_unscored_and_the_campaign_goes_on(mini_pack: Path, tmp_path: Path) -> None:
    pack = make_pack(mini_pack, 2)
    (pack / "sandboxes" / "boom.py").write_text("def generate(root, seed, params):\n    raise OSError('disk full')\n")
    toml = pack / "t0" / "task.toml"
    toml.write_text(toml.read_text().replace('generator = "tiny"', 'generator = "boom"'))
    code, data = run_cli("run", "--model", "m", "--agent", "oracle", "--tasks", str(pack), "--run-dir",
                         str(tmp_path / "runs"), "--json")
    assert code == 0 and data["passed"] == 1 and data["outcomes"]["agent_error"] == 1
    broken = next(t for t in data["trials"] if t["outcome"] == "agent_error")
    assert (broken["fault"], broken["fault_reason"]) == ("grader", "the task's generator failed")


def test_sigkill_halfway_then_resume_keeps_finished_trials(mini_pack: Path, tmp_path: Path) -> None:
    pack = make_pack(mini_pack, 6, fix_sleep=0.6)
    runs = tmp_path / "runs"
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentic_eval.cli", "run", "--model", "m", "--agent", "oracle", "--tasks", str(pack),
         "--run-dir", str(runs)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    deadline = time.monotonic() + 60
    run_dir = None
    while time.monotonic() < deadline:
        found = list(runs.glob("*/trials.jsonl")) if runs.exists() else []
        if found and len(found[0].read_text().splitlines()) >= 2:
            run_dir = found[0].parent
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    assert run_dir is not None, "no trials finished in time"
    before, _ = read_trials(run_dir)
    assert 2 <= len(before) < 6
    code, data = run_cli("run", "--resume", str(run_dir), "--json")
    assert code == 0
    after, _ = read_trials(run_dir)
    assert len(after) == 6  # only the missing trials ran
    assert [r.model_dump() for r in after[: len(before)]] == [r.model_dump() for r in before]
    assert data["passed"] == 6 and data["tasks"] == 6


def test_resume_reruns_only_unscored(mini_pack: Path, tmp_path: Path) -> None:
    pack = make_pack(mini_pack, 2)
    (pack / "t1" / "grade.py").write_text("import sys\nsys.exit(4)\n")
    runs = tmp_path / "runs"
    _, first = run_cli("run", "--model", "m", "--agent", "oracle", "--tasks", str(pack), "--run-dir", str(runs),
                       "--json")
    assert first["unscored"] == 1
    run_dir = runs / first["run_id"]
    _, again = run_cli("run", "--resume", first["run_id"], "--run-dir", str(runs), "--json")
    records, _ = read_trials(run_dir)
    # t0 was scored: kept, not rerun; t1 was unscored: run again (and still unscored)
    assert sorted(r.task_id for r in records) == ["t0", "t1", "t1"]
    assert again["tasks"] == 2 and again["passed"] == 1 and again["unscored"] == 1


def test_unknown_agent_and_missing_model(mini_pack: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--model", "m", "--agent", "nope", "--tasks", str(mini_pack)]) == 2
    assert "unknown agent 'nope' (available: " in capsys.readouterr().err
    assert main(["run", "--tasks", str(mini_pack)]) == 2
    assert "--model is required" in capsys.readouterr().err


def test_report_json_and_md(mini_pack: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    _, a = run_cli("run", "--model", "m", "--agent", "oracle", "--tasks", str(mini_pack), "--run-dir", str(runs),
                   "--json")
    _, b = run_cli("run", "--model", "m", "--agent", "nop", "--tasks", str(mini_pack), "--run-dir", str(runs),
                   "--json")
    capsys.readouterr()
    assert main(["report", a["run_id"], b["run_id"], "--run-dir", str(runs), "--json"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    keys = {"run_id", "model", "agent", "tasks", "passed", "unscored", "text_tool_call_tasks", "tool_call_tasks",
            "median_latency_s", "trials"}
    assert all(keys <= set(x) for x in lines)
    assert [x["passed"] for x in lines] == [1, 0]
    assert main(["report", str(runs / a["run_id"]), str(runs / b["run_id"]), "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert "| answer-file | pass" in md.replace("  ", " ").replace("  ", " ")
    assert main(["report", "nope", "--run-dir", str(runs)]) == 2


def test_agent_version_and_tool_calls_by_design(mini_pack: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    from agentic_eval import __version__
    from agentic_eval.agents.base import NO_TOOL_CALLS_BY_DESIGN

    runs = tmp_path / "runs"
    _, data = run_cli("run", "--model", "m", "--agent", "oracle", "--tasks", str(mini_pack), "--run-dir", str(runs),
                      "--json")
    assert data["trials"][0]["agent_version"] == f"agentic-eval {__version__}"
    assert data["tool_call_tasks"] == 0
    # an agent that edits through its reply text (aider) has no real tool calls to count: n/a, not 0
    log = runs / data["run_id"] / "trials.jsonl"
    records = [{**json.loads(line), "stop_reason": NO_TOOL_CALLS_BY_DESIGN} for line in log.read_text().splitlines()]
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    capsys.readouterr()
    assert main(["report", str(runs / data["run_id"]), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tool_call_tasks"] is None
    assert main(["report", str(runs / data["run_id"]), "--format", "md"]) == 0
    assert "n/a (by design)" in capsys.readouterr().out


def test_runs_started_in_the_same_second_get_their_own_folders(mini_pack: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import agentic_eval.results.run_folder

    monkeypatch.setattr(agentic_eval.results.run_folder, "new_run_id", lambda model, agent: "20260101-000000-m-oracle")
    runs = tmp_path / "runs"
    ids = [run_cli("run", "--model", "m", "--agent", agent, "--tasks", str(mini_pack), "--run-dir", str(runs),
                   "--json")[1]["run_id"] for agent in ("oracle", "oracle", "oracle")]
    assert ids == ["20260101-000000-m-oracle", "20260101-000000-m-oracle-2", "20260101-000000-m-oracle-3"]
    for run_id in ids:
        records, _ = read_trials(runs / run_id)
        assert len(records) == 1 and json.loads((runs / run_id / "run.json").read_text())["run_id"] == run_id


def test_resume_keeps_the_runs_settings_and_follows_a_moved_pack(mini_pack: Path, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    pack = make_pack(mini_pack, 2)
    runs = tmp_path / "runs"
    _, first = run_cli("run", "--model", "m", "--agent", "oracle", "--tasks", str(pack), "--run-dir", str(runs),
                       "--json")
    for flags in (["--agent", "nop"], ["--seed", "5"], ["--attempts", "3"], ["--task", "t1"]):
        assert main(["run", "--resume", first["run_id"], "--run-dir", str(runs), *flags]) == 2
        assert f"drop {flags[0]}" in capsys.readouterr().err
    moved = pack.rename(tmp_path / "moved")
    code, again = run_cli("run", "--resume", first["run_id"], "--run-dir", str(runs), "--tasks", str(moved), "--json")
    assert code == 0 and again["passed"] == 2
    assert len(read_trials(runs / first["run_id"])[0]) == 2  # same tasks, same trial ids: nothing rerun


def test_resume_after_a_task_changed_reruns_it_with_a_warning_and_counts_it_once(
        mini_pack: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pack = make_pack(mini_pack, 2)
    runs = tmp_path / "runs"
    _, first = run_cli("run", "--model", "m", "--agent", "nop", "--tasks", str(pack), "--run-dir", str(runs), "--json")
    (pack / "t0" / "instruction.md").write_text((pack / "t0" / "instruction.md").read_text() + "Also: be quick.\n")
    capsys.readouterr()
    code, again = run_cli("run", "--resume", first["run_id"], "--run-dir", str(runs), "--json")
    assert "warning: task t0 changed since this run recorded it" in capsys.readouterr().err
    assert len(read_trials(runs / first["run_id"])[0]) == 3  # t0 again
    assert (again["tasks"], again["outcomes"]["fail"], len(again["trials"])) == (2, 2, 2)  # counted once


@pytest.mark.parametrize("flags", [["--attempts", "0"], ["-j", "0"], ["-j", "-3"], ["--system-prompt-tokens", "-5"],
                                   ["--attempts", "x"]])
def test_nonsense_numbers_are_refused(mini_pack: Path, flags: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--model", "m", "--agent", "oracle", "--tasks", str(mini_pack), *flags])
    assert exit_info.value.code == 2 and flags[0] in capsys.readouterr().err


def test_builtin_only_flags_with_another_agent(mini_pack: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--model", "m", "--agent", "oracle", "--tasks", str(mini_pack), "--lenient-text-calls"]) == 2
    assert "--lenient-text-calls: only the builtin agent" in capsys.readouterr().err


def test_a_run_dir_that_is_a_file_is_one_line(mini_pack: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "r.json").write_text("{}")
    assert main(["run", "--model", "m", "--agent", "oracle", "--tasks", str(mini_pack), "--run-dir",
                 str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("agentic-eval: error: ") and len(err.strip().splitlines()) == 1 and "r.json" in err


def test_sigterm_stops_like_ctrl_c(mini_pack: Path, tmp_path: Path) -> None:
    marker = unique_sleep(3)
    pack = make_pack(mini_pack, 4, fix_sleep=float(marker))
    runs = tmp_path / "runs"
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "agentic_eval.cli", "run", "--model", "m", "--agent", "oracle",
                             "--tasks", str(pack), "--run-dir", str(runs), "-j", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not list(runs.glob("*/trials/t*")):
            time.sleep(0.05)
        time.sleep(0.5)
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    assert proc.returncode == 130 and "resume with: agentic-eval run --resume" in err, err
    assert time.monotonic() - t0 < 25  # the running reference fixes were killed, not waited for
    assert running(f"sleep {float(marker)}") == []


def test_report_skips_an_unreadable_run_and_escapes_markdown(mini_pack: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    _, good = run_cli("run", "--model", "m|x", "--agent", "oracle", "--tasks", str(mini_pack), "--run-dir", str(runs),
                      "--json")
    (runs / "broken-instrument").mkdir()
    (runs / "broken-instrument" / "instrument.json").write_text('{"kind": "tooling"')
    capsys.readouterr()
    assert main(["report", "--run-dir", str(runs), "--format", "md"]) == 0
    out, err = capsys.readouterr()
    assert "skipped" in err and "instrument.json: unreadable" in err
    headline = [line for line in out.splitlines() if good["run_id"] in line][0]
    assert "m\\|x" in headline and headline.count(" | ") == 6  # 7 columns, the model's | escaped
    assert main(["report", "broken-instrument", "--run-dir", str(runs)]) == 2  # asked for by name: the error
    assert main(["report", str(runs)]) == 2
    assert "holds runs, it is not one" in capsys.readouterr().err


def test_a_run_in_progress_cannot_be_resumed_at_the_same_time(mini_pack: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    from agentic_eval.packs.task import load_tasks
    from agentic_eval.results.run_folder import prepare_run, read_run_config

    runs = tmp_path / "runs"
    _, first = run_cli("run", "--model", "m", "--agent", "nop", "--tasks", str(mini_pack), "--run-dir", str(runs),
                       "--json")
    run_dir = runs / first["run_id"]
    held = prepare_run(run_dir, read_run_config(run_dir), load_tasks([str(mini_pack)]).tasks, resume=True)
    capsys.readouterr()
    assert main(["run", "--resume", str(run_dir)]) == 2
    assert "is in progress in another process" in capsys.readouterr().err
    held.lock.close()  # the other process ended
    assert main(["run", "--resume", str(run_dir)]) == 0


@pytest.mark.parametrize(("opt", "message"), [("foo=bar", "no such option"), ("max_retries=abc", "whole number"),
                                              ("temperature=-1", "non-negative number")])
def test_builtin_agent_options_are_checked_before_the_run(mini_pack: Path, opt: str, message: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--model", "m", "--tasks", str(mini_pack), "--agent-opt", opt]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_overview_spread_compares_only_runs_with_the_same_settings(tmp_path: Path) -> None:
    from agentic_eval.report.summary import overview_rows
    from agentic_eval.results.instrument_runs import read_instrument_run, save_instrument_run

    runs = tmp_path / "runs"
    made = [save_instrument_run("tooling", model="m", base_url="http://127.0.0.1:1/v1", result={},
                                headline={"score_pct": score}, headline_text=f"{score} %", settings=settings,
                                runs_root=runs)
            for score, settings in ((90.0, {"cases": 370}), (0.0, {"cases": 6}), (94.0, {"cases": 370}))]
    _, rows = overview_rows([], [read_instrument_run(d) for d in made])
    assert "spread 4.0 pts over 2 runs" in rows[0][2]
