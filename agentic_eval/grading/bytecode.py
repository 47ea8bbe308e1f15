"""The bytecode of what every grader imports, compiled once by the harness (issue 39's grading time).

A grader runs with `-B` in a confinement that cannot write beside its modules, so without a cache each grader
compiles gradelib (about 1,800 lines) and the pack's helpers from source again: a tenth of a second or more per
trial. The harness compiles them into their usual `__pycache__` folders, once per process and folder, and only a
module whose cache is missing or stale (the source's mtime and size, as Python itself checks). Whatever the
harness cannot write (a read-only install) is left as it is: the grader then compiles as before.

Only the harness writes these files, from its own sources, into folders the model's code never sees; a grader
reads them as it would read the sources.
"""

from __future__ import annotations

import importlib.util
import os
import py_compile
import threading
from collections.abc import Iterable
from pathlib import Path

_done: set[str] = set()
_lock = threading.Lock()

PACKAGE_PARTS = (".", "grading", "packs", "confine")
"""The folders of agentic-eval's package whose modules a grader imports (gradelib: gitsafe, pristine; sealed)."""


def _fresh(source: str, cached: str) -> bool:
    """Whether `cached` holds a timestamp-checked cache that Python accepts for `source` as it is now."""
    try:
        st = os.stat(source)
        with open(cached, "rb") as file:
            head = file.read(16)
    except OSError:
        return False
    if len(head) < 16 or head[:4] != importlib.util.MAGIC_NUMBER or int.from_bytes(head[4:8], "little") != 0:
        return False
    mtime, size = int.from_bytes(head[8:12], "little"), int.from_bytes(head[12:16], "little")
    return mtime == int(st.st_mtime) & 0xFFFFFFFF and size == st.st_size & 0xFFFFFFFF


def compile_folder(folder: Path) -> int:
    """Compile the modules directly in `folder` whose cache is missing or stale; how many were. Never raises:
    a module that does not compile, or a folder the harness cannot write, is left to the grader."""
    made = 0
    try:
        names = sorted(entry.name for entry in os.scandir(folder) if entry.name.endswith(".py") and entry.is_file())
    except OSError:
        return 0
    for name in names:
        source = os.path.join(folder, name)
        cached = importlib.util.cache_from_source(source)
        if _fresh(source, cached):
            continue
        try:
            py_compile.compile(source, cfile=cached, doraise=True,
                               invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)
            made += 1
        except (OSError, py_compile.PyCompileError):
            continue
    return made


def warm(folders: Iterable[Path]) -> None:
    """Compile each folder's modules once per process (later calls return at once)."""
    for folder in folders:
        key = os.path.realpath(folder)
        with _lock:
            if key in _done:
                continue
            _done.add(key)
            compile_folder(Path(key))


def grader_folders(*pack_graders: Path) -> list[Path]:
    """gradelib's folder, the packs' graders folders given, and the parts of agentic-eval's package graders
    import."""
    from agentic_eval.packs.builtin import graders_dir

    package = Path(__file__).resolve().parents[1]
    return [graders_dir(), *pack_graders, *(package / part for part in PACKAGE_PARTS)]
