"""Statistics in the reports and `report A B --compare`, on real runs of model-free agents."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentic_eval.cli import main
from tests.helpers import MINI_TASK, make_pack, run_cli


def _runs(mini_pack: Path, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """Six tasks: oracle twice (the second rewritten to fail everything: a repeat with a huge spread), nop once."""
    pack = make_pack(mini_pack, 6)
    runs = tmp_path / "runs"
    ids = {}
    for name, agent in (("a", "oracle"), ("a_repeat", "oracle"), ("b", "nop")):
        _, data = run_cli("run", "--model", "m", "--agent", agent, "--tasks", str(pack), "--run-dir", str(runs),
                          "--json")
        ids[name] = data["run_id"]
    log = runs / ids["a_repeat"] / "trials.jsonl"
    records = [{**json.loads(line), "outcome": "fail"} for line in log.read_text().splitlines()]
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    return runs, ids


@pytest.fixture(scope="module")
def _made_once(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    made = tmp_path_factory.mktemp("compare")
    with pytest.MonkeyPatch.context() as patch:  # as the autouse _isolated_home does for a test's own runs
        patch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
        patch.setenv("GIT_CONFIG_NOSYSTEM", "1")
        return _runs(shutil.copytree(MINI_TASK.parent, made / "mini"), made)


@pytest.fixture
def campaign(_made_once: tuple[Path, dict[str, str]], tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The three runs, made once for the file; each test gets a copy of its own to move and rewrite."""
    runs, ids = _made_once
    return shutil.copytree(runs, tmp_path / "runs", symlinks=True), ids


def test_compare_names_the_flips_and_says_whether_it_is_noise(campaign: tuple[Path, dict[str, str]],
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    runs, ids = campaign
    capsys.readouterr()
    # only A and B under a folder of their own: no repeat, so no spread; 6 flips one way: p = 2/64
    solo = runs.parent / "solo"
    solo.mkdir()
    for key in ("a", "b"):
        (runs / ids[key]).rename(solo / ids[key])
    assert main(["report", ids["a"], ids["b"], "--run-dir", str(solo), "--compare"]) == 0
    out = capsys.readouterr().out
    assert "A = " + ids["a"] + ": 6/6 = 100 % (95 % CI 54-100)" in out
    assert "both pass 0, neither 0, A only 6, B only 0; gap +100.0 pts (A - B)" in out
    assert "passed by A only: t0, t1, t2, t3, t4, t5" in out
    assert out.rstrip().endswith("verdict (McNemar exact test on the 6 flipped tasks): A better, p = 0.03")
    # with A's repeat beside it, the spread of A's configuration (100 pts) swallows the gap
    (solo / ids["a"]).rename(runs / ids["a"])
    (solo / ids["b"]).rename(runs / ids["b"])
    assert main(["report", ids["a"], ids["b"], "--run-dir", str(runs), "--compare", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["a_run"] == ids["a"] and data["a_only"] == [f"t{i}" for i in range(6)]
    assert data["p_value"] == pytest.approx(0.0312, abs=1e-4) and data["noise_pts"] == pytest.approx(100.0)
    assert data["within_noise"] is True and data["verdict"].startswith("within noise: the 100.0 pt gap")
    assert main(["report", ids["b"], ids["b"], "--run-dir", str(runs), "--compare", "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert md.startswith("## Comparison") and "no task flipped: no difference" in md


def test_compare_takes_exactly_two_runs(campaign: tuple[Path, dict[str, str]],
                                        capsys: pytest.CaptureFixture[str]) -> None:
    runs, ids = campaign
    capsys.readouterr()
    assert main(["report", ids["a"], "--run-dir", str(runs), "--compare"]) == 2
    assert "--compare takes exactly two agent runs, A and B (got 1)" in capsys.readouterr().err


def test_statistics_in_json_markdown_and_the_terminal(campaign: tuple[Path, dict[str, str]],
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    runs, ids = campaign
    capsys.readouterr()
    assert main(["report", "--run-dir", str(runs), "--json"]) == 0
    by_id = {x["run_id"]: x for x in map(json.loads, capsys.readouterr().out.splitlines())}
    stats = by_id[ids["a"]]["stats"]
    assert (stats["tasks_passed"]["method"] == "exact"
            and stats["tasks_passed"]["low"] == pytest.approx(0.5407, abs=1e-4))
    assert stats["pass_at_1"] == 1.0 and stats["spread"]["range_pts"] == 100.0 and stats["spread"]["runs"] == 2
    assert "spread" not in by_id[ids["b"]]["stats"]  # nop ran once
    assert main(["report", "--run-dir", str(runs), "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert "## Statistics" in md and "6/6 = 100 % (95 % CI 54-100)" in md and "100.0 pts over 2 runs" in md
    assert main(["report", "--run-dir", str(runs)]) == 0
    table = capsys.readouterr().out
    assert "statistics" in table and "0/6 = 0 % (95 % CI 0-46)" in table


def test_repeated_attempts_give_pass_at_k_and_pass_hat_k(mini_pack: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    pack = make_pack(mini_pack, 2)
    runs = tmp_path / "runs"
    _, data = run_cli("run", "--model", "m", "--agent", "oracle", "--tasks", str(pack), "--run-dir", str(runs),
                      "--attempts", "3", "--json")
    log = runs / data["run_id"] / "trials.jsonl"  # t0 passes 1 of 3, t1 all 3
    records = [json.loads(line) for line in log.read_text().splitlines()]
    for r in records:
        if r["task_id"] == "t0" and r["attempt"] > 1:
            r["outcome"] = "fail"
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    capsys.readouterr()
    assert main(["report", data["run_id"], "--run-dir", str(runs), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)["stats"]
    assert stats["attempts"] == 3 and stats["pass_at_1"] == pytest.approx((1 / 3 + 1) / 2, abs=1e-4)
    assert stats["pass_at_3"] == 1.0 and stats["pass_hat_3"] == pytest.approx(0.5)
