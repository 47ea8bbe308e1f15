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
runs with the sandbox's config or hooks (see agentic_eval/packs/gitsafe.py).
"""

from __future__ import annotations

import atexit
import json
import os
import re
import signal
import subprocess
import sys
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, NoReturn

from agentic_eval.packs import gitsafe
from agentic_eval.packs.gitsafe import GitError

__all__ = [
    "EXIT_FAIL",
    "EXIT_GRADER_ERROR",
    "EXIT_PASS",
    "Grader",
    "GraderEnvironmentError",
    "PytestRun",
    "TestCase",
    "pristine_commit",
    "pristine_store",
    "python_executable",
    "sandbox_dir",
    "task_dir",
    "task_vars",
]

EXIT_PASS = 0
EXIT_FAIL = 1
EXIT_GRADER_ERROR = 3

MAX_LISTED = 5
"""Offending lines, files or tests named in one failure reason."""


# --------------------------------------------------------------------------- process-wide safety nets


def _exit_on_uncaught(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    """An uncaught exception in a grader is the grader's bug: exit 3, never 1."""
    traceback.print_exception(exc_type, exc, tb)
    print(f"grader error: uncaught {exc_type.__name__}", file=sys.stderr)
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
    return str(_env_path(gitsafe.COMMIT_ENV))


def pristine_store() -> Path:
    """The harness's copy of the pristine objects, outside the sandbox (AGENTIC_EVAL_PRISTINE_GIT)."""
    return _env_path(gitsafe.STORE_ENV)


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


def _read_junit(path: Path) -> list[TestCase]:
    import xml.etree.ElementTree as ET

    cases = []
    for element in ET.parse(path).getroot().iter("testcase"):
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


