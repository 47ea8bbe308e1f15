"""Loading task packs: broken task files give one line naming the file and the field."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agentic_eval.cli import main
from agentic_eval.errors import PackNotFoundError, TaskLoadError
from agentic_eval.packs.task import load_pack, load_task, load_tasks, render_template, select_tasks
from tests.helpers import make_pack

GOOD_TOML = (Path(__file__).parent / "packs" / "mini" / "answer-file" / "task.toml").read_text()


def _replace(old: str, new: str):  # type: ignore[no-untyped-def]
    def edit(task_dir: Path) -> None:
        p = task_dir / "task.toml"
        text = p.read_text()
        assert old in text, old
        p.write_text(text.replace(old, new))

    return edit


def _remove(name: str):  # type: ignore[no-untyped-def]
    return lambda task_dir: (task_dir / name).unlink()


def _add(name: str, text: str = "x"):  # type: ignore[no-untyped-def]
    return lambda task_dir: (task_dir / name).write_text(text)


BROKEN_CASES = [
    ("missing task.toml", _remove("task.toml"), "task.toml", "missing"),
    ("invalid toml", _replace('id = "answer-file"', 'id = "answer-file'), "task.toml", "not valid TOML"),
    ("missing id", _replace('id = "answer-file"\n', ""), "task.toml", "id: Field required"),
    ("bad id", _replace('id = "answer-file"', 'id = "Answer File"'), "task.toml", "id: Value error"),
    ("id with a trailing newline", _replace('id = "answer-file"', 'id = "answer-file\\n"'), "task.toml",
     "id: Value error"),
    ("empty title", _replace('title = "Write the port into answer.txt"', 'title = ""'), "task.toml", "title:"),
    ("tags not a list", _replace('tags = ["config", "read"]', 'tags = "config"'), "task.toml", "tags:"),
    ("bad difficulty", _replace('difficulty = "easy"', 'difficulty = "trivial"'), "task.toml", "difficulty:"),
    ("unknown field", _add_field := _replace("[sandbox]", 'colour = "blue"\n[sandbox]'), "task.toml",
     "colour: unknown key; known: 'id', 'title', 'tags', 'difficulty', 'instruction', 'grader', 'solution', "
     "'answers', [sandbox], [environment], [metadata], [limits], 'requires', [impossible] (see docs/task-format.md)"),
    ("misspelt key", _replace("title =", "titel ="), "task.toml", "titel: unknown key; did you mean 'title'?"),
    ("misspelt section", _replace("[limits]", "[limit]"), "task.toml",
     "limit: unknown section [limit]; did you mean [limits]?"),
    ("misspelt sandbox section", _replace("[sandbox]", "[sandbx]"), "task.toml",
     "sandbx: unknown section [sandbx]; did you mean [sandbox]? (see docs/task-format.md)"),
    ("misspelt key in a section", _replace("max_turns = 5", "max_turn = 5"), "task.toml",
     "limits.max_turn: unknown key in [limits]; did you mean 'max_turns'?"),
    ("misspelt generator key", _replace('generator = "tiny"', 'generater = "tiny"'), "task.toml",
     "sandbox.generater: unknown key in [sandbox]; did you mean 'generator'?"),
    ("misspelt params", _replace('generator = "tiny"', 'generator = "tiny"\nparam = {plant = "x"}'), "task.toml",
     "sandbox.param: unknown section [sandbox.param]; did you mean [sandbox.params]?"),
    ("top-level key under a section", _replace("max_turns = 5", 'max_turns = 5\nrequires = ["numpy"]'), "task.toml",
     "limits.requires: unknown key in [limits]; 'requires' is a top-level key: move it above the first [section] "
     "header"),
    ("huge agent timeout", _replace("agent_timeout_s = 60", "agent_timeout_s = 1e9"), "task.toml",
     "limits.agent_timeout_s: 1000000000.0 is over the upper bound 604800 (a week in seconds, the longest time limit "
     "a task may set)"),
    ("huge grader timeout", _replace("grader_timeout_s = 20", "grader_timeout_s = 604801"), "task.toml",
     "limits.grader_timeout_s: 604801 is over the upper bound 604800 (a week in seconds"),
    ("infinite grader timeout", _replace("grader_timeout_s = 20", "grader_timeout_s = inf"), "task.toml",
     "limits.grader_timeout_s: Input should be a finite number"),
    ("huge max turns", _replace("max_turns = 5", "max_turns = 9999999999"), "task.toml",
     "limits.max_turns: 9999999999 is over the upper bound 100000 (the most model turns a task may allow"),
    ("boolean max turns", _replace("max_turns = 5", "max_turns = true"), "task.toml",
     "limits.max_turns: Value error, must be a number, not true"),
    ("no sandbox", _replace('[sandbox]\ngenerator = "tiny"\n', ""), "task.toml",
     "sandbox: a task needs a [sandbox] generator or an [environment]"),
    ("negative timeout", _replace("grader_timeout_s = 20", "grader_timeout_s = -1"), "task.toml",
     "limits.grader_timeout_s: Input should be greater than 0"),
    ("timeout not a number", _replace("grader_timeout_s = 20", 'grader_timeout_s = "soon"'), "task.toml",
     "limits.grader_timeout_s: Input should be a valid number, unable to parse string as a number (got 'soon')"),
    ("difficulty not a choice", _replace('difficulty = "easy"', 'difficulty = "eazy"'), "task.toml",
     "difficulty: Input should be 'easy', 'medium' or 'hard' (got 'eazy')"),
    ("zero turns", _replace("max_turns = 5", "max_turns = 0"), "task.toml", "limits.max_turns:"),
    ("missing instruction", _remove("instruction.md"), "task.toml",
     "instruction: file 'instruction.md' does not exist"),
    ("empty instruction", _add("instruction.md", "  \n"), "instruction.md", "instruction is empty"),
    ("missing grader", _remove("grade.py"), "task.toml", "grader: no grade file"),
    ("missing solution", _remove("solve.sh"), "task.toml", "solution: no solve file"),
    ("two graders", _add("grade.sh"), "task.toml", "grader: several candidates"),
    ("named grader missing", _replace("[sandbox]", 'grader = "check.py"\n[sandbox]'), "task.toml",
     "grader: file 'check.py' does not exist"),
]


@pytest.mark.parametrize(("case", "break_it", "file", "message"), BROKEN_CASES, ids=[c[0] for c in BROKEN_CASES])
def test_broken_task_gives_one_line_naming_file_and_field(
    mini_pack: Path, case: str, break_it, file: str, message: str  # type: ignore[no-untyped-def]
) -> None:
    task_dir = mini_pack / "answer-file"
    break_it(task_dir)
    with pytest.raises(TaskLoadError) as info:
        load_task(task_dir)
    text = str(info.value)
    assert "\n" not in text
    assert text.startswith(str((task_dir / file).resolve()))
    assert message in text


def test_broken_task_does_not_stop_the_others(mini_pack: Path) -> None:
    broken = mini_pack / "broken"
    broken.mkdir()
    (broken / "task.toml").write_text('id = "broken"\n')
    (mini_pack / "no-toml").mkdir()
    result = load_pack(mini_pack)
    assert [t.id for t in result.tasks] == ["answer-file"]
    assert len(result.errors) == 2
    assert any("title: Field required" in str(e) for e in result.errors)
    assert any("no-toml" in str(e) and "missing" in str(e) for e in result.errors)


def test_single_task_folder_is_a_pack(mini_pack: Path) -> None:
    result = load_pack(mini_pack / "answer-file")
    assert [t.id for t in result.tasks] == ["answer-file"]


def test_duplicate_ids_across_packs(mini_pack: Path, tmp_path: Path) -> None:
    import shutil

    other = tmp_path / "other"
    shutil.copytree(mini_pack, other)
    result = load_tasks([mini_pack, other])
    assert len(result.tasks) == 1
    assert "already used by" in str(result.errors[0])


def test_not_a_pack(tmp_path: Path) -> None:
    with pytest.raises(PackNotFoundError, match="no such folder"):
        load_pack(tmp_path / "nope")
    with pytest.raises(PackNotFoundError, match="no tasks found"):
        load_pack(tmp_path)


def test_unknown_task_id_names_the_known_ones(mini_pack: Path) -> None:
    tasks = load_pack(mini_pack).tasks
    with pytest.raises(PackNotFoundError, match="known: answer-file"):
        select_tasks(tasks, ["nope"])


def test_an_unknown_task_id_gets_did_you_mean_and_many_ids_are_left_to_tasks_list(mini_pack: Path) -> None:
    """A typo names the nearest id; a pack of many tasks is not spelt out in the one line."""
    tasks = load_pack(make_pack(mini_pack, 13)).tasks
    with pytest.raises(PackNotFoundError) as exc:
        select_tasks(tasks, ["t12x"])
    assert str(exc.value) == ("unknown task id t12x (did you mean t12?); 13 tasks known: `agentic-eval tasks list` "
                              "(with the same --tasks) lists them")
    with pytest.raises(PackNotFoundError, match=r"did you mean t3 for t3x\?"):
        select_tasks(tasks, ["t3x", "zzz"])
    with pytest.raises(PackNotFoundError, match=r"^unknown task id core, node \(core and node are packs: --tasks core "
                                                 r"--tasks node\); 13 tasks known"):
        select_tasks(tasks, ["core", "node"])


@pytest.mark.parametrize(
    ("text", "variables", "expected"),
    [
        ("port {{port}}", {"port": 80}, "port 80"),
        ("{{ a }}-{{b}}", {"a": 1, "b": "x"}, "1-x"),
        ("no placeholders {single}", {}, "no placeholders {single}"),
    ],
)
def test_render_template(text: str, variables: dict, expected: str) -> None:
    assert render_template(text, variables, where="x") == expected


def test_render_template_unknown_placeholder() -> None:
    with pytest.raises(TaskLoadError, match=r"unknown placeholder \{\{nope\}\} \(the generator provides: port\)"):
        render_template("{{nope}}", {"port": 1}, where="instruction.md")


def test_digest_changes_with_content_not_location(mini_pack: Path, tmp_path: Path) -> None:
    import shutil

    a = load_task(mini_pack / "answer-file")
    moved = tmp_path / "elsewhere" / "answer-file"
    shutil.copytree(mini_pack / "answer-file", moved)
    assert load_task(moved).digest() == a.digest()
    (moved / "instruction.md").write_text("Something else.\n")
    assert load_task(moved).digest() != a.digest()


def test_cli_lists_broken_task_on_stderr_and_good_ones(mini_pack: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (mini_pack / "answer-file" / "instruction.md").unlink()
    code = main(["tasks", "list", "--tasks", str(mini_pack)])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1 and "instruction: file 'instruction.md' does not exist" in err


def test_cli_list_of_a_pack_whose_every_task_is_broken_prints_no_empty_table(
        mini_pack: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (mini_pack / "answer-file" / "instruction.md").unlink()
    assert main(["tasks", "list", "--tasks", str(mini_pack)]) == 1
    assert capsys.readouterr().out == "0 tasks, 1 broken\n"


def test_entry_point_pack_is_listed(mini_pack: Path, tmp_path: Path) -> None:
    """A pip-installed pack registers under 'agentic_eval.packs'; emulate its installed metadata."""
    site = tmp_path / "site"
    dist = site / "thirdparty_pack-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: thirdparty-pack\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[agentic_eval.packs]\nthirdparty = thirdparty_pack:PACK_DIR\n")
    (site / "thirdparty_pack.py").write_text(f"PACK_DIR = {str(mini_pack)!r}\n")
    env = dict(os.environ, PYTHONPATH=str(site))
    proc = subprocess.run(
        [sys.executable, "-m", "agentic_eval.cli", "tasks", "list", "--json"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    import json

    rows = json.loads(proc.stdout)["tasks"]
    assert {"answer-file": "thirdparty"}.items() <= {r["id"]: r["pack"] for r in rows}.items()


def test_every_limit_has_an_upper_bound_that_says_what_it_is() -> None:
    from agentic_eval.packs.task import LIMIT_BOUNDS, Limits

    assert set(LIMIT_BOUNDS) == set(Limits.model_fields)
    for name, info in Limits.model_fields.items():
        assert any(getattr(m, "le", None) is not None for m in info.metadata), name


def test_tasks_list_fits_80_columns(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The built-in packs at 80 columns: no line over 80, every id whole at the start of a line, its title beside
    it, and a few lines per task (a table squeezed the titles into 9 characters: 314 lines for 38 tasks)."""
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["tasks", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    tasks = load_tasks().tasks
    assert lines[-1] == f"{len(tasks)} tasks"
    assert max(len(line) for line in lines) <= 80
    assert len(lines) <= 3 * len(tasks) + 1
    starts = {line.split("  ")[0]: line for line in lines if not line.startswith(" ")}
    for task in tasks:
        assert task.id in starts, task.id
        first_words = task.meta.title.split()[0]
        assert starts[task.id].startswith(f"{task.id}  {first_words}"), starts[task.id]


def test_tasks_list_is_a_table_where_it_fits(mini_pack: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["tasks", "list", "--tasks", str(mini_pack)]) == 0
    out = capsys.readouterr().out
    assert "│ answer-file │ mini │ easy       │ config, read │ Write the port into answer.txt │" in out


HISTORY_GENERATOR = '''\
import subprocess

def generate(root, seed, params):
    env = {"GIT_AUTHOR_DATE": "2024-01-01T00:00:00+0000", "GIT_COMMITTER_DATE": "2024-01-01T00:00:00+0000",
           "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@x",
           "PATH": "/usr/bin:/bin", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, env=env, check=True)
    (root / "README.md").write_text("hello\\n")
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "x.pyc").write_bytes(b"")
    subprocess.run(["git", "add", "README.md"], cwd=root, env=env, check=True)
    subprocess.run(["git", "commit", "-qm", "first"], cwd=root, env=env, check=True)
    return {"port": 1}
'''


def test_tasks_show_leaves_out_git_and_caches(mini_pack: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (mini_pack / "sandboxes" / "history.py").write_text(HISTORY_GENERATOR)
    toml = mini_pack / "answer-file" / "task.toml"
    toml.write_text(toml.read_text().replace('generator = "tiny"', 'generator = "history"'))
    assert main(["tasks", "show", "answer-file", "--tasks", str(mini_pack)]) == 0
    out = capsys.readouterr().out
    files = out.split("generated files (seed 0, committed as the pristine repo):\n")[1].split("\n\n")[0].splitlines()
    assert files[0] == "  README.md"
    assert re.fullmatch(r"  \(left out: \.git/ with \d+ files, __pycache__/ with 1 file\)", files[1]), files
    assert len(files) == 2
    assert "(seed 0, 1 file)" in out


def test_a_task_file_that_is_a_fifo_or_a_device_is_one_error_not_a_hang(tmp_path: Path, mini_pack: Path) -> None:
    """task.toml or the instruction replaced by a FIFO (or a link to /dev/zero) is refused without blocking or
    reading without bound: the task is skipped with one line, and the rest of the pack loads."""
    import os

    from agentic_eval.packs.task import load_tasks

    pack = tmp_path / "pack"
    for name in ("fifo-toml", "zero-toml", "zero-instruction"):
        (pack / name).mkdir(parents=True)
    os.mkfifo(pack / "fifo-toml" / "task.toml")
    (pack / "zero-toml" / "task.toml").symlink_to("/dev/zero")
    good = next(p for p in mini_pack.iterdir() if (p / "task.toml").is_file())
    (pack / "zero-instruction" / "task.toml").write_text((good / "task.toml").read_text())
    (pack / "zero-instruction" / "instruction.md").symlink_to("/dev/zero")
    loaded = load_tasks([str(pack)])
    assert loaded.tasks == []
    errors = sorted(str(e) for e in loaded.errors)
    assert len(errors) == 3, errors
    assert any("FIFO" in e for e in errors) and sum("device" in e for e in errors) == 2, errors
