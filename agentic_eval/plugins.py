"""Where plugins register: the five entry-point groups, their contracts, and reading them.

agentic-eval has no plugin framework of its own: the registry is Python's entry points, and the
built-in agents and packs are registered in our own pyproject.toml exactly the way a third-party
package registers its own. So `agentic-eval agents list` and `tasks list` show an installed plugin
next to the built-ins, and a plugin's module is imported only when it is used (listing reads
names, not code). docs/plugins.md shows a minimal working plugin of each kind.

`agentic_eval.agents` (AGENTS_GROUP)
    name = "package.module:Factory". `Factory()` (no arguments, usually the class itself) returns an
    `agentic_eval.agents.Agent` (subclass it): attributes `name`, `uses_model` and `program`,
    and `run(ctx: AgentContext) -> AgentOutcome`, which never raises for a problem of the model,
    the endpoint or a program it drives (those are outcomes). Optional hooks are documented no-ops on
    the base class. An agent that drives a command-line program subclasses
    `agentic_eval.agents.CliAgent` instead. The name is what `run --agent NAME` takes, and
    recorded runs hold it, so keep it stable.

`agentic_eval.packs` (PACKS_GROUP)
    name = "package.module:pack_dir": a callable returning the pack folder (a str or Path), or a
    str path itself. A pack folder holds task folders, each with a task.toml (docs/task-format.md).
    The pack is among the default packs that `run` and `tasks list` use. A pack registered under
    a built-in's name (core, node, ops) replaces that built-in.

`agentic_eval.generators` (GENERATORS_GROUP; `agentic_eval.sandboxes`, its old name, is still read)
    name = "package.module:generate": a repo generator, `generate(root: Path, seed: int,
    params: dict) -> dict`, which writes a repository's files into the empty folder `root`,
    deterministically from `seed` and the task's `[sandbox.params]`, and returns the variables
    graders and instructions may use (`agentic_eval.packs.sandbox.Generator`). A task names it
    with `[sandbox] generator = "name"`. A pack's own `sandboxes/NAME.py` and the built-in
    generators come first; the group is looked up last.

`agentic_eval.backends` (BACKENDS_GROUP)
    name = "package.module:Class": a sandbox backend, a subclass of
    `agentic_eval.confine.SandboxBackend` (only `wrap` is required; its docstring walks every hook a
    trial calls, each a documented no-op by default). `Class.create(options)` makes it for a run.
    The name is what `--sandbox NAME` takes, and recorded runs hold it. bwrap, local and docker are
    registered here too.

`agentic_eval.redteam` (REDTEAM_GROUP)
    name = "package.module:ATTEMPT": a red-team attempt (an object with `name`, `languages`,
    `description` and `apply(sandbox: Path) -> None`, see `agentic_eval.validation.redteam`), or a
    callable returning one or an iterable of them. `validate` applies every attempt that fits a
    task's sandbox to a fresh pristine copy and requires the grader to say fail. The built-in
    attempts are registered here too; an attempt of the same name replaces one.

This module imports nothing heavy: the metadata library loads inside the functions.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

AGENTS_GROUP = "agentic_eval.agents"
"""Agents, found by name: `run --agent NAME`, `agents list`."""
PACKS_GROUP = "agentic_eval.packs"
"""Task packs: each entry point gives a pack folder."""
GENERATORS_GROUP = "agentic_eval.generators"
"""Repo generators, found by the name a task's `[sandbox] generator` gives."""
SANDBOXES_GROUP = "agentic_eval.sandboxes"
"""The generators' group under its old name ("sandbox" also meant the backend): still read, after the new one."""
REDTEAM_GROUP = "agentic_eval.redteam"
"""Red-team attempts that `validate` runs against every grader (agentic_eval.validation.redteam)."""
BACKENDS_GROUP = "agentic_eval.backends"
"""Sandbox backends, found by the name `--sandbox` takes (agentic_eval.confine.backend)."""

GROUPS = (AGENTS_GROUP, PACKS_GROUP, GENERATORS_GROUP, SANDBOXES_GROUP, REDTEAM_GROUP, BACKENDS_GROUP)


def entry_points_in(group: str) -> list[EntryPoint]:
    """Everything registered in `group`, in the metadata's order (nothing is imported)."""
    from importlib.metadata import entry_points

    return list(entry_points(group=group))


def names_in(group: str) -> list[str]:
    """The names registered in `group`, sorted, each once (nothing is imported)."""
    return sorted({ep.name for ep in entry_points_in(group)})


def agent_entry_points() -> dict[str, EntryPoint]:
    """Name -> entry point of every registered agent, built-ins included."""
    return {ep.name: ep for ep in entry_points_in(AGENTS_GROUP)}


def pack_dirs() -> list[tuple[str, Path]]:
    """(name, folder) of every registered pack, built-ins included, sorted by name."""
    packs: list[tuple[str, Path]] = []
    for ep in sorted(entry_points_in(PACKS_GROUP), key=lambda e: e.name):
        target = ep.load()
        path = target() if callable(target) else target
        packs.append((ep.name, Path(path)))
    return packs


def sandbox_generator(name: str) -> Callable[[Path, int, dict[str, Any]], dict[str, Any]] | None:
    """The generator registered as `name` (the first, if two packages claim it), or None."""
    for group in (GENERATORS_GROUP, SANDBOXES_GROUP):
        for ep in entry_points_in(group):
            if ep.name == name:
                return ep.load()  # type: ignore[no-any-return]
    return None
