"""The task's instruction, written from the failing tests without an LLM: a bug report, never the location.

For each hidden test that catches the bug (at most MAX_LISTED): the project's functions the test calls and the
failure pytest reported (what came back against what was expected, or the exception with the test's call that
raised it). Nothing names the file, the line or the kind of change.
"""

from __future__ import annotations

import ast
import json
import re
import textwrap
from collections.abc import Iterator
from pathlib import PurePosixPath

MAX_LISTED = 3
_SKIP_CALLS = {"len", "list", "dict", "set", "tuple", "str", "int", "float", "range", "iter", "next", "sorted",
               "isinstance", "repr", "type", "zip", "map", "print", "raises", "fail", "approx", "skip", "subTest",
               "Decimal", "Fraction", "date", "datetime", "time", "timedelta", "enumerate", "bool", "abs", "min",
               "max", "sum", "any", "all", "getattr", "setattr", "hasattr", "super", "object", "format"}


def project_names(sources: dict[str, str]) -> set[str]:
    """Functions, classes and methods the project defines (public ones)."""
    names: set[str] = set()
    for text in sources.values():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if not node.name.startswith("_"):
                    names.add(node.name)
    return names


def _called(test_source: str, cls: str, name: str, known: set[str]) -> list[str]:
    tree = ast.parse(test_source)
    target: ast.AST | None = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            target = node
            break
    if target is None:
        return []
    # the test file's own helpers (parse's `y(fmt, s, e)`, defined inside a test) are not the project's API
    known = known - {node.name for node in ast.walk(tree)
                     if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    called: list[str] = []
    for node in ast.walk(target):
        if isinstance(node, ast.Call):
            func = node.func
            attr = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if attr and attr in known and attr not in _SKIP_CALLS and not attr.startswith("assert") \
                    and attr not in called:
                called.append(attr)
    return called[:4]


RAISED_BY = "raised by: "
"""Opens the first line of a kept failure message that is an exception: the test's own code that raised it."""
_ENTRY_BREAK = re.compile(r"^(?:_ )+_\s*$", re.MULTILINE)
_LOCATION = re.compile(r"^(?P<path>\S[^:\n]*):\d+:(?: in \S+)?(?: \S.*)?$")
_SHORT_LOCATION = re.compile(r"^(?P<path>\S[^:\n]*):\d+: in \S+$")
_LOCAL = re.compile(r"^(?P<name>[A-Za-z_]\w*) += (?P<value>.*\S)$")
_STATEMENT_CHARS = 300


def is_exception(message: str) -> bool:
    """A failure that is an exception raised, not a comparison that came out wrong (nor a missing raise)."""
    return bool(message) and not message.startswith(("AssertionError", "assert ", "Failed:", RAISED_BY))


def failure_message(message: str, longrepr: str, test_file: str) -> str:
    """What is kept of one failure: pytest's message, and for an exception first a line `raised by: ` and the code
    of the test's innermost frame that raised it, a JSON string (what the caret marks, else the statement; empty
    when no frame of `test_file` is in `longrepr`, pytest's traceback)."""
    if not is_exception(message):
        return message
    return f"{RAISED_BY}{json.dumps(_raising_code(longrepr, test_file))}\n{message}"


def _raising_code(longrepr: str, test_file: str) -> str:
    code = ""
    for path, lines in _entries(longrepr):
        if PurePosixPath(path).name == PurePosixPath(test_file).name:
            code = _with_values(_entry_code(lines), _locals(lines)) or code
    return code if len(code) <= _STATEMENT_CHARS else ""


def _locals(lines: list[str]) -> dict[str, str]:
    """An entry's local variables as pytest shows them (`-l`): name -> repr."""
    return {m["name"]: m["value"] for line in lines if (m := _LOCAL.match(line))}


def _with_values(code: str, values: dict[str, str]) -> str:
    """`code` with each variable it reads replaced by its value, where the value's repr is an expression."""
    try:
        tree = ast.parse(code, mode="eval")
    except SyntaxError:
        return code

    class Values(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.expr:
            if isinstance(node.ctx, ast.Load) and node.id in values:
                try:
                    return ast.parse(values[node.id], mode="eval").body
                except SyntaxError:
                    pass
            return node

    return ast.unparse(Values().visit(tree))


def _entries(longrepr: str) -> Iterator[tuple[str, list[str]]]:
    """pytest's traceback as (file, lines) per entry: a long one (source, `>` at the running line, a location line
    last) or a short one (a location line `path:N: in name`, then its source line and carets)."""
    for chunk in _ENTRY_BREAK.split(longrepr):
        lines = chunk.strip("\n").splitlines()
        if any(line.startswith(">") for line in lines):
            where = [m for line in lines if (m := _LOCATION.match(line.strip()))]
            if where:
                yield where[-1]["path"], lines
            continue
        current: tuple[str, list[str]] | None = None
        for line in lines:
            if (short := _SHORT_LOCATION.match(line)) is not None:
                if current is not None:
                    yield current
                current = (short["path"], [])
            elif current is not None:
                current[1].append(line)
        if current is not None:
            yield current


def _entry_code(lines: list[str]) -> str:
    """An entry's code that was running: a long entry's `>` statement (with its continuation lines), a short one's
    source line; only the part under its carets when pytest drew them."""
    marked = [n for n, line in enumerate(lines) if line.startswith(">")]
    start = marked[-1] if marked else 0
    if start >= len(lines) or not lines[start].strip():
        return ""
    first = " " + lines[start][1:] if marked else lines[start]
    body = [first]
    for line in lines[start + 1:]:
        if not line.strip() or line.lstrip().startswith(("E ", "^", "~")) or _LOCATION.match(line.strip()):
            break
        body.append(line)
    after = lines[start + len(body)] if start + len(body) < len(lines) else ""
    if len(body) == 1 and after.strip() and set(after.strip()) <= {"^", "~"}:
        left = len(after) - len(after.lstrip())
        return first[left:len(after.rstrip())].strip()
    return textwrap.dedent("\n".join(body)).strip()


def _raising_call(code: str, known: set[str]) -> str:
    """The call of one of the project's functions in `code` (the outermost, the first), on one line."""
    for mode in ("eval", "exec"):
        try:
            tree = ast.parse(code, mode=mode)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
                if name in known and name not in _SKIP_CALLS and not name.startswith("assert"):
                    return ast.unparse(node)
        return ""
    return ""


def _message(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= 300 else text[:297] + "..."


def _split_raised(kept: str) -> tuple[str, str]:
    """(the code that raised, pytest's message) of a kept failure message (see `failure_message`)."""
    if not kept.startswith(RAISED_BY):
        return "", kept
    code, _, message = kept[len(RAISED_BY):].partition("\n")
    try:
        return str(json.loads(code)), message
    except ValueError:  # cut short (a kept message is at most 600 characters)
        return "", message


def bug_report(project: str, version: str, tests_dir: str, failing: list[str], messages: dict[str, str],
               test_sources: dict[str, str], sources: dict[str, str]) -> str:
    known = project_names(sources)
    lines: list[str] = []
    seen: set[str] = set()
    for node in failing:
        parts = node.split("::")
        file, cls, name = parts[0], "::".join(parts[1:-1]), parts[-1].split("[")[0]
        raised_by, message = _split_raised(messages.get(node, ""))
        message = _message(message)
        key = f"{name}|{message}"
        if key in seen or file not in test_sources:
            continue
        seen.add(key)
        if call := _raising_call(raised_by, known):
            message = f"`{_message(call)}` raises {message}"
        called = _called(test_sources[file], cls, name, known)
        what = ", ".join(f"`{c}`" for c in called) if called else "the library"
        lines.append(f"- Using {what}: {message or 'the result is not what the documentation promises'}")
        if len(lines) >= MAX_LISTED:
            break
    listed = "\n".join(lines)
    return (f"Users of this checkout of {project} {version} report wrong behaviour since the last round of "
            f"changes:\n\n{listed}\n\nThe tests that caught this were lost; the rest of the suite "
            f"(`python -m pytest {tests_dir}`) still passes. Find the bug in the library's code and fix it so the "
            "library behaves as its documentation and its own tests say. Don't edit, add or remove tests.")

