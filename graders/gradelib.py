"""Helpers for task graders: each grader is a few readable checks.

    from gradelib import Grader, task_vars

    v = task_vars()
    g = Grader()
    g.no_match(rf"\\b{v['legacy_const']}\\b")
    g.pytest_passes(["tests/test_limiter.py"])
    g.finish()          # prints nothing more; exits 0 if every check passed, 1 otherwise

Each check prints one line (`✓ what` or `✗ what: why`) and returns whether it
passed. A missing or unreadable file is a failed check, never a crash.
Importing this module makes any uncaught exception exit with status 3 (a
grader error, which the harness never counts as a fail), and a grader that
forgets `finish()` exits 3 too rather than passing silently.

Costly checks (`pytest_passes`, `command_ok`) are skipped once an earlier check
has failed (the verdict is already "fail"), which keeps validation fast; pass
`Grader(run_all=True)` to run them anyway.

The environment (see docs/task-format.md): AGENTIC_EVAL_VARS, AGENTIC_EVAL_TASK_DIR,
AGENTIC_EVAL_SANDBOX, AGENTIC_EVAL_PYTHON, AGENTIC_EVAL_PRISTINE and
AGENTIC_EVAL_PRISTINE_GIT; the working directory is the sandbox.

What changed is judged against ground truth the agent cannot touch: the pristine
commit id and a copy of its objects that the harness keeps outside the sandbox.
Nothing is read from the sandbox's history, index or ignore rules, and git never
runs with the sandbox's config or hooks (see agentic_eval/grading/gitsafe.py). A
grader's own plain `git` in the sandbox goes through the same view, with the
pristine commit's objects from the harness's copy (agentic_eval/grading/gitshim.py).
"""

from __future__ import annotations

import atexit
import fnmatch
import json
import os
import re
import secrets
import stat
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, NoReturn

from agentic_eval.grading import gitsafe
from agentic_eval.grading.forkrun import PYTEST_BOOT as _PYTEST_BOOT  # noqa: F401 - what pytest_argv's runs boot
from agentic_eval.grading.forkrun import pytest_argv  # a root harness forks these runs
from agentic_eval.grading.gitsafe import GitError
from agentic_eval.packs import pristine
from agentic_eval.trees import walk

__all__ = [
    "Call",
    "CallResult",
    "EXIT_FAIL",
    "EXIT_GRADER_ERROR",
    "EXIT_PASS",
    "Grader",
    "GraderEnvironmentError",
    "PytestRun",
    "Raises",
    "Returns",
    "RunResult",
    "TestCase",
    "pristine_commit",
    "pristine_store",
    "make_calls",
    "python_executable",
    "ref",
    "run_apart",
    "sandbox_dir",
    "scratch_dir",
    "task_dir",
    "task_vars",
    "work_dir",
]

EXIT_PASS = 0
EXIT_FAIL = 1
EXIT_GRADER_ERROR = 3

MAX_LISTED = 5
"""Offending lines, files or tests named in one failure reason."""
READ_LIMIT = 64 << 20
"""Largest sandbox file a check reads."""
DATA_LIMIT = 2 << 20
"""Largest JSON, YAML, TOML or INI file a check parses."""
DATA_VALUES_LIMIT = 1_000_000
"""Most values a parsed configuration may expand to (YAML aliases repeat a subtree)."""
SCAN_LIMIT = 256 << 20
"""Most bytes of text `no_match` / `some_match` read over the tree in one check."""


def _nested(data: Any) -> Iterator[tuple[Any, int]]:
    """Every value in `data` with its depth (lists and dicts open a level), without recursion (the data is
    the model's); a shared subtree is visited each time it appears. Callers stop when they have seen enough."""
    stack = [(data, 0)]
    while stack:
        item, level = stack.pop()
        yield item, level
        if isinstance(item, dict):
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, level + 1) for v in item)


def _count_values(data: Any) -> int:
    """How many values `data` holds, shared subtrees counted each time they appear (stops past the limit)."""
    count = 0
    for count, _ in enumerate(_nested(data), start=1):
        if count > DATA_VALUES_LIMIT:
            break
    return count


# --------------------------------------------------------------------------- process-wide safety nets


def _exit_on_uncaught(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    """An uncaught exception in a grader is the grader's bug: exit 3, never 1. The traceback goes to
    stderr, then one last line naming the exception, its message and the grader's own line that raised it
    (its script's folder, the task folder or the pack's graders folder; not Python's, a library's or
    gradelib's), and where it was raised when that was elsewhere, which `validate` quotes:
    `grader error: KeyError: 'port' (grade.py:12)`."""
    traceback.print_exception(exc_type, exc, tb)
    try:
        message = " ".join(str(exc).split())
    except Exception:  # noqa: BLE001 - an exception whose __str__ raises still gets its line
        message = ""
    if len(message) > 200:
        message = message[:200] + "..."
    script = sys.argv[0] if sys.argv else ""
    roots = [Path(p).resolve() for p in (os.path.dirname(os.path.abspath(script)) if script else "",
                                         os.environ.get("AGENTIC_EVAL_TASK_DIR", ""),
                                         os.environ.get("AGENTIC_EVAL_PACK_GRADERS", "")) if p]
    this_file = Path(__file__).resolve()

    def own(filename: str) -> bool:
        if filename.startswith("<"):
            return False
        path = Path(filename).resolve()
        return path != this_file and any(path.is_relative_to(root) for root in roots)

    frames = traceback.extract_tb(tb)
    mine = [f for f in frames if own(f.filename)]
    where = [f"{Path(f.filename).name}:{f.lineno}" for f in (mine[-1:] or frames[-1:])]
    if mine and frames[-1] is not mine[-1]:
        where.append(f"raised in {Path(frames[-1].filename).name}:{frames[-1].lineno}")
    print(f"grader error: {exc_type.__name__}" + (f": {message}" if message else "")
          + (f" ({', '.join(where)})" if where else ""), file=sys.stderr)
    sys.stderr.flush()
    sys.stdout.flush()
    os._exit(EXIT_GRADER_ERROR)


sys.excepthook = _exit_on_uncaught
for _stream in (sys.stdout, sys.stderr):
    try:  # a check line must never crash on a terminal that cannot print ✓
        _stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    except (AttributeError, ValueError):
        pass

_unfinished: list[Grader] = []


@atexit.register
def _unfinished_grader() -> None:
    if _unfinished:
        print("grader error: Grader.finish() was never called", file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_GRADER_ERROR)


# --------------------------------------------------------------------------- the environment


class GraderEnvironmentError(RuntimeError):
    """The grader's environment lacks something the grader needs (a program, pytest): a grader error
    (exit 3), never a fail of the agent."""


def _env_path(name: str) -> Path:
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"{name} is not set: run this grader through agentic-eval")
    return Path(value)


