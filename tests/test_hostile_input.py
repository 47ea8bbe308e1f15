"""Hostile input from a user's files or a model's requests: each is refused or bounded, in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_eval.errors import AgenticEvalError


def test_campaign_record_redacts_credentials_in_base_url(tmp_path: Path) -> None:
    """campaign.json keeps what run.json keeps of a base_url: never its user info or a key in the query."""
    from agentic_eval.campaign.execute import CampaignPlan, read_campaign_record, write_campaign_record
    from agentic_eval.campaign.spec import parse_campaign

    file = tmp_path / "c.toml"
    text = ('[[models]]\nname = "m"\nbase_url = "http://alice:hunter2pw@gpu-box:8000/v1?api_key=sk-topsecret"\n'
            '[[models]]\nname = "l"\nlocal = true\n')
    spec = parse_campaign(text, file)
    plan = CampaignPlan(file=file, spec=spec, folder=tmp_path / "runs", task_ids=[], task_paths=None, models=[],
                        work={})
    write_campaign_record(plan)
    written = (tmp_path / "runs" / "campaign.json").read_text()
    assert "hunter2pw" not in written and "alice" not in written and "sk-topsecret" not in written
    assert "gpu-box:8000/v1" in written
    read, _ = read_campaign_record(tmp_path / "runs")
    assert read.models[0].base_url == "http://REDACTED@gpu-box:8000/v1?api_key=REDACTED"
    assert read.models[1].local and read.models[1].base_url is None
    assert spec.models[0].base_url and "hunter2pw" in spec.models[0].base_url  # the running spec keeps it


@pytest.mark.parametrize("nested", ["[" * 200_000 + "]" * 200_000, "{a = " * 50_000 + "1" + "}" * 50_000])
def test_deeply_nested_toml_is_one_line(nested: str, tmp_path: Path) -> None:
    """A campaign file or a task.toml nested 200k deep is a clear one-line error, never a RecursionError."""
    from agentic_eval.campaign.spec import load_campaign
    from agentic_eval.packs.task import TaskLoadError, load_task

    file = tmp_path / "c.toml"
    file.write_text(f"x = {nested}\n")
    with pytest.raises(AgenticEvalError) as caught:
        load_campaign(file)
    message = str(caught.value)
    assert message.startswith(f"{file}: not valid TOML") and "nested too deep" in message and "\n" not in message
    task = tmp_path / "task"
    task.mkdir()
    (task / "task.toml").write_text(f"x = {nested}\n")
    with pytest.raises(TaskLoadError) as loaded:
        load_task(task)
    assert "nested too deep" in str(loaded.value) and "\n" not in str(loaded.value)


@pytest.mark.parametrize("link", ["outside", "missing", "loop", "outside_dir"])
def test_a_link_in_a_harbor_tasks_tests_that_leaves_the_folder_is_refused_at_load(tmp_path: Path, link: str) -> None:
    """tests/ is copied for the verifier with links followed: a link to a host file would put its contents in the
    verifier's container and its output in grader.txt. Such a task is refused when it is loaded, naming the link."""
    import shutil

    from agentic_eval.packs.task import load_tasks

    pack = tmp_path / "pack"
    shutil.copytree(Path(__file__).parent / "packs" / "harbor" / "tally-words", pack / "tally-words", symlinks=True)
    host = tmp_path / "host-secret.txt"
    host.write_text("host only\n")
    (tmp_path / "host-dir").mkdir()
    tests = pack / "tally-words" / "tests"
    (tests / "inside.txt").symlink_to("test.sh")  # a link within the task folder is fine
    assert load_tasks([pack]).errors == []
    target = {"outside": str(host), "missing": "no-such-file", "loop": "..", "outside_dir": "../../../host-dir"}[link]
    (tests / "sub").mkdir()
    (tests / "sub" / "data").symlink_to(target)
    (error,) = load_tasks([pack]).errors
    message = str(error)
    assert "environment.verifier_files: tests/sub/data is a link to" in message and "\n" not in message
    assert {"outside": "outside the task folder", "missing": "does not exist", "loop": "holds it",
            "outside_dir": "outside the task folder"}[link] in message


def _grading_pack(mini_pack: Path, dest: Path, marker: str) -> Path:
    """The mini task with a grader that first runs `sleep MARKER` (to be killed in)."""
    from tests.helpers import make_pack

    pack = make_pack(mini_pack, 1, dest=dest)
    grade = pack / "t0" / "grade.py"
    grade.write_text(f"import subprocess\nsubprocess.run(['sleep', '{marker}'])\n" + grade.read_text())
    return pack


@pytest.mark.parametrize("command", ["validate", "run"])
def test_folders_a_sigkill_leaves_while_grading_are_removed_by_the_next_run(command: str, mini_pack: Path,
                                                                          tmp_path: Path) -> None:
    """`validate` killed leaves its ae-validate-* folder, `run` killed while grading its ae-vars-* folder (the
    task's vars.json: expected answers); both are marked, so the next run removes them."""
    import os
    import signal
    import subprocess
    import sys

    from agentic_eval.leftovers import clean_dead_runs
    from tests.helpers import kill_when_running, running, unique_sleep

    marker = unique_sleep(8)
    pack = _grading_pack(mini_pack, tmp_path / "pack", marker)
    temp_root = tmp_path / "tmp"
    temp_root.mkdir()
    args = (["validate", "--tasks", str(pack), "--no-redteam"] if command == "validate" else
            ["run", "--agent", "oracle", "--tasks", str(pack), "--run-dir", str(tmp_path / "runs")])
    env = {**os.environ, "TMPDIR": str(temp_root)}
    proc = subprocess.Popen([sys.executable, "-m", "agentic_eval.cli", *args], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        kill_when_running(proc, marker, 90, "the grader never started")
    finally:
        for pid in running(f"sleep {marker}"):
            os.kill(int(pid), signal.SIGKILL)
    prefix = "ae-validate-t0-" if command == "validate" else "ae-vars-"
    left = [path for path in temp_root.rglob("*") if path.name.startswith(prefix)]
    assert left, sorted(p.name for p in temp_root.iterdir())
    if command == "run":
        assert (left[0] / "vars.json").is_file()
    cleaned = clean_dead_runs(temp_root)
    assert set(left) <= set(cleaned.folders), cleaned
    assert not any(path.exists() for path in left)
