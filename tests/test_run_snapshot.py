"""The runner records what the agent left (diff.patch and tree.json) before anything else runs on the tree: a
grader, or the model's code run by it, that changes or erases files cannot change the record. Real runs of the
oracle agent over copies of the mini task, with graders and fixes that do what a forgery would."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from tests.helpers import make_pack, run_cli

# A grader that "cleans up" after itself: it rewrites the answer, adds a file, deletes a pristine one, then
# passes. Whatever it manages to do to the tree, the record must show the agent's tree.
ERASING_GRADER = """
import os
from pathlib import Path
for name, text in (("answer.txt", "rewritten by the grader\\n"), ("grader_was_here.txt", "x\\n")):
    try:
        Path(name).write_text(text)
    except OSError:
        pass
try:
    os.remove("config/settings.ini")
except OSError:
    pass
raise SystemExit(0)
"""


def _oracle(pack: Path, runs: Path) -> tuple[dict[str, Any], Path]:
    code, data = run_cli("run", "--model", "m", "--agent", "oracle", "--tasks", str(pack), "--run-dir", str(runs),
                         "--json")
    (trial,) = data["trials"]
    return trial, runs / data["run_id"]


def _manifest(path: Path) -> dict[str, dict[str, Any]]:
    data = json.loads(path.read_text())
    assert data["format_version"] == 1
    return {e["path"]: e for e in data["entries"]}


def test_the_diff_and_tree_are_the_agents_whatever_the_grader_does(mini_pack: Path, tmp_path: Path) -> None:
    pack = make_pack(mini_pack, 1)
    (pack / "t0" / "grade.py").write_text(ERASING_GRADER)
    trial, run_dir = _oracle(pack, tmp_path / "runs")
    assert trial["outcome"] == "pass"
    diff = (run_dir / trial["files"]["diff"]).read_text()
    assert "+port is " in diff and "rewritten by the grader" not in diff
    assert "grader_was_here" not in diff and "config/settings.ini" not in diff
    tree = _manifest(run_dir / trial["files"]["tree"])
    answer = tree["answer.txt"]
    expected = diff.split("+port is ", 1)[1].split("\n", 1)[0]
    assert answer["type"] == "file" and answer["sha256"] == hashlib.sha256(f"port is {expected}\n".encode()).hexdigest()
    assert "grader_was_here.txt" not in tree and tree["config/settings.ini"]["type"] == "file"
    assert tree[".git"]["type"] == "dir" and tree[".git/objects"]["summed"]["files"] > 0
    assert not any(p.startswith(".git/objects/") for p in tree)


def test_special_files_left_by_the_agent_are_named_and_the_rest_is_recorded(mini_pack: Path, tmp_path: Path) -> None:
    pack = make_pack(mini_pack, 1)
    solve = pack / "t0" / "solve.sh"
    solve.write_text(solve.read_text() + "mkfifo pipe\nln -s /dev/zero zero\n"
                     "python3 -c \"import socket; socket.socket(socket.AF_UNIX).bind('svc.sock')\"\n")
    trial, run_dir = _oracle(pack, tmp_path / "runs")
    assert trial["outcome"] == "pass", trial["detail"]
    diff = (run_dir / trial["files"]["diff"]).read_text()
    assert diff.startswith("# not shown, a FIFO: pipe\n# not shown, a socket: svc.sock\n")
    assert "+port is " in diff and "+/dev/zero" in diff
    tree = _manifest(run_dir / trial["files"]["tree"])
    assert tree["pipe"]["type"] == "fifo" and tree["svc.sock"]["type"] == "socket"
    assert tree["zero"] == {"path": "zero", "mode": "0777", "type": "symlink", "target": "/dev/zero"}
