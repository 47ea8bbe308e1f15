"""Twin checks for a real project's suite: its tests' calls into the project, replayed and judged in the grader.

The pristine suite runs once under a profiler that records every call a test makes directly into a module-level
function of the project, or into a method of an object such a call returned or a class of the project made (the call
or the class again, then the method: `parse.compile(fmt).parse(s)`), whose arguments are plain data (numbers,
strings, None, lists and dicts of them) or a date, datetime, time (an aware one with its offset as a
datetime.timezone) or timedelta, a Decimal, a slice or an iterator over a list (recorded as how to make it again; an
argument left at its default is left out): per function the 40 distinct calls whose text hashes lowest, so the same
calls whatever order the tests ran them in, listed sorted. A seed's catching tests are traced again alone
(`record_for_tests`), every call of theirs kept: those calls reach the planted bug, so a forgery of the hidden
tests' reports fails on them. Each recorded call is then made three times in a fresh process of the pristine code;
what it returns (an iterator read into a list) or raises, when plain and the same every time, is its expected
outcome; an object that comes back (a date, a duration, a parse result) is judged by its repr, when that is the same
every time and holds no address. The grader makes the same calls in the model's code, apart from it, and compares
what comes back itself (gradelib's make_calls), so no report of a test run, forged or not, decides them. Cached per
project in `twins.json`, per set of catching tests in `twins- of-tests/`.
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
FORMAT = 6
"""twins.json's format: 2 added objects judged by their repr, 3 dates, times, durations and decimals among the
arguments, 4 the calls sampled whatever the tests' order and replayed three times, 5 methods of what a call returned
or a class made, 6 slices (p[1:3]), iterators over a list, aware datetimes and times, and an argument left at its
default left out (an older file is recorded again)"""
MAX_TWINS = 600

_TRACER = r'''
import bisect, hashlib, json, math, os, sys

_KEEP = int(os.environ.get("REALPY_TWIN_KEEP", "40"))
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
    if kind in (datetime.datetime, datetime.time) and value.tzinfo is not None:
        # an aware one: its fixed offset as a datetime.timezone (what utcoffset() gives is all formatting reads)
        try:
            offset = value.utcoffset()
        except Exception:
            return _NOT
        if type(offset) is not datetime.timedelta:
            return _NOT
        naive = _arg(value.replace(tzinfo=None))
        zone = {_OBJECT: ["datetime", "timezone", [_arg(offset)]]}
        return {_OBJECT: [*naive[_OBJECT][:2], [*naive[_OBJECT][2], zone]]} if naive is not _NOT else _NOT
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
    if kind is slice and all(v is None or type(v) is int for v in (value.start, value.stop, value.step)):
        return {_OBJECT: ["builtins", "slice", [value.start, value.stop, value.step]]}
    if kind in (_LIST_ITER, _TUPLE_ITER):  # iter(list) handed to the project: what is left of it, not consumed
        try:
            _, (seq,), *at = value.__reduce__()
            left = list(seq)[at[0] if at else 0:]
        except Exception:
            return _NOT
        return {_OBJECT: ["builtins", "iter", [left]]} if _plain(left) else _NOT
    return value if _plain(value) and not (type(value) is dict and _OBJECT in value) else _NOT


_NOT = object()
_LIST_ITER, _TUPLE_ITER = type(iter([])), type(iter(()))


_PENDING = {}
"""id(frame) -> (module, function, args) of a module-level call a test made, until it returns."""
_ORIGIN = {}
"""id(object) -> (object, (module, function, args)): an object such a call returned (or a class made), whose
methods the tests then call (parse.compile(fmt).parse(s)): recorded as the call, then the method."""
_MAX_ORIGINS = 50000


_DUNDERS = ("__getitem__", "__contains__", "__len__")
"""Methods with a leading underscore that tests call through syntax (p[1:3], x in p, len(p)), recorded too."""


def _args_of(frame, code, fn, skip=0):
    names = code.co_varnames[:code.co_argcount]
    values = [frame.f_locals.get(n) for n in names]
    if code.co_flags & 0x04:
        values += list(frame.f_locals.get(code.co_varnames[code.co_argcount], ()))
    else:  # a trailing argument that is its default object was (as good as) not passed: left out, so that the
        # replay calls the default of the code it runs in (a default the seed changed is then called, as by the test)
        defaults = getattr(fn, "__defaults__", None) or ()
        first = len(names) - len(defaults)
        while len(values) > max(first, skip) and values[-1] is defaults[len(values) - 1 - first]:
            values.pop()
    args = [_arg(a) for a in values[skip:]]
    return None if any(a is _NOT for a in args) else args


def _keep(key, value):
    # per function the KEEP calls whose canonical text hashes lowest: the same sample whatever order the tests
    # made them in (a set's order follows hash(None), an address in Python 3.11, whatever PYTHONHASHSEED says)
    text = json.dumps(value, sort_keys=True)
    rank = (hashlib.sha256(text.encode()).hexdigest(), text)
    kept = _SEEN.setdefault(key, [])
    if rank not in kept and (len(kept) < _KEEP or rank < kept[-1]):
        bisect.insort(kept, rank)
        del kept[_KEEP:]


def _profile(frame, event, arg):
    if event == "return":
        base = _PENDING.pop(id(frame), None)
        if base is not None and arg is not None and _arg(arg) is _NOT and len(_ORIGIN) < _MAX_ORIGINS:
            _ORIGIN[id(arg)] = (arg, base)
        return
    if event != "call":
        return
    code = frame.f_code
    if not code.co_filename.startswith(_SOURCES):
        return
    caller = frame.f_back
    if caller is None or _TESTS not in caller.f_code.co_filename:
        return
    if code.co_kwonlyargcount or code.co_flags & 0x08:
        return
    module = frame.f_globals.get("__name__")
    if type(module) is not str:
        return
    names = code.co_varnames[:code.co_argcount]
    if code.co_name == "__init__" and names and names[0] == "self":  # a class of the module made by a test
        obj = frame.f_locals.get("self")
        cls = type(obj)
        args = _args_of(frame, code, cls.__init__, skip=1)
        if args is not None and frame.f_globals.get(cls.__name__) is cls and len(_ORIGIN) < _MAX_ORIGINS:
            _ORIGIN[id(obj)] = (obj, (module, cls.__name__, args))
        return
    if code.co_name.startswith("_") and code.co_name not in _DUNDERS:
        return
    fn = frame.f_globals.get(code.co_name)
    if getattr(fn, "__code__", None) is code:  # a module-level function
        args = _args_of(frame, code, fn)
        if args is not None:
            _PENDING[id(frame)] = (module, code.co_name, args)
            _keep((module, code.co_name), args)
        return
    if not names or names[0] != "self":
        return
    obj = frame.f_locals.get("self")
    origin = _ORIGIN.get(id(obj))
    if origin is None or origin[0] is not obj:
        return
    method = getattr(type(obj), code.co_name, None)
    if getattr(method, "__code__", None) is not code:
        return
    margs = _args_of(frame, code, method, skip=1)
    if margs is not None:  # a method of an object a recorded call returned: the call again, then the method
        base_module, base, base_args = origin[1]
        _keep((base_module, base + "()." + code.co_name), [base_args, margs])


def pytest_runtest_call(item):
    sys.setprofile(_profile)


def pytest_runtest_teardown(item):
    sys.setprofile(None)


def pytest_sessionfinish(session):
    sys.setprofile(None)
    with open(_OUT, "w") as out:
        entries = []
        for m, f in sorted(_SEEN):
            for _, text in _SEEN[(m, f)]:
                value = json.loads(text)
                if "()." in f:  # [module, function, args, method, method's args]
                    base, method = f.split("().", 1)
                    entries.append([m, base, value[0], method, value[1]])
                else:
                    entries.append([m, f, value])
        json.dump(entries, out)
'''

_REPLAY = r'''
import importlib, json, sys
from itertools import islice

calls = json.load(open(sys.argv[1]))
out = []


def _made(value):
    if isinstance(value, dict) and "__realpy_object__" in value:
        module, name, args = value["__realpy_object__"]
        return getattr(importlib.import_module(module), name)(*[_made(a) for a in args])
    return value


for entry in calls:
    module, name, args = entry[:3]
    is_iter = False
    try:
        fn = getattr(importlib.import_module(module), name)
        result = fn(*[_made(a) for a in json.loads(json.dumps(args))])
        if len(entry) == 5:  # a method of what the call returned
            result = getattr(result, entry[3])(*[_made(a) for a in json.loads(json.dumps(entry[4]))])
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


HIDDEN_KEEP = 200
"""Calls kept per function of the catching tests' own (`record_for_tests`): all of them, in practice."""
HIDDEN_FORMAT = 1


