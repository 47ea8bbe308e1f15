"""What counts as a copy of a project's sources, and the scan that finds copies under some folders (used by
realpy/copies.py on this machine, and by confine/docker_copies.py inside a docker image, on the image's Python:
standard library only).

A folder or file named like one of the project's sources (`more_itertools`, `parse.py`) whose Python files define at
least half of the names the source defines at its top level (another version of the project counts: most of its
code is the same), and an archive (a wheel, a zip, an egg, a tarball) that holds such a folder or file: Python reads
and imports a wheel as it is (zipimport), and a setuptools wheel bundled for ensurepip or virtualenv vendors
more-itertools. Bounded in time: a scan that runs out of its time raises (TimeoutError), never answers with what it
found by then, since a copy it did not reach would be left for the model to read.
"""

from __future__ import annotations

import ast
import os
import tarfile
import time
import zipfile
from pathlib import Path

SCAN_S = 30.0
"""At most this long to look through the roots for one project."""
FEWEST_NAMES = 4
"""A source that defines fewer top-level names is too little to tell a copy by: not looked for."""
SAME_SHARE = 0.5
"""A candidate that defines at least this share of the project's top-level names is a copy."""
_SKIP = ("/usr/include", "/usr/src")
"""Under the roots but holding no importable Python worth the time (headers, kernel sources). /usr/share is looked
through: it holds Debian's wheels (/usr/share/python-wheels)."""
ARCHIVES = (".whl", ".zip", ".egg", ".pyz", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")
"""Archives looked into (by how their name ends): Python imports the zip kinds as they are, any can be unpacked."""
ARCHIVE_LIMIT = 64 << 20
"""A larger archive is not opened (none of the project's copies is near that size)."""
MEMBER_LIMIT = 2 << 20
"""A larger Python file inside an archive is not read."""


def _defined(source: bytes) -> set[str]:
    """The top-level function and class names a Python file's text defines."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return set()
    return {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def _names(path: Path) -> set[str]:
    """The top-level function and class names the Python files at `path` (a file or a folder) define."""
    files = [path] if path.is_file() else sorted(path.rglob("*.py"))[:200]
    names: set[str] = set()
    for file in files:
        try:
            names |= _defined(file.read_bytes())
        except OSError:
            continue
    return names


def _members(archive: Path) -> list[tuple[str, bytes]]:
    """(path, text) of the Python files in a zip-kind or tar archive, at most 2,000 of them, each read only when
    small; [] for what is not such an archive, is too large or cannot be read."""
    try:
        if archive.stat().st_size > ARCHIVE_LIMIT:
            return []
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zipped:
                infos = [i for i in zipped.infolist() if i.filename.endswith(".py") and i.file_size <= MEMBER_LIMIT]
                return [(i.filename, zipped.read(i)) for i in infos[:2000]]
        with tarfile.open(archive) as tarred:
            out: list[tuple[str, bytes]] = []
            for member in tarred:
                if len(out) >= 2000:
                    break
                if member.isfile() and member.name.endswith(".py") and member.size <= MEMBER_LIMIT:
                    handle = tarred.extractfile(member)
                    if handle is not None:
                        out.append((member.name, handle.read()))
            return out
    except (OSError, zipfile.BadZipFile, tarfile.TarError, EOFError, ValueError, RuntimeError):
        return []


def _archive_holds_copy(archive: Path, wanted: dict[str, set[str]]) -> bool:
    """Whether the archive holds a folder or file named like one of the project's sources whose Python files
    define at least SAME_SHARE of what that source defines."""
    found: dict[str, set[str]] = {}
    for name, text in _members(archive):
        parts = name.split("/")
        for source in {*parts[:-1], parts[-1]} & wanted.keys():
            found.setdefault(source, set()).update(_defined(text))
    return any(len(names & wanted[source]) >= SAME_SHARE * len(wanted[source]) for source, names in found.items())


def scan(wanted: dict[str, set[str]], roots: tuple[Path, ...], exclude: tuple[Path, ...] = ()) -> tuple[str, ...]:
    """The copies under `roots` (but not under `exclude`) of what `wanted` names: a source's name (a folder
    `more_itertools`, a file `parse.py`) and the top-level names it defines (a source defining fewer than 4 is left
    out: too little to tell a copy). Also run inside a docker image's own Python (confine/docker_copies.py).
    TimeoutError when the roots take longer than SCAN_S to look through: the caller must not go on as if the scan
    had found every copy (a trial then does not start: unscored)."""
    wanted = {name: defined for name, defined in wanted.items() if len(defined) >= FEWEST_NAMES}
    if not wanted:
        return ()
    found: set[str] = set()
    deadline = time.monotonic() + SCAN_S
    skip = tuple(str(p) for p in (*exclude, *map(Path, _SKIP)))
    for root in roots:
        for folder, dirs, files in os.walk(root):
            if time.monotonic() > deadline:
                raise TimeoutError(f"looking for copies of {', '.join(sorted(wanted))} under "
                                   f"{', '.join(map(str, roots))} took over {SCAN_S:g} s (a copy not looked at could "
                                   "give the fix away): the machine is too loaded, or its Python trees too large")
            dirs[:] = [d for d in dirs if not os.path.join(folder, d).startswith(skip)]
            for name in (set(dirs) | set(files)) & wanted.keys():
                candidate = Path(folder, name)
                if len(_names(candidate) & wanted[name]) >= SAME_SHARE * len(wanted[name]):
                    found.add(str(candidate))
            for name in files:
                if name.endswith(ARCHIVES) and _archive_holds_copy(Path(folder, name), wanted):
                    found.add(os.path.join(folder, name))
    return tuple(sorted(found))
