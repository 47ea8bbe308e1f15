"""Agents: the contract every agent meets, the built-in loop, the CLI adapters, oracle and nop.

    base       The Agent base class (the contract: capabilities and no-op hooks), AgentContext / AgentOutcome,
               and loading agents by name.
    simple     `oracle` (runs the reference fix) and `nop` (does nothing): agents that never call a model.
    builtin/   The built-in agent: its loop, its tools and its system prompt.
    adapters/  Real agent CLIs (opencode, codex, qwen-code, kilo, cline, mini-swe-agent, aider) driven headless.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval._lazy import lazy_face

if TYPE_CHECKING:
    from .adapters import CliAgent as CliAgent
    from .adapters import CliRun as CliRun
    from .adapters import CliTool as CliTool
    from .adapters import Invocation as Invocation
    from .base import Agent as Agent
    from .base import AgentContext as AgentContext
    from .base import AgentOptions as AgentOptions
    from .base import AgentOutcome as AgentOutcome
    from .base import available_agents as available_agents
    from .base import load_agent as load_agent

_EXPORTS = {
    "Agent": ".base",
    "AgentContext": ".base",
    "AgentOutcome": ".base",
    "AgentOptions": ".base",
    "load_agent": ".base",
    "available_agents": ".base",
    "CliAgent": ".adapters",
    "CliTool": ".adapters",
    "CliRun": ".adapters",
    "Invocation": ".adapters",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)
