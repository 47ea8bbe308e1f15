"""Where agentic-eval keeps what it builds or assembles once: the cache folder and the agent CLIs' tools folder.

    cache_dir()          $AGENTIC_EVAL_CACHE, else $XDG_CACHE_HOME/agentic-eval, else ~/.cache/agentic-eval
    tools_dir()          $AGENTIC_EVAL_TOOLS, else the cache folder's tools/
    builtin_root()       the folder holding the built-in tasks/, sandboxes/ (generators) and graders/
    hidden_from_model()  those three and the realpy cache: what every confinement hides from the model where it
                         could see them

Under the cache folder: `models/` (the local server's assembled model), `images/` (the docker sandbox
image's root filesystem) and `fix-size/` (reference fix sizes). `~` at the start of any of these
variables is expanded (to $HOME) the same way for every folder, and a variable set but empty counts
as unset. Nothing is created here: the code that writes a folder creates it.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

CACHE_ENV = "AGENTIC_EVAL_CACHE"
TOOLS_ENV = "AGENTIC_EVAL_TOOLS"

__all__ = ["CACHE_ENV", "TOOLS_ENV", "builtin_root", "cache_dir", "hidden_from_model", "tools_dir"]


def _from_env(name: str) -> Path | None:
    value = os.environ.get(name)
    return Path(value).expanduser() if value else None


def cache_dir() -> Path:
    """$AGENTIC_EVAL_CACHE, else $XDG_CACHE_HOME/agentic-eval, else ~/.cache/agentic-eval."""
    explicit = _from_env(CACHE_ENV)
    if explicit is not None:
        return explicit
    return (_from_env("XDG_CACHE_HOME") or Path("~/.cache").expanduser()) / "agentic-eval"


def tools_dir() -> Path:
    """Where the agent CLIs are installed: $AGENTIC_EVAL_TOOLS, else `cache_dir() / "tools"`."""
    return _from_env(TOOLS_ENV) or cache_dir() / "tools"


@cache
def builtin_root() -> Path:
    """The folder holding `tasks/`, `sandboxes/` and `graders/`: inside the package at `_builtin/` in a wheel,
    the top of the repository in a source checkout (editable install, tests)."""
    here = Path(__file__).resolve().parent  # the agentic_eval package
    packaged = here / "_builtin"
    if (packaged / "tasks").is_dir():
        return packaged
    return here.parent


def hidden_from_model() -> tuple[Path, ...]:
    """The built-in packs, generators and grader helpers, and realpy's cache of pristine sdists: what a sandbox
    hides from the model when they lie under a path it sees (a wheel installed in the harness's Python mounts them
    with the package)."""
    root = builtin_root()
    # realpy's cache holds the pristine sdists and which mutation each seed planted
    return (*(root / name for name in ("tasks", "graders", "sandboxes")), cache_dir() / "realpy")
