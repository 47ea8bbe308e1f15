"""Where agentic-eval keeps what it builds or assembles once: the cache folder and the agent CLIs' tools folder.

    cache_dir()   $AGENTIC_EVAL_CACHE, else $XDG_CACHE_HOME/agentic-eval, else ~/.cache/agentic-eval
    tools_dir()   $AGENTIC_EVAL_TOOLS, else the cache folder's tools/

Under the cache folder: `models/` (the local server's assembled model), `images/` (the docker sandbox
image's root filesystem) and `fix-size/` (reference fix sizes). `~` at the start of any of these
variables is expanded (to $HOME) the same way for every folder, and a variable set but empty counts
as unset. Nothing is created here: the code that writes a folder creates it.
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "AGENTIC_EVAL_CACHE"
TOOLS_ENV = "AGENTIC_EVAL_TOOLS"

__all__ = ["CACHE_ENV", "TOOLS_ENV", "cache_dir", "tools_dir"]


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
