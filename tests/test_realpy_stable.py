"""realpy (issue 43): a seed's task and its twins do not depend on the machine's load or on luck. A candidate's
tests are judged by the CPU time they use (a busy loop: too slow; a sleep: hangs), the wall clock only a guard
whose stop is undecided and tried again; and two recordings of a suite's twins agree even when the tests make
their calls in another order in every process (a set holding None: its order follows an address)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.realpy import measure, twins
from agentic_eval.realpy.project import Project, ProjectError, SuiteRun

plant = importlib.import_module("agentic_eval.realpy.plant")  # (the package's `plant` is the function)

BUSY = "while True: pass"


def _python(code: str) -> list[str]:
    return [sys.executable, "-S", "-c", code]


def test_a_busy_loop_is_stopped_by_its_cpu_time(tmp_path: Path) -> None:
    done = measure.run(_python(BUSY), cwd=tmp_path, env={}, wall_limit=120, cpu_limit=0.5, idle_s=60)
    assert done.stopped == "cpu" and done.cpu_s > 0.5 and done.returncode is None


def test_cpu_of_a_child_counts_too(tmp_path: Path) -> None:
    """The pytest process may start others: the session's CPU time is what counts."""
    code = f"import subprocess, sys; subprocess.run([sys.executable, '-S', '-c', {BUSY!r}])"
    done = measure.run(_python(code), cwd=tmp_path, env={}, wall_limit=120, cpu_limit=0.5, idle_s=60)
    assert done.stopped == "cpu"


def test_a_sleeping_run_hangs_and_a_quick_one_ends(tmp_path: Path) -> None:
    slept = measure.run(_python("import time; time.sleep(120)"), cwd=tmp_path, env={}, wall_limit=120,
                        cpu_limit=60, idle_s=1)
    assert slept.stopped == "idle"
    quick = measure.run(_python("raise SystemExit(3)"), cwd=tmp_path, env={}, wall_limit=120, cpu_limit=60,
                        idle_s=60)
    assert (quick.stopped, quick.returncode) == ("", 3)


def test_the_wall_clock_guard_only_makes_a_run_undecided(tmp_path: Path) -> None:
    done = measure.run(_python("import time; time.sleep(120)"), cwd=tmp_path, env={}, wall_limit=0.5)
    assert done.stopped == "wall"


PROJECT = Project("toy", "1.0", "0" * 64, sources=("toy.py",), tests="tests")
BASE: dict[str, Any] = {"outcomes": {"tests/test_toy.py::test_a": "passed"}, "seconds": 50.0, "cpu": 1.0,
                        "cases": {}}


def _runs(monkeypatch: pytest.MonkeyPatch, stops: list[str]) -> list[dict[str, Any]]:
    """run_suite replaced: stopped as `stops` say in turn, then a run where test_a fails; the calls it got."""
    calls: list[dict[str, Any]] = []

    def fake(workdir: Path, project: Project, timeout: float, **kw: Any) -> SuiteRun:
        calls.append({"timeout": timeout, **kw})
        if len(calls) <= len(stops):
            return SuiteRun({}, {}, timeout, stopped=stops[len(calls) - 1])
        return SuiteRun({"tests/test_toy.py::test_a": "failed"}, {}, 1.0, cpu=0.5)

    monkeypatch.setattr(plant, "run_suite", fake)
    return calls


def test_a_candidate_is_judged_by_cpu_not_by_the_wall_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    files = {"toy.py": b"x = 1\n"}
    calls = _runs(monkeypatch, ["wall"])  # stopped by the guard once (a loaded machine): tried again, then valid
    verdict = plant._run_mutant(PROJECT, files, BASE)
    assert verdict["ok"] and verdict["failing"] == ["tests/test_toy.py::test_a"]
    limit = max(plant.CPU_FLOOR_S, plant.CPU_FACTOR * BASE["cpu"])  # from the pristine CPU time, not its 50 s wall
    assert all(c["cpu_limit"] == limit for c in calls) and calls[1]["timeout"] == 4 * calls[0]["timeout"]
    _runs(monkeypatch, ["cpu"])
    assert plant._run_mutant(PROJECT, files, BASE)["why"].startswith("too slow")
    _runs(monkeypatch, ["idle"])
    assert plant._run_mutant(PROJECT, files, BASE)["why"].startswith("hangs")
    _runs(monkeypatch, ["wall", "wall"])  # undecided twice: no verdict at all, one line
    with pytest.raises(ProjectError, match="too loaded to decide"):
        plant._run_mutant(PROJECT, files, BASE)


TOY = '''\
def describe(year, text, day):
    return f"{year}:{text}:{day}"


def first(values):
    return values[0]
'''

TOY_TEST = '''\
import toy

CASES = {(y, f"t{y}", None if y % 3 else y) for y in range(40)}  # its order follows hash(None): per process


def test_describe():
    for year, text, day in CASES:
        assert toy.describe(year, text, day)


def test_first():
    for year, text, day in CASES:
        assert toy.first([year, text]) == year
'''


def test_two_recordings_of_twins_agree(tmp_path: Path) -> None:
    files = {"toy.py": TOY.encode(), "tests/test_toy.py": TOY_TEST.encode()}
    first = twins._record(PROJECT, files, 120)
    second = twins._record(PROJECT, files, 120)
    assert first == second
    assert [t["function"] for t in first] == sorted(t["function"] for t in first)
    assert sum(t["function"] == "describe" for t in first) == twins.PER_FUNCTION  # 40 distinct calls, 30 kept


