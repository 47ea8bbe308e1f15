"""Sandboxes: deterministic trees and commits; generator lookup errors."""

from __future__ import annotations

from pathlib import Path

import git
import pytest

from agentic_eval.errors import SandboxError
from agentic_eval.packs.sandbox import PRISTINE_MESSAGE, find_generator, materialize_sandbox
from agentic_eval.packs.task import load_task


def _tree_bytes(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).parts[0] != ".git"
    }


def test_same_seed_same_tree_and_commit(mini_pack: Path, tmp_path: Path) -> None:
    task = load_task(mini_pack / "answer-file")
    a = materialize_sandbox(task, 5, tmp_path / "a")
    b = materialize_sandbox(task, 5, tmp_path / "b")
    assert a.pristine_commit == b.pristine_commit
    assert _tree_bytes(a.path) == _tree_bytes(b.path)
    assert a.variables == b.variables == {**a.variables, "seed": 5}


def test_other_seed_varies_names_and_constants(mini_pack: Path, tmp_path: Path) -> None:
    task = load_task(mini_pack / "answer-file")
    seen = {materialize_sandbox(task, s, tmp_path / str(s)).variables["port"] for s in range(4)}
    assert len(seen) > 1


def test_pristine_commit_is_clean_and_fixed(mini_pack: Path, tmp_path: Path) -> None:
    task = load_task(mini_pack / "answer-file")
    sb = materialize_sandbox(task, 0, tmp_path / "s")
    repo = git.Repo(sb.path)
    assert not repo.is_dirty(untracked_files=True)
    head = repo.head.commit
    assert head.message.strip() == PRISTINE_MESSAGE
    assert head.hexsha == sb.pristine_commit
    assert repo.active_branch.name == "main"
    # an agent can commit inside the sandbox without a global git identity
    (sb.path / "new.txt").write_text("x")
    repo.index.add(["new.txt"])
    repo.git.commit("-m", "agent commit")
    assert repo.head.commit.author.email.endswith("@sandbox.invalid")


def test_unknown_generator(mini_pack: Path) -> None:
    with pytest.raises(SandboxError, match="unknown sandbox generator 'nope'"):
        find_generator("nope", mini_pack)


def test_generator_failure_is_a_sandbox_error(mini_pack: Path, tmp_path: Path) -> None:
    (mini_pack / "sandboxes" / "broken.py").write_text("def generate(root, seed, params):\n"
                                                       "    raise ValueError('boom')\n")
    toml = mini_pack / "answer-file" / "task.toml"
    toml.write_text(toml.read_text().replace('generator = "tiny"', 'generator = "broken"'))
    task = load_task(mini_pack / "answer-file")
    with pytest.raises(SandboxError, match="generator 'broken' failed for seed 0: ValueError: boom"):
        materialize_sandbox(task, 0, tmp_path / "s")


def test_refuses_non_empty_folder(mini_pack: Path, tmp_path: Path) -> None:
    task = load_task(mini_pack / "answer-file")
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "x").write_text("x")
    with pytest.raises(SandboxError, match="not empty"):
        materialize_sandbox(task, 0, tmp_path / "s")
