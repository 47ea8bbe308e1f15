"""The backend registry: backends found by name in the `agentic_eval.backends` entry-point group (built-ins
included), made with their own options, and the default a run falls back to."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

from agentic_eval.confine.backend import SandboxBackend
from agentic_eval.confine.host import BwrapBackend, LocalBackend, bwrap_problem
from agentic_eval.errors import AgenticEvalError

if TYPE_CHECKING:  # typing only: agents stand above confine
    from agentic_eval.agents.base import Agent


def backend_names() -> list[str]:
    """Every registered backend's name, built-ins included, sorted."""
    from agentic_eval.plugins import BACKENDS_GROUP, names_in

    return names_in(BACKENDS_GROUP)


LOCAL_WARNING = ("warning: --sandbox local: the model's commands run unconfined as this user: they can read your "
                 "files, reach your network and outlive the trial, and its code can reach the grader (grading is not "
                 "sealed); use --sandbox bwrap for untrusted models")


def get_backend(name: str, options: Mapping[str, Any] | None = None, agent: Agent | None = None) -> SandboxBackend:
    """The backend registered as `name`, made with its own `options`; `AgenticEvalError` (saying how to fix
    it) if it is unknown, cannot work here, or refuses `agent` (asked before it is made)."""
    return backend_class(name, agent).create(dict(options or {}))


def backend_class(name: str, agent: Agent | None = None) -> type[SandboxBackend]:
    """The backend class registered as `name`, not made (`run --ray` makes it on each node); `AgenticEvalError`
    (saying how to fix it) if it is unknown or refuses `agent`."""
    from agentic_eval.plugins import BACKENDS_GROUP, entry_points_in

    found = [ep for ep in entry_points_in(BACKENDS_GROUP) if ep.name == name]
    if not found:
        raise AgenticEvalError(f"unknown sandbox {name!r} (available: {', '.join(backend_names()) or 'none'}; a "
                               "third-party one installs as a plugin, see docs/plugins.md)")
    try:
        cls = found[0].load()
    except Exception as exc:  # noqa: BLE001 - a broken plugin: say which, in one line
        raise AgenticEvalError(f"sandbox {name!r} ({found[0].value}) could not be loaded: {type(exc).__name__}: "
                               f"{exc}") from None
    if not (isinstance(cls, type) and issubclass(cls, SandboxBackend)):
        raise AgenticEvalError(f"sandbox {name!r} ({found[0].value}) is not a SandboxBackend subclass")
    if agent is not None and (why := cls.refusal(agent)):
        raise AgenticEvalError(why)
    return cls


def resolve_backend(name: str | None, options: Mapping[str, Any] | None = None,
                    agent: Agent | None = None) -> tuple[SandboxBackend, str | None]:
    """The backend a run uses and a line to print about it: `name` if given (a warning for an unconfined
    one), else `bwrap` where it works, else `local` with a loud line saying why and how to fix it.
    `agent`: the run's agent, which the named backend may refuse."""
    if name is not None:
        backend = get_backend(name, options, agent)
        warning = LOCAL_WARNING.replace("--sandbox local", f"--sandbox {backend.name}")
        return backend, (warning if not backend.confined else None)
    if options:
        raise AgenticEvalError(f"{', '.join(sorted(options))}: these are options of a sandbox; name it with --sandbox")
    problem = bwrap_problem()
    if problem is None:
        return BwrapBackend(), None
    return LocalBackend(), (f"WARNING: commands the model writes will run UNCONFINED (--sandbox local): {problem}. "
                            "Fix that to confine them, or pass --sandbox local to accept it")


@cache
def default_backend() -> SandboxBackend:
    """`bwrap` where it works, else `local` (library callers that pick no backend)."""
    return BwrapBackend() if bwrap_problem() is None else LocalBackend()
