"""The pristine commit written without git (packs/gitwrite.py) is the one real git makes, and what the
harness remembers of it is what the store says."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from agentic_eval.grading import gitsafe
from agentic_eval.packs import pristine
from agentic_eval.packs.sandbox import _git_commit, _pristine_commit, materialize_sandbox
from agentic_eval.packs.task import load_task


def _tree(root: Path) -> None:
    root.mkdir()
    (root / "a.txt").write_text("hello\n")
    (root / "b" / "c").mkdir(parents=True)
    (root / "b" / "x.py").write_text("print(1)\n")
    os.chmod(root / "b" / "x.py", 0o755)
    (root / "b" / "c" / "d.bin").write_bytes(b"\x00\x01\r\nbin")
    (root / "empty").mkdir()
    (root / "b-").mkdir()  # sorts between the folder b and b.txt: git's tree order
    (root / "b-" / "y").write_text("y")
    (root / "b.txt").write_text("dot")
    (root / "link").symlink_to("a.txt")
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    (root / "sub.gitignore").write_text("not an ignore file")
    (root / "z.log").write_text("ignored, and committed all the same\n")
    (root / "\u00fc.txt").write_text("unicode\n")


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def test_written_commit_is_gits_own(tmp_path: Path) -> None:
    _tree(tmp_path / "fast")
    _tree(tmp_path / "git")
    commit, found = _pristine_commit(tmp_path / "fast")
    assert found is not None  # the fast path took it
    assert commit == _git_commit(tmp_path / "git")
    for name in ("fast", "git"):
        root = tmp_path / name
        _git(root, "fsck", "--strict", "--full")
        assert _git(root, "status", "--porcelain", "--ignored") == ""  # the index matches the tree
        assert _git(root, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    assert _git(tmp_path / "fast", "ls-files", "-s") == _git(tmp_path / "git", "ls-files", "-s")
    (pack,) = (tmp_path / "fast" / ".git" / "objects" / "pack").glob("*.pack")  # one pack, no loose object
    _git(tmp_path / "fast", "verify-pack", str(pack))
    assert "count: 0" in _git(tmp_path / "fast", "count-objects", "-v")
    assert _git(tmp_path / "fast", "log", "--format=%an %ae %ad %s", "--date=raw") == \
        _git(tmp_path / "git", "log", "--format=%an %ae %ad %s", "--date=raw")
    # what the harness remembers is what git lists
    listed = {}
    ls_tree = _git(tmp_path / "git", "-c", "core.quotePath=false", "ls-tree", "-r", "-l", "--full-tree", "HEAD")
    for line in ls_tree.splitlines():
        meta, path = line.split("\t")
        mode, _, oid, size = meta.split()
        listed[path] = (mode, oid, int(size))
    assert found.entries == listed
    assert found.gitignores == {".gitignore": b"*.log\nbuild/\n"}
    # an agent commits on top with git as usual, without maintenance
    (tmp_path / "fast" / "new.txt").write_text("x")
    _git(tmp_path / "fast", "add", "new.txt")
    _git(tmp_path / "fast", "commit", "-q", "-m", "agent")
    assert _git(tmp_path / "fast", "config", "maintenance.auto").strip() == "false"


def test_trees_git_must_commit_itself(tmp_path: Path) -> None:
    """Attributes may convert contents, and a nested repository is a gitlink: git commits those."""
    for name, make in (("attrs", lambda r: (r / ".gitattributes").write_text("*.txt text eol=lf\n")),
                       ("nested", lambda r: (_git(r / "b", "init", "-q"), _git(
                           r / "b", "-c", "user.name=n", "-c", "user.email=e@x", "commit", "-q", "--allow-empty",
                           "-m", "nested")))):
        root = tmp_path / name
        _tree(root)
        make(root)
        commit, found = _pristine_commit(root)
        assert found is None
        assert _git(root, "rev-parse", "HEAD").strip() == commit
    assert _git(tmp_path / "attrs", "status", "--porcelain") == ""
    # a generator's own history (docs/task-format.md) is kept, its config too, the pristine commit on top
    root = tmp_path / "history"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "core.abbrev", "12")
    (root / "old.txt").write_text("old\n")
    _git(root, "add", "old.txt")
    _git(root, "-c", "user.name=g", "-c", "user.email=g@x", "commit", "-q", "-m", "the generator's")
    (root / "new.txt").write_text("left uncommitted\n")
    commit, found = _pristine_commit(root)
    assert found is None
    assert _git(root, "log", "--format=%H %s").splitlines()[1].endswith("the generator's")
    assert _git(root, "rev-parse", "HEAD").strip() == commit and _git(root, "status", "--porcelain") == ""
    assert _git(root, "config", "core.abbrev").strip() == "12"
    assert _git(root, "config", "user.email").strip() == "agent@sandbox.invalid"
    assert _git(tmp_path / "nested", "ls-files", "-s", "b").startswith("160000 ")  # a gitlink, as git adds it


def test_scratch_from_the_stored_index_diffs_as_read_tree(mini_pack: Path, tmp_path: Path) -> None:
    sb = materialize_sandbox(load_task(mini_pack / "answer-file"), 3, tmp_path / "s")
    assert sb.pristine_store is not None and (sb.pristine_store / pristine.PRISTINE_INDEX).is_file()
    _git(sb.pristine_store, "--git-dir", str(sb.pristine_store), "fsck", "--strict", sb.pristine_commit)
    (sb.path / "README.md").write_text("changed\n")
    (sb.path / "config" / "settings.ini").unlink()
    (sb.path / "new.txt").write_text("new\n")
    fast = gitsafe.final_diff(sb.path, sb.pristine_store, sb.pristine_commit)
    (sb.pristine_store / pristine.PRISTINE_INDEX).unlink()  # now through `git read-tree`
    pristine._PRISTINE_CACHE.clear()  # and `git ls-tree`
    assert gitsafe.final_diff(sb.path, sb.pristine_store, sb.pristine_commit) == fast
    assert b"+new" in fast and b"deleted file mode" in fast and b"+changed" in fast


def test_model_repo_checks_refuse_special_files_in_git_only(mini_pack: Path, tmp_path: Path) -> None:
    """`sandbox_git` walks only .git for commands that read no work tree: a FIFO there (or .git itself a FIFO)
    is refused before git runs; one in the work tree stops `status` only."""
    import pytest

    sb = materialize_sandbox(load_task(mini_pack / "answer-file"), 0, tmp_path / "s")
    os.mkfifo(sb.path / "pipe")
    check = ["diff-index", "--cached", "--name-only", f"{sb.pristine_commit}^{{commit}}", "--"]
    assert gitsafe.sandbox_git(sb.path, check) == ""
    with pytest.raises(gitsafe.GitError, match="a FIFO: pipe"):
        gitsafe.sandbox_git(sb.path, ["status", "--porcelain"])
    os.mkfifo(sb.path / ".git" / "objects" / "ab")
    with pytest.raises(gitsafe.GitError, match="a FIFO: .git/objects/ab"):
        gitsafe.sandbox_git(sb.path, check)
    os.rename(sb.path / ".git", tmp_path / "moved")
    os.mkfifo(sb.path / ".git")
    with pytest.raises(gitsafe.GitError, match="a FIFO: .git"):
        gitsafe.sandbox_git(sb.path, check)
