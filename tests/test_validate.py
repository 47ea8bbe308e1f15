"""validate catches graders that pass on pristine, fixes that fail, flaky and crashing graders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentic_eval.cli import main
from agentic_eval.packs.task import load_task
from agentic_eval.packs.validate import validate_task


def _write(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


GRADER_ALWAYS_PASS = "import sys\nsys.exit(0)\n"
GRADER_CRASH = "raise RuntimeError('grader bug')\n"  # exit 1 from Python would be a fail: use gradelib's hook
GRADER_EXIT_3 = "import sys\nprint('cannot grade')\nsys.exit(3)\n"
GRADER_HANG = "import time\ntime.sleep(30)\n"
# Fails after the fix in the second of three sandboxes only: a flaky grader. (It cannot keep a counter
# between calls: graders run confined, the task folder read-only; the sandbox's folder name tells the call.)
GRADER_FLAKY = """\
import json, os, sys
from pathlib import Path
n = int(Path.cwd().name.rsplit("-", 1)[1])
v = json.loads(Path(os.environ["AGENTIC_EVAL_VARS"]).read_text())
ok = Path("answer.txt").is_file() and f"port is {v['port']}" in Path("answer.txt").read_text()
sys.exit(0 if ok and n != 1 else 1)
"""
FIX_WRONG = "#!/usr/bin/env bash\necho 'port is 1' > answer.txt\n"
FIX_CRASH = "#!/usr/bin/env bash\necho 'no idea' >&2\nexit 7\n"


NO_REASON = "the grader printed no reason (gradelib's checks name each one)"
CASES = [
    ("grader passes on pristine", "grade.py", GRADER_ALWAYS_PASS,
     ["passes on pristine: 3 of 3 runs, seed 0 (deterministic)"]),
    ("fix does not fix", "solve.sh", FIX_WRONG,
     [f"fails after reference fix: 3 of 3 runs, seed 0 (deterministic): {NO_REASON}"]),
    ("fix crashes", "solve.sh", FIX_CRASH,
     ["reference fix failed: exit 7 (no idea): 3 of 3 runs, seed 0 (deterministic)"]),
    ("grader errors", "grade.py", GRADER_EXIT_3,
     ["grader error on pristine: exit 3 (cannot grade): 3 of 3 runs, seed 0 (deterministic)",
      "grader error after reference fix: exit 3 (cannot grade): 3 of 3 runs, seed 0 (deterministic)"]),
    ("flaky grader", "grade.py", GRADER_FLAKY,
     [f"fails after reference fix: 1 of 3 runs, seed 0 (flaky: passed after the fix 2 of 3): {NO_REASON}"]),
]


@pytest.mark.parametrize(("case", "file", "content", "reasons"), CASES, ids=[c[0] for c in CASES])
def test_validate_names_the_reason(mini_pack: Path, case: str, file: str, content: str, reasons: list[str]) -> None:
    task_dir = mini_pack / "answer-file"
    _write(task_dir / file, content)
    result = validate_task(load_task(task_dir), repeat=3)
    assert result.status == "bad"
    assert result.reasons == reasons


def test_grader_timeout_is_a_grader_error_and_kills_it(mini_pack: Path) -> None:
    task_dir = mini_pack / "answer-file"
    _write(task_dir / "grade.py", GRADER_HANG)
    toml = task_dir / "task.toml"
    toml.write_text(toml.read_text().replace("grader_timeout_s = 20", "grader_timeout_s = 0.5"))
    result = validate_task(load_task(task_dir), repeat=1)
    assert result.reasons == [
        "grader error on pristine: timed out after 0.5s (limits.grader_timeout_s): 1 of 1 run, seed 0",
        "grader error after reference fix: timed out after 0.5s (limits.grader_timeout_s): 1 of 1 run, seed 0",
    ]
    assert result.duration_s < 20


def test_uncaught_exception_with_gradelib_is_a_grader_error(mini_pack: Path) -> None:
    task_dir = mini_pack / "answer-file"
    _write(task_dir / "grade.py", "import gradelib\n" + GRADER_CRASH)
    result = validate_task(load_task(task_dir), repeat=1)
    assert result.status == "bad"
    assert all(r.startswith("grader error") and ": exit 3" in r for r in result.reasons), result.reasons


def test_good_task_is_ok(mini_pack: Path) -> None:
    result = validate_task(load_task(mini_pack / "answer-file"), repeat=3, seed=11)
    assert (result.status, result.pristine_fails, result.fixed_passes) == ("ok", 3, 3)


def test_cli_table_and_last_line(mini_pack: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    shutil.copytree(mini_pack / "answer-file", mini_pack / "bad-one")
    toml = mini_pack / "bad-one" / "task.toml"
    toml.write_text(toml.read_text().replace('id = "answer-file"', 'id = "bad-one"'))
    _write(mini_pack / "bad-one" / "grade.py", GRADER_ALWAYS_PASS)
    code = main(["validate", "--tasks", str(mini_pack), "--repeat", "2"])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert out[-1].startswith("1 ok, 1 bad (seed 0, 2 runs of each check per seed, ")
    assert "bad: bad-one: passes on pristine: 2 of 2 runs, seed 0 (deterministic)" in out


def test_cli_json(mini_pack: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = mini_pack / "broken"
    broken.mkdir()
    (broken / "task.toml").write_text("id = 1\n")
    code = main(["validate", "--tasks", str(mini_pack), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1
    assert data["ok"] == 1 and data["bad"] == 1, data
    by_id = {t["id"]: t for t in data["tasks"]}
    ok = by_id["answer-file"]
    assert (ok["status"], ok["reasons"], ok["pristine_fails"], ok["fixed_passes"], ok["runs"]) == ("ok", [], 1, 1, 1)
    assert [(c["phase"], c["verdict"]) for c in ok["checks"]] == [("pristine", "fail"), ("fixed", "pass")]
    assert ok["duration_s"] > 0 and data["duration_s"] > 0
    assert by_id["broken"]["status"] == "bad"
    assert ("load error" in by_id["broken"]["reasons"][0]
            and "id: Input should be a valid string" in by_id["broken"]["reasons"][0])


def test_scaffolded_task_is_bad_until_filled_in(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pack = tmp_path / "mypack"
    assert main(["tasks", "new", "my-task", "--pack", str(pack)]) == 0
    assert (pack / "my-task" / "task.toml").is_file()
    capsys.readouterr()
    code = main(["validate", "--tasks", str(pack), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1
    reasons = data["tasks"][0]["reasons"]
    assert any("grader error" in r for r in reasons), reasons
    assert main(["tasks", "new", "my-task", "--pack", str(pack)]) == 2  # refuses to overwrite


def test_unknown_placeholder_in_the_instruction_is_bad(mini_pack: Path) -> None:
    task_dir = mini_pack / "answer-file"
    (task_dir / "instruction.md").write_text((task_dir / "instruction.md").read_text() + "Use {{nosuch}}.\n")
    result = validate_task(load_task(task_dir), repeat=1)
    assert result.status == "bad"
    assert len(result.reasons) == 1 and "unknown placeholder {{nosuch}}" in result.reasons[0]


# A fix that hard-codes seed 0's port: right for seed 0 only.
def _fix_for_seed_0_only(task_dir: Path) -> None:
    from agentic_eval.packs.sandbox import materialize_sandbox

    task = load_task(task_dir)
    sandbox = materialize_sandbox(task, 0, task_dir.parent.parent / "probe-sandbox")
    _write(task_dir / "solve.sh", f"#!/usr/bin/env bash\necho 'port is {sandbox.variables['port']}' > answer.txt\n")


def test_seeds_catch_a_fix_that_only_works_for_one_seed(mini_pack: Path) -> None:
    task_dir = mini_pack / "answer-file"
    _fix_for_seed_0_only(task_dir)
    assert validate_task(load_task(task_dir), repeat=2).status == "ok"  # seed 0 alone: looks fine
    result = validate_task(load_task(task_dir), repeat=2, seeds=3)
    assert result.seeds == [0, 1, 2] and (result.pristine_fails, result.fixed_passes, result.runs) == (6, 2, 6)
    assert result.reasons == [(f"fails after reference fix: 4 of 6 runs, seeds 1, 2: every run with seeds 1, 2, none "
                               f"with seed 0 (depends on the seed): {NO_REASON}")]


def test_the_graders_own_failing_checks_are_the_reason(mini_pack: Path, capsys: pytest.CaptureFixture[str]) -> None:
    task_dir = mini_pack / "answer-file"
    _write(task_dir / "grade.py", "from gradelib import Grader, task_vars\ng = Grader()\n"
           "g.file_exists('answer.txt')\ng.file_contains('answer.txt', f\"port is {task_vars()['port']}\")\n"
           "g.finish()\n")
    _write(task_dir / "solve.sh", FIX_WRONG)
    code = main(["validate", "--tasks", str(mini_pack), "--json", "--seed", "4", "--no-redteam"])  # its own subject
    data = json.loads(capsys.readouterr().out)
    assert code == 1
    (reason,) = data["tasks"][0]["reasons"]
    assert reason.startswith("fails after reference fix: 1 of 1 run, seed 4: ✗ answer.txt contains 'port is ")
    fixed = next(c for c in data["tasks"][0]["checks"] if c["phase"] == "fixed")
    assert fixed["seed"] == 4 and fixed["failing_checks"][0].startswith("✗ answer.txt contains")


def test_a_slow_fix_names_the_limit_it_exceeded(mini_pack: Path) -> None:
    task_dir = mini_pack / "answer-file"
    _write(task_dir / "solve.sh", "#!/usr/bin/env bash\nsleep 5\n")
    toml = task_dir / "task.toml"
    toml.write_text(toml.read_text().replace("agent_timeout_s = 60", "agent_timeout_s = 0.5"))
    result = validate_task(load_task(task_dir))
    assert result.reasons == [("reference fix failed: exceeded limits.agent_timeout_s (0.5s), which the fix runs "
                               "under: 1 of 1 run, seed 0")]


def test_show_prints_the_graders_output_of_each_run(mini_pack: Path, capsys: pytest.CaptureFixture[str]) -> None:
    task_dir = mini_pack / "answer-file"
    _write(task_dir / "grade.py",
           "from gradelib import Grader\ng = Grader()\ng.file_exists('answer.txt')\ng.finish()\n")
    assert main(["validate", "--tasks", str(mini_pack), "--show", "answer-file", "--seeds", "2"]) == 0
    out = capsys.readouterr().out
    for seed in (0, 1):
        assert f"== answer-file: pristine repo, seed {seed}, run 1: grader fail" in out
        assert f"== answer-file: after the reference fix, seed {seed}, run 1: grader pass" in out
    assert "✗ answer.txt exists" in out and "✓ answer.txt exists" in out and "PASS: 1 checks" in out
    assert main(["validate", "--tasks", str(mini_pack), "--show", "nosuch"]) == 2
