"""gitsafe on trees a model left with things that are not files: FIFOs, sockets, symlinks to devices, files and
folders the harness cannot read, folders swapped for symlinks. None of them may block a diff or keep the real
changes out of it; each is named in a note at the top of diff.patch, and nothing is ever opened."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.grading import gitsafe
from tests.helpers import pristine_repo as _repo

PRISTINE = {
    "src/app.py": "def answer():\n    return 41\n",
    "src/__init__.py": "",  # empty: a FIFO in its place has the same size and mode bits
    "data/table.txt": "a\nb\n",
    "lib/util.py": "X = 1\n",
    "README.md": "readme\n",
}


def _bounded(call: Callable[[], Any], timeout_s: float = 30.0) -> Any:
    """`call()` in a thread, failing the test (not hanging it) if it blocks."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box["error"] = exc

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(timeout_s)
    assert not worker.is_alive(), f"blocked for {timeout_s}s (a FIFO opened?)"
    if "error" in box:
        raise box["error"]
    return box["value"]


def _special_tree(tmp_path: Path) -> tuple[Path, Path, str, socket.socket]:
    sandbox, store, commit = _repo(tmp_path, PRISTINE)
    (sandbox / "src" / "app.py").write_text("def answer():\n    return 42\n")  # the real edit
    (sandbox / "notes.md").write_text("a new file\n")
    os.remove(sandbox / "src" / "__init__.py")
    os.mkfifo(sandbox / "src" / "__init__.py")  # a pristine (empty) file replaced by a FIFO
    os.mkfifo(sandbox / "data" / "new.fifo")  # a new FIFO: git does not even list it
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(sandbox / "service.sock"))
    (sandbox / "zero").symlink_to("/dev/zero")
    return sandbox, store, commit, sock


def test_fifos_sockets_and_device_links_never_block_or_empty_the_diff(tmp_path: Path) -> None:
    sandbox, store, commit, sock = _special_tree(tmp_path)
    try:
        patch = _bounded(lambda: gitsafe.final_diff(sandbox, store, commit)).decode()
    finally:
        sock.close()
    head = [line for line in patch.splitlines() if line.startswith("# ")]
    assert head == ["# not shown, a FIFO: data/new.fifo", "# not shown, a socket: service.sock",
                    "# not shown, a FIFO: src/__init__.py"]
    assert patch.startswith("# not shown")  # notes first, then the patch
    assert "-    return 41\n+    return 42" in patch  # the real edit is there
    assert "+a new file" in patch
    assert "diff --git a/zero b/zero" in patch and "new file mode 120000" in patch and "+/dev/zero" in patch


def test_every_reader_of_the_work_tree_passes_special_files_without_opening_them(tmp_path: Path) -> None:
    sandbox, store, commit, sock = _special_tree(tmp_path)
    try:
        changed = _bounded(lambda: gitsafe.changed_paths(sandbox, store, commit))
        files = _bounded(lambda: gitsafe.tree_files(sandbox, store, commit))
        numstat = _bounded(lambda: gitsafe.diff_numstat(sandbox, store, commit))
    finally:
        sock.close()
    assert "src/__init__.py" in changed and "src/app.py" in changed  # a pristine file that became a FIFO changed
    assert "src/__init__.py" not in files and "zero" not in files and "src/app.py" in files
    assert "src/app.py" in numstat and "__init__" not in numstat and "sock" not in numstat


def test_a_folder_swapped_for_a_symlink_shows_as_deleted_files_beside_the_rest(tmp_path: Path) -> None:
    sandbox, store, commit = _repo(tmp_path, PRISTINE)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "util.py").write_text("X = 2\n")
    (sandbox / "lib" / "util.py").unlink()
    (sandbox / "lib").rmdir()
    (sandbox / "lib").symlink_to(outside)  # git refuses 'lib/util.py': "beyond a symbolic link"
    (sandbox / "README.md").write_text("edited\n")
    os.remove(sandbox / "data" / "table.txt")
    (sandbox / "data" / "table.txt").mkdir()  # a pristine file replaced by a folder
    (sandbox / "data" / "table.txt" / "inside.txt").write_text("in the folder\n")
    patch = _bounded(lambda: gitsafe.final_diff(sandbox, store, commit)).decode()
    assert "deleted file mode 100644" in patch and "diff --git a/lib/util.py b/lib/util.py" in patch
    assert "diff --git a/lib b/lib" in patch and "new file mode 120000" in patch  # the symlink itself
    assert "+edited" in patch and "+in the folder" in patch
    assert "diff --git a/data/table.txt b/data/table.txt\ndeleted file mode" in patch
    assert "X = 2" not in patch  # nothing read through the link


UNREADABLE_PROBE = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[4])  # the package's parent, as a grader's import path has it: standard library only
from agentic_eval.grading import gitsafe
sys.stdout.buffer.write(gitsafe.final_diff(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]))
"""
NOBODY = 65534


def _as_another_user() -> tuple[str, int | None]:
    """An interpreter and a user for a harness that is not root: root reads every file, whatever its mode."""
    if os.geteuid() != 0:
        return sys.executable, None
    for python in (sys.executable, "/usr/bin/python3", "/usr/local/bin/python3"):
        try:
            ok = subprocess.run([python, "-c", "pass"], user=NOBODY, capture_output=True, timeout=30).returncode == 0
        except OSError:
            ok = False
        if ok:
            return python, NOBODY
    pytest.skip("no interpreter another user may run")


def test_files_and_folders_the_harness_cannot_read_are_named_and_the_rest_is_shown() -> None:
    python, user = _as_another_user()
    base = Path(tempfile.mkdtemp(prefix="ae-unreadable-"))
    try:
        sandbox, store, commit = _repo(base, PRISTINE)
        (sandbox / "src" / "app.py").write_text("def answer():\n    return 42\n")
        (sandbox / "secret.txt").write_text("the model's eyes only\n")
        (sandbox / "data" / "table.txt").write_text("a\nb\nc\n")  # a pristine file: its change cannot be read
        (sandbox / "locked").mkdir()
        (sandbox / "locked" / "inside.txt").write_text("hidden\n")
        locked = [sandbox / "secret.txt", sandbox / "data" / "table.txt", sandbox / "locked"]
        if user is not None:  # the tree is the harness's (nobody's) but for what the model locked away from it
            for folder, dirs, names in os.walk(base):
                for name in (folder, *[os.path.join(folder, n) for n in (*dirs, *names)]):
                    if Path(name) not in locked:
                        os.chown(name, user, user, follow_symlinks=False)
            os.chmod(base, 0o755)
        for path in locked:
            os.chmod(path, 0o700 if path.is_dir() and user is not None else 0o600 if user is not None else 0)
        package_parent = Path(gitsafe.__file__).resolve().parents[2]
        proc = subprocess.run([python, "-I", "-c", UNREADABLE_PROBE, str(sandbox), str(store), commit,
                               str(package_parent)], capture_output=True, timeout=60, check=False, user=user, cwd=base)
        assert proc.returncode == 0, proc.stderr.decode()
        patch = proc.stdout.decode()
    finally:
        for path in (base / "sandbox" / "locked",):
            if path.exists():
                os.chmod(path, 0o755)
        shutil.rmtree(base, ignore_errors=True)
    head = [line for line in patch.splitlines() if line.startswith("# ")]
    assert head == ["# not shown, the harness cannot read it (Permission denied): data/table.txt",
                    "# not shown, a folder the harness cannot read: locked/ (Permission denied)",
                    "# not shown, the harness cannot read it (Permission denied): secret.txt"]
    assert "-    return 41\n+    return 42" in patch
