"""The task's instruction, written from the failing tests without an LLM: a bug report, never the location.

For each hidden test that catches the bug (at most MAX_LISTED): the project's functions the test calls and the
failure pytest reported (what came back against what was expected, or the exception). Nothing names the file,
the line or the kind of change.
"""

from __future__ import annotations

import ast
import re

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


def _message(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= 300 else text[:297] + "..."


def bug_report(project: str, version: str, tests_dir: str, failing: list[str], messages: dict[str, str],
               test_sources: dict[str, str], sources: dict[str, str]) -> str:
    known = project_names(sources)
    lines: list[str] = []
    seen: set[str] = set()
    for node in failing:
        parts = node.split("::")
        file, cls, name = parts[0], "::".join(parts[1:-1]), parts[-1].split("[")[0]
        message = _message(messages.get(node, ""))
        key = f"{name}|{message}"
        if key in seen or file not in test_sources:
            continue
        seen.add(key)
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

