"""A new user's wrong turns, each one line that says how to fix it: a path that is not a run given to report,
export or --resume, a file that is not a wire log given to classify; and the words of the line a run starts on."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentic_eval.cli import main


@pytest.fixture
def a_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run folder as resolve_run_dir sees one (its run.json), with a trial's folder in it; cwd its parent's."""
    monkeypatch.chdir(tmp_path)
    run = tmp_path / "runs" / "r1"
    (run / "trials" / "t.a1").mkdir(parents=True)
    (run / "run.json").write_text("{}")
    (run / "trials.jsonl").write_text("")
    (tmp_path / "pack").mkdir()
    return run


@pytest.mark.parametrize(("given", "said"), [
    ("runs/r1/trials/t.a1", "runs/r1/trials/t.a1 is inside the run runs/r1: give that folder"),
    ("runs/r1/trials.jsonl", "runs/r1/trials.jsonl is inside the run runs/r1: give that folder"),
    ("pack", "pack is a folder, not a run (a run's folder holds run.json or instrument.json): give a run's folder, "
             "or its id under runs/"),
    ("nosuch", "run 'nosuch' not found (give its folder, or its id under runs/)"),
])
def test_a_path_that_is_not_a_run_says_what_it_is(a_run: Path, given: str, said: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", given]) == 2
    assert capsys.readouterr().err == f"agentic-eval: error: {said}\n"
    assert main(["run", "--resume", given]) == 2
    assert capsys.readouterr().err == f"agentic-eval: error: {said}\n"


def test_export_of_a_folder_inside_a_run_names_the_run(a_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "runs/r1/trials", "--format", "atif", "--out", "out"]) == 2
    said = "runs/r1/trials is inside the run runs/r1: give that folder"
    assert capsys.readouterr().err == f"agentic-eval: error: {said}\n"