def _kill_group(proc: subprocess.Popen[Any]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _run(argv: Sequence[str], cwd: Path, env: dict[str, str], timeout: float) -> tuple[int | None, str]:
    """Run a command in its own process group; (exit code or None on timeout, stdout+stderr)."""
    proc = subprocess.Popen(
        list(argv), cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, _ = proc.communicate()
        code = None
    finally:
        _kill_group(proc)
    return code, out.decode("utf-8", errors="replace")


_EXIT_NO_PYTEST = 97
_PYTEST_BOOT = f"""\
import os, sys
paths = [p for p in sys.argv[1].split(os.pathsep) if p]
del sys.argv[1]
sys.argv[0] = "pytest"
try:
    import pytest
except ImportError as exc:
    print(f"{{type(exc).__name__}}: {{exc}}")
    raise SystemExit({_EXIT_NO_PYTEST})
sys.path.extend(paths)
raise SystemExit(pytest.main(sys.argv[1:]))
"""


def _tail(text: str, lines: int = 8) -> str:
    return "\n".join("    " + line for line in text.strip().splitlines()[-lines:])


# --------------------------------------------------------------------------- the accumulator


class Grader:
    """Runs checks against the sandbox and remembers which failed; `finish()` gives the exit status."""

    def __init__(self, sandbox: Path | str | None = None, *, run_all: bool = False) -> None:
        self.sandbox = Path(sandbox).resolve() if sandbox is not None else sandbox_dir()
        self.run_all = run_all
        self.results: list[tuple[str, bool, str]] = []
        """(what was checked, passed, why it failed)"""
        self._pristine: str | None = None
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

    def read(self, rel: str) -> str | None:
        """The text of a sandbox file, or None when it is missing or unreadable."""
        try:
            return self.path(rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def file_exists(self, rel: str) -> bool:
        return self.check(f"{rel} exists", self.path(rel).is_file(), "no such file")

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
        for rel in self.tree_files():
            if not path_matches(rel, paths) or path_matches(rel, exclude):
                continue
            try:
                data = (self.sandbox / rel).read_bytes()
            except OSError:
                continue
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

            return yaml.safe_load(text)
        return json.loads(text)

    def _data(self, rel: str) -> tuple[Any, str]:
        """(parsed JSON/YAML, "") or (None, why it could not be read)."""
        content = self.read(rel)
        if content is None:
            return None, "no such file"
        try:
            return self._load_data(rel, content), ""
        except Exception as exc:  # noqa: BLE001 - any parse error of the agent's file is a failed check
            return None, f"cannot parse: {str(exc).splitlines()[0]}"

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
            original = gitsafe.pristine_blob(pristine_store(), self.pristine(), rel)
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

    # ----- commands

    def _env(self, pythonpath: Sequence[str] = ()) -> dict[str, str]:
        """The grader's own (allow-listed) environment, with the sandbox folders `pythonpath` importable."""
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(str(self.sandbox / p) for p in pythonpath)
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["AGENTIC_EVAL_SANDBOX"] = str(self.sandbox)
        return env

    def command_ok(
        self,
        argv: Sequence[str],
        *,
        timeout: float = 30.0,
        pythonpath: Sequence[str] = (),
        expect_output: str | None = None,
        what: str | None = None,
    ) -> str | None:
        """Run `argv` in the sandbox: exit 0 (and `expect_output` in stdout+stderr) passes.

        `pythonpath`: sandbox folders put first on PYTHONPATH (e.g. ["src"]).
        Returns the output when the command ran, else None.
        """
        what = what or f"`{' '.join(argv)}` succeeds"
        if self._skip_costly(what):
            return None
        try:
            code, output = _run(argv, self.sandbox, self._env(pythonpath), timeout)
        except OSError as exc:
            if "/" not in argv[0]:  # a program the grader expects on PATH: the grader's environment lacks it
                raise GraderEnvironmentError(f"cannot run {argv[0]!r}: {exc}") from None
            self.check(what, False, f"cannot run: {exc}")  # a file of the sandbox's, gone or broken
            return None
        if code is None:
            self.check(what, False, f"timed out after {timeout:g}s")
        elif code != 0:
            self.check(what, False, f"exit {code}\n{_tail(output)}")
        elif expect_output is not None and expect_output not in output:
            self.check(what, False, f"output lacks {expect_output!r}\n{_tail(output)}")
        else:
            self.check(what, True)
        return output

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
    ) -> PytestRun | None:
        """Run pytest on `selection` (sandbox paths or node ids) plus the hidden `extra_tests`.

        `extra_tests` are paths inside the task's `data/` folder; they are copied to a
        temporary folder outside the sandbox and run from there, with the sandbox's
        `pythonpath` folders importable, so nothing of them lands in the sandbox.

        Passes only if pytest exited 0 and its JUnit XML (written outside the sandbox)
        shows at least `min_passed` tests passed, none failed or errored, none skipped
        unless `allow_skipped`, and every test named in `require` ("name" or
        "tests/test_x.py::name") among the passed. The sandbox's own conftest.py files
        and plugins are not loaded, so neither can rewrite the results.
        """
        import shutil  # only graders that run pytest pay for these imports
        import tempfile

        names = [*selection, *(f"hidden {Path(t).name}" for t in extra_tests)]
        what = what or "tests pass: " + " ".join(names)
        if self._skip_costly(what):
            return None
        tmp = Path(tempfile.mkdtemp(prefix="gradelib-pytest-"))
        try:
            if tmp.resolve().is_relative_to(self.sandbox):
                raise RuntimeError(f"temporary folder {tmp} is inside the sandbox")
            hidden = []
            for rel in extra_tests:
                source = task_dir() / "data" / rel
                target = tmp / "hidden" / Path(rel).name
                target.parent.mkdir(exist_ok=True)
                shutil.copyfile(source, target)
                hidden.append(str(target))
            run = self._run_pytest([*selection, *hidden], tmp, pythonpath, timeout)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        self.check(what, *self._judge(run, min_passed, require, allow_skipped, timeout))
        return run

    def _run_pytest(self, args: Sequence[str], tmp: Path, pythonpath: Sequence[str], timeout: float) -> PytestRun:
        ini = tmp / "pytest.ini"
        ini.write_text("[pytest]\n", encoding="utf-8")
        report = tmp / "report.xml"
        # pytest and its plugins come from the grader's Python, never from the sandbox: the interpreter
        # runs isolated (-I: no working directory, PYTHONPATH or user site on sys.path, so a sandbox
        # file named pytest.py, sitecustomize.py or like a standard module is not loaded), imports pytest,
        # and only then puts the sandbox's folders on sys.path, after the standard library and site-packages.
        argv = [
            python_executable(), "-I", "-B", "-c", _PYTEST_BOOT,
            os.pathsep.join(str(self.sandbox / p) for p in pythonpath),
            "-q", "-p", "no:cacheprovider", "--noconftest",
            "--import-mode=importlib", "-c", str(ini), "--rootdir", str(self.sandbox),
            "--junitxml", str(report), "-o", "junit_family=xunit1", *args,  # xunit1 names each test's file
        ]
        env = self._env()
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # fast, and no plugin can rewrite the outcome
        env.pop("PYTEST_ADDOPTS", None)
        env.pop("PYTEST_PLUGINS", None)
        try:
            code, output = _run(argv, self.sandbox, env, timeout)
        except OSError as exc:
            raise GraderEnvironmentError(f"cannot start the grader's Python {argv[0]}: {exc}") from None
        if code == _EXIT_NO_PYTEST:
            raise GraderEnvironmentError(f"the grader's Python {argv[0]} cannot import pytest: "
                                         f"{output.strip().splitlines()[-1:]}; pip install pytest")
        run = PytestRun(exit_code=code, output=output)
        if code is not None and report.is_file():
            try:
                run.cases = _read_junit(report)
                run.report_written = True
            except Exception as exc:  # noqa: BLE001 - a truncated report: the run did not finish properly
                run.output += f"\nunreadable JUnit report: {exc}"
        return run

    @staticmethod
    def _judge(run: PytestRun, min_passed: int, require: Sequence[str], allow_skipped: bool,
               timeout: float) -> tuple[bool, str]:
        if run.exit_code is None:
            return False, f"timed out after {timeout:g}s"
        if not run.report_written:
            return False, f"pytest wrote no report (exit {run.exit_code}; did the run end early?)\n{_tail(run.output)}"
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
        if run.exit_code != 0:
            return False, f"pytest exited {run.exit_code} although every test passed\n{_tail(run.output)}"
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
    ) -> PytestRun | None:
        """Run Node's built-in test runner (`node --test`) on sandbox test files plus hidden ones.

        `selection`: sandbox files or folders (a folder means its `*.test.js`/`*.test.mjs` files).
        `extra_tests`: files in the task's `data/`, copied to a temporary folder outside the
        sandbox and run from there; they find the code under test through the
        AGENTIC_EVAL_SANDBOX environment variable. Only `node` itself runs: no package.json
        script, no node_modules test runner, no NODE_OPTIONS. Judged like `pytest_passes`,
        from the JUnit report written outside the sandbox (`require` holds test names).
        """
        import shutil
        import tempfile

        names = [*selection, *(f"hidden {Path(t).name}" for t in extra_tests)]
        what = what or "node tests pass: " + " ".join(names)
        if self._skip_costly(what):
            return None
        node = shutil.which("node")
        if node is None:
            raise RuntimeError("node is not installed: the Node.js packs need Node 20 or newer on PATH")
        files: list[str] = []
        for rel in selection:
            path = self.sandbox / rel
            if path.is_dir():
                files += sorted(str(p) for p in path.rglob("*.test.*js") if "node_modules" not in p.parts)
            else:
                files.append(str(path))  # a missing file makes node fail, which fails the check
        tmp = Path(tempfile.mkdtemp(prefix="gradelib-node-"))
        try:
            if tmp.resolve().is_relative_to(self.sandbox):
                raise RuntimeError(f"temporary folder {tmp} is inside the sandbox")
            for rel in extra_tests:
                target = tmp / "hidden" / Path(rel).name
                target.parent.mkdir(exist_ok=True)
                shutil.copyfile(task_dir() / "data" / rel, target)
                files.append(str(target))
            report = tmp / "report.xml"
            env = self._env()
            for name in ("NODE_OPTIONS", "NODE_PATH", "NODE_TEST_CONTEXT"):
                env.pop(name, None)
            argv = [node, "--test", "--test-reporter=junit", f"--test-reporter-destination={report}", *files]
            try:
                code, output = _run(argv, self.sandbox, env, timeout)
            except OSError as exc:
                code, output = None, f"cannot run node: {exc}"
            run = PytestRun(exit_code=code, output=output)
            if code is not None and report.is_file():
                try:
                    # A file that ran without defining a test is reported as one passing "test" named
                    # after the file: it proves nothing, so it does not count.
                    run.cases = [c for c in _read_junit(report) if not (c.outcome == "passed" and c.name in files)]
                    run.report_written = True
                except Exception as exc:  # noqa: BLE001 - a truncated report: the run did not finish properly
                    run.output += f"\nunreadable JUnit report: {exc}"
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        passed, why = self._judge(run, min_passed, require, allow_skipped, timeout)
        self.check(what, passed, why.replace("pytest", "node --test"))
        return run

    # ----- configuration formats (issue 19): INI and TOML, parsed, never string-matched

    def ini_value(self, rel: str, section: str, key: str) -> str | None:
        """The raw value of `key` in `[section]` of an INI file, or None (missing or unparsable)."""
        import configparser

        content = self.read(rel)
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

        content = self.read(rel)
        if content is None:
            return None, "no such file"
        try:
            return tomllib.loads(content), ""
        except tomllib.TOMLDecodeError as exc:
            return None, f"cannot parse: {exc}"
