"""The grader's own copy of a test suite that has no twins (issue 39): every test's name and file randomised.

A forgery that knows the harness spares the canaries by name or by file (a fixed prefix, a file that is not the
repo's, a name the repo does not hold). Where no twin judges a test (a third-party pack's suite), gradelib's
`pytest_passes` runs this copy instead of the repo's files: each selected test file is copied beside itself under
a new name, each test in it renamed, and the two canaries (one that must pass, one that must fail) put into one
of the copies among the real tests, named like them. The report's cases are translated back to the repo's names,
so `require`, `count` and the messages speak of the real tests. A forgery can still tell a canary by its body;
only twins close that (graders/twincheck.py).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

_VERBS = ("handles", "keeps", "rejects", "returns", "accepts", "rounds", "parses", "skips", "counts", "reads",
          "merges", "limits", "sorts", "splits", "formats")
_NOUNS = ("totals", "limits", "input", "orders", "values", "names", "rows", "config", "items", "range", "units",
          "format", "cache", "output", "empty", "state", "window", "labels", "defaults", "errors", "prices", "keys",
          "lines", "dates", "spaces", "quotes", "records", "paths", "tokens", "counts")
_PY_TEST = re.compile(r"^(\s*(?:async\s+)?def\s+)(test\w*)(\s*\()", re.MULTILINE)


def test_name(taken: set[str]) -> str:
    """A new test name like a real one, not in `taken` (added to it)."""
    while True:
        name = f"test_{secrets.choice(_VERBS)}_{secrets.choice(_NOUNS)}_{secrets.choice(_NOUNS)}"
        if name not in taken:
            taken.add(name)
            return name


@dataclass
class ShuffledSuite:
    """The copy: files to write into the work copy, what to put on pytest's command line, and the way back."""

    files: dict[str, str] = field(default_factory=dict)
    """copy's path (relative to the work copy) -> its source"""
    argv: list[str] = field(default_factory=list)
    names: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    """(copy's stem, new test name) -> (the repo's file, the real test name)"""
    passing: str = ""
    failing: str = ""


def shuffle_python(tests: dict[str, str], wanted: dict[str, set[str] | None], exists: Callable[[str], bool],
                   canaries: Callable[[str, str], str]) -> ShuffledSuite:
    """`tests`: the selected test files (repo-relative path -> source); `wanted`: per file, the test names
    selected (None: all); `exists`: whether a path is taken in the tree; `canaries(passing, failing)`: the
    canaries' source under those names."""
    suite = ShuffledSuite()
    taken: set[str] = set()
    for source in tests.values():
        taken.update(m.group(2) for m in _PY_TEST.finditer(source))
    suite.passing, suite.failing = test_name(taken), test_name(taken)
    host = secrets.choice(sorted(tests)) if tests else ""
    items: list[str] = []
    for rel, source in tests.items():
        folder = str(Path(rel).parent)
        while True:
            stem = f"test_{secrets.choice(_NOUNS)}_{secrets.choice(_NOUNS)}"
            copy = f"{folder}/{stem}.py" if folder not in ("", ".") else f"{stem}.py"
            if copy not in suite.files and not exists(copy):
                break
        renamed: dict[str, str] = {}

        def rename(match: re.Match[str], renamed: dict[str, str] = renamed) -> str:
            new = renamed.setdefault(match.group(2), test_name(taken))
            return match.group(1) + new + match.group(3)

        text = _PY_TEST.sub(rename, source)
        for old, new in renamed.items():
            suite.names[(stem, new)] = (rel, old)
        if rel == host:
            text = text.rstrip("\n") + "\n\n\n" + canaries(suite.passing, suite.failing)
        suite.files[copy] = text
        chosen = wanted.get(rel)
        if chosen is None:
            items.append(copy)
        else:
            for name in sorted(chosen):  # "test_x" or "Class::test_x" (a test in a class)
                cls, _, test = name.rpartition("::")
                if test in renamed:
                    items.append("::".join(x for x in (copy, cls, renamed[test]) if x))
            if rel == host:
                items += [f"{copy}::{suite.passing}", f"{copy}::{suite.failing}"]
    order = list(range(len(items)))
    for i in range(len(order) - 1, 0, -1):  # a random order: the canaries' file is not always first or last
        j = secrets.randbelow(i + 1)
        order[i], order[j] = order[j], order[i]
    suite.argv = [items[i] for i in order]
    return suite


def selected_files(selection: Sequence[str], listed: Callable[[str], list[str] | None]) -> dict[str, set[str] | None]:
    """The test files of `selection` (folders, files, node ids) -> the test names chosen in each (None: all).
    `listed(folder)`: the Python test files under a folder (repo-relative), or None when it is not one."""
    wanted: dict[str, set[str] | None] = {}
    for item in selection:
        path, _, name = item.partition("::")
        path = path.strip("/") or "."
        files = listed(path)
        if files is None:
            files = [path]
        for rel in files:
            if not name:
                wanted[rel] = None
            elif wanted.get(rel, set()) is not None:
                wanted.setdefault(rel, set()).add(name.split("[")[0])  # type: ignore[union-attr]
    return wanted


_JS_TEST = re.compile(r"""\b((?:test|it)(?:\.\w+)?\s*\(\s*)(["'])((?:\\.|(?!\2)[^\\\n])*)\2""")


def _title(taken: set[str]) -> str:
    while True:
        title = f"{secrets.choice(_VERBS)} {secrets.choice(_NOUNS)} {secrets.choice(_NOUNS)}"
        if title not in taken:
            taken.add(title)
            return title


def shuffle_node(tests: dict[str, str], exists: Callable[[str], bool],
                 canaries: Callable[[bool, str, str], str], esm: Callable[[str, str], bool]) -> ShuffledSuite:
    """Node's form of `shuffle_python`: `tests` are the selected test files (repo-relative -> source), each
    copied beside itself (same extension) with every `test("...")`/`it("...")` title new; `canaries(esm,
    passing, failing)` gives the canaries' source for an ES module or a CommonJS file. `names` maps ("", new
    title) to (the repo's file, the real title): node's report names tests by title alone. `esm(rel, source)`:
    whether node loads the file as an ES module."""
    suite = ShuffledSuite()
    taken: set[str] = set()
    for source in tests.values():
        taken.update(m.group(3) for m in _JS_TEST.finditer(source))
    suite.passing, suite.failing = _title(taken), _title(taken)
    host = secrets.choice(sorted(tests)) if tests else ""
    for rel, source in tests.items():
        folder, name = str(Path(rel).parent), Path(rel).name
        extension = name[name.index(".test."):] if ".test." in name else Path(rel).suffix
        while True:
            stem = f"{secrets.choice(_NOUNS)}_{secrets.choice(_NOUNS)}"
            copy = f"{folder}/{stem}{extension}" if folder not in ("", ".") else f"{stem}{extension}"
            if copy not in suite.files and not exists(copy):
                break

        def rename(match: re.Match[str], rel: str = rel) -> str:
            new = _title(taken)
            suite.names[("", new)] = (rel, match.group(3))
            return match.group(1) + '"' + new + '"'

        text = _JS_TEST.sub(rename, source)
        if rel == host:
            text = text.rstrip("\n") + "\n\n" + canaries(esm(rel, source), suite.passing, suite.failing)
        suite.files[copy] = text
        suite.argv.append(copy)
    order = list(range(len(suite.argv)))
    for i in range(len(order) - 1, 0, -1):
        j = secrets.randbelow(i + 1)
        order[i], order[j] = order[j], order[i]
    suite.argv = [suite.argv[i] for i in order]
    return suite
