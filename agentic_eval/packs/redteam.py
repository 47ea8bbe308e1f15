"""The red team's old address, kept as an alias: it moved to `agentic_eval.validation.redteam`.

Kept because docs/plugins.md named this path to plugin authors (`from agentic_eval.packs.redteam import
Attempt`), and installs made before the move list the built-in attempts' entry points here (their metadata
is rewritten only by a reinstall). New code imports `agentic_eval.validation.redteam`.
"""

from __future__ import annotations

from agentic_eval.validation.redteam import *  # noqa: F403  (every public name of the new home)
