"""A tree the model leaves, however deep or large, ends in a scored outcome (issue 39, "no dodge left").

A folder nested 900 deep used to make the code host's recursive copy raise RecursionError (reported as the
harness's fault: any graded trial became an unscored grader_error, an impossible task's cheat included), and
with --keep-sandboxes on docker it ended the whole run with no record; 120,000 small files made the snapshot
quadratic. Real runs through the runner (the built-in agent against a scripted model on 127.0.0.1, bwrap or
docker), and the tree functions alone on trees past what the kernel takes as a path."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.trees import copy_tree, make_deep_tree, remove_tree, walk

REPO = Path(__file__).resolve().parent.parent
DEEP = "python3 -c \"import os\nfor _ in range({n}):\n    os.mkdir('d'); os.chdir('d')\nopen('f.txt', 'w').write('x')\""
"""A bash command of the model's: a chain of `n` folders under the working directory."""


def test_copy_walk_and_remove_take_any_depth(tmp_path: Path) -> None:
    """900 deep copies whole; 2,500 deep (past PATH_MAX) copies to where the kernel stops, names the rest, and
    is removed all the same; a FIFO and a link are left out and kept as a link."""
    for depth in (900, 2500):
        source = tmp_path / f"src{depth}"
        source.mkdir()
        make_deep_tree(source, depth)
        os.mkfifo(source / "pipe")
        os.symlink("/etc/hostname", source / "link")
        skipped = copy_tree(source, tmp_path / f"dst{depth}")
        assert "pipe" in skipped and os.readlink(tmp_path / f"dst{depth}" / "link") == "/etc/hostname"
        if depth == 900:
            assert skipped == ["pipe"]
            assert (tmp_path / "dst900" / "/".join(["d"] * 900) / "f.txt").read_text() == "deep\n"
            assert sum(1 for _ in walk(tmp_path / "dst900")) == 901
        else:
            (far,) = [s for s in skipped if s != "pipe"]
            assert far.endswith("levels) (file name too long)") and len(far) < 300
        remove_tree(source)
        remove_tree(tmp_path / f"dst{depth}")
        assert not source.exists() and not (tmp_path / f"dst{depth}").exists()


def _run(tmp_path: Path, fake: Any, tasks: Path, *extra: str) -> dict[str, Any]:
    from tests.helpers import run_cli

    code, data = run_cli("run", "--model", "fake-model", "--base-url", fake.base_url, "--tasks", str(tasks),
                         "--run-dir", str(tmp_path / "runs"), "--json", "--agent-opt", "max_retries=0", *extra)
    (trial,) = data["trials"]
    return dict(trial)


@pytest.mark.parametrize(("task", "depth"), [("fix-failing-test", 900), ("impossible-format-money", 900),
                                            ("fix-failing-test", 2500)])
def test_a_deep_folder_is_graded_on_bwrap(tmp_path: Path, task: str, depth: int) -> None:
    """The model leaves a folder 900 deep (2,500: past PATH_MAX) and does nothing else: a scored fail (the grader
    ran the model's code on a copy of the tree), never a grader_error nor a harness error; the snapshot names the
    deep file (past PATH_MAX: the folder where the harness had to stop)."""
    from agentic_eval.confine.host import bwrap_problem
    from agentic_eval.testing import FakeEndpoint
    from tests.helpers import commands_then_done

    if bwrap_problem():
        pytest.skip(bwrap_problem())
    pack = REPO / "tasks" / ("impossible" if task.startswith("impossible") else "core")
    with FakeEndpoint(responder=commands_then_done([DEEP.format(n=depth)])) as fake:
        trial = _run(tmp_path, fake, pack, "--task", task)
    assert (trial["outcome"], trial["grader_verdict"], trial["fault"]) == ("fail", "fail", ""), trial
    diff = (tmp_path / "runs" / trial["run_id"] / trial["files"]["diff"]).read_text()
    assert ("/".join(["d"] * 900) + "/f.txt" in diff) if depth == 900 else "# not shown, a folder the harness" in diff


@pytest.fixture(scope="module")
def engine() -> Any:
    from tests.helpers import docker_engine

    yield from docker_engine("trees")


def test_a_900_deep_folder_with_keep_sandboxes_on_docker(engine: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """On docker with --keep-sandboxes the same tree is graded (a scored fail), the run goes on to its record and
    its end, and the sandbox is kept with the deep file in it."""
    from agentic_eval.testing import FakeEndpoint
    from tests.helpers import commands_then_done

    monkeypatch.setenv("DOCKER_HOST", engine)
    with FakeEndpoint(responder=commands_then_done([DEEP.format(n=900)])) as fake:
        trial = _run(tmp_path, fake, REPO / "tasks" / "core", "--task", "fix-failing-test", "--sandbox", "docker",
                     "--keep-sandboxes")
    assert (trial["outcome"], trial["grader_verdict"], trial["fault"]) == ("fail", "fail", ""), trial
    kept = tmp_path / "runs" / trial["run_id"] / "trials"
    (sandbox,) = kept.glob("*/sandbox")
    assert (sandbox / "/".join(["d"] * 900) / "f.txt").read_text() == "x"


def _many_files(tmp_path: Path, files: int) -> tuple[Path, Path, str]:
    from agentic_eval.packs import pristine
    from agentic_eval.packs.sandbox import commit_pristine, pristine_store_for

    root = tmp_path / "sandbox"
    root.mkdir()
    (root / "app.py").write_text("VALUE = 1\n")
    commit = commit_pristine(root)
    store = pristine_store_for(root)
    if not (store / "HEAD").exists():
        pristine.save_pristine(root, store)
    (root / "app.py").write_text("VALUE = 2\n")
    for i in range(files):
        folder = root / "junk" / f"f{i // 500}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"n{i}.txt").write_bytes(b"%d\n" % i)
    return root, store, commit


def test_a_tree_of_many_files_snapshots_whole_and_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """5,000 new files (benchmarks/snapshot_size.py carries 120,000): tree.json lists every one, diff.patch shows
    the changed pristine file first and the first new ones up to its limit, and counts the rest in a note."""
    import json

    from agentic_eval.grading import gitsafe
    from agentic_eval.grading.snapshot import take_snapshot

    monkeypatch.setattr(gitsafe, "DIFF_COUNT_LIMIT", 100)
    root, store, commit = _many_files(tmp_path, 5000)
    out = tmp_path / "out"
    out.mkdir()
    files = take_snapshot(root, store, commit, out)
    tree = json.loads(files["tree"].read_text())
    assert sum(1 for e in tree["entries"] if e["path"].startswith("junk/") and e["type"] == "file") == 5000
    diff = files["diff"].read_text()
    assert "# not shown, 4901 more changed paths past the first 100 (e.g. junk/" in diff
    assert diff.count("diff --git") == 100 and "+VALUE = 2" in diff


def test_a_snapshot_out_of_time_is_the_models_scored_fail(tmp_path: Path) -> None:
    """The snapshot's time bound: a tree not recorded in time is one line naming the model's tree, which the trial
    records as its scored fail."""
    from agentic_eval.grading.remains import bounded_snapshot

    root, store, commit = _many_files(tmp_path, 2000)
    out = tmp_path / "out"
    out.mkdir()
    why = bounded_snapshot(root, store, commit, out, timeout_s=0.0)
    assert isinstance(why, str) and "could not be recorded in 0s" in why and "too large" in why
    again = tmp_path / "again"
    again.mkdir()
    assert isinstance(bounded_snapshot(root, store, commit, again), dict)