def test_classify_of_a_file_that_is_not_a_wire_log_is_one_line(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("".join(f"line {i}\n" for i in range(500)))
    assert main(["classify", str(notes)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"agentic-eval: error: {notes}: no line of it is a wire record "
                                                   "(line 1: not JSON: ")


def test_classify_names_ten_bad_lines_then_counts_the_rest(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from agentic_eval.testing import chat_body

    turn = json.dumps({"request": {"messages": [{"role": "user", "content": "hi"}]}, "response": chat_body("Hi.")})
    wire = tmp_path / "wire.jsonl"
    wire.write_text("".join(f"{i}\n" for i in range(14)) + turn + "\n[]\n")
    assert main(["classify", str(wire)]) == 1
    out, err = capsys.readouterr()
    assert "1 model turns" in out and "15 bad lines" in out
    assert err.splitlines() == [*(f"agentic-eval: {wire}:{i}: expected a JSON object, got int" for i in range(1, 11)),
                                f"agentic-eval: {wire}: 5 more bad lines not shown (--json gives each line's error)"]


def test_the_run_line_counts_in_words_that_agree(mini_pack: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--agent", "nop", "--tasks", str(mini_pack), "--run-dir", str(tmp_path / "runs")]) == 0
    assert "1 trial (1 task x 1 attempt), agent nop, no model calls" in capsys.readouterr().err


@pytest.mark.parametrize(("head", "noted"), [("", True), ("instruments = []\n", False),
                                             ('instruments = ["speed"]\n', False)])
def test_a_campaign_file_without_instruments_is_told_it_runs_them_all(head: str, noted: bool) -> None:
    from agentic_eval.campaign.spec import parse_campaign
    from agentic_eval.cli.campaign import instruments_note

    spec = parse_campaign(head + '[[models]]\nname = "m"\nbase_url = "http://127.0.0.1:9/v1"\n', Path("c.toml"))
    note = instruments_note(spec)
    assert (note is not None) == noted
    assert note is None or note.endswith("(tooling, forms, speed, think_check); instruments = [] runs the agents only")


def test_a_mistake_in_a_command_of_many_flags_shows_a_short_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["run", "--attempts", "0"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        "usage: agentic-eval run [options]  (agentic-eval run --help lists them)",
        "agentic-eval run: error: argument --attempts: 0 must be at least 1"]
    with pytest.raises(SystemExit):
        main(["tasks", "show"])  # a short usage stays whole
    assert capsys.readouterr().err.startswith("usage: agentic-eval tasks show [-h] [--tasks PATH] [--seed SEED] ID\n")
    with pytest.raises(SystemExit):
        main(["run", "--help"])  # and --help is whole
    assert "[--json] [--atif] [--local] [--gguf PATH] [--ctx N]" in capsys.readouterr().out


@pytest.mark.parametrize(("line", "said"), [
    ('attempts = "one"', "attempts: Input should be a valid integer, unable to parse string as an integer (got 'one')"),
    ('tasks = "json-set-port"', "tasks: Input should be a valid list (got 'json-set-port')"),
    ("attempts = 0", "attempts: Input should be greater than or equal to 1 (got 0)"),
])
def test_a_campaign_value_of_the_wrong_type_is_echoed(line: str, said: str) -> None:
    from agentic_eval.campaign.spec import parse_campaign
    from agentic_eval.errors import AgenticEvalError

    with pytest.raises(AgenticEvalError) as exc:
        parse_campaign(line + '\n[[models]]\nname = "m"\nbase_url = "http://127.0.0.1:9/v1"\n', Path("c.toml"))
    assert str(exc.value) == f"c.toml: {said}"


def test_validate_of_a_broken_pack_weighs_no_evidence(mini_pack: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (mini_pack / "answer-file" / "instruction.md").unlink()
    assert main(["validate", "--tasks", str(mini_pack), "--seeds", "1", "--repeat", "1", "--no-redteam"]) == 1
    out = capsys.readouterr().out
    assert "bad: answer-file: load error: " in out and "evidence:" not in out
    assert out.splitlines()[-1].startswith("0 ok, 1 bad")


def test_a_trial_of_only_text_written_calls_says_so_in_its_line(mini_pack: Path, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Its progress line said 'no tool call: no model turn' beside '1 text tool call turn'."""
    from agentic_eval.testing import FakeEndpoint
    from tests.helpers import SEED_XML, answer

    with FakeEndpoint(responder=lambda request: answer(SEED_XML)) as fake:
        assert main(["run", "--model", fake.model, "--base-url", fake.base_url, "--tasks", str(mini_pack),
                     "--run-dir", str(tmp_path / "runs")]) == 0
    line = next(ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("answer-file a1: "))
    assert line.startswith("answer-file a1: fail (1 text tool call turn; no tool call: only calls written as text")


def test_ctrl_c_in_validate_says_what_was_found_before_it(mini_pack: Path) -> None:
    """Sent as `timeout -s INT` sends it (to the command, then to its process group: twice), which is one
    Ctrl-C, not the second signal that ends the process at once without its summary."""
    import re

    from tests.helpers import interrupted_cli, make_pack

    pack = make_pack(mini_pack, 3, fix_sleep=2)
    code, err = interrupted_cli("validate", "--tasks", str(pack), "--seeds", "1", "--repeat", "1", "--no-redteam",
                                "-j", "1", until=lambda line: line.startswith("validating: 1/3"), group=True)
    assert code == 130, err
    assert re.search(r"^interrupted after [12] of 3 tasks: [12] ok, 0 bad; nothing is kept: --task ID validates one$",
                     err, re.MULTILINE), err


def test_think_check_table_in_80_columns_is_a_block_per_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Its eight columns were cut to `thinki…`, `accura…` at 80 columns."""
    from agentic_eval.testing import FakeEndpoint, ScriptedReply, chat_body

    monkeypatch.setenv("COLUMNS", "80")
    with FakeEndpoint(responder=lambda request: ScriptedReply(body=chat_body("42"))) as fake:
        assert main(["think-check", "--model", fake.model, "--base-url", fake.base_url, "--problems", "1",
                     "--run-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "…" not in out and max(map(len, out.splitlines())) <= 80
    assert "thinking on\n  accuracy   " in out and "thinking off\n  accuracy   " in out


def test_a_campaign_endpoint_error_names_the_files_key_not_runs_flag(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "c.toml"
    file.write_text('instruments = []\n[[models]]\nname = "m"\nbase_url = "http://127.0.0.1:9/v1"\n')
    assert main(["campaign", str(file), "--run-dir", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"agentic-eval: error: {file}: models[1] (name 'm').base_url: cannot reach ")
    assert err.endswith("; start the server or fix base_url\n")


def test_campaign_report_before_any_run_gives_the_command_that_runs_it(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "c.toml"
    file.write_text('[[models]]\nname = "m"\nbase_url = "http://127.0.0.1:9/v1"\n')
    runs = tmp_path / "runs"
    assert main(["campaign", str(file), "--report", "--run-dir", str(runs)]) == 2
    assert capsys.readouterr().err == (f"agentic-eval: error: {runs / 'c'}: nothing is recorded for {file} yet; run it "
                                       f"first: agentic-eval campaign {file} --run-dir {runs}\n")


def test_a_file_given_as_the_runs_folder_or_a_pack_says_it_is_a_file(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """--run-dir FILE said `File exists (FILE)`; --tasks FILE said `no such folder`."""
    file = tmp_path / "notes.txt"
    file.write_text("x")
    said = (f"agentic-eval: error: {file} is a file, not a folder: give --run-dir the folder that holds runs, or one "
            "to make\n")
    assert main(["run", "--agent", "nop", "--tasks", "core", "--task", "json-set-port", "--run-dir", str(file)]) == 2
    assert capsys.readouterr().err == said
    assert main(["report", "--run-dir", str(file)]) == 2
    assert capsys.readouterr().err == said
    assert main(["run", "--agent", "nop", "--tasks", str(file), "--run-dir", str(tmp_path / "runs")]) == 2
    assert capsys.readouterr().err.startswith(f"agentic-eval: error: {file}: a file, not a folder (--tasks takes ")


def test_report_of_the_folder_above_a_campaign_names_the_campaign(a_run: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    (a_run.parent.parent / "campaigns" / "spark").mkdir(parents=True)
    (a_run.parent.parent / "campaigns" / "spark" / "campaign.json").write_text("{}")
    assert main(["report", "campaigns"]) == 2
    assert capsys.readouterr().err == ("agentic-eval: error: campaigns holds campaign folders (spark), not runs: "
                                       "report one with: agentic-eval report campaigns/spark\n")
    (a_run.parent / "spark").mkdir()  # beside runs of its own: those are what it holds
    (a_run.parent / "spark" / "campaign.json").write_text("{}")
    assert main(["report", "runs"]) == 2
    assert "runs holds runs, it is not one" in capsys.readouterr().err


def test_a_campaign_trial_line_says_why_it_failed_as_runs_does(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """It said only `fail in 0.4s`; now the grader's first failing check, read from the trial's run folder."""
    from agentic_eval.testing import FakeEndpoint

    file = tmp_path / "c.toml"
    with FakeEndpoint() as fake:
        file.write_text(f'tasks = ["json-set-port"]\nagents = ["nop"]\ninstruments = []\n[[models]]\n'
                        f'name = "{fake.model}"\nbase_url = "{fake.base_url}"\n')
        assert main(["campaign", str(file), "--run-dir", str(tmp_path / "runs")]) == 0
    line = next(ln for ln in capsys.readouterr().err.splitlines() if "json-set-port a1: " in ln)
    assert "json-set-port a1: fail (grader: config/settings.json: service.port == " in line
    assert "; the agent reported: nop) in " in line


def test_asking_for_a_task_that_did_not_load_says_why_not_unknown(mini_pack: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """`--task ID` of a task whose task.toml is broken said `unknown task id ID; known: none`."""
    (mini_pack / "answer-file" / "instruction.md").unlink()
    why = f"{(mini_pack / 'answer-file' / 'task.toml').resolve()}: instruction: file 'instruction.md' does not exist"
    for argv in (["tasks", "show", "answer-file"], ["run", "--agent", "nop", "--task", "answer-file", "--run-dir",
                                                    str(tmp_path / "runs")]):
        assert main([*argv, "--tasks", str(mini_pack)]) == 2
        assert capsys.readouterr().err.splitlines()[-1] == f"agentic-eval: error: task answer-file did not load: {why}"
    assert main(["validate", "--tasks", str(mini_pack), "--task", "answer-file", "--no-redteam"]) == 1
    assert f"bad: answer-file: load error: {why}" in capsys.readouterr().out


def test_a_campaign_task_that_did_not_load_says_why(mini_pack: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (mini_pack / "answer-file" / "instruction.md").unlink()
    file = tmp_path / "c.toml"
    file.write_text(f'packs = ["{mini_pack}"]\ntasks = ["answer-file"]\ninstruments = []\n[[models]]\nname = "m"\n'
                    'base_url = "http://127.0.0.1:9/v1"\n')
    assert main(["campaign", str(file), "--run-dir", str(tmp_path / "runs")]) == 2
    assert capsys.readouterr().err.startswith(f"agentic-eval: error: {file}: tasks: 'answer-file' did not load: ")


def test_tasks_new_prints_its_next_commands_each_on_a_line_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["tasks", "new", "my-task", "--pack", "pack"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(map(len, lines)) <= 80
    assert "  agentic-eval validate --tasks pack --show my-task" in lines
    assert "  agentic-eval validate --tasks pack --task my-task" in lines


def test_an_instrument_run_given_to_resume_or_export_says_what_it_is(a_run: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """They said `not a run folder (no run.json)` and `no run folder in it`."""
    (a_run.parent / "speed1").mkdir()
    (a_run.parent / "speed1" / "instrument.json").write_text("{}")
    said = "agentic-eval: error: runs/speed1 is an instrument's run: only agent runs (agentic-eval run) have trials to"
    assert main(["run", "--resume", "runs/speed1"]) == 2
    assert capsys.readouterr().err == f"{said} resume\n"
    assert main(["export", "runs/speed1", "--format", "atif", "--out", "out"]) == 2
    assert capsys.readouterr().err == f"{said} export\n"
    from agentic_eval.errors import AgenticEvalError
    from agentic_eval.runner.planning import plan_resume

    with pytest.raises(AgenticEvalError, match="instrument's run: .* have trials to resume$"):  # the library's too
        plan_resume("runs/speed1")


def test_validate_footer_says_which_red_team_attempts_the_table_leaves_out() -> None:
    from agentic_eval.cli.validate import _table
    from agentic_eval.validation.report import AttemptRun, TaskValidation, ValidationReport

    attempts = [*(AttemptRun(f"a{i}", 0, "fail") for i in range(3)), AttemptRun("b", 0, "no_change"),
                AttemptRun("c", 0, "no_change"), AttemptRun("d", 0, "not_applied", problem="no such file")]
    task = TaskValidation("t0", repeat=1, seeds=[0], redteam_seeds=[0], redteam=attempts)
    report = ValidationReport([task], redteam=[a.attempt for a in attempts], seeds=[0], redteam_seeds=[0])
    assert _table([task])[1][0][4] == "3/3"  # held of graded
    assert report.ran().endswith(", 6 red-team attempts on seed 0, 2 of which changed nothing, "
                                 "1 could not be applied")
    task.redteam = attempts[:3]
    assert report.ran().endswith(", 3 red-team attempts on seed 0")


def test_a_run_s_report_reads_right_at_80_columns(mini_pack: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Its closing command on a line of its own, `95 % CI` said once per figure, and the note on unscored
    trials only when a trial was unscored."""
    import io

    from rich.console import Console

    from agentic_eval.report.summary import print_report, summarize_run

    runs = tmp_path / "a-rather-long-folder-name-for-the-runs" / "and-one-more-level-of-it"
    assert main(["run", "--agent", "nop", "--tasks", str(mini_pack), "--run-dir", str(runs)]) == 0
    lines = capsys.readouterr().out.splitlines()
    run_dir = next(runs.iterdir())
    assert re.fullmatch(r"done in \d+\.\ds; report again with:", lines[-2])
    assert lines[-1] == f"  agentic-eval report {run_dir}"  # a long path still one line to copy
    assert not any(line.count("95 % CI") > 1 for line in lines) and any("(95 % CI 0-" in line for line in lines)
    assert not any("(95 % CI)" in line for line in lines)  # in the figure, not its label too
    assert not any("nscored trials are not fails" in line for line in lines)

    summary = summarize_run(run_dir)
    summary.trials[0] = summary.trials[0].model_copy(update={"outcome": "endpoint_error", "fault": "endpoint"})
    out = io.StringIO()
    print_report([summary], Console(file=out, width=80, color_system=None))
    assert "Unscored trials are not fails; in parentheses, whose fault they were." in out.getvalue().splitlines()


@pytest.mark.parametrize("agent", ["nop", "oracle"])
def test_an_agent_option_given_to_an_agent_without_options_is_refused(agent: str, mini_pack: Path, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--agent", agent, "--agent-opt", "max_turns=3", "--tasks", str(mini_pack),
                 "--run-dir", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"agentic-eval: error: --agent-opt max_turns: the {agent} agent "
                                                   "takes no options: drop the flag (agents that take options: ")
    assert "builtin" in err and "nop" not in err.split("(")[1] and not (tmp_path / "runs").exists()


def test_a_sandbox_option_for_a_backend_without_options_says_to_drop_it(mini_pack: Path, tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--agent", "nop", "--sandbox", "local", "--sandbox-opt", "x=y", "--tasks", str(mini_pack),
                 "--run-dir", str(tmp_path / "runs")]) == 2
    assert capsys.readouterr().err == ("agentic-eval: error: --sandbox local: unknown option 'x': this backend "
                                       "takes no options; drop --sandbox-opt\n")


def test_probe_of_an_endpoint_that_is_down_says_so_before_probing_anything(
        capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert main(["probe", "--base-url", f"http://127.0.0.1:{port}/v1", "--model", "m"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"agentic-eval: error: cannot reach http://127.0.0.1:{port}/v1 ")
