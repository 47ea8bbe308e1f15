"""validate catches graders that pass on pristine, fixes that fail, flaky and crashing graders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentic_eval.cli import main
from agentic_eval.task import load_task
from agentic_eval.validate import validate_task


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


CASES = [
    ("grader passes on pristine", "grade.py", GRADER_ALWAYS_PASS, ["passes on pristine (3/3)"]),
    ("fix does not fix", "solve.sh", FIX_WRONG, ["fails after reference fix (3/3)"]),
    ("fix crashes", "solve.sh", FIX_CRASH, ["reference fix failed: exit 7 (no idea) (3x)"]),
    ("grader errors", "grade.py", GRADER_EXIT_3,
     ["grader error: exit 3 (cannot grade) on pristine (3x)", "grader error: exit 3 (cannot grade) after reference fix (3x)"]),
    ("flaky grader", "grade.py", GRADER_FLAKY, ["fails after reference fix (1/3)"]),
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
    assert result.reasons == ["grader error: timeout on pristine", "grader error: timeout after reference fix"]
    assert result.duration_s < 20


def test_uncaught_exception_with_gradelib_is_a_grader_error(mini_pack: Path) -> None:
    task_dir = mini_pack / "answer-file"
    _write(task_dir / "grade.py", "import gradelib\n" + GRADER_CRASH)
    result = validate_task(load_task(task_dir), repeat=1)
    assert result.status == "bad"
    assert all(r.startswith("grader error: exit 3") for r in result.reasons), result.reasons


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
    assert out[-1] == "1 ok, 1 bad"
    assert "bad: bad-one: passes on pristine (2/2)" in out


def test_cli_json(mini_pack: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = mini_pack / "broken"
    broken.mkdir()
    (broken / "task.toml").write_text("id = 1\n")
    code = main(["validate", "--tasks", str(mini_pack), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1
    assert data["ok"] == 1 and data["bad"] == 1, data
    by_id = {t["id"]: t for t in data["tasks"]}
    assert by_id["answer-file"] == {"id": "answer-file", "status": "ok", "reasons": []}
    assert by_id["broken"]["status"] == "bad"
    assert "load error" in by_id["broken"]["reasons"][0] and "id: Input should be a valid string" in by_id["broken"]["reasons"][0]


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
