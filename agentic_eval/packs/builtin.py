"""Where the built-in packs, sandbox generators and grader helpers live.

In a wheel they sit inside the package at `agentic_eval/_builtin/`; in a source
checkout (editable install, tests) at the top of the repository.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path


@cache
def builtin_root() -> Path:
    """The folder holding `tasks/`, `sandboxes/` and `graders/`."""
    here = Path(__file__).resolve().parents[1]  # the agentic_eval package
    packaged = here / "_builtin"
    if (packaged / "tasks").is_dir():
        return packaged
    return here.parent


def core_pack_dir() -> Path:
    """The core task pack (registered under the `agentic_eval.packs` entry-point group)."""
    return builtin_root() / "tasks" / "core"


def node_pack_dir() -> Path:
    """The Node.js service pack (generator `nodeservice`)."""
    return builtin_root() / "tasks" / "node"


def ops_pack_dir() -> Path:
    """The operations-repo pack (generator `opsrepo`)."""
    return builtin_root() / "tasks" / "ops"


def builtin_packs() -> list[tuple[str, Path]]:
    """Every built-in pack by name, core first (found even when the entry points are not installed)."""
    return [("core", core_pack_dir()), ("node", node_pack_dir()), ("ops", ops_pack_dir())]


def sandboxes_dir() -> Path:
    return builtin_root() / "sandboxes"


def graders_dir() -> Path:
    return builtin_root() / "graders"


def hidden_from_model() -> tuple[Path, ...]:
    """The built-in packs, generators and grader helpers: what a sandbox hides from the model when they lie
    under a path it sees (a wheel installed in the harness's Python mounts them with the package)."""
    root = builtin_root()
    return tuple(root / name for name in ("tasks", "graders", "sandboxes"))