def test_the_hidden_file_holds_only_the_catching_tests() -> None:
    """The grader imports the hidden file on every grading: the other tests (thousands of lines in
    more-itertools) go; what the catching ones need stays."""
    source = ("import pytest\n\nX = 1\n\n\ndef helper():\n    return X\n\n\ndef test_a():\n    assert helper()\n\n\n"
              "@pytest.mark.parametrize('v', [1])\ndef test_b(v):\n    assert v\n\n\ndef test_c():\n    test_d()\n\n\n"
              "def test_d():\n    pass\n\n\nclass Base:\n    def test_e(self):\n        pass\n\n    def test_f(self):\n"
              "        pass\n\n\nclass TestSub(Base):\n    def setUp(self):\n        pass\n")
    out = plant.only_tests(source, {"test_a", "test_e"})
    assert "def test_a" in out and "def helper" in out and "X = 1" in out and "def test_e" in out
    assert "test_b" not in out and "parametrize" not in out and "test_f" not in out
    assert "def test_d" in out  # called by another test: kept
    assert "class TestSub(Base):" in out and "def setUp" in out


def test_a_candidate_is_decided_once_when_two_generators_want_it(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """validate's repeats of a seed make its sandbox at once: the second waits for the first's verdict; and a
    verdict an older version judged by the wall clock is decided again."""
    import threading
    import time

    from agentic_eval.realpy.mutate import Site
    from agentic_eval.realpy.project import save_json, state_root

    monkeypatch.setenv("AGENTIC_EVAL_CACHE", str(tmp_path))
    decided: list[str] = []

    def decide(*args: Any) -> dict[str, Any]:
        decided.append(threading.current_thread().name)
        time.sleep(0.3)  # (a test run: the other generator arrives meanwhile)
        return {"ok": False, "why": "0 test functions fail"}

    monkeypatch.setattr(plant, "_decide", decide)
    site = Site("compare", "toy.py", 1, 4, 1, 5, "<=")
    threads = [threading.Thread(target=plant.validate, args=(PROJECT, {}, site, BASE)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(decided) == 1
    save_json(state_root(PROJECT) / "validation.json", {site.id: {"ok": False, "why": "the suite timed out (60 s)"}})
    assert plant.validate(PROJECT, {}, site, BASE)["why"] == "0 test functions fail" and len(decided) == 2


SHAPES = '''\
import datetime


class Window:
    def __init__(self, items):
        self.items = list(items)

    def __getitem__(self, index):
        return self.items[1:][index]

    def total(self, scale=1):
        return sum(self.items) * scale


class Parser:
    def __init__(self, fmt):
        self.fmt = fmt

    def __repr__(self):
        return f"<Parser {self.fmt!r}>"

    def parse(self, text):
        return text.split(self.fmt)


def compile(fmt):
    return Parser(fmt)


def stamp(moment, sep="T"):
    return moment.isoformat(sep)
'''

SHAPES_TEST = '''\
import datetime

import toy


def test_shapes():
    assert toy.compile(",").parse("a,b") == ["a", "b"]
    w = toy.Window(iter([1, 2, 3, 4]))
    assert w[0:2] == [2, 3] and w.total() == 10
    zone = datetime.timezone(datetime.timedelta(hours=2))
    assert toy.stamp(datetime.datetime(2024, 1, 2, 3, 4, tzinfo=zone)) == "2024-01-02T03:04:00+02:00"
'''


def test_twins_reach_methods_slices_iterators_aware_times_and_leave_defaults_out() -> None:
    """What catching tests call beyond a module-level function with plain arguments: a method of what a call returned
    (parse.compile(fmt).parse(s)) or of a class the test made from an iterator over a list, a slice, an aware
    datetime; and an argument at its default is left out, so a default the seed changed is what the replay calls."""
    files = {"toy.py": SHAPES.encode(), "tests/test_shapes.py": SHAPES_TEST.encode()}
    got = {(t["function"], t.get("method")): t for t in twins._record(PROJECT, files, 120)}
    assert got[("compile", "parse")]["method_args"] == ["a,b"] and got[("compile", "parse")]["returns"] == ["a", "b"]
    window = got[("Window", "__getitem__")]
    assert window["args"] == [{"__realpy_object__": ["builtins", "iter", [[1, 2, 3, 4]]]}]
    assert window["method_args"] == [{"__realpy_object__": ["builtins", "slice", [0, 2, None]]}]
    assert window["returns"] == [2, 3]
    assert got[("Window", "total")]["method_args"] == [] and got[("Window", "total")]["returns"] == 10
    stamp = got[("stamp", None)]
    assert stamp["returns"] == "2024-01-02T03:04:00+02:00" and len(stamp["args"]) == 1  # sep="T" left out
    made = stamp["args"][0]["__realpy_object__"]
    assert made[:2] == ["datetime", "datetime"] and made[2][-1]["__realpy_object__"][1] == "timezone"


def test_a_run_is_measured_in_a_process_that_holds_many_files_open(tmp_path: Path) -> None:
    """A long test session holds more than 1,024 file descriptors at times: the wait for a run's end must not use
    select(), which refuses a descriptor number over 1,023 (it failed the whole suite's realpy tests once)."""
    import os
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"the hard limit on open files is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        quick = measure.run(_python("raise SystemExit(3)"), cwd=tmp_path, env={}, wall_limit=120, cpu_limit=60,
                            idle_s=60)
        assert (quick.stopped, quick.returncode) == ("", 3)
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
