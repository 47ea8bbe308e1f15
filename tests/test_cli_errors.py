"""A new user's wrong turns, each one line that says how to fix it: a path that is not a run given to report,
export or --resume, a file that is not a wire log given to classify."""

from __future__ import annotations

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
