"""Which tests run which lines of a real project: the pristine suite traced once, so a mutant runs only its tests.

A mutation inside a function can change only the tests that execute the changed code (the suites are run
deterministically: PYTHONHASHSEED fixed, no plugins), so validating a candidate needs the tests that cover its
lines, not the whole suite; a candidate no test runs is rejected without a run. Lines executed outside any test
(imports, collection, module-level calls) could change every test: a candidate there runs the whole suite. A
`wrong_default` changes what calls of its function see, so its tests are those that run the function's body.
Cached per project in `coverage.json`.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from agentic_eval.realpy.mutate import Site
from agentic_eval.realpy.project import Project, load_json, locked, state_root, traced_suite

MAX_SELECTED = 200
"""a candidate covered by more test functions than this runs the whole suite (one argv, one collection)"""

_TRACER = r'''
import json, os, sys, threading

_OUT = os.environ["REALPY_COVER_OUT"]
_WORK = os.environ["REALPY_WORK"]
_SOURCES = tuple(json.loads(os.environ["REALPY_SOURCES"]))
_OUTSIDE = set()
_HITS = {}
_sink = [_OUTSIDE]


def _local(frame, event, arg):
    if event == "line":
        _sink[0].add((frame.f_code.co_filename, frame.f_lineno))
    return _local


def _global(frame, event, arg):
    if frame.f_code.co_filename.startswith(_SOURCES):
        _sink[0].add((frame.f_code.co_filename, frame.f_lineno))
        return _local
    return None


sys.settrace(_global)
threading.settrace(_global)


def pytest_runtest_logstart(nodeid, location):
    _sink[0] = _HITS.setdefault(nodeid.split("[")[0], set())


def pytest_runtest_logfinish(nodeid, location):
    _sink[0] = _OUTSIDE


def pytest_sessionfinish(session):
    sys.settrace(None)
    threading.settrace(None)
    rel = lambda hits: sorted({f"{os.path.relpath(f, _WORK)}:{n}" for f, n in hits})
    with open(_OUT, "w") as out:
        json.dump({"tests": {t: rel(h) for t, h in _HITS.items()}, "outside": rel(_OUTSIDE)}, out)
'''


def record(project: Project, files: dict[str, bytes], timeout: float = 900) -> dict[str, Any]:
    """{"tests": [test function ids], "lines": {"path:line": [indices into tests]}, "outside": ["path:line"]};
    cached. Empty ({}) when the traced run gave no report: every candidate then runs the whole suite."""
    root = state_root(project)
    with locked(root / ".coverage.lock"):
        cached = load_json(root / "coverage.json")
        if "lines" in cached:
            return cached
        data = _record(project, files, timeout)
        tmp = root / f"coverage.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(data), encoding="utf-8")
        tmp.replace(root / "coverage.json")
        return data


def _record(project: Project, files: dict[str, bytes], timeout: float) -> dict[str, Any]:
    try:
        def variables(work: Path, aux: Path) -> dict[str, str]:
            return {"REALPY_COVER_OUT": str(aux / "cover.json"), "REALPY_WORK": str(work)}

        with traced_suite(project, files, "realpy_cover", _TRACER, timeout, variables) as run:
            raw = json.loads((run.aux / "cover.json").read_text())
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return {"tests": [], "lines": {}, "outside": [], "failed": True}
    tests = sorted(raw["tests"])
    lines: dict[str, list[int]] = {}
    for index, test in enumerate(tests):
        for key in raw["tests"][test]:
            lines.setdefault(key, []).append(index)
    return {"tests": tests, "lines": lines, "outside": raw["outside"]}


def _lines(site: Site, source: str) -> range:
    """The lines whose execution the site's change can alter: its own, or for a default its function's body."""
    if site.kind == "wrong_default":
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                    (d.lineno, d.col_offset) == (site.line, site.col)
                    for d in [*node.args.defaults, *(k for k in node.args.kw_defaults if k is not None)]):
                return range(node.body[0].lineno, (node.end_lineno or node.body[0].lineno) + 1)
    return range(site.line, site.end_line + 1)


def tests_for(coverage: dict[str, Any], site: Site, source: str, known: set[str]) -> list[str] | None:
    """The test functions that run the site's code (sorted; [] when none does), or None when the whole suite
    must run: the code also runs outside tests, the traced run failed, a covering test is not one the baseline
    knows, or too many cover it."""
    if not coverage.get("lines") or coverage.get("failed"):
        return None
    outside = set(coverage.get("outside") or ())
    tests: list[str] = coverage["tests"]
    chosen: set[str] = set()
    for line in _lines(site, source):
        key = f"{site.path}:{line}"
        if key in outside:
            return None
        chosen.update(tests[i] for i in coverage["lines"].get(key, ()))
    if len(chosen) > MAX_SELECTED or not chosen <= known:
        return None
    return sorted(chosen)
