"""Numbers a user or a task author gives: NaN, infinities and meaningless zeros or negatives are refused
in one line, before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_eval.cli import main
from agentic_eval.errors import TaskLoadError
from agentic_eval.packs.task import load_task


@pytest.mark.parametrize("argv", [
    ["probe", "--model", "m", "--timeout", "nan"],
    ["probe", "--model", "m", "--timeout", "inf"],
    ["probe", "--model", "m", "--timeout", "0"],
    ["run", "--model", "m", "--attempts", "0"],
    ["run", "--model", "m", "-j", "-1"],
    ["validate", "--repeat", "0"],
    ["validate", "-j", "0"],
    ["serve-local", "--port", "70000"],
    ["serve-local", "--threads", "0"],
    ["speed", "--model", "m", "--bandwidth", "inf"],
    ["speed", "--model", "m", "--bytes-per-token", "nan"],
    ["speed", "--model", "m", "--reps", "0"],
    ["speed", "--model", "m", "--warmup", "-1"],
    ["tooling", "--model", "m", "--cases", "0"],
    ["forms", "--model", "m", "--tools", "0"],
    ["think-check", "--model", "m", "--problems", "0"],
    ["cold-start", "--repeat", "0"],
    ["cold-start", "--timeout", "-inf"],
])
def test_numeric_flags_refuse_meaningless_values(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "error: argument" in err[-1] and argv[-2] in err[-1]


@pytest.mark.parametrize("opt", ["max_tokens=0", "bash_timeout_s=0", "bash_timeout_s=nan", "temperature=inf",
                                 "max_retries=-1", "temperature=1e999", "max_tokens=many"])
def test_agent_opts_refuse_meaningless_values(opt: str, mini_pack: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--model", "m", "--tasks", str(mini_pack), "--run-dir", str(tmp_path / "runs"),
                 "--base-url", "http://127.0.0.1:9/v1", "--agent-opt", opt])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and f"--agent-opt {opt}" in err[0]
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("line", ["agent_timeout_s = inf", "agent_timeout_s = nan", "grader_timeout_s = 0",
                                  "grader_timeout_s = -5", "agent_timeout_s = 1e300", "max_turns = 0"])
def test_task_limits_refuse_meaningless_values(mini_pack: Path, line: str) -> None:
    toml = mini_pack / "answer-file" / "task.toml"
    key = line.split()[0]
    text = "\n".join(ln for ln in toml.read_text().splitlines() if not ln.startswith(key))
    toml.write_text(text.replace("[limits]", f"[limits]\n{line}"))
    with pytest.raises(TaskLoadError) as exc_info:
        load_task(mini_pack / "answer-file")
    assert f"limits.{key}" in str(exc_info.value) and "\n" not in str(exc_info.value)


def test_good_numbers_still_accepted(mini_pack: Path) -> None:
    assert load_task(mini_pack / "answer-file").meta.limits.max_turns == 5


@pytest.mark.parametrize("opt", ["context=nan", "context=0", "max_output=inf", "max_output=-3", "context=1.5"])
def test_cli_agent_opts_refuse_meaningless_values(opt: str, mini_pack: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--agent", "opencode", "--model", "m", "--tasks", str(mini_pack), "--run-dir",
                 str(tmp_path / "runs"), "--base-url", "http://127.0.0.1:9/v1", "--agent-opt", opt])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and f"--agent-opt {opt}" in err[0]
    assert not (tmp_path / "runs").exists()