def task_vars() -> dict[str, Any]:
    """The generator's variables for this sandbox (and `seed`), from AGENTIC_EVAL_VARS."""
    data = json.loads(_env_path("AGENTIC_EVAL_VARS").read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise TypeError("AGENTIC_EVAL_VARS does not hold a JSON object")
    return data


def task_dir() -> Path:
    """The task folder (its `data/` holds hidden tests), from AGENTIC_EVAL_TASK_DIR."""
    return _env_path("AGENTIC_EVAL_TASK_DIR")


def sandbox_dir() -> Path:
    """The sandbox: AGENTIC_EVAL_SANDBOX, else the working directory."""
    value = os.environ.get("AGENTIC_EVAL_SANDBOX")
    return Path(value).resolve() if value else Path.cwd().resolve()


def python_executable() -> str:
    """The Python running agentic-eval (it has pytest): AGENTIC_EVAL_PYTHON, else this one."""
    return os.environ.get("AGENTIC_EVAL_PYTHON") or sys.executable


def pristine_commit(sandbox: Path | None = None) -> str:
    """The sandbox's pristine commit, as the harness recorded it (AGENTIC_EVAL_PRISTINE).

    Never read from the repository, whose history the agent could rewrite. `sandbox` is ignored
    (kept for graders written against older versions).
    """
    return str(_env_path(pristine.COMMIT_ENV))


def pristine_store() -> Path:
    """The harness's copy of the pristine objects, outside the sandbox (AGENTIC_EVAL_PRISTINE_GIT)."""
    return _env_path(pristine.STORE_ENV)


# --------------------------------------------------------------------------- pytest results


@dataclass(frozen=True)
class TestCase:
    """One test as pytest's JUnit XML reports it."""

    __test__ = False  # not a pytest test class, whatever its name

    file: str
    """The test file, relative to the sandbox (hidden tests: a path outside it)."""
    classname: str
    """Dotted module path (and class), e.g. `tests.test_billing`; empty for hidden tests."""
    name: str
    outcome: str
    """passed | failed | error | skipped"""
    message: str = ""

    @property
    def label(self) -> str:
        return f"{Path(self.file).name or self.classname}::{self.name}"


@dataclass
class PytestRun:
    """The outcome of one pytest run, read from its JUnit XML."""

    exit_code: int | None
    cases: list[TestCase] = field(default_factory=list)
    output: str = ""
    report_written: bool = False
    tampered: str = ""
    """Why the run's results cannot be believed (a planted test came out wrong), or ""."""
    stopped_by: str = ""
    """Why the run stopped or never ran (its time ran out, a file of the grader's could not be placed), or ""."""

    def count(self, outcome: str = "passed", module: str | None = None) -> int:
        """Tests with `outcome`, optionally only those of module `module` (e.g. "test_billing")."""
        return sum(
            1 for case in self.cases if case.outcome == outcome and (module is None or _in_module(case, module))
        )

    def passed(self, name: str) -> bool:
        """Whether a test named `name` (or `module::name`) ran and passed."""
        module, _, test = name.rpartition("::")
        module = Path(module).stem if module else ""
        return any(
            case.outcome == "passed" and case.name.split("[")[0] == test and (not module or _in_module(case, module))
            for case in self.cases
        )


def _in_module(case: TestCase, module: str) -> bool:
    return Path(case.file).stem == module or module in case.classname.split(".")


JUNIT_LIMIT = 32 << 20
"""Largest JUnit report read."""


def _read_junit(path: Path) -> list[TestCase]:
    return _read_junit_bytes(path.read_bytes()[: JUNIT_LIMIT + 1])


def _read_junit_bytes(data: bytes) -> list[TestCase]:
    """The test cases of a JUnit report written by a process that ran the model's code: size-capped, no
    DTD (entity expansion) accepted."""
    import xml.etree.ElementTree as ET

    if len(data) > JUNIT_LIMIT:
        raise ValueError(f"the report is over {JUNIT_LIMIT} bytes")
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        raise ValueError("the report declares a DTD")
    cases = []
    for element in ET.fromstring(data).iter("testcase"):
        outcome, message = "passed", ""
        for tag, label in (("failure", "failed"), ("error", "error"), ("skipped", "skipped")):
            child = element.find(tag)
            if child is not None:
                outcome, message = label, (child.get("message") or child.text or "").strip()
                break
        cases.append(
            TestCase(element.get("file", ""), element.get("classname", ""), element.get("name", ""), outcome, message)
        )
    return cases


# --------------------------------------------------------------------------- helpers


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """`**` matches across folders, `*` and `?` within one path segment."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out))


def path_matches(path: str, patterns: Iterable[str]) -> bool:
    """Whether the repo-relative `path` matches a glob, or lies under a folder named by one."""
    for pattern in patterns:
        pattern = pattern.strip("/")
        if _glob_regex(pattern).fullmatch(path) or path.startswith(pattern + "/"):
            return True
    return False


def _dig(data: Any, dotted_key: str) -> Any:
    """`data["a"]["b"][0]` for "a.b.0"; raises KeyError when the path does not exist."""
    node = data
    for part in dotted_key.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise KeyError(dotted_key)
    return node


def _drop(data: Any, dotted_key: str) -> None:
    *parents, last = dotted_key.split(".")
    try:
        node = _dig(data, ".".join(parents)) if parents else data
    except KeyError:
        return
    if isinstance(node, dict):
        node.pop(last, None)


def _same_value(actual: Any, expected: Any) -> bool:
    """Equality that does not let True pass for 1 or 1.0 for 1."""
    return type(actual) is type(expected) and actual == expected


# --------------------------------------------------------------------------- the model's code, run apart

_local_hosts: dict[Path, Any] = {}


def _sealed(payload: dict[str, Any], sandbox: Path | None = None) -> dict[str, Any]:
    """Have the harness run a command of the model's code (see agentic_eval/grading/sealed.py): confined
    apart from this grader, on a work copy of the sandbox. Outside agentic-eval (a grader run by hand),
    the same happens unconfined, on a copy of `sandbox` in a temporary folder."""
    from agentic_eval.grading import sealed

    if not os.environ.get(sealed.SOCKET_ENV):
        return _standalone_host(sandbox).run(payload)
    try:
        response = sealed.request(payload)
    except sealed.SealedRunError as exc:
        raise GraderEnvironmentError(str(exc)) from None
    if response.get("error"):
        raise GraderEnvironmentError(f"the harness could not run {payload['argv'][0]!r}: {response['error']}")
    return response


def _standalone_host(sandbox: Path | None = None) -> Any:
    """A grader run by hand (no harness): its commands run unconfined on a copy of the sandbox."""
    sandbox = Path(sandbox).resolve() if sandbox is not None else sandbox_dir()
    if sandbox not in _local_hosts:
        import shutil
        import tempfile

        from agentic_eval.confine.host import LocalBackend
        from agentic_eval.grading.sealed import CodeHost

        folder = Path(tempfile.mkdtemp(prefix="gradelib-host-"))
        host = CodeHost(sandbox, folder, LocalBackend())
        atexit.register(shutil.rmtree, folder, True)
        atexit.register(host.close)
        _local_hosts[sandbox] = host
    return _local_hosts[sandbox]


def work_dir(sandbox: Path | None = None) -> Path:
    """Where the model's code runs: the work copy of the sandbox (AGENTIC_EVAL_WORK; the same path for
    the grader and the commands it has run). The grader never reads it: what it needs comes back as data."""
    value = os.environ.get("AGENTIC_EVAL_WORK")
    return Path(value) if value else _standalone_host(sandbox).work


def scratch_dir(sandbox: Path | None = None) -> Path:
    """A folder beside the work copy for fixtures and outputs (AGENTIC_EVAL_SCRATCH): give files with
    `files=`, get them back with `collect=`."""
    value = os.environ.get("AGENTIC_EVAL_SCRATCH")
    return Path(value) if value else _standalone_host(sandbox).scratch


@dataclass(frozen=True)
class RunResult:
    """A command of the model's code, run apart from the grader: its exit, output and collected files."""

    exit_code: int | None
    """None when it was stopped (timed out)."""
    output: str
    """stdout and stderr together (a long output keeps its head and tail)."""
    stopped_by: str = ""
    files: dict[str, bytes | None] = field(default_factory=dict)
    """What `collect` asked for: the bytes of each regular file, None where there was none."""
    why: dict[str, str] = field(default_factory=dict)
    """Why a collected file is None ("no such file", "not a regular file", "a symbolic link", ...)."""

    @property
    def timed_out(self) -> bool:
        return bool(self.stopped_by)

    def text(self, path: str) -> str | None:
        """A collected file as text, or None."""
        data = self.files.get(path)
        return None if data is None else data.decode("utf-8", errors="replace")


def _as_bytes(data: str | bytes) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else data


def run_apart(
    argv: Sequence[str],
    *,
    files: dict[str, str | bytes] | None = None,
    collect: Sequence[str] = (),
    env: dict[str, str] | None = None,
    pythonpath: Sequence[str] = (),
    stdin: str | bytes | None = None,
    timeout: float = 30.0,
    fresh: bool = False,
    cwd: str = "",
    sandbox: Path | None = None,
    apart: bool = False,
) -> RunResult:
    """Run `argv` as the model's code: confined apart from the grader, in the work copy (`cwd` under it).

    `files` are written first (paths relative to the work copy, or absolute under `scratch_dir()`);
    `collect` names files to bring back afterwards (same kinds of path). `pythonpath`: work-copy folders
    put on PYTHONPATH. `fresh` starts from a new copy of the sandbox. Nothing of the task, its variables
    or this grader's environment is visible to the command; `env` adds variables of the grader's choosing.
    `apart`: on a fresh copy of its own, which other `apart` runs may run beside (see `runs_apart`); the work
    copy is left as it was.
    """
    from agentic_eval.grading.sealed import decode, encode

    payload = {
        "argv": [str(a) for a in argv], "cwd": cwd, "env": dict(env or {}), "pythonpath": list(pythonpath),
        "stdin": None if stdin is None else encode(_as_bytes(stdin)), "timeout": timeout, "fresh": fresh,
        "files": {str(k): encode(_as_bytes(v)) for k, v in (files or {}).items()},
        "collect": [str(c) for c in collect], "apart": apart,
    }
    _RAN_APART[0] += 1
    response = _sealed(payload, sandbox)
    got = {k: (None if v is None else decode(v)) for k, v in dict(response.get("files") or {}).items()}
    code = response.get("exit")
    return RunResult(code if isinstance(code, int) else None, str(response.get("output") or ""),
                     str(response.get("stopped_by") or ""), got, dict(response.get("why") or {}))


def lanes(sandbox: Path | None = None) -> int:
    """How many `apart` runs the harness runs at once (the grader need not have more in flight)."""
    from agentic_eval.grading import sealed

    if not os.environ.get(sealed.SOCKET_ENV):
        return int(_standalone_host(sandbox).lanes)
    try:
        return max(1, int(os.environ.get(sealed.LANES_ENV, "1")))
    except ValueError:
        return 1


def pytest_runs_ahead() -> None:
    """Tell the harness that this grader will run pytest apart (`mutation.pytest_command`'s runs): a root harness on
    bwrap forks those from a server with pytest loaded (agentic_eval/grading/forkrun.py), which then starts at once,
    beside the grader's other checks, not when the first run asks. Changes nothing else; outside agentic-eval, nothing."""
    from agentic_eval.grading import sealed

    if os.environ.get(sealed.SOCKET_ENV):
        try:
            sealed.request({"warm": "pytest", "python": python_executable()})
        except sealed.SealedRunError:
            pass  # the first run starts it then


def runs_apart(runs: Sequence[dict[str, Any]], *, stop: Callable[[int, RunResult], bool] | None = None,
               sandbox: Path | None = None) -> list[RunResult | None]:
    """Run each of `runs` (`run_apart`'s keyword arguments) on a fresh copy of its own, in order, as many at once as
    the harness runs (`lanes`), and return their results in that order. `stop(i, result)` is asked in order; once
    it says True, no further run is started (None in their place; one already started ends unheard). Nothing of
    one run can reach another: each has its own copy and scratch folder, at a path no one can predict, its own
    uid and namespaces (or, where the harness runs one at a time, a copy made for it alone)."""
    from concurrent.futures import Future, ThreadPoolExecutor

    results: list[RunResult | None] = [None] * len(runs)
    if not runs:
        return results
    width = min(lanes(sandbox), len(runs))
    pool = ThreadPoolExecutor(max_workers=width, thread_name_prefix="apart")
    started: dict[int, Future[RunResult]] = {}
    try:
        for index in range(len(runs)):
            for later in range(len(started), min(index + width, len(runs))):  # at most `width` in flight
                started[later] = pool.submit(run_apart, sandbox=sandbox, apart=True, **runs[later])
            result = results[index] = started[index].result()
            if stop is not None and stop(index, result):
                break
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return results


