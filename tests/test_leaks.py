"""The leak scan finds answers and grader/fix contents in the tree and anywhere in .git."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agentic_eval.packs.sandbox import materialize_sandbox
from agentic_eval.packs.task import load_task
from agentic_eval.validation.leaks import Needle, scan_sandbox, task_needles

SECRET = "the-answer-is-FORTY-TWO"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout.strip()


def plant_in_tree(root: Path) -> None:
    (root / "docs").mkdir(exist_ok=True)
    (root / "docs" / "hint.md").write_text(f"psst: {SECRET}\n")


def plant_dangling_object(root: Path) -> None:
    subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=root, input=SECRET.encode(), check=True,
                   capture_output=True)


def plant_packed_dangling_object(root: Path) -> None:
    plant_dangling_object(root)
    _git(root, "repack", "-a", "-d", "-q")
    _git(root, "prune-packed")


def plant_in_reflog(root: Path) -> None:
    # A commit holding the answer, then reset away: the blob is unreachable, the reflog names the message.
    (root / "fix.txt").write_text("x\n")
    _git(root, "add", "fix.txt")
    _git(root, "commit", "-q", "-m", f"apply {SECRET}")
    _git(root, "reset", "-q", "--hard", "HEAD~1")
    # Keep only the reflog as the trace: drop the objects so the objects check cannot be what finds it.
    _git(root, "reflog", "expire", "--expire=never", "--all")


def plant_in_other_ref(root: Path) -> None:
    _git(root, "branch", f"solution-{SECRET}")


def plant_in_commit_message_on_branch(root: Path) -> None:
    _git(root, "checkout", "-q", "-b", "answers")
    (root / "a.txt").write_text(f"{SECRET}\n")
    _git(root, "add", "a.txt")
    _git(root, "commit", "-q", "-m", "answers")
    _git(root, "checkout", "-q", "main")


PLANTS = [
    ("tree", plant_in_tree, "working tree (docs/hint.md)"),
    ("dangling object", plant_dangling_object, ".git objects"),
    ("packed dangling object", plant_packed_dangling_object, ".git objects"),
    ("reflog", plant_in_reflog, "(reflog)"),
    ("other ref", plant_in_other_ref, "(re"),
    ("other branch", plant_in_commit_message_on_branch, ".git objects"),
]


@pytest.mark.parametrize(("name", "plant", "where"), PLANTS, ids=[p[0] for p in PLANTS])
def test_planted_leak_is_found(mini_pack: Path, tmp_path: Path, name: str, plant, where: str) -> None:  # type: ignore[no-untyped-def]
    sb = materialize_sandbox(load_task(mini_pack / "answer-file"), 0, tmp_path / "s")
    needles = [Needle(f"answer string {SECRET!r}", SECRET.encode())]
    assert scan_sandbox(sb.path, needles) == []
    plant(sb.path)
    leaks = scan_sandbox(sb.path, needles)
    assert leaks, f"{name} leak not found"
    assert any(where in leak.where for leak in leaks), [str(x) for x in leaks]


def test_reflog_alone_is_found(mini_pack: Path, tmp_path: Path) -> None:
    """The message survives in .git/logs even when every object holding it is gone."""
    sb = materialize_sandbox(load_task(mini_pack / "answer-file"), 0, tmp_path / "s")
    plant_in_reflog(sb.path)
    _git(sb.path, "gc", "-q", "--prune=now")
    leaks = scan_sandbox(sb.path, [Needle("answer", SECRET.encode())])
    assert any("logs/HEAD (reflog)" in leak.where for leak in leaks), [str(x) for x in leaks]


def test_grader_contents_and_name_are_needles(mini_pack: Path, tmp_path: Path) -> None:
    task = load_task(mini_pack / "answer-file")
    sb = materialize_sandbox(task, 0, tmp_path / "s")
    needles = task_needles(task, task.render_answers(sb.variables))
    assert [n.what for n in needles] == [f"answer string 'port is {sb.variables['port']}'", "grader contents",
                                          "reference fix contents"]
    (sb.path / "grade.py").write_bytes(task.grader_path.read_bytes())
    leaks = [str(x) for x in scan_sandbox(sb.path, needles, {"grade.py"})]
    assert "leak: file named 'grade.py' in working tree (grade.py)" in leaks
    assert "leak: grader contents in working tree (grade.py)" in leaks


def test_answer_planted_by_generator_fails_validation(mini_pack: Path) -> None:
    from agentic_eval.validation.validate import validate_task

    toml = mini_pack / "answer-file" / "task.toml"
    toml.write_text(toml.read_text().replace('generator = "tiny"',
                                             'generator = "tiny"\nparams = { plant = "port is PORT" }'))
    result = validate_task(load_task(mini_pack / "answer-file"))
    assert result.status == "bad"
    assert any(r.startswith("leak: answer string") and "working tree (NOTES.md)" in r for r in result.reasons)
    assert any("leak: answer string" in r and ".git objects" in r for r in result.reasons)