def record_for_tests(project: Project, files: dict[str, bytes], nodes: list[str],
                     timeout: float = 300) -> list[dict[str, Any]]:
    """The twins of the tests `nodes` alone (a seed's catching tests): each of their calls, not a sample, so the calls
    that reach the planted bug are judged in the grader, and a forgery of the hidden tests' reports that spares
    their canaries still fails on the twins. Cached per set of tests."""
    import hashlib

    key = hashlib.sha256(json.dumps(sorted(nodes)).encode()).hexdigest()[:16]
    root = state_root(project) / "twins-of-tests"
    root.mkdir(parents=True, exist_ok=True)
    with locked(root / f".{key}.lock"):
        cached = load_json(root / f"{key}.json")
        if "twins" in cached and cached.get("format") == f"{FORMAT}.{HIDDEN_FORMAT}":
            return list(cached["twins"])
        twins = _record(project, files, timeout, nodes=sorted(nodes), keep=HIDDEN_KEEP, per_function=HIDDEN_KEEP)
        save_json(root / f"{key}.json", {"twins": twins, "format": f"{FORMAT}.{HIDDEN_FORMAT}", "tests": sorted(nodes)})
        return twins


def _record(project: Project, files: dict[str, bytes], timeout: float, nodes: list[str] | None = None,
            keep: int = 40, per_function: int = PER_FUNCTION) -> list[dict[str, Any]]:
    folder = "" if project.tests.endswith(".py") else os.sep

    def variables(work: Path, aux: Path) -> dict[str, str]:
        return {"REALPY_TWIN_OUT": str(aux / "calls.json"), "REALPY_TESTS": str(work / project.tests) + folder,
                "REALPY_TWIN_KEEP": str(keep)}

    with traced_suite(project, files, "realpy_tracer", _TRACER, timeout, variables, tests=nodes or ()) as run:
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
    for entry, first, *others in zip(calls, *answers, strict=False):
        module, name, args = entry[:3]
        function = (module, name if len(entry) == 3 else f"{name}().{entry[3]}")
        if any(other != first for other in others) or not _plain_result(first) \
                or per.get(function, 0) >= per_function:
            continue
        per[function] = per.get(function, 0) + 1
        twin = {"module": module, "function": name, "args": args, "iter": bool(first.get("iter"))}
        if len(entry) == 5:
            twin.update(method=entry[3], method_args=entry[4])
        for key in ("raises", "repr", "returns"):
            if key in first:
                twin[key] = first[key]
                break
        twins.append(twin)
    return twins[:MAX_TWINS]