_VERBS = ("handles", "keeps", "rejects", "returns", "accepts", "rounds", "parses", "skips", "counts", "reads")
_NOUNS = ("totals", "limits", "input", "orders", "values", "names", "rows", "config", "items", "range", "units",
          "format", "cache", "output", "empty", "state", "window", "labels", "defaults", "errors")
"""Canary names are drawn from these: they look like the repo's tests, with no fixed part to spare."""
REPORT_ALONE = " (from the run's report alone)"
"""Ends a test run's check line when no twin of its tests was judged in the grader: a process that ran the
model's code wrote what it rests on (validate's red team names such checks when a knowing forgery passes)."""
_RAN_APART = [0]
"""Commands of the model's code run so far by this grader (a later one starts from a fresh copy when it must)."""


def _with_canary(selection: Sequence[str], canary: str) -> list[str]:
    """The selection, with the canary file where a real one would be: not on the command line when a selected
    folder holds it (the run collects it like the others), else among the selected files at a random place."""
    import secrets

    if any(Path(canary).parent == Path(item) for item in selection if "::" not in item):
        return list(selection)
    items = list(selection)
    items.insert(secrets.randbelow(len(items) + 1), canary)
    return items


def _unshuffled(case: TestCase, names: dict[tuple[str, str], tuple[str, str]]) -> TestCase:
    """A case of the grader's copy of a suite, under the repo's own file and test name."""
    stem = Path(case.file).stem or case.classname.rpartition(".")[2]
    base, bracket, rest = case.name.partition("[")
    real = names.get((stem, base))
    if real is None:
        for part in case.classname.split("."):  # a test in a class: the module is a part of the class name
            real = names.get((part, base)) or real
            if real is not None:
                stem = part
                break
    if real is None:
        return case
    rel, name = real
    classname = ".".join(Path(rel).stem if part == stem else part for part in case.classname.split("."))
    return TestCase(rel if case.file else "", classname, name + bracket + rest, case.outcome, case.message)


def _tell_harness(note: dict[str, Any]) -> None:
    """Tell the harness what it records beside the verdict (the tests a report forged): over its socket, which
    no process of the model's code can reach; nothing outside agentic-eval."""
    from agentic_eval.grading import sealed

    if os.environ.get(sealed.SOCKET_ENV):
        try:
            sealed.request({"note": note})
        except sealed.SealedRunError:
            pass  # the verdict is this grader's all the same: the note only names what was forged


PYTEST_PLUGINS_OFF = ("-p", "no:cacheprovider", "-p", "no:unraisableexception")
"""pytest's plugins a grader's test run goes without: the cache (nothing of a run may outlive it), and the one that
turns exceptions raised in `__del__` into warnings, whose clean-up runs five full garbage collections at the end
of every run (a quarter of a small suite's run; the warnings decide nothing: no run of ours makes them errors)."""


def _tail(text: str, lines: int = 8) -> str:
    return "\n".join("    " + line for line in text.strip().splitlines()[-lines:])


# --------------------------------------------------------------------------- hidden checks: calls made apart

# Runs as the model's code (in the work copy, apart from the grader): reads the calls on stdin, imports the
# module, makes them, and writes what each returned (plain JSON data only) or raised to the file `out`.
_PY_HOST = r"""
import json, os, sys
request = json.loads(sys.stdin.buffer.read().decode("utf-8"))
sys.stdin = open(os.devnull)
sys.path.extend(request["path"])
import importlib
results, kept, module = [], [], None
def resolve(value):
    if type(value) is dict:
        if list(value) == ["$ref"]:
            return kept[value["$ref"]]
        return {k: resolve(v) for k, v in value.items()}
    if type(value) is list:
        return [resolve(v) for v in value]
    return value
def plain(value, depth=0):
    if depth > 64:
        raise TypeError("nested too deep")
    if value is None or type(value) in (bool, int, float, str):
        return value
    if type(value) in (list, tuple):
        return [plain(v, depth + 1) for v in value]
    if type(value) is dict and all(type(k) is str for k in value):
        return {k: plain(v, depth + 1) for k, v in value.items()}
    raise TypeError(type(value).__name__)
for step in request["calls"]:
    try:
        target = step["target"]
        if target.startswith("$"):
            index, _, attr = target[1:].partition(".")
            obj = kept[int(index)]
        elif target.startswith("@"):
            obj, attr = importlib, target[1:]
        else:
            if module is None:
                module = importlib.import_module(request["module"])
            obj, attr = module, target
        for part in attr.split(".") if attr else []:
            obj = getattr(obj, part)
        value = obj(*resolve(step["args"]), **resolve(step["kwargs"])) if step["call"] else obj
        kept.append(value)
        try:
            results.append({"ok": True, "value": plain(value)})
        except (TypeError, ValueError, RecursionError):
            results.append({"ok": True, "value": None, "unserializable": type(value).__name__[:100]})
    except BaseException as exc:
        kept.append(None)
        results.append({"ok": False, "type": type(exc).__name__[:100],
                        "types": [c.__name__[:100] for c in type(exc).__mro__][:20], "message": str(exc)[:500]})
with open(request["out"], "w", encoding="utf-8") as handle:
    json.dump({"results": results}, handle)
os._exit(0)
"""

_NODE_HOST = r"""
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const request = JSON.parse(readFileSync(0, "utf8"));
const results = [], kept = [];
let mod = null;
const resolve = (v) => Array.isArray(v) ? v.map(resolve)
  : (v !== null && typeof v === "object")
    ? (Object.keys(v).length === 1 && "$ref" in v ? kept[v["$ref"]]
      : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolve(x)])))
    : v;
const chain = (err) => { const names = []; let p = err;
  while (p !== null && p !== undefined && names.length < 20) { p = Object.getPrototypeOf(p);
    if (p && p.constructor && p.constructor.name) names.push(String(p.constructor.name).slice(0, 100)); }
  return names; };
for (const step of request.calls) {
  try {
    let obj, self, attr = step.target;
    if (attr.startsWith("$")) {
      const dot = attr.indexOf(".");
      obj = kept[Number(attr.slice(1, dot < 0 ? undefined : dot))];
      attr = dot < 0 ? "" : attr.slice(dot + 1);
    } else {
      if (mod === null) mod = await import(pathToFileURL(request.module).href);
      obj = mod;
    }
    for (const part of attr ? attr.split(".") : []) { self = obj; obj = obj[part]; }
    const value = step.call ? await obj.apply(self, resolve(step.args)) : obj;
    kept.push(value);
    let shown;
    try { shown = value === undefined ? undefined : JSON.parse(JSON.stringify(value)); } catch { shown = undefined; }
    results.push(shown === undefined ? { ok: true, value: null, unserializable: typeof value }
      : { ok: true, value: shown });
  } catch (err) {
    kept.push(undefined);
    const name = (err && err.name) ? String(err.name).slice(0, 100) : typeof err;
    results.push({ ok: false, type: name, types: [name, ...chain(err)],
      message: String(err && err.message !== undefined ? err.message : err).slice(0, 500) });
  }
}
writeFileSync(request.out, JSON.stringify({ results }));
process.exit(0);
"""

CALLS_ANSWER_LIMIT = 8 << 20
"""Largest answer read back from a batch of calls."""
ANSWER_DEPTH = 100
"""Deepest nesting of lists and objects accepted in an answer."""


def _depth(value: Any) -> int:
    """How deeply lists and dicts nest in `value` (stops past ANSWER_DEPTH)."""
    deepest = 0
    for _, level in _nested(value):
        deepest = max(deepest, level)
        if deepest > ANSWER_DEPTH:
            break
    return deepest


@dataclass(frozen=True)
class Call:
    """One call made in the model's code: `target` is a name in the module ("parse", "Bucket",
    "Bucket.from_config") or, with "$N.name", an attribute of what call N returned ("$0.take")."""

    target: str
    args: Sequence[Any] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    call: bool = True
    """False: read the attribute instead of calling it (a constant's value)."""


def ref(index: int) -> dict[str, int]:
    """An argument that stands for what call `index` of the same batch returned (an object kept there)."""
    return {"$ref": index}


@dataclass(frozen=True)
class Raises:
    """An expected outcome: the call raises this exception (by class name, or a subclass of it)."""

    name: str


@dataclass(frozen=True)
class Returns:
    """An expected outcome: the call returns without raising; what it returned is not compared (an object
    kept for later calls, "$N.method")."""


@dataclass(frozen=True)
class CallResult:
    """What one call returned, as plain data (it crossed from the model's process as JSON), or raised."""

    ok: bool
    value: Any = None
    error_type: str = ""
    error_types: tuple[str, ...] = ()
    """The exception's class and its bases, by name."""
    message: str = ""
    unserializable: str = ""
    """The type of a returned value that is not plain data (it compares equal to nothing)."""

    def returned(self, expected: Any) -> bool:
        """Returned plain data equal to `expected`, types included (True is not 1, 1.0 is not 1)."""
        return self.ok and not self.unserializable and _deep_same(self.value, expected)

    def raised(self, name: str) -> bool:
        return not self.ok and name in self.error_types

    def matches(self, expected: Any) -> bool:
        if isinstance(expected, Returns):
            return self.ok
        return self.raised(expected.name) if isinstance(expected, Raises) else self.returned(expected)

    def describe(self) -> str:
        if not self.ok:
            return f"raised {self.error_type}: {self.message[:200]}" if self.message else f"raised {self.error_type}"
        if self.unserializable == "undefined":
            return "returned undefined"
        if self.unserializable:
            return f"returned a {self.unserializable}, not plain data"
        return f"returned {_short(self.value)}"


