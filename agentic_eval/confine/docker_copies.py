"""Copies of a realpy project in the docker image's own filesystem, hidden in its containers as the host's are.

A realpy task's fix is the project's own code, so any copy of the project a confined command can read gives it away
(realpy/copies.py). The realpy generator lists the copies on this machine in the sandbox's hidden paths, and the
bwrap backend covers them where a command sees the host. A container sees the image's /usr instead, which holds
copies of its own: Debian's suite image has python3-more-itertools and pkg_resources' vendored more-itertools in
/usr/lib/python3/dist-packages, and an image of the user's (`--image`) may hold anything, wheels included.

What to look for comes from the hidden paths themselves: the realpy generator lists the project's own sources (in
realpy's cache of sdists, hidden from the model anyway) beside the copies, and what the host's scan looks for (a
folder or file named like a source, `more_itertools` or `parse.py`, defining at least half of the top-level names
it defines, or an archive holding one) is looked for in the image too: a short-lived container of the image (no
network, read-only, the commands' user, agentic-eval's package mounted) runs confine/copies.py's `scan` on the
image's own Python over its whole filesystem. Once per image and project per process. Every container of a phase
with those hidden paths then gets an empty tmpfs over each such folder and an empty read-only file over each such
file (`ImageHidden`); a container that could not be told what to hide does not start.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from agentic_eval.confine.copies import FEWEST_NAMES
from agentic_eval.confine.docker_image import IMAGE_PYTHON, PACKAGE_MOUNT, RUN_UID
from agentic_eval.errors import AgenticEvalError

if TYPE_CHECKING:
    from agentic_eval.confine.docker_engine import Engine

SCAN_TIMEOUT_S = 120
"""At most this long for the scanning container (the scan itself stops after confine/copies.py's SCAN_S)."""
_NOT_SCANNED = ("/proc", "/sys", "/dev", "/tmp", PACKAGE_MOUNT)
"""Folders of a container that hold no copy of the image's (the kernel's, the mounted package's)."""
_SCRIPT = """\
import json, os, sys
from pathlib import Path
sys.path.insert(0, {mount!r})
from agentic_eval.confine.copies import scan
wanted = {{name: set(defined) for name, defined in json.loads(sys.argv[1]).items()}}
print(json.dumps([[p, os.path.isdir(p)] for p in scan(wanted, (Path("/"),), tuple(map(Path, {skip!r})))]))
"""


@dataclass(frozen=True)
class ImageHidden:
    """What a container of the image covers: an empty tmpfs over each of `folders`, an empty file over `files`."""

    folders: tuple[str, ...] = ()
    files: tuple[str, ...] = ()



NOTHING_HIDDEN = ImageHidden()
"""An image with no copy to cover (any task but a realpy one)."""


def projects_cache() -> Path:
    """realpy's cache of pristine sdists (paths.hidden_from_model hides it): a hidden path under it is a project's
    own source, listed by the realpy generator beside the copies it found on this machine."""
    from agentic_eval.paths import cache_dir

    return cache_dir() / "realpy"


def wanted_from(hidden: Sequence[Path]) -> dict[str, tuple[str, ...]]:
    """{a source's name: the top-level names it defines} for the projects' own sources among `hidden` (folders and
    Python files under `projects_cache()`): what realpy/copies.py looks for on this machine, looked for in the image."""
    cache = projects_cache()
    found: dict[str, set[str]] = {}
    for path in map(Path, hidden):
        if cache not in path.parents or not (path.is_dir() or (path.is_file() and path.name.endswith(".py"))):
            continue
        found.setdefault(path.name, set()).update(_names_of(path))
    return {name: tuple(sorted(defined)) for name, defined in sorted(found.items()) if len(defined) >= FEWEST_NAMES}


@cache
def _names_of_cached(path: str, mtime_ns: int) -> frozenset[str]:
    from agentic_eval.confine.copies import _names

    return frozenset(_names(Path(path)))


def _names_of(path: Path) -> frozenset[str]:
    """confine/copies.py's `_names` of a folder or file, once per path and change."""
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        return frozenset()
    return _names_of_cached(str(path), mtime)


_lock = threading.Lock()
_found: dict[tuple[str, str], ImageHidden] = {}
_scanning: dict[tuple[str, str], threading.Lock] = {}
"""A lock per image and project: a trial waits for its own project's first scan, never for another's."""


def image_hidden(engine: Engine, hidden: Sequence[Path]) -> ImageHidden:
    """The copies in `engine`'s image of the projects whose own sources `hidden` lists (see the module's
    docstring); empty when it lists none (any task but a realpy one). AgenticEvalError when the image could not be
    looked through: a container that cannot hide them must not start."""
    wanted = wanted_from(hidden)
    if not wanted:
        return NOTHING_HIDDEN
    key = (engine.image, json.dumps(wanted, sort_keys=True))
    with _lock:
        known = _found.get(key)
        scanning = _scanning.setdefault(key, threading.Lock())
    if known is not None:
        return known
    with scanning:  # one scan per image and project; the trials that need it meanwhile wait for it
        with _lock:
            known = _found.get(key)
        if known is None:
            known = _scan_image(engine, wanted)
            with _lock:
                _found[key] = known
    return known


def _scan_image(engine: Engine, wanted: dict[str, tuple[str, ...]]) -> ImageHidden:
    from agentic_eval.confine.docker_engine import LABEL, _package_dir
    from agentic_eval.leftovers import owner_labels

    script = _SCRIPT.format(mount=PACKAGE_MOUNT, skip=list(_NOT_SCANNED))
    api = engine.client.api
    host_config = api.create_host_config(
        network_mode="none", read_only=True, cap_drop=["ALL"], security_opt=["no-new-privileges"],
        tmpfs={"/tmp": "rw,nosuid,nodev,size=16m"}, mem_limit="1g", pids_limit=64,
        binds=[f"{_package_dir()}:{PACKAGE_MOUNT}/agentic_eval:ro"])
    try:
        created = api.create_container(engine.image, [IMAGE_PYTHON, "-I", "-S", "-c", script, json.dumps(wanted)],
                                       user=f"{RUN_UID}:{RUN_UID}", labels={LABEL: "image-copies", **owner_labels()},
                                       environment={"HOME": "/tmp"}, host_config=host_config)
    except Exception as exc:  # noqa: BLE001 - whatever the engine said, one line
        raise AgenticEvalError(f"cannot look for copies of the task's project in the image {engine.image}: "
                               f"{type(exc).__name__}: {str(exc)[:200]}") from None
    try:
        api.start(created["Id"])
        status = api.wait(created["Id"], timeout=SCAN_TIMEOUT_S).get("StatusCode")
        if status != 0:
            err = api.logs(created["Id"], stdout=False, stderr=True).decode("utf-8", "replace")
            raise AgenticEvalError(f"exited {status}: {err.strip()[-200:]}")
        out = api.logs(created["Id"], stdout=True, stderr=False).decode("utf-8", "replace")
        found = {str(path): bool(folder) for path, folder in json.loads(out.strip().splitlines()[-1])}
    except Exception as exc:  # noqa: BLE001 - whatever went wrong, one line: no container starts unhidden
        raise AgenticEvalError(f"looking for copies of the task's project in the image {engine.image} failed: "
                               f"{type(exc).__name__}: {str(exc)[:200]}") from None
    finally:
        try:
            api.remove_container(created["Id"], force=True)
        except Exception:  # noqa: BLE001 - the next run's sweep removes it (its owner label)
            pass
    return covering(found)


def covering(found: dict[str, bool]) -> ImageHidden:
    """What covers `found` ({path: whether a folder}): its folders, one under another left out (covered with it),
    and its files, one under a covered folder left out."""
    folders = sorted(p for p, folder in found.items() if folder)
    top = [f for f in folders if not any(f.startswith(g + "/") for g in folders)]
    files = sorted(p for p, folder in found.items() if not folder and not any(p.startswith(g + "/") for g in top))
    return ImageHidden(tuple(top), tuple(files))
