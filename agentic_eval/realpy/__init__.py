"""Tasks from real Python projects: a bug planted per seed, the catching tests hidden (issue 43).

    project  Real projects for the `realpy` generator: pinned sdists fetched once into the cache.
    mutate   Bug kinds planted in real Python code: pure, ast-based, deterministic.
    plant    Pick, validate and plant one bug per seed in a real project; hide the tests that catch it.
    cover    Which tests run which lines of a real project (traced once), so a mutant runs only its tests.
    measure  A test run judged by the CPU time its process tree used, not the wall clock (load-independent).
    report   The task's instruction, written from the failing tests without an LLM.
    twins    Twin checks for a real project's suite: its tests' calls into the project, replayed and judged.
    synth    `agentic-eval tasks synth NAME==VERSION`: a realpy pack for a project of the user's choice.
    copies   Copies of a project elsewhere on the machine (a vendored more-itertools), hidden from the model.

The generator itself is `sandboxes/realpy.py`; the pack is `tasks/realpy`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval._lazy import lazy_face

if TYPE_CHECKING:
    from .mutate import Site as Site
    from .plant import Planted as Planted
    from .plant import plant as plant
    from .project import Project as Project
    from .project import ProjectError as ProjectError
    from .project import fetch as fetch

_EXPORTS = {"Project": ".project", "ProjectError": ".project", "fetch": ".project", "Site": ".mutate",
            "Planted": ".plant", "plant": ".plant"}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)
