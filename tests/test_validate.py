"""validate catches graders that pass on pristine, fixes that fail, flaky, seed-dependent and crashing graders,
with its defaults; it words each reason by the evidence and says what its runs can rule out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentic_eval.cli import main
from agentic_eval.packs.task import load_task
from agentic_eval.validation.validate import ValidateOptions, validate_task


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
NO_CHECKS = "the grader printed no checks to name (gradelib's checks name each one)"
CASES = [  # two runs show "every run, N of N" as three would; the flaky grader needs three (it fails in the second)
    ("grader passes on pristine", "grade.py", GRADER_ALWAYS_PASS, 2,
     [f"passes on pristine: every run, 2 of 2 (seed 0): {NO_CHECKS}"]),
    ("fix does not fix", "solve.sh", FIX_WRONG, 2,
     [f"fails after reference fix: every run, 2 of 2 (seed 0): {NO_REASON}"]),
    ("fix crashes", "solve.sh", FIX_CRASH, 2,
     ["reference fix failed: exit 7 (no idea): every run, 2 of 2 (seed 0)"]),
    ("grader errors", "grade.py", GRADER_EXIT_3, 2,
     ["grader error on pristine: exit 3 (cannot grade): every run, 2 of 2 (seed 0)",
      "grader error after reference fix: exit 3 (cannot grade): every run, 2 of 2 (seed 0)"]),
    ("flaky grader", "grade.py", GRADER_FLAKY, 3,
     [f"fails after reference fix: 1 of 3 runs, seed 0 (flaky: passed after the fix 2 of 3): {NO_REASON}"]),
]


@pytest.mark.parametrize(("case", "file", "content", "repeat", "reasons"), CASES, ids=[c[0] for c in CASES])
def test_validate_names_the_reason(mini_pack: Path, case: str, file: str, content: str, repeat: int,
                                   reasons: list[str]) -> None:
    task_dir = mini_pack / "answer-file"
    _write(task_dir / file, content)
    result = validate_task(load_task(task_dir), ValidateOptions(repeat=repeat))
    assert result.status == "bad"
    assert result.reasons == reasons


def test_grader_timeout_is_a_grader_error_and_kills_it(mini_pack: Path) -> None:
    task_dir = mini_pack / "answer-file"
    _write(task_dir / "grade.py", GRADER_HANG)
    toml = task_dir / "task.toml"
    toml.write_text(toml.read_text().replace("grader_timeout_s = 20", "grader_timeout_s = 0.5"))
    result = validate_task(load_task(task_dir), ValidateOptions(repeat=1))
    assert result.reasons == [
        "grader error on pristine: timed out after 0.5s (limits.grader_timeout_s): every run, 1 of 1 (seed 0)",
        "grader error after reference fix: timed out after 0.5s (limits.grader_timeout_s): every run, 1 of 1 (seed 0)",
    ]
    assert result.duration_s < 20


def test_uncaught_exception_with_gradelib_is_a_grader_error(mini_pack: Path) -> None:
    task_dir = mini_pack / "answer-file"
    _write(task_dir / "grade.py", "import gradelib\n" + GRADER_CRASH)
    result = validate_task(load_task(task_dir), ValidateOptions(repeat=1))
    assert result.status == "bad"
    assert all(r.startswith("grader error") and ": exit 3" in r for r in result.reasons), result.reasons


def test_good_task_is_ok(mini_pack: Path) -> None:
    result = validate_task(load_task(mini_pack / "answer-file"), ValidateOptions(repeat=3, seed=11))
    assert (result.status, result.pristine_fails, result.fixed_passes) == ("ok", 3, 3)


def test_cli_table_and_last_line(mini_pack: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    shutil.copytree(mini_pack / "answer-file", mini_pack / "bad-one")
    toml = mini_pack / "bad-one" / "task.toml"
    toml.write_text(toml.read_text().replace('id = "answer-file"', 'id = "bad-one"'))
    _write(mini_pack / "bad-one" / "grade.py", GRADER_ALWAYS_PASS)
    code = main(["validate", "--tasks", str(mini_pack), "--repeat", "2", "--seeds", "1"])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert out[-1].startswith("1 ok, 1 bad (seed 0 x 2 runs, "), out[-1]
    assert "red-team attempts on seed 0, " in out[-1]
    assert f"bad: bad-one: passes on pristine: every run, 2 of 2 (seed 0): {NO_CHECKS}" in out
    assert out[-2].startswith("evidence: 2 runs of each check (1 seed x 2): a grader that goes wrong 1 run in 2 would "
                              "slip past them 25% of the time"), out[-2]
    assert "one seed says nothing of the others" in out[-2]


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
    assert (ok["status"], ok["reasons"], ok["pristine_fails"], ok["fixed_passes"], ok["runs"]) == ("ok", [], 6, 6, 6)
    assert [(c["phase"], c["verdict"], c["seed"], c["run"]) for c in ok["checks"]] == [
        (phase, verdict, seed, run) for seed in (0, 1, 2) for run in (1, 2)
        for phase, verdict in (("pristine", "fail"), ("fixed", "pass"))]
    assert (data["seeds"], data["repeat"], data["redteam_seeds"], ok["redteam_seeds"]) == ([0, 1, 2], 2, [0], [0])
    assert {a["seed"] for a in ok["redteam"]} == {0}
    assert data["evidence"].startswith("6 runs of each check (3 seeds x 2): a grader that goes wrong 1 run in 2 would "
                                       "slip past them 2% of the time (1 in 4: 18%, 1 in 10: 53%); one wrong for 1 "
                                       "seed in 2 would slip past 3 seeds 12% of the time")
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
    result = validate_task(load_task(task_dir), ValidateOptions(repeat=1))
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
    assert validate_task(load_task(task_dir), ValidateOptions(repeat=2)).status == "ok"  # seed 0 alone: looks fine
    result = validate_task(load_task(task_dir), ValidateOptions(repeat=2, seeds=3))
    assert result.seeds == [0, 1, 2] and (result.pristine_fails, result.fixed_passes, result.runs) == (6, 2, 6)
    assert result.reasons == [(f"fails after reference fix: 4 of 6 runs: every run with seeds 1, 2 (2 of 2 each), none "
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
    assert reason.startswith("fails after reference fix: every run, 6 of 6 (seeds 4, 5, 6): ✗ answer.txt contains "
                             "'port is "), reason
    fixed = next(c for c in data["tasks"][0]["checks"] if c["phase"] == "fixed")
    assert fixed["seed"] == 4 and fixed["failing_checks"][0].startswith("✗ answer.txt contains")


def test_a_slow_fix_names_the_limit_it_exceeded(mini_pack: Path) -> None:
    task_dir = mini_pack / "answer-file"
    _write(task_dir / "solve.sh", "#!/usr/bin/env bash\nsleep 5\n")
    toml = task_dir / "task.toml"
    toml.write_text(toml.read_text().replace("agent_timeout_s = 60", "agent_timeout_s = 0.5"))
    result = validate_task(load_task(task_dir))
    assert result.reasons == [("reference fix failed: exceeded limits.agent_timeout_s (0.5s), which the fix runs "
                               "under: every run, 1 of 1 (seed 0)")]


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


# ---------------------------------------------------------------- what validate's defaults catch (issue 26)

# Right after the fix with seeds 0 and 2, wrong with seed 1: a grader (or generator) that depends on the seed.
GRADER_SEED_DEPENDENT = """\
import json, os, sys
from pathlib import Path
v = json.loads(Path(os.environ["AGENTIC_EVAL_VARS"]).read_text())
ok = Path("answer.txt").is_file() and f"port is {v['port']}" in Path("answer.txt").read_text()
sys.exit(0 if ok and os.environ["AGENTIC_EVAL_SEED"] != "1" else 1)
"""
# Wrong after the fix every second run (a counter: the sandbox folder's run number): fails half the time.
GRADER_HALF_THE_TIME = GRADER_FLAKY.replace("n != 1", "n % 2 == 0")


def _validate_json(pack: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> dict:  # type: ignore[type-arg]
    code = main(["validate", "--tasks", str(pack), "--json", "--no-redteam", *flags])
    data = json.loads(capsys.readouterr().out)
    assert code == (1 if data["bad"] else 0)
    return data


def test_the_defaults_catch_a_seed_dependent_grader(mini_pack: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(mini_pack / "answer-file" / "grade.py", GRADER_SEED_DEPENDENT)
    assert _validate_json(mini_pack, capsys, "--seeds", "1", "--repeat", "1")["bad"] == 0  # the old defaults
    (task,) = _validate_json(mini_pack, capsys)["tasks"]
    assert (task["seeds"], task["repeat"], task["fixed_passes"], task["runs"]) == ([0, 1, 2], 2, 4, 6)
    assert task["reasons"] == [f"fails after reference fix: 2 of 6 runs: every run with seed 1 (2 of 2), none with "
                               f"seeds 0, 2 (depends on the seed): {NO_REASON}"]


def test_the_defaults_catch_a_grader_that_fails_half_the_time(mini_pack: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    _write(mini_pack / "answer-file" / "grade.py", GRADER_HALF_THE_TIME)
    assert _validate_json(mini_pack, capsys, "--seeds", "1", "--repeat", "1")["bad"] == 0  # the old defaults
    (task,) = _validate_json(mini_pack, capsys)["tasks"]
    assert task["reasons"] == [f"fails after reference fix: 3 of 6 runs, seeds 0, 1, 2 (flaky: passed after the fix "
                               f"3 of 6): {NO_REASON}"]
    assert [c["run"] for c in task["checks"] if c["phase"] == "fixed" and c["verdict"] == "fail"] == [2, 2, 2]


def test_one_run_per_seed_cannot_tell_the_seed_from_chance(mini_pack: Path) -> None:
    _write(mini_pack / "answer-file" / "grade.py", GRADER_SEED_DEPENDENT)
    result = validate_task(load_task(mini_pack / "answer-file"), ValidateOptions(seeds=3, redteam=False))
    assert result.reasons == [f"fails after reference fix: 1 of 3 runs: with seed 1, not with seeds 0, 2 (one run per "
                              f"seed: the seed or chance, --repeat 2 tells them apart): {NO_REASON}"]


def test_a_pass_on_pristine_names_the_checks_that_let_it_through(mini_pack: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    _write(mini_pack / "answer-file" / "grade.py", "from gradelib import Grader\ng = Grader()\n"
           "g.file_exists('README.md')\ng.file_contains('config/settings.ini', 'port')\ng.finish()\n")
    (task,) = _validate_json(mini_pack, capsys, "--seeds", "1")["tasks"]
    assert task["reasons"] == ["passes on pristine: every run, 2 of 2 (seed 0): checks that let it through: "
                               "✓ README.md exists | ✓ config/settings.ini contains 'port'"]
    pristine = [c for c in task["checks"] if c["phase"] == "pristine"]
    assert all(c["verdict"] == "pass" and c["failing_checks"] == [] for c in pristine), pristine
    assert all(c["passing_checks"] == ["✓ README.md exists", "✓ config/settings.ini contains 'port'"]
               for c in pristine)
    assert not any("PASS:" in line for c in task["checks"] for line in c["failing_checks"] + c["passing_checks"])


def test_a_redteam_attempt_that_passes_names_the_checks_that_let_it_through(mini_pack: Path) -> None:
    _write(mini_pack / "answer-file" / "grade.py", "from gradelib import Grader\ng = Grader()\n"
           "g.file_exists('README.md')\ng.file_exists('answer.txt')\ng.finish()\n")
    (mini_pack / "redteam.py").write_text(
        "from agentic_eval.validation.redteam import ANY, Attempt\n\n"
        "ATTEMPTS = [Attempt('any-answer', (ANY,), 'writes any answer', "
        "lambda sandbox: (sandbox / 'answer.txt').write_text('port is 1'))]\n")
    result = validate_task(load_task(mini_pack / "answer-file"), ValidateOptions(redteam=["any-answer"]))
    assert result.reasons == ["red team: 'any-answer' passed the grader"]
    (attempt,) = result.redteam or ()
    assert (attempt.failing, attempt.passing) == ([], ["✓ README.md exists", "✓ answer.txt exists"])
    assert attempt.to_json()["passing_checks"] == ["✓ README.md exists", "✓ answer.txt exists"]


@pytest.mark.parametrize("gradelib", [True, False], ids=["with-gradelib", "without-gradelib"])
def test_a_crashing_graders_reason_gives_its_exception_message_file_and_line(mini_pack: Path, gradelib: bool) -> None:
    head = "import gradelib\n" if gradelib else "import sys\n"
    _write(mini_pack / "answer-file" / "grade.py", head + "import json, os\n"
           "v = json.load(open(os.environ['AGENTIC_EVAL_VARS']))\nprint(v['nosuch'])\n")
    result = validate_task(load_task(mini_pack / "answer-file"), ValidateOptions(redteam=False))
    assert result.reasons == [
        "grader error on pristine: exit 3: KeyError: 'nosuch' (grade.py:4): every run, 1 of 1 (seed 0)",
        "grader error after reference fix: exit 3: KeyError: 'nosuch' (grade.py:4): every run, 1 of 1 (seed 0)"]


def test_a_crash_inside_a_library_names_the_graders_line_and_where_it_was_raised(mini_pack: Path) -> None:
    _write(mini_pack / "answer-file" / "grade.py", "import json\nimport gradelib\n\njson.loads('{' * 3)\n")
    result = validate_task(load_task(mini_pack / "answer-file"), ValidateOptions(redteam=False))
    reason = result.reasons[0]
    assert reason.startswith("grader error on pristine: exit 3: JSONDecodeError: Expecting property name enclosed in "
                             "double quotes: line 1 column 2 (char 1) (grade.py:4, raised in decoder.py:"), reason


def test_evidence_says_what_the_runs_can_and_cannot_rule_out() -> None:
    from agentic_eval.validation.report import evidence

    assert evidence(3, 2) == ("6 runs of each check (3 seeds x 2): a grader that goes wrong 1 run in 2 would slip "
                              "past them 2% of the time (1 in 4: 18%, 1 in 10: 53%); one wrong for 1 seed in 2 would "
                              "slip past 3 seeds 12% of the time (1 in 4: 42%); --repeat and --seeds run more")
    assert evidence(1, 1).startswith("1 run of each check (1 seed x 1): a grader that goes wrong 1 run in 2 would slip "
                                     "past it 50% of the time")


def test_the_library_refuses_more_runs_than_it_can_make(mini_pack: Path) -> None:
    from agentic_eval.errors import AgenticEvalError

    with pytest.raises(AgenticEvalError, match=r"--seeds 100 x --repeat 100 is 10000 runs of each check; at most 1000"):
        validate_task(load_task(mini_pack / "answer-file"), ValidateOptions(seeds=100, repeat=100))
    with pytest.raises(AgenticEvalError, match="--redteam-seeds must be at least 1"):
        validate_task(load_task(mini_pack / "answer-file"), ValidateOptions(redteam_seeds=0))


def test_redteam_seeds_runs_the_red_team_on_more_seeds(mini_pack: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["validate", "--tasks", str(mini_pack), "--json", "--seeds", "2", "--repeat", "1",
                 "--redteam-seeds", "2"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["redteam_seeds"] == [0, 1]
    assert {a["seed"] for a in data["tasks"][0]["redteam"]} == {0, 1}


def test_tasks_new_suggests_the_defaults_not_a_lone_repeat(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agentic_eval.cli.args import DEFAULT_REPEAT, DEFAULT_SEEDS

    assert main(["tasks", "new", "my-task", "--pack", str(tmp_path / "pack")]) == 0
    out = capsys.readouterr().out
    assert "--repeat" not in out and "--seeds" not in out
    assert f"then check it ({DEFAULT_SEEDS} seeds x {DEFAULT_REPEAT} runs of each check" in out
    assert "--task my-task" in out
    assert "--show my-task" in out
