"""gitsafe on real repositories: what counts as changed against the pristine store, whatever the sandbox's
own git says, with the pristine commit's ignore rules (nested ones included) applied the way git does."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from agentic_eval.grading import gitsafe
from agentic_eval.packs import pristine
from tests.helpers import pristine_repo as _repo

PRISTINE = {
    ".gitignore": "build/\n*.tmp\n",
    "sub/.gitignore": "*.log\n/only-here.txt\n",
    "build/keep.txt": "tracked although its folder is ignored\n",
    "src/a.py": "A = 1\n",
    "README.md": "readme\n",
}


@pytest.mark.parametrize("line, base, expected", [
    ("*.log", "sub/", "sub/**/*.log"),
    ("/only-here.txt", "sub/", "sub/only-here.txt"),
    ("deep/x.txt", "sub/", "sub/deep/x.txt"),
    ("cache/", "sub/", "sub/**/cache/"),
    ("!keep.log", "sub/", "!sub/**/keep.log"),
    ("build/", "", "build/"),
    ("# a comment", "", None),
    ("   ", "sub/", None),
])
def test_nested_ignore_rules_become_root_patterns(line: str, base: str, expected: str | None) -> None:
    assert pristine._translate_ignore(base, line) == expected


def test_only_the_pristine_rules_hide_a_new_file(tmp_path: Path) -> None:
    sandbox, store, commit = _repo(tmp_path, PRISTINE)
    new = {
        "sub/a/x.log": "ignored by sub/.gitignore", "sub/only-here.txt": "ignored (anchored in sub)",
        "only-here.txt": "not ignored at the root", "x.log": "not ignored at the root",
        "build/out.bin": "ignored", "notes.tmp": "ignored", "src/__pycache__/a.pyc": "a tool cache",
        "hidden.txt": "the agent's own rule below must not hide this",
    }
    for rel, text in new.items():
        (sandbox / rel).parent.mkdir(parents=True, exist_ok=True)
        (sandbox / rel).write_text(text)
    (sandbox / ".git" / "info").mkdir(exist_ok=True)
    (sandbox / ".git" / "info" / "exclude").write_text("hidden.txt\nonly-here.txt\nx.log\n")
    assert gitsafe.changed_paths(sandbox, store, commit) == ["hidden.txt", "only-here.txt", "x.log"]
    files = gitsafe.tree_files(sandbox, store, commit)
    assert "build/keep.txt" in files and "hidden.txt" in files and "build/out.bin" not in files


def test_changes_git_cannot_see_are_changes(tmp_path: Path) -> None:
    sandbox, store, commit = _repo(tmp_path, PRISTINE)
    (sandbox / "build" / "keep.txt").write_text("edited under an ignored folder\n")
    (sandbox / "README.md").chmod(0o755)  # mode only
    os.remove(sandbox / "src" / "a.py")
    shutil.rmtree(sandbox / ".git")  # and no repository at all
    assert gitsafe.changed_paths(sandbox, store, commit) == ["README.md", "build/keep.txt", "src/a.py"]


def test_a_folder_swapped_for_a_symlink_is_a_change(tmp_path: Path) -> None:
    sandbox, store, commit = _repo(tmp_path, PRISTINE)
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(sandbox / "src", elsewhere)  # byte-identical, reached through a link
    shutil.rmtree(sandbox / "src")
    (sandbox / "src").symlink_to(elsewhere)
    assert gitsafe.changed_paths(sandbox, store, commit) == ["src", "src/a.py"]


def test_diff_shows_ignored_new_files_and_names_big_ones(tmp_path: Path) -> None:
    sandbox, store, commit = _repo(tmp_path, PRISTINE)
    (sandbox / ".gitignore").write_text("*\n")  # the agent ignores everything
    (sandbox / "new.txt").write_text("visible in the diff\n")
    (sandbox / "big.bin").write_bytes(b"x" * (gitsafe.DIFF_FILE_LIMIT + 1))
    patch = gitsafe.final_diff(sandbox, store, commit).decode()
    assert "visible in the diff" in patch and "+*" in patch
    assert f"not shown, larger than {gitsafe.DIFF_FILE_LIMIT} bytes: big.bin" in patch
