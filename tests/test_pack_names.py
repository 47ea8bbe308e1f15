"""A built-in pack by its name, as the README writes it: `run --tasks impossible`, `run --tasks core`, and a
campaign file's `packs = ["impossible"]`, from a folder that holds no pack of that name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentic_eval.cli import main
from agentic_eval.packs.builtin import builtin_root
from agentic_eval.testing import FakeEndpoint
from tests.helpers import run_cli


@pytest.mark.parametrize(("pack", "task", "agent", "passed"), [
    ("impossible", "impossible-charge-rounding", "nop", 0),
    ("core", "json-set-port", "oracle", 1),
])
def test_run_takes_a_built_in_pack_by_name_as_the_readme_writes_it(pack: str, task: str, agent: str, passed: int,
                                                                    tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no folder of that name here: the name is the pack's
    code, data = run_cli("run", "--agent", agent, "--tasks", pack, "--task", task, "--run-dir", "runs", "--json")
    assert code == 0 and data["passed"] == passed and [t["task_id"] for t in data["trials"]] == [task]
    recorded = json.loads((tmp_path / "runs" / data["run_id"] / "run.json").read_text())
    assert recorded["task_paths"] == [str((builtin_root() / "tasks" / pack).resolve())]  # what --resume finds again


def test_a_folder_of_that_name_here_wins_and_a_wrong_name_lists_the_packs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from agentic_eval.packs.task import pack_folder

    monkeypatch.chdir(tmp_path)
    (tmp_path / "core").mkdir()
    assert pack_folder("core") == tmp_path / "core"
    assert main(["run", "--agent", "nop", "--tasks", "impossibl", "--run-dir", "runs"]) == 2
    err = capsys.readouterr().err.strip()
    assert "impossibl: no such folder" in err and "impossible" in err.split("name:")[1] and len(err.splitlines()) == 1


def test_a_campaign_names_the_impossible_pack(tmp_path: Path) -> None:
    from agentic_eval.campaign.execute import plan_campaign

    file = tmp_path / "c.toml"
    with FakeEndpoint(model="m") as fake:
        file.write_text(f'packs = ["impossible"]\n[[models]]\nname = "m"\nbase_url = "{fake.base_url}"\n')
        plan = plan_campaign(file, tmp_path / "runs")
    assert plan.task_paths == [str((builtin_root() / "tasks" / "impossible").resolve())]
    assert plan.task_ids and all(task.startswith("impossible-") for task in plan.task_ids)