def _short(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _deep_same(actual: Any, expected: Any) -> bool:
    """Equality of plain data that does not let True pass for 1 or 1.0 for 1, at any depth (a tuple
    expected matches a list: tuples cross as lists)."""
    if isinstance(expected, tuple):
        expected = list(expected)
    if type(actual) is not type(expected):
        return False
    if isinstance(expected, list):
        return len(actual) == len(expected) and all(_deep_same(a, e) for a, e in zip(actual, expected, strict=True))
    if isinstance(expected, dict):
        return actual.keys() == expected.keys() and all(_deep_same(actual[k], expected[k]) for k in expected)
    return bool(actual == expected)


def _wire(value: Any) -> Any:
    """Arguments as JSON: tuples as lists; references (`ref`) as they are."""
    if isinstance(value, (list, tuple)):
        return [_wire(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _wire(v) for k, v in value.items()}
    return value


@dataclass
class _Pending:
    """Twins' calls waiting for the grader's next batch of Python calls (or `finish`)."""

    calls: list[Call]
    files: dict[str, str | bytes]
    pythonpath: tuple[str, ...]
    timeout: float
    answered: Callable[[Sequence[CallResult]], None]


_PENDING: list[_Pending] = []


def _shifted(call: Call, offset: int) -> Call:
    """`call` placed `offset` calls later in a batch: its "$N" target and `ref(N)` arguments moved with it."""
    def move(value: Any) -> Any:
        if isinstance(value, dict):
            if list(value) == ["$ref"]:
                return {"$ref": value["$ref"] + offset}
            return {k: move(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [move(v) for v in value]
        return value

    target = call.target
    if target.startswith("$"):
        index, dot, rest = target[1:].partition(".")
        target = f"${int(index) + offset}{dot}{rest}"
    return Call(target, move(list(call.args)), move(dict(call.kwargs)), call.call)


def make_calls(module: str, calls: Sequence[Call], *, language: str = "python", pythonpath: Sequence[str] = ("src",),
               timeout: float = 30.0, fresh: bool = False, files: dict[str, str | bytes] | None = None,
               env: dict[str, str] | None = None, sandbox: Path | None = None, apart: bool = False
               ) -> list[CallResult]:
    """Make `calls` in one process of the model's code, apart from the grader, and return what each
    returned or raised. `module`: a dotted module name importable from the work copy's `pythonpath`
    folders (Python), or a file of the work copy or the scratch folder ("src/pricing.js", Node). `files`
    and `env` as for `run_apart` (a fixture, a variable the code reads), and `apart` (a fresh copy of its own, beside
    other such runs). A process that dies, hangs or answers garbage leaves every unanswered call failed
    ("NoAnswer"), never the grader crashed."""
    import shutil

    riders = [p for p in _PENDING if language == "python" and tuple(pythonpath) == p.pythonpath and not apart]
    if riders:  # twins waiting for a batch go first in it, as a test run would (these calls shifted past them)
        for pending in riders:
            _PENDING.remove(pending)
        batch: list[Call] = []
        merged: dict[str, str | bytes] = {}
        for pending in riders:
            batch += [_shifted(c, len(batch)) for c in pending.calls]
            merged.update(pending.files)
        ahead = len(batch)
        batch += [_shifted(c, ahead) for c in calls]
        timeout = max(timeout, *(p.timeout for p in riders))
        results = make_calls(module, batch, language=language, pythonpath=pythonpath, timeout=timeout, fresh=fresh,
                             files={**merged, **(files or {})}, env=env, sandbox=sandbox)
        start = 0
        for pending in riders:
            pending.answered(results[start:start + len(pending.calls)])
            start += len(pending.calls)
        return results[ahead:]
    out = f"{scratch_dir(sandbox)}/calls-{secrets.token_hex(8)}.json"
    if language == "python":
        argv = [python_executable(), "-I", "-B", "-c", _PY_HOST]
        target = module
    elif language == "node":
        node = shutil.which("node")
        if node is None:
            raise GraderEnvironmentError("node is not installed: Node.js calls need Node 20 or newer on PATH")
        argv = [node, "--input-type=module", "--eval", _NODE_HOST]
        target = module if os.path.isabs(module) else str(work_dir(sandbox) / module)
    else:
        raise ValueError(f"unknown language {language!r} (python or node)")
    request = {"module": target, "out": out, "path": [str(work_dir(sandbox) / p) for p in pythonpath],
               "calls": [{"target": c.target, "args": _wire(list(c.args)), "kwargs": _wire(c.kwargs), "call": c.call}
                         for c in calls]}
    run = run_apart(argv, stdin=json.dumps(request), collect=[out], timeout=timeout, fresh=fresh, files=files, env=env,
                    sandbox=sandbox, apart=apart)
    data = run.files.get(out)
    answers: list[Any] = []
    why = f"the process ended without answering ({run.stopped_by or f'exit {run.exit_code}'})"
    if data is not None:
        try:
            parsed = json.loads(data[:CALLS_ANSWER_LIMIT].decode("utf-8", errors="replace"))
            answers = parsed["results"] if isinstance(parsed, dict) and isinstance(parsed.get("results"), list) else []
            why = "its answer had fewer results than calls"
            if any(_depth(a) > ANSWER_DEPTH for a in answers):  # the grader's comparisons recurse: keep them safe
                answers, why = [], f"its answer was nested deeper than {ANSWER_DEPTH}"
        except (ValueError, RecursionError):
            why = "its answer was not JSON"
    results = []
    for i in range(len(calls)):
        item = answers[i] if i < len(answers) and isinstance(answers[i], dict) else None
        if item is None:
            tail = run.output.strip().splitlines()[-1:] if run.output.strip() else []
            results.append(CallResult(False, error_type="NoAnswer", error_types=("NoAnswer",),
                                      message=why + (f": {tail[0][:200]}" if tail else "")))
        elif item.get("ok") is True:
            results.append(CallResult(True, item.get("value"), unserializable=str(item.get("unserializable") or "")))
        else:
            types = item.get("types")
            results.append(CallResult(False, error_type=str(item.get("type") or "Error"),
                                      error_types=tuple(str(t) for t in types) if isinstance(types, list) else (),
                                      message=str(item.get("message") or "")))
    return results


# --------------------------------------------------------------------------- the accumulator


class Grader:
    """Runs checks against the sandbox and remembers which failed; `finish()` gives the exit status."""

    def __init__(self, sandbox: Path | str | None = None, *, run_all: bool = False) -> None:
        self.sandbox = Path(sandbox).resolve() if sandbox is not None else sandbox_dir()
        self.run_all = run_all
        self.results: list[tuple[str, bool, str]] = []
        """(what was checked, passed, why it failed)"""
        self._pristine: str | None = None
        self.last_run: RunResult | None = None
        """The last command `run` or `command_ok` ran apart (its output and collected files)."""
        _unfinished.append(self)

    # ----- bookkeeping

    @property
    def ok(self) -> bool:
        """Whether every check so far passed."""
        return all(passed for _, passed, _ in self.results)

    def check(self, what: str, passed: bool, why: str = "") -> bool:
        """Record one check (also for a grader's own custom conditions) and print its line."""
        self.results.append((what, bool(passed), "" if passed else why))
        line = f"✓ {what}" if passed else f"✗ {what}" + (f": {why}" if why else "")
        print(line, flush=True)
        return bool(passed)

    def _skip_costly(self, what: str) -> bool:
        if self.ok or self.run_all:
            return False
        print(f"· {what}: skipped (an earlier check failed)", flush=True)
        return True

    def finish(self) -> NoReturn:
        """Print the verdict and exit: 0 when every check passed, 1 otherwise."""
        while _PENDING:  # twins no batch of calls took along: made on their own
            pending = _PENDING.pop(0)
            pending.answered(make_calls("importlib", pending.calls, pythonpath=pending.pythonpath,
                                        timeout=pending.timeout, files=pending.files, sandbox=self.sandbox))
        if self in _unfinished:
            _unfinished.remove(self)
        failed = sum(1 for _, passed, _ in self.results if not passed)
        if not self.results:
            print("grader error: no checks were made", file=sys.stderr)
            sys.exit(EXIT_GRADER_ERROR)
        if failed:
            print(f"FAIL: {failed} of {len(self.results)} checks failed", flush=True)
            sys.exit(EXIT_FAIL)
        print(f"PASS: {len(self.results)} checks", flush=True)
        sys.exit(EXIT_PASS)

    # ----- files

    def path(self, rel: str) -> Path:
        return self.sandbox / rel

    def read_bytes(self, rel: str) -> bytes | None:
        """The bytes of a sandbox file, or None when it is missing, unreadable, not a regular file (a FIFO,
        a socket, a device: refused without blocking), larger than READ_LIMIT, or reached through a link
        that leads out of the sandbox."""
        path = self.path(rel)
        try:
            real = Path(os.path.realpath(path))
            if not real.is_relative_to(os.path.realpath(self.sandbox)):
                return None
            fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0))
        except (OSError, ValueError):
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > READ_LIMIT:
                return None
            chunks, left = [], READ_LIMIT + 1
            while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
                chunks.append(chunk)
                left -= len(chunk)
            data = b"".join(chunks)
            return data if len(data) <= READ_LIMIT else None
        except OSError:
            return None
        finally:
            os.close(fd)

    def read(self, rel: str) -> str | None:
        """The text of a sandbox file, or None when it cannot be read (see `read_bytes`)."""
        data = self.read_bytes(rel)
        return None if data is None else data.decode("utf-8", errors="replace")

    def _is_regular(self, rel: str) -> bool:
        try:
            real = Path(os.path.realpath(self.path(rel)))
            return real.is_relative_to(os.path.realpath(self.sandbox)) and stat.S_ISREG(os.lstat(real).st_mode)
        except (OSError, ValueError):
            return False

    def file_exists(self, rel: str) -> bool:
        return self.check(f"{rel} exists", self._is_regular(rel), "no such file")

    def file_absent(self, rel: str) -> bool:
        return self.check(f"{rel} is gone", not self.path(rel).exists(), "it still exists")

    def file_satisfies(self, rel: str, predicate: Callable[[str], bool], description: str) -> bool:
        """The file's text satisfies `predicate`; `description` completes the line: "<rel> <description>"."""
        what = f"{rel} {description}"
        content = self.read(rel)
        if content is None:
            return self.check(what, False, "no such file")
        return self.check(what, bool(predicate(content)), "it does not")

    def file_contains(self, rel: str, text: str) -> bool:
        return self.file_satisfies(rel, lambda content: text in content, f"contains {text!r}")

    def file_lacks(self, rel: str, text: str) -> bool:
        return self.file_satisfies(rel, lambda content: text not in content, f"does not contain {text!r}")

    def file_matches(self, rel: str, pattern: str, flags: int = re.MULTILINE) -> bool:
        """The file has a match for the regular expression `pattern`."""
        regex = re.compile(pattern, flags)
        return self.file_satisfies(rel, lambda content: regex.search(content) is not None, f"matches /{pattern}/")

    def tree_files(self) -> list[str]:
        """Repo-relative paths of the files in the working tree, tracked or new, except those the pristine
        commit's .gitignore rules ignore (rules the agent added do not hide anything) and tool caches."""
        return gitsafe.tree_files(self.sandbox, pristine_store(), self.pristine())

    def _matching_lines(
        self, pattern: str, paths: Sequence[str], exclude: Sequence[str], flags: int
    ) -> list[str]:
        """`path:line: text` for every line of the (text) files under `paths` that matches."""
        regex = re.compile(pattern, flags)
        hits: list[str] = []
        read = 0
        for rel in self.tree_files():
            if not path_matches(rel, paths) or path_matches(rel, exclude):
                continue
            data = self.read_bytes(rel)
            if data is None:
                continue
            read += len(data)
            if read > SCAN_LIMIT:  # a tree padded to gigabytes must fail the check, not outlast the grader
                raise GitError(f"the files to search hold more than {SCAN_LIMIT} bytes")
            if b"\0" in data:  # binary
                continue
            for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
                if regex.search(line):
                    hits.append(f"{rel}:{number}: {line.strip()[:100]}")
        return hits

    @staticmethod
    def _where(paths: Sequence[str]) -> str:
        return "" if tuple(paths) == ("**",) else f" in {', '.join(paths)}"

    def no_match(
        self, pattern: str, paths: Sequence[str] = ("**",), *, exclude: Sequence[str] = (), flags: int = 0
    ) -> bool:
        """No line of any text file under the globs `paths` matches `pattern` (.git and ignored files excluded)."""
        what = f"no match for /{pattern}/{self._where(paths)}"
        try:
            hits = self._matching_lines(pattern, paths, exclude, flags)
        except GitError as exc:
            return self.check(what, False, str(exc))
        why = f"{len(hits)} found, e.g. " + "; ".join(hits[:MAX_LISTED]) if hits else ""
        return self.check(what, not hits, why)

    def some_match(
        self, pattern: str, paths: Sequence[str] = ("**",), *, exclude: Sequence[str] = (), flags: int = 0
    ) -> bool:
        """At least one line of a text file under the globs `paths` matches `pattern`."""
        what = f"a match for /{pattern}/{self._where(paths)}"
        try:
            hits = self._matching_lines(pattern, paths, exclude, flags)
        except GitError as exc:
            return self.check(what, False, str(exc))
        return self.check(what, bool(hits), "none found")

    # ----- structured files

    def _load_data(self, rel: str, text: str) -> Any:
        if rel.endswith((".yaml", ".yml")):
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
        if _count_values(data) > DATA_VALUES_LIMIT:  # YAML aliases can make a small file a huge tree to compare
            raise ValueError(f"it expands to more than {DATA_VALUES_LIMIT} values")
        return data

    def _config_text(self, rel: str) -> tuple[str | None, str]:
        """(the text of a structured file, "") or (None, why not): a file over DATA_LIMIT is not parsed
        (a config padded to megabytes would keep a pure-Python parser busy past the grader's time)."""
        data = self.read_bytes(rel)
        if data is None:
            return None, "no such file"
        if len(data) > DATA_LIMIT:
            return None, f"{len(data)} bytes, over the {DATA_LIMIT} a configuration file may have"
        return data.decode("utf-8", errors="replace"), ""

    def _data(self, rel: str) -> tuple[Any, str]:
        """(parsed JSON/YAML, "") or (None, why it could not be read)."""
        content, why = self._config_text(rel)
        if content is None:
            return None, why
        try:
            return self._load_data(rel, content), ""
        except Exception as exc:  # noqa: BLE001 - any parse error of the agent's file is a failed check
            return None, f"cannot parse: {(str(exc).splitlines() or [type(exc).__name__])[0]}"

    def key_satisfies(self, rel: str, dotted_key: str, predicate: Callable[[Any], bool], description: str) -> bool:
        """The JSON/YAML value at "a.b.c" satisfies `predicate` (for values with several valid spellings).

        `description` completes the check's line: "config/deploy.yaml: memory <description>".
        """
        what = f"{rel}: {dotted_key} {description}"
        data, why = self._data(rel)
        if why:
            return self.check(what, False, why)
        try:
            actual = _dig(data, dotted_key)
        except KeyError:
            return self.check(what, False, "key not found")
        return self.check(what, bool(predicate(actual)), f"found {actual!r}")

    def _key_equals(self, rel: str, dotted_key: str, expected: Any) -> bool:
        return self.key_satisfies(rel, dotted_key, lambda actual: _same_value(actual, expected), f"== {expected!r}")

    def json_key_equals(self, rel: str, dotted_key: str, expected: Any) -> bool:
        """The JSON file's value at "a.b.c" equals `expected` (same type: 8080 is not "8080")."""
        return self._key_equals(rel, dotted_key, expected)

    def yaml_key_equals(self, rel: str, dotted_key: str, expected: Any) -> bool:
        """The YAML file's value at "a.b.c" equals `expected` (same type)."""
        return self._key_equals(rel, dotted_key, expected)

    def data_unchanged_except(self, rel: str, dotted_keys: Sequence[str] = ()) -> bool:
        """The JSON/YAML file holds the same data as in the pristine commit, apart from `dotted_keys`.

        Compares parsed data, so reformatting or reordering is fine.
        """
        what = f"{rel}: nothing else changed" if dotted_keys else f"{rel}: data unchanged"
        current, why = self._data(rel)
        if why:
            return self.check(what, False, why)
        try:
            original = pristine.pristine_blob(pristine_store(), self.pristine(), rel)
            before = self._load_data(rel, original.decode("utf-8", "replace"))
        except GitError as exc:
            return self.check(what, False, str(exc))
        for key in dotted_keys:
            _drop(current, key)
            _drop(before, key)
        return self.check(what, current == before, "other values differ from the original")

    # ----- Python source

    def _python_names(self, rel: str) -> tuple[dict[str, Any] | None, str]:
        """Top-level names the module defines: {name: literal value or the node kind}."""
        import ast

        content = self.read(rel)
        if content is None:
            return None, "no such file"
        try:
            tree = ast.parse(content)
        except SyntaxError as exc:
            return None, f"syntax error: {exc}"
        names: dict[str, Any] = {}
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names[node.name] = type(node).__name__
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                try:
                    value: Any = ast.literal_eval(node.value)
                except ValueError:
                    value = "<expression>"
                for target in targets:
                    if isinstance(target, ast.Name):
                        names[target.id] = value
        return names, ""

    def defines(self, rel: str, name: str) -> bool:
        """The Python module defines `name` at top level (function, class or assignment)."""
        names, why = self._python_names(rel)
        what = f"{rel} defines {name}"
        return self.check(what, names is not None and name in names, why or "not defined")

    def lacks_definition(self, rel: str, name: str) -> bool:
        """The Python module does not define `name` at top level (a missing file counts as lacking it)."""
        names, why = self._python_names(rel)
        what = f"{rel} does not define {name}"
        if names is None and why != "no such file":
            return self.check(what, False, why)
        return self.check(what, not names or name not in names, "still defined")

    def assigns(self, rel: str, name: str, value: Any) -> bool:
        """The Python module assigns the literal `value` to `name` at top level."""
        names, why = self._python_names(rel)
        what = f"{rel}: {name} = {value!r}"
        if names is None:
            return self.check(what, False, why)
        if name not in names:
            return self.check(what, False, "not assigned")
        return self.check(what, _same_value(names[name], value), f"assigned {names[name]!r}")

    # ----- git

    def pristine(self) -> str:
        if self._pristine is None:
            self._pristine = pristine_commit()
        return self._pristine

    def changed_paths(self) -> list[str]:
        """Paths whose bytes or mode differ from the pristine commit: modified, deleted or added, whatever the
        repository's history, index or ignore rules say (only the pristine .gitignore rules count)."""
        return gitsafe.changed_paths(self.sandbox, pristine_store(), self.pristine())

    def unchanged_except(self, allowed: Sequence[str]) -> bool:
        """Compared with the pristine commit, only paths matching the globs `allowed` changed."""
        what = "nothing changed outside " + ", ".join(allowed) if allowed else "nothing changed"
        try:
            unexpected = [p for p in self.changed_paths() if not path_matches(p, allowed)]
        except GitError as exc:
            return self.check(what, False, str(exc))
        return self.check(what, not unexpected, "changed: " + ", ".join(unexpected[:MAX_LISTED]))

    def unchanged(self, paths: Sequence[str]) -> bool:
        """These files or folders are exactly as in the pristine commit (none added, edited or removed)."""
        what = f"{', '.join(paths)} unchanged"
        try:
            changed = [p for p in self.changed_paths() if path_matches(p, paths)]
        except GitError as exc:
            return self.check(what, False, str(exc))
        return self.check(what, not changed, "changed: " + ", ".join(changed[:MAX_LISTED]))

    def git_head_message(self, expected: str) -> bool:
        """HEAD's commit message is `expected` (surrounding whitespace ignored)."""
        what = f"HEAD's commit message is {expected!r}"
        try:
            message = gitsafe.sandbox_git(self.sandbox, ["log", "-1", "--format=%B", "HEAD"]).strip()
        except GitError as exc:
            return self.check(what, False, str(exc))
        return self.check(what, message == expected.strip(), f"it is {message[:200]!r}")

    def git_head_moved(self) -> bool:
        """HEAD is a new commit, not the pristine one."""
        what = "a new commit was made"
        try:
            head = gitsafe.sandbox_git(self.sandbox, ["rev-parse", "--verify", "HEAD^{commit}"]).strip()
            return self.check(what, head != self.pristine(), "HEAD is still the pristine commit")
        except GitError as exc:
            return self.check(what, False, str(exc))

    def git_clean(self) -> bool:
        """Nothing uncommitted: no staged, modified or untracked (non-ignored) files."""
        what = "the working tree is clean"
        try:
            status = gitsafe.sandbox_git(self.sandbox, ["status", "--porcelain", "--untracked-files=all"])
        except GitError as exc:
            return self.check(what, False, str(exc))
        dirty = status.splitlines()
        return self.check(what, not dirty, "uncommitted: " + "; ".join(d.strip() for d in dirty[:MAX_LISTED]))

    # ----- the model's code, run apart from the grader (see agentic_eval/grading/sealed.py)

    def run(
        self,
        argv: Sequence[str],
        *,
        files: dict[str, str | bytes] | None = None,
        collect: Sequence[str] = (),
        env: dict[str, str] | None = None,
        pythonpath: Sequence[str] = (),
        stdin: str | bytes | None = None,
        timeout: float = 30.0,
        fresh: bool = False,
        cwd: str = "",
        apart: bool = False,
    ) -> RunResult:
        """Run `argv` as the model's code (see `run_apart`) and return what came back; records no check."""
        self.last_run = run_apart(argv, files=files, collect=collect, env=env, pythonpath=pythonpath, stdin=stdin,
                                  timeout=timeout, fresh=fresh, cwd=cwd, sandbox=self.sandbox, apart=apart)
        return self.last_run

    @property
    def work(self) -> Path:
        """The work copy's path, as the model's code sees it (for arguments; the grader never reads it)."""
        return work_dir(self.sandbox)

    @property
    def scratch(self) -> Path:
        """The scratch folder's path, as the model's code sees it: put fixtures there with `files=`."""
        return scratch_dir(self.sandbox)

    def command_ok(
        self,
        argv: Sequence[str],
        *,
        timeout: float = 30.0,
        pythonpath: Sequence[str] = (),
        expect_output: str | None = None,
        what: str | None = None,
        files: dict[str, str | bytes] | None = None,
        collect: Sequence[str] = (),
        env: dict[str, str] | None = None,
        stdin: str | bytes | None = None,
        fresh: bool = False,
    ) -> str | None:
        """Run `argv` in the work copy, apart from the grader: exit 0 (and `expect_output` in stdout+stderr)
        passes. `pythonpath`: work-copy folders put first on PYTHONPATH (e.g. ["src"]); `files`, `collect`,
        `env`, `stdin`, `fresh` as for `run`, whose result stays in `self.last_run`.

        Returns the output when the command ran, else None.
        """
        what = self.command_due(argv, what)
        if what is None:
            return None
        run = self.run(argv, files=files, collect=collect, env=env, pythonpath=pythonpath, stdin=stdin,
                       timeout=timeout, fresh=fresh)
        return self.command_checked(what, run, timeout=timeout, expect_output=expect_output)

    def command_due(self, argv: Sequence[str], what: str | None = None) -> str | None:
        """The name of `command_ok`'s check of `argv` (`what`, or "`argv` succeeds"), or None when it is skipped (an
        earlier check failed); GraderEnvironmentError when the grader's environment lacks the program. For a grader
        that runs the command its own way (`runs_apart`) and records it with `command_checked`."""
        what = what or f"`{' '.join(argv)}` succeeds"
        if self._skip_costly(what):
            return None
        import shutil

        if argv and "/" not in argv[0] and shutil.which(argv[0]) is None:  # the grader's environment lacks it
            raise GraderEnvironmentError(f"cannot run {argv[0]!r}: it is not on PATH")
        return what

    def command_checked(self, what: str, run: RunResult, *, timeout: float = 30.0,
                        expect_output: str | None = None) -> str | None:
        """Record `command_ok`'s check for a command already run (`runs_apart`'s): exit 0, and `expect_output` in
        its output. Returns the output when the command ran, else None."""
        self.last_run = run
        if run.exit_code is None:
            self.check(what, False, run.stopped_by or f"timed out after {timeout:g}s")
        elif run.exit_code != 0:
            self.check(what, False, f"exit {run.exit_code}\n{_tail(run.output)}")
        elif expect_output is not None and expect_output not in run.output:
            self.check(what, False, f"output lacks {expect_output!r}\n{_tail(run.output)}")
        else:
            self.check(what, True)
        return run.output if run.exit_code is not None else None

    def calls_return(
        self,
        module: str,
        cases: Sequence[tuple[Any, ...]],
        *,
        language: str = "python",
        pythonpath: Sequence[str] = ("src",),
        timeout: float = 30.0,
        fresh: bool = False,
        files: dict[str, str | bytes] | None = None,
        env: dict[str, str] | None = None,
    ) -> list[CallResult] | None:
        """Hidden checks whose assertions run here, in the grader: each case is `(target, args, expected)`
        or `(Call(...), expected)`, and `expected` a plain value (compared with its type) or `Raises("Name")`.
        The calls are made in one process of the model's code, apart from the grader (`make_calls`); only
        what they returned crosses back, as JSON, so no object that "equals everything", no patched test
        runner and no exit code can pass a case. One check line per case."""
        calls, expected = [], []
        for case in cases:
            if isinstance(case[0], Call):
                calls.append(case[0])
                expected.append(case[1])
            else:
                target, args, want = case
                calls.append(Call(target, tuple(args)))
                expected.append(want)
        if self._skip_costly(f"{len(calls)} calls into {module}"):
            return None
        results = make_calls(module, calls, language=language, pythonpath=pythonpath, timeout=timeout, fresh=fresh,
                             files=files, env=env, sandbox=self.sandbox)
        for call, want, result in zip(calls, expected, results, strict=True):
            shown = ", ".join(f"${a['$ref']}" if isinstance(a, dict) and list(a) == ["$ref"] else _short(a, 40)
                              for a in call.args)
            label = f"{call.target}({shown})" if call.call else call.target
            goal = (f"raises {want.name}" if isinstance(want, Raises) else "returns" if isinstance(want, Returns)
                    else f"returns {_short(want, 60)}")
            self.check(f"{label} {goal}", result.matches(want), result.describe())
        return results

    # ----- test suites, run apart and cross-checked

    def _canaries(self, language: str, passing: str = "", failing: str = "") -> tuple[str, str, str]:
        """(a source file of two tests, the name of the one that must pass, the one that must fail): added
        to a test run beside the real tests, with names the model cannot know. A run that reports the
        failing one passed, or either missing, had its results rewritten: it is a fail, not a pass."""
        import secrets

        a, b = secrets.randbelow(900) + 100, secrets.randbelow(900) + 100
        while passing == failing:
            passing, failing = (f"test_{secrets.choice(_VERBS)}_{secrets.choice(_NOUNS)}_{secrets.choice(_NOUNS)}"
                                for _ in range(2))
        if language == "python":
            source = (f"def {passing}():\n    assert {a} + {b} == {a + b}\n\n\n"
                      f"def {failing}():\n    assert {a} * {b} == {a * b + 1}\n")
        else:
            source = ('import { test } from "node:test";\nimport assert from "node:assert/strict";\n\n'
                      f'test("{passing}", () => {{\n  assert.equal({a} + {b}, {a + b});\n}});\n\n'
                      f'test("{failing}", () => {{\n  assert.equal({a} * {b}, {a * b + 1});\n}});\n')
        return source, passing, failing

    def _canary_place(self, selection: Sequence[str], suffix: str) -> str:
        """A new test file's path in the work copy, beside the first selected tests."""
        import secrets

        first = Path(selection[0].split("::")[0]) if selection else Path("tests")
        folder = first if self.path(str(first)).is_dir() else first.parent
        from shuffled import free_name

        def at(stem: str) -> str:
            name = f"test_{stem}{suffix}" if suffix == ".py" else f"{stem}{suffix}"
            return str(folder / name) if str(folder) not in ("", ".") else name

        # a name like the repo's own (no fixed prefix a forgery could spare), not one it has: longer when the tree
        # holds every name of a length, never an endless search
        stem = free_name(lambda n: "_".join(secrets.choice(_NOUNS) for _ in range(n)),
                         lambda stem: not os.path.lexists(self.path(at(stem))))
        return at(stem)

    def _hidden_files(self, extra_tests: Sequence[str]) -> tuple[dict[str, str | bytes], list[str]]:
        """Hidden tests from the task's data/ folder, given to the run in the scratch folder (with the task's
        variables, which they read): they run with the model's code, so the verdict must not rest on them
        alone; `calls_return` keeps its assertions in the grader."""
        files: dict[str, str | bytes] = {}
        paths = []
        for rel in extra_tests:
            target = f"{self.scratch}/hidden/{Path(rel).name}"
            files[target] = (task_dir() / "data" / rel).read_bytes()
            paths.append(target)
        if extra_tests and os.environ.get("AGENTIC_EVAL_VARS"):
            files[f"{self.scratch}/hidden/vars.json"] = _env_path("AGENTIC_EVAL_VARS").read_bytes()
        return files, paths

    def pytest_passes(
        self,
        selection: Sequence[str] = ("tests",),
        *,
        extra_tests: Sequence[str] = (),
        min_passed: int = 1,
        require: Sequence[str] = (),
        allow_skipped: bool = False,
        pythonpath: Sequence[str] = ("src",),
        timeout: float = 60.0,
        what: str | None = None,
        fresh: bool = False,
        twins: Sequence[dict[str, Any]] | None = None,
        twin_modules: dict[str, str] | None = None,
        twins_except: Sequence[str] = (),
        hidden_suite: dict[str, str] | None = None,
    ) -> PytestRun | None:
        """Run pytest on `selection` (work-copy paths or node ids) plus the hidden `extra_tests`.

        pytest runs as the model's code does, apart from the grader (`run_apart`), with the grader's own
        pytest (never one from the sandbox: the interpreter runs isolated and puts the `pythonpath`
        folders on sys.path only after the standard library and site-packages), no conftest.py and no
        plugins. Two tests the model cannot know of run beside the real ones, one that must pass and one
        that must fail: a run whose results were rewritten (a patched report, a plugin, a JUnit file
        rewritten at exit, an early exit) is caught by them and fails.

        `extra_tests` are files in the task's `data/` folder, copied to the scratch folder (not into the
        sandbox) with the task's variables (AGENTIC_EVAL_VARS): they run with the model's code, which can
        read them, so prefer `calls_return` for hidden checks.

        Passes only if the JUnit XML shows at least `min_passed` real tests passed, none failed or errored,
        none skipped unless `allow_skipped`, and every test named in `require` ("name" or
        "tests/test_x.py::name") among the passed. `fresh`: run on a new copy of the snapshot (what earlier
        commands did to the work copy gone).

        Twin checks (graders/twincheck.py): the selected tests that the sandbox's generator wrote have twins
        in the task's variables (`twins`), the same calls and expected values as data; they are made apart
        too, but judged here, and decide: a test whose twin fails is a failed check whatever the report
        says, and one the report calls passed is named to the harness as forged (`tests_forged`). `twins`:
        other twins than the variables'; `twin_modules`: modules the task renames ({"pkg.usage":
        "pkg.meter_log"}); `twins_except`: test files the task removes. The twins' calls go first in the
        grader's next batch of Python calls (`calls_return`, `make_calls`), or are made at `finish`.

        Without twins, the run is the grader's own copy of the selected test files (graders/shuffled.py):
        each copied beside itself under a new name, every test renamed, the canaries inside one copy named
        like real tests, so no forgery can spare them by name or file; the report's cases are translated
        back to the repo's names. Its check line then ends "(from the run's report alone)".

        `hidden_suite`: test files the model never saw (path as if in the repo -> source, e.g. from the task's
        variables); `selection` may name them or their tests by node id. They join the grader's own copy like the
        repo's files (a new name beside where they would be, every test renamed, the canaries maybe among them).
        """
        names = [*selection, *(f"hidden {Path(t).name}" for t in extra_tests)]
        what = what or "tests pass: " + " ".join(names)
        if self._skip_costly(what):
            return None
        chosen = [] if hidden_suite else self._twins_for(selection, twins, twins_except)
        import importlib.util

        if importlib.util.find_spec("pytest") is None:
            raise GraderEnvironmentError(f"the grader's Python {python_executable()} cannot import pytest; "
                                         "pip install pytest")
        files, hidden = self._hidden_files(extra_tests)
        shuffled = None if chosen else self._shuffled_suite(selection, hidden_suite or {})
        if shuffled is not None:  # no twins: the grader's own copy, every name and file new, canaries inside
            passing, failing = shuffled.passing, [shuffled.failing, *shuffled.also_failing]
            files.update(shuffled.files)
            tests = shuffled.argv
        else:
            source, passing, one = self._canaries("python")
            failing = [one]
            canary = self._canary_place(selection, ".py")
            files[canary] = source
            tests = _with_canary(selection, canary)
        files[f"{self.scratch}/pytest.ini"] = "[pytest]\n"
        report = f"{self.scratch}/report-{secrets.token_hex(6)}.xml"
        argv = [
            *pytest_argv(python_executable(), [str(self.work / p) for p in pythonpath]),
            "-q", *PYTEST_PLUGINS_OFF, "--noconftest",
            "--import-mode=importlib", "-c", f"{self.scratch}/pytest.ini", "--rootdir", str(self.work),
            "--junitxml", report, "-o", "junit_family=xunit1", *tests, *hidden,
        ]
        env = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
        if hidden:
            env["AGENTIC_EVAL_VARS"] = f"{self.scratch}/hidden/vars.json"
        run = self.run(argv, files=files, collect=[report], env=env, timeout=timeout, fresh=fresh)
        result = self._test_run(run, report, passing, failing)
        if shuffled is not None:
            result.cases = [_unshuffled(c, shuffled.names) for c in result.cases]
        self.check(what if chosen else what + REPORT_ALONE,
                   *self._judge(result, min_passed, require, allow_skipped, timeout, runner="pytest"))
        if chosen:
            self._defer_twins(chosen, twin_modules, pythonpath, timeout, result)
        return result

    def _defer_twins(self, chosen: list[dict[str, Any]], rename: dict[str, str] | None, pythonpath: Sequence[str],
                     timeout: float, run: PytestRun) -> None:
        """The twins' calls go first in the grader's next batch of Python calls (one process fewer), or are made
        at `finish` when no batch comes; their check is made when they are answered."""
        from twincheck import judge_results, plan_twins

        batch = plan_twins(chosen, rename)

        def answered(results: Sequence[CallResult]) -> None:
            self._judge_twins(judge_results(chosen, batch, results), run)

        _PENDING.append(_Pending(batch.calls, dict(batch.files), tuple(pythonpath), timeout, answered))

    def _shuffled_suite(self, selection: Sequence[str], hidden: dict[str, str]) -> Any:
        """The grader's own copy of the selected Python tests (graders/shuffled.py), or None when there is none
        to make (nothing readable selected)."""
        from shuffled import selected_files, shuffle_python

        def listed(folder: str) -> list[str] | None:
            root = self.path(folder)
            if root.is_symlink() or not root.is_dir():
                return None
            found: list[str] = []
            for dirpath, dirnames, filenames in walk(root):  # links never followed, any depth (os.walk recursed)
                dirnames[:] = sorted(d for d in dirnames if d not in ("__pycache__", "node_modules", ".git"))
                found += [os.path.relpath(os.path.join(dirpath, n), self.sandbox) for n in sorted(filenames)
                          if n.endswith(".py") and (n.startswith("test_") or n.endswith("_test.py"))]
                if len(found) > 2000:
                    break
            return found

        wanted = selected_files(selection, lambda folder: None if folder in hidden else listed(folder))
        sources = {rel: text for rel in wanted if (text := hidden.get(rel, self.read(rel))) is not None}
        if not sources or len(sources) != len(wanted):
            return None  # a selected file is missing or unreadable: the run as asked says so

        def canaries(passing: str, failing: str) -> str:  # failing "": the passing one alone (the other is a look-alike)
            source = self._canaries("python", passing, failing or f"{passing}_")[0]
            return source if failing else source.split("\n\n\n")[0] + "\n"

        return shuffle_python(sources, wanted, lambda rel: os.path.lexists(self.path(rel)), canaries)

    def _shuffled_node(self, files_run: Sequence[str]) -> Any:
        """The grader's own copy of the selected Node test files (graders/shuffled.py), or None when a selected
        file cannot be read (the run as asked then says so)."""
        from shuffled import shuffle_node

        sources: dict[str, str] = {}
        for path in files_run:
            rel = os.path.relpath(path, self.work)
            text = self.read(rel)
            if text is None or rel.startswith(".."):
                return None
            sources[rel] = text
        if not sources:
            return None

        def canaries(esm: bool, passing: str, failing: str) -> str:
            tag = secrets.token_hex(3)
            a, b = secrets.randbelow(900) + 100, secrets.randbelow(900) + 100
            head = (f'import {{ test as test_{tag} }} from "node:test";\nimport assert_{tag} from "node:assert/strict";\n'
                    if esm else f'const {{ test: test_{tag} }} = require("node:test");\n'
                    f'const assert_{tag} = require("node:assert/strict");\n')
            return (head + f'\ntest_{tag}("{passing}", () => {{\n  assert_{tag}.equal({a} + {b}, {a + b});\n}});\n\n'
                    f'test_{tag}("{failing}", () => {{\n  assert_{tag}.equal({a} * {b}, {a * b + 1});\n}});\n')

        def esm(rel: str, source: str) -> bool:
            """As node decides: .mjs, .cjs, else the nearest package.json's "type", else the file's syntax."""
            if rel.endswith((".mjs", ".cjs")):
                return rel.endswith(".mjs")
            folder = Path(rel).parent
            while True:
                package = self.read(str(folder / "package.json"))
                kind = re.search(r'"type"\s*:\s*"(module|commonjs)"', package or "")
                if kind is not None:
                    return kind.group(1) == "module"
                if package is not None:
                    break  # no "type": node goes by the file's syntax
                if str(folder) in ("", "."):
                    break
                folder = folder.parent
            return re.search(r"^\s*(import|export)\b", source, re.MULTILINE) is not None

        return shuffle_node(sources, lambda rel: os.path.lexists(self.path(rel)), canaries, esm)

    def _twins_for(self, selection: Sequence[str], twins: Sequence[dict[str, Any]] | None,
                   dropped: Sequence[str]) -> list[dict[str, Any]]:
        """The twins of the selected tests: of a selected folder, file or node id."""
        if twins is None:
            try:
                twins = task_vars().get("twins") or []
            except RuntimeError:  # no variables: a grader run by hand outside agentic-eval
                twins = []
        chosen = []
        for twin in twins:
            file, name = str(twin.get("file") or ""), str(twin.get("name") or "")
            if path_matches(file, dropped) or f"{file}::{name}" in dropped:
                continue
            for item in selection:
                path, _, test = item.partition("::")
                if (file == path.strip("/") or path_matches(file, [path])) and test in ("", name):
                    chosen.append(twin)
                    break
        return chosen

    def _judge_twins(self, judged: Sequence[Any], run: PytestRun) -> None:
        """One check for the twins; the tests the report calls passed whose twins fail go to the harness."""
        failed = [t for t in judged if not t.passed]
        forged = [t.label for t in failed if run.passed(t.label)]
        why = "; ".join(f"{t.label}: {t.why}" for t in failed[:MAX_LISTED])
        if forged:
            why = (f"the test run's report says {len(forged)} passed that fail when judged here (forged: "
                   f"{', '.join(forged[:MAX_LISTED])}); " + why)
            _tell_harness({"tests_forged": forged})
        self.check(f"{len(judged)} visible tests, judged here (their twins), pass", not failed, why)

    def _test_run(self, run: RunResult, report: str, passing: str, failing: str | Sequence[str]) -> PytestRun:
        """The test run's real cases, and whether its canaries came out as they must: every case of the one
        that must pass passed, every case of each that must fail (`failing`: one name or several) failed."""
        result = PytestRun(exit_code=run.exit_code, output=run.output, stopped_by=run.stopped_by)
        data = run.files.get(report)
        if run.exit_code is None or data is None:
            return result
        try:
            cases = _read_junit_bytes(data)
        except Exception as exc:  # noqa: BLE001 - a truncated or hostile report: the run did not finish properly
            result.output += f"\nunreadable JUnit report: {str(exc)[:200]}"
            return result
        result.report_written = True
        must_fail = [failing] if isinstance(failing, str) else list(failing)
        planted = {passing, *must_fail}
        outcomes: dict[str, set[str]] = {}
        for c in cases:
            if c.name.split("[")[0] in planted:
                outcomes.setdefault(c.name.split("[")[0], set()).add(c.outcome)
        if not outcomes and run.exit_code not in (0, 1):
            result.report_written = False  # the run stopped before any test (a missing file, a collection error)
            return result

        def came_out(name: str) -> str:
            return "/".join(sorted(outcomes.get(name, {"missing"})))

        wrong = [name for name in must_fail if outcomes.get(name) != {"failed"}]
        if outcomes.get(passing) != {"passed"} or wrong or run.exit_code == 0:
            result.tampered = (f"a test that must fail came out {came_out(wrong[0] if wrong else must_fail[0])}, "
                               f"one that must pass {came_out(passing)}, exit {run.exit_code}")
        result.cases = [c for c in cases if c.name.split("[")[0] not in planted]
        return result

    @staticmethod
    def _judge(run: PytestRun, min_passed: int, require: Sequence[str], allow_skipped: bool,
               timeout: float, runner: str = "pytest") -> tuple[bool, str]:
        if run.exit_code is None:  # the code host's reason: a time-out, or a file it could not place
            return False, run.stopped_by or f"timed out after {timeout:g}s"
        if not run.report_written:
            return False, f"{runner} wrote no report (exit {run.exit_code}; did the run end early?)\n{_tail(run.output)}"
        if run.tampered:
            return False, f"the test run's results were rewritten: {run.tampered}"
        bad = [c for c in run.cases if c.outcome in ("failed", "error") or (c.outcome == "skipped" and not allow_skipped)]
        if bad:
            listed = "; ".join(f"{c.label} {c.outcome}: {c.message.splitlines()[0][:120] if c.message else ''}"
                               for c in bad[:MAX_LISTED])
            return False, f"{len(bad)} not passed: {listed}"
        if not run.cases:
            return False, "no tests were collected"
        passed = run.count("passed")
        if passed < min_passed:
            return False, f"only {passed} passed, expected at least {min_passed}"
        missing = [name for name in require if not run.passed(name)]
        if missing:
            return False, "did not run and pass: " + ", ".join(missing)
        if run.exit_code != 1:  # 1: some test failed, the planted failing one
            return False, f"{runner} exited {run.exit_code} although every test passed\n{_tail(run.output)}"
        return True, ""

    # ----- Node.js (issue 19): the built-in test runner on sandbox code, hidden tests from data/

    def node_tests_pass(
        self,
        selection: Sequence[str] = ("test",),
        *,
        extra_tests: Sequence[str] = (),
        min_passed: int = 1,
        require: Sequence[str] = (),
        allow_skipped: bool = False,
        timeout: float = 60.0,
        what: str | None = None,
        fresh: bool = False,
        twins: Sequence[dict[str, Any]] | None = None,
        twins_except: Sequence[str] = (),
    ) -> PytestRun | None:
        """Run Node's built-in test runner (`node --test`) on work-copy test files plus hidden ones, apart
        from the grader, cross-checked like `pytest_passes` (two planted tests, one that must fail).

        `selection`: files or folders (a folder means its `*.test.js`/`*.test.mjs` files). `extra_tests`:
        files in the task's `data/`, given to the run in the scratch folder with the task's variables; they
        find the code under test through AGENTIC_EVAL_SANDBOX (the work copy). Only `node` itself runs: no
        package.json script, no node_modules test runner, no NODE_OPTIONS. Judged from the JUnit report
        (`require` holds test names). `fresh` as for `pytest_passes`.

        Twin checks as for `pytest_passes`: the selected tests the generator wrote have twins in the task's
        variables (graders/twincheck.py), made first in one node process of the model's code and judged here;
        they decide, and a test the report calls passed whose twin fails is named as forged. `twins_except`:
        test files, or "file::title" tests, the task lets the model change.
        """
        import shutil

        names = [*selection, *(f"hidden {Path(t).name}" for t in extra_tests)]
        what = what or "node tests pass: " + " ".join(names)
        if self._skip_costly(what):
            return None
        node = shutil.which("node")
        if node is None:
            raise GraderEnvironmentError("node is not installed: the Node.js packs need Node 20 or newer on PATH")
        files_run: list[str] = []
        for rel in selection:
            path = self.path(rel)
            if path.is_dir():  # its test files at any depth (Path.rglob recursed once per level: RecursionError)
                found = []
                for folder, dirs, others in walk(path):  # links never followed
                    dirs[:] = [d for d in dirs if d != "node_modules"]
                    found += [os.path.join(folder, n) for n in others if fnmatch.fnmatchcase(n, "*.test.*js")]
                files_run += sorted(str(self.work / os.path.relpath(f, self.sandbox)) for f in found)
            else:
                files_run.append(str(self.work / rel))  # a missing file makes node fail, which fails the check
        chosen = self._twins_for(selection, twins, twins_except)
        twins_made = None
        if chosen:  # on a copy of their own that no other command touches, beside the test run on its own
            from concurrent.futures import ThreadPoolExecutor

            from twincheck import judge_node_twins

            pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="twins")
            twins_made = pool.submit(judge_node_twins, chosen, timeout=timeout, apart=True, sandbox=self.sandbox)
            pool.shutdown(wait=False)
        files, hidden = self._hidden_files(extra_tests)
        shuffled = self._shuffled_node(files_run)
        failing: str | list[str]
        if shuffled is not None:  # the grader's own copy: every title and file new, the canaries inside one
            passing, failing = shuffled.passing, [shuffled.failing, *shuffled.also_failing]
            files.update(shuffled.files)
            files_run = [str(self.work / rel) for rel in shuffled.argv]
            tests = files_run
        else:
            source, passing, failing = self._canaries("node")
            canary = self._canary_place(selection, ".test.mjs")
            files[canary] = source
            tests = _with_canary(files_run, str(self.work / canary))
        report = f"{self.scratch}/report-{secrets.token_hex(6)}.xml"
        argv = [node, "--test", "--test-reporter=junit", f"--test-reporter-destination={report}", *tests, *hidden]
        env = {"AGENTIC_EVAL_VARS": f"{self.scratch}/hidden/vars.json"} if hidden else {}
        run = self.run(argv, files=files, collect=[report], env=env, timeout=timeout, fresh=fresh,
                       apart=twins_made is not None)
        judged: list[Any] = twins_made.result() if twins_made is not None else []
        result = self._test_run(run, report, passing, failing)
        if shuffled is not None:
            real = shuffled.names
            result.cases = [TestCase(real[("", c.name)][0], c.classname, real[("", c.name)][1], c.outcome, c.message)
                            if ("", c.name) in real else c for c in result.cases]
        # A file that ran without defining a test is reported as one passing "test" named after the file: it
        # proves nothing, so it does not count.
        shown = {*files_run, *hidden}
        result.cases = [c for c in result.cases if not (c.outcome == "passed" and c.name in shown)]
        self.check(what if chosen else what + REPORT_ALONE,
                   *self._judge(result, min_passed, require, allow_skipped, timeout, runner="node --test"))
        if chosen:
            self._judge_twins(judged, result)
        return result

    # ----- configuration formats (issue 19): INI and TOML, parsed, never string-matched

    def ini_value(self, rel: str, section: str, key: str) -> str | None:
        """The raw value of `key` in `[section]` of an INI file, or None (missing or unparsable)."""
        import configparser

        content, _ = self._config_text(rel)
        if content is None:
            return None
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(content)
            return parser.get(section, key)
        except configparser.Error:
            return None

    def toml_data(self, rel: str) -> tuple[Any, str]:
        """(parsed TOML, "") or (None, why it could not be read)."""
        import tomllib

        content, why = self._config_text(rel)
        if content is None:
            return None, why
        try:
            return tomllib.loads(content), ""
        except (tomllib.TOMLDecodeError, RecursionError, ValueError) as exc:
            return None, f"cannot parse: {str(exc)[:200] or type(exc).__name__}"
