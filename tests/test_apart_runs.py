"""Issue 39's grading time: runs of the model's code side by side, each on a fresh copy of its own (grading/sealed.py's
`apart` requests, gradelib.runs_apart: mutation testing's runs, the ops twins' groups), and the graders' bytecode
compiled once by the harness (grading/bytecode.py). The speed itself is benchmarks/bench_twins_grading.py's."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from agentic_eval.confine.host import BwrapBackend, LocalBackend, bwrap_problem
from agentic_eval.grading import bytecode
from agentic_eval.grading.sealed import CodeHost, decode, encode
from tests.helpers import Grader, gradelib, write

pytestmark = pytest.mark.usefixtures("unfinished_graders_cleared")


def _host(tmp_path: Path, backend: object, lanes: int = 2) -> CodeHost:
    snapshot = tmp_path / "snap"
    write(snapshot, {"a.txt": "a\n"})
    return CodeHost(snapshot, tmp_path / "host", backend, lanes=lanes)  # type: ignore[arg-type]


def test_an_apart_run_gets_a_fresh_copy_of_its_own_at_a_random_path_and_leaves_the_work_copy(tmp_path: Path) -> None:
    """The work copy's path, wherever the request names it (argv, a file's bytes), is the run's own copy's; what
    comes back (output, files collected) names the work copy again."""
    host = _host(tmp_path, LocalBackend())
    try:
        host.run({"argv": ["sh", "-c", "echo changed > a.txt"]})
        script = f'cat a.txt; echo x >> a.txt; pwd; echo "{host.work}"; tr / : < "{host.scratch}/given"; pwd > said'
        got = [host.run({"argv": ["sh", "-c", script], "apart": True,
                         "files": {f"{host.scratch}/given": encode(f"{host.work}\n".encode())},
                         "collect": [f"{host.scratch}/given", "said", "a.txt"]}) for _ in range(2)]
        wheres = set()
        for response in got:
            lines = response["output"].splitlines()
            assert lines[:3] == ["a", str(host.work), str(host.work)]  # moved, and back in the output
            wheres.add(lines[3].replace(":", "/"))
            assert sorted(response["files"]) == sorted([f"{host.scratch}/given", "said", "a.txt"])
            assert decode(response["files"]["a.txt"]) == b"a\nx\n"
            assert decode(response["files"]["said"]) == f"{host.work}\n".encode()
        assert len(wheres) == 2 and not any(w.startswith(str(host.work)) for w in wheres)  # not the work copy's
        assert (host.work / "a.txt").read_text() == "changed\n"
        assert list((host.folder / "lanes").iterdir()) == []  # each copy removed
    finally:
        host.close()


def test_apart_runs_run_side_by_side(tmp_path: Path) -> None:
    """Two runs that each wait for the other's mark (unconfined: the local backend lets them see it) both end:
    they ran at once. Bounded: a run alone would give up after about 20 s."""
    host = _host(tmp_path, LocalBackend())
    marks = tmp_path / "marks"
    marks.mkdir()
    wait = f'touch "{marks}/$1"; i=0; while [ ! -e "{marks}/$2" ] && [ $i -lt 400 ]; do sleep 0.05; ' \
           f'i=$((i+1)); done; [ -e "{marks}/$2" ]'
    responses: dict[str, dict[str, object]] = {}

    def run(me: str, other: str) -> None:
        responses[me] = host.run({"argv": ["sh", "-c", wait, "sh", me, other], "apart": True, "timeout": 60})

    try:
        threads = [threading.Thread(target=run, args=pair) for pair in (("one", "two"), ("two", "one"))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(90)
        assert [responses[k]["exit"] for k in ("one", "two")] == [0, 0]
    finally:
        host.close()


@pytest.mark.skipif(bwrap_problem() is not None, reason=f"bwrap: {bwrap_problem()}")
def test_a_confined_apart_run_sees_no_other_copy(tmp_path: Path) -> None:
    host = _host(tmp_path, BwrapBackend())
    try:
        host.run({"argv": ["true"]})
        response = host.run({"argv": ["sh", "-c", f'ls -A "{host.folder}/lanes"; ls -A "{host.folder}"'],
                             "apart": True})
        lanes, top = response["output"].split("\n", 1)[0], response["output"].split("\n", 1)[1].split()
        assert response["exit"] == 0 and len(lanes) == 16 and top == ["lanes"]  # its own copy, nothing else
    finally:
        host.close()


def test_runs_apart_starts_nothing_after_the_check_that_stops_it(tmp_path: Path) -> None:
    write(tmp_path / "sandbox", {"a.txt": "a\n"})
    g = Grader(tmp_path / "sandbox")
    ran = tmp_path / "ran"
    ran.mkdir()
    runs = [{"argv": ["sh", "-c", f'touch "{ran}/{i}"; exit {1 if i == 0 else 0}']} for i in range(8)]
    results = gradelib.runs_apart(runs, stop=lambda i, r: r.exit_code != 0, sandbox=g.sandbox)
    width = gradelib.lanes(g.sandbox)
    assert results[0] is not None and results[0].exit_code == 1 and results[1:] == [None] * 7
    assert "0" in os.listdir(ran) and len(os.listdir(ran)) <= width  # at most the ones in flight with the first
    every = gradelib.runs_apart(runs[1:4], sandbox=g.sandbox)
    assert [r.exit_code for r in every if r is not None] == [0, 0, 0]


def test_the_graders_bytecode_is_compiled_once_and_again_when_stale(tmp_path: Path) -> None:
    folder = tmp_path / "graders"
    write(folder, {"helper.py": "X = 1\n", "broken.py": "def (:\n", "notes.txt": "x"})
    assert bytecode.compile_folder(folder) == 1 and bytecode.compile_folder(folder) == 0
    (folder / "helper.py").write_text("X = 22\n")
    assert bytecode.compile_folder(folder) == 1
    assert sorted(os.listdir(folder / "__pycache__")) == [f"helper.{__import__('sys').implementation.cache_tag}.pyc"]


def test_a_large_tree_gets_one_apart_run_at_a_time(tmp_path: Path) -> None:
    """Copies side by side must not fill a disk one copy would not: past the limits, an apart run is a fresh run of
    the work copy (its path is the work copy's)."""
    from agentic_eval.grading import sealed

    host = _host(tmp_path, LocalBackend())
    try:
        assert sealed._tree_within(host.snapshot, 1 << 20, 10) and not sealed._tree_within(host.snapshot, 1, 10)
        host._small = False
        response = host.run({"argv": ["sh", "-c", "pwd -P | tr / :"], "apart": True})
        assert response["output"].strip().replace(":", "/") == str(host.work.resolve())
    finally:
        host.close()
