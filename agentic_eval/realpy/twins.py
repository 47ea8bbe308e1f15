"""Twin checks for a real project's suite: its tests' calls into the project, replayed and judged in the grader.

The pristine suite runs once under a profiler that records every call a test makes directly into a module-level
function of the project whose arguments are plain data (numbers, strings, None, lists and dicts of them) or a
naive date, datetime, time or timedelta, or a Decimal (recorded as how to make it again): per function the 40
distinct calls whose text hashes lowest, so the same calls whatever order the tests ran them in, listed sorted.
Each recorded call is then made three times in a fresh process of the pristine code; what it returns (an iterator
read into a list) or raises, when plain and the same every time, is its expected outcome; an object that comes back
(a date, a duration, a parse result) is judged by its repr, when that is the same every time and holds no address.
The
grader makes the same calls in the model's code, apart from it, and compares what comes back itself (gradelib's
make_calls), so no report of a test run, forged or not, decides them. Cached per project in `twins.json`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from agentic_eval.realpy.project import Project, load_json, locked, save_json, state_root, traced_suite

PER_FUNCTION = 30
REPLAYS = 3
"""fresh processes each recorded call is made in: it is kept only when all give the same outcome (an outcome
that follows an address, e.g. a set holding None, differs between processes)"""
FORMAT = 4
"""twins.json's format: 2 added objects judged by their repr, 3 dates, times, durations and decimals among the
arguments, 4 the calls sampled whatever the tests' order and replayed three times (an older file is recorded
again)"""
MAX_TWINS = 400

_TRACER = r'''
import bisect, hashlib, json, math, os, sys

_KEEP = 40
_OUT = os.environ["REALPY_TWIN_OUT"]
_SOURCES = tuple(json.loads(os.environ["REALPY_SOURCES"]))
_TESTS = os.environ["REALPY_TESTS"]
_SEEN = {}


def _plain(value, depth=0):
    if depth > 4:
        return False
    if value is None or type(value) in (bool, int, str):
        return not (type(value) is str and len(value) > 200) and not (type(value) is int and abs(value) > 2**53)
    if type(value) is float:
        return math.isfinite(value)
    if type(value) is list:
        return len(value) <= 50 and all(_plain(v, depth + 1) for v in value)
    if type(value) is dict:
        return len(value) <= 20 and all(type(k) is str and _plain(v, depth + 1) for k, v in value.items())
    return False


_OBJECT = "__realpy_object__"


def _arg(value):
    """A plain value as is; a naive date, datetime, time or timedelta, or a Decimal, as how to make it again."""
    import datetime, decimal
    kind = type(value)
    if kind is datetime.date:
        return {_OBJECT: ["datetime", "date", [value.year, value.month, value.day]]}
    if kind is datetime.datetime and value.tzinfo is None:
        return {_OBJECT: ["datetime", "datetime", [value.year, value.month, value.day, value.hour, value.minute,
                                                    value.second, value.microsecond]]}
    if kind is datetime.time and value.tzinfo is None:
        return {_OBJECT: ["datetime", "time", [value.hour, value.minute, value.second, value.microsecond]]}
    if kind is datetime.timedelta:
        return {_OBJECT: ["datetime", "timedelta", [value.days, value.seconds, value.microseconds]]}
    if kind is decimal.Decimal and value.is_finite():
        return {_OBJECT: ["decimal", "Decimal", [str(value)]]}
    return value if _plain(value) and not (type(value) is dict and _OBJECT in value) else _NOT


_NOT = object()


def _profile(frame, event, arg):
    if event != "call":
        return
    code = frame.f_code
    if not code.co_filename.startswith(_SOURCES) or code.co_name.startswith("_"):
        return
    caller = frame.f_back
    if caller is None or _TESTS not in caller.f_code.co_filename:
        return
    fn = frame.f_globals.get(code.co_name)
    if getattr(fn, "__code__", None) is not code:
        return
    names = code.co_varnames[:code.co_argcount]
    if code.co_kwonlyargcount or code.co_flags & 0x08:
        return
    args = [frame.f_locals.get(n) for n in names]
    if code.co_flags & 0x04:
        args += list(frame.f_locals.get(code.co_varnames[code.co_argcount], ()))
    args = [_arg(a) for a in args]
    if any(a is _NOT for a in args):
        return
    # per function the KEEP calls whose canonical text hashes lowest: the same sample whatever order the tests
    # made them in (a set's order follows hash(None), an address in Python 3.11, whatever PYTHONHASHSEED says)
    text = json.dumps(args, sort_keys=True)
    rank = (hashlib.sha256(text.encode()).hexdigest(), text)
    module = frame.f_globals.get("__name__")
    if type(module) is not str:
        return
    kept = _SEEN.setdefault((module, code.co_name), [])
    if rank not in kept and (len(kept) < _KEEP or rank < kept[-1]):
        bisect.insort(kept, rank)
        del kept[_KEEP:]


def pytest_runtest_call(item):
    sys.setprofile(_profile)


def pytest_runtest_teardown(item):
    sys.setprofile(None)


def pytest_sessionfinish(session):
    sys.setprofile(None)
    with open(_OUT, "w") as out:
        json.dump([[m, f, json.loads(text)] for (m, f) in sorted(_SEEN) for _, text in _SEEN[(m, f)]], out)
'''

_REPLAY = r'''
import importlib, json, sys
from itertools import islice

calls = json.load(open(sys.argv[1]))
out = []


def _made(value):
    if isinstance(value, dict) and "__realpy_object__" in value:
        module, name, args = value["__realpy_object__"]
        return getattr(importlib.import_module(module), name)(*args)
    return value


for module, name, args in calls:
    is_iter = False
    try:
        fn = getattr(importlib.import_module(module), name)
        result = fn(*[_made(a) for a in json.loads(json.dumps(args))])
        is_iter = hasattr(result, "__next__")
        if is_iter:
            result = list(islice(result, 201))
    except Exception as exc:
        out.append({"raises": type(exc).__name__, "iter": is_iter})
        continue
    try:
        out.append({"returns": json.loads(json.dumps(result)), "iter": is_iter, "type": type(result).__name__})
    except Exception:
        try:  # an object (a date, a duration, a parse result): judged by its repr, when that is stable
            text = repr(result)
        except Exception:
            text = " at 0x"
        if " at 0x" in text or len(text) > 2000:
            out.append({"type": "not plain"})
        else:
            out.append({"repr": text, "iter": is_iter, "type": "repr"})
print(json.dumps(out))
'''


def _plain_result(entry: dict[str, Any]) -> bool:
    if "raises" in entry or "repr" in entry:
        return True
    value = entry.get("returns")
    if entry.get("iter") and isinstance(value, list) and len(value) > 200:
        return False
    return entry.get("type") in ("NoneType", "bool", "int", "float", "str", "list", "dict")


def record(project: Project, files: dict[str, bytes], timeout: float = 600) -> list[dict[str, Any]]:
    """The project's twins: [{"module", "function", "args", "returns" | "raises" | "repr", "iter"}]; cached.
    "repr": what came back was no plain data (a date, a duration, a parse result) but its repr was the same in
    both replays, without an address in it: the grader compares the repr of what comes back."""
    root = state_root(project)
    with locked(root / ".twins.lock"):
        cached = load_json(root / "twins.json")
        if "twins" in cached and cached.get("format") == FORMAT:
            return list(cached["twins"])
        twins = _record(project, files, timeout)
        save_json(root / "twins.json", {"twins": twins, "format": FORMAT})
        return twins


def _record(project: Project, files: dict[str, bytes], timeout: float) -> list[dict[str, Any]]:
    folder = "" if project.tests.endswith(".py") else os.sep

    def variables(work: Path, aux: Path) -> dict[str, str]:
        return {"REALPY_TWIN_OUT": str(aux / "calls.json"), "REALPY_TESTS": str(work / project.tests) + folder}

    with traced_suite(project, files, "realpy_tracer", _TRACER, timeout, variables) as run:
        work, aux, env, path = run.work, run.aux, dict(run.env), run.path
        try:
            calls = json.loads((aux / "calls.json").read_text())
        except (OSError, ValueError):
            return []
        env["PYTHONPATH"] = path
        answers = []
        for _ in range(REPLAYS):
            done = subprocess.run([sys.executable, "-B", "-c", _REPLAY, str(aux / "calls.json")], cwd=work,
                                  env=env, capture_output=True, text=True, timeout=timeout, check=False)
            try:
                answers.append(json.loads(done.stdout.strip().splitlines()[-1]))
            except (ValueError, IndexError):
                return []
    twins: list[dict[str, Any]] = []
    per: dict[tuple[str, str], int] = {}
    for (module, name, args), first, *others in zip(calls, *answers, strict=False):
        if any(other != first for other in others) or not _plain_result(first) \
                or per.get((module, name), 0) >= PER_FUNCTION:
            continue
        per[(module, name)] = per.get((module, name), 0) + 1
        twin = {"module": module, "function": name, "args": args, "iter": bool(first.get("iter"))}
        for key in ("raises", "repr", "returns"):
            if key in first:
                twin[key] = first[key]
                break
        twins.append(twin)
    return twins[:MAX_TWINS]
