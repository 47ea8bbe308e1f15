"""What the red team reads of a repo before it edits it: its languages (from file names), its files, which of
them are tests, and whether Node loads one as an ES module. Plugins' attempts use these too (re-exported by
redteam.py).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

PYTHON = "python"
NODE = "node"
SHELL = "shell"
ANY = "any"
"""An attempt for every sandbox, whatever its languages."""

SKIPPED_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".pytest_cache", ".mypy_cache"})
TEST_DIRS = frozenset({"tests", "test", "testing", "__tests__", "spec", "specs"})
_TEST_FILE = re.compile(r"^(test_.*\.py|.*_test\.py|conftest\.py|.*\.(test|spec)\.[cm]?js)$")
_SUFFIXES = {".py": PYTHON, ".js": NODE, ".mjs": NODE, ".cjs": NODE, ".sh": SHELL}


def language_of(path: Path) -> str | None:
    """The language a file marks its sandbox with, or None."""
    if path.name == "Makefile":
        return SHELL
    return _SUFFIXES.get(path.suffix)


def walk_files(sandbox: Path, *, hidden: bool = False) -> list[Path]:
    """The sandbox's regular files (no symlinks), sorted, outside .git, node_modules and caches; folders
    whose name starts with a dot only if `hidden`."""
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(sandbox):
        dirnames[:] = sorted(d for d in dirnames
                             if d not in SKIPPED_DIRS and (hidden or not d.startswith("."))
                             and not os.path.islink(os.path.join(dirpath, d)))
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if stat.S_ISREG(path.lstat().st_mode):
                found.append(path)
    return found


def sandbox_languages(sandbox: Path) -> set[str]:
    """The languages of a sandbox, from its files' names."""
    return {lang for path in walk_files(sandbox) if (lang := language_of(path)) is not None}


def is_test(sandbox: Path, path: Path) -> bool:
    """A test file: in a test folder (tests/, test/, __tests__/, spec/...) or named like one."""
    rel = path.relative_to(sandbox)
    return bool(TEST_DIRS.intersection(rel.parts[:-1])) or bool(_TEST_FILE.match(rel.name))


def source_files(sandbox: Path, language: str) -> list[Path]:
    """The code under test: files of `language` that are not tests (a Makefile is not edited)."""
    return [p for p in walk_files(sandbox) if p.suffix and language_of(p) == language and not is_test(sandbox, p)]


def test_files(sandbox: Path, language: str) -> list[Path]:
    return [p for p in walk_files(sandbox) if p.suffix and language_of(p) == language and is_test(sandbox, p)]


def test_dirs(sandbox: Path) -> list[Path]:
    """The outermost test folders."""
    found: list[Path] = []
    for dirpath, dirnames, _ in os.walk(sandbox):
        for d in list(dirnames):
            if d in SKIPPED_DIRS or os.path.islink(os.path.join(dirpath, d)):
                dirnames.remove(d)
            elif d in TEST_DIRS:
                found.append(Path(dirpath) / d)
                dirnames.remove(d)
    return sorted(found)




def is_esm(sandbox: Path, path: Path) -> bool:
    """Whether Node loads this file as an ES module: .mjs, or .js under a package.json of type module,
    or a .js file written with import/export."""
    if path.suffix != ".js":
        return path.suffix == ".mjs"
    for folder in [path.parent, *path.parent.parents]:
        package = folder / "package.json"
        if package.is_file():
            if re.search(r'"type"\s*:\s*"module"', package.read_text(encoding="utf-8", errors="replace")):
                return True
            break
        if folder == sandbox:
            break
    text = path.read_text(encoding="utf-8", errors="replace")
    return bool(re.search(r"^\s*(import|export)\b", text, re.MULTILINE))
