"""Where the built-in packs, repo generators and grader helpers live (the root itself, and what the model must
never see of it, are in agentic_eval.paths, which the confinement reads too).

In a wheel they sit inside the package at `agentic_eval/_builtin/`; in a source
checkout (editable install, tests) at the top of the repository.
"""

from __future__ import annotations

from pathlib import Path

from agentic_eval.paths import builtin_root, hidden_from_model

__all__ = ["builtin_packs", "builtin_root", "core_pack_dir", "graders_dir", "hidden_from_model", "node_pack_dir",
           "ops_pack_dir", "sandboxes_dir"]


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
