"""The registered agents that drive a CLI: the agent registry (the `agentic_eval.agents` entry points), the
same one `agents list` reads, is the only list of them. Every registered agent that is a `CliAgent` with a
`CliTool` is installable, a third-party adapter as much as the built-in ones (`installable_tools`), and
`agent_rows` is every registered agent with its CLI's install state.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentic_eval.agents.adapters.base import CliAgent
from agentic_eval.agents.adapters.install import CliTool
from agentic_eval.agents.base import available_agents


def _registered_tools() -> tuple[dict[str, CliTool], dict[str, tuple[str, str]]]:
    """The CLI of every registered agent that drives one (name -> CliTool), and the agents that are not
    CLI adapters (name -> ('builtin' or 'broken', its entry point's value or why it cannot load))."""
    tools: dict[str, CliTool] = {}
    others: dict[str, tuple[str, str]] = {}
    for name, ep in sorted(available_agents().items()):
        try:
            factory: object = ep.load()
        except Exception as exc:  # noqa: BLE001 - a broken plugin is listed, not fatal
            others[name] = ("broken", f"{type(exc).__name__}: {exc}")
            continue
        tool = factory.program if isinstance(factory, type) and issubclass(factory, CliAgent) else None
        if isinstance(tool, CliTool):
            tools[name] = tool
        else:
            others[name] = ("builtin", ep.value)
    return tools, others


def installable_tools() -> dict[str, CliTool]:
    """Every registered CLI agent's tool, by agent name, in the order `agents install all` installs them:
    npm packages first (they install in seconds), then PyPI ones (a virtual environment each), by name."""
    tools, _ = _registered_tools()
    return dict(sorted(tools.items(), key=lambda item: (item[1].kind != "npm", item[0])))


@dataclass
class AgentRow:
    """One line of `agents list`."""

    name: str
    kind: str
    """'cli' for an adapter that drives a CLI, 'builtin' otherwise, 'broken' if it cannot be loaded."""
    installed: bool | None
    """Whether its CLI is installed (None: it needs none)."""
    version: str | None
    pinned: str | None
    install: str | None
    """The command that installs its CLI."""
    speaks: str | None
    target: str
    """Its entry point (module:object)."""


def agent_rows() -> list[AgentRow]:
    """Every registered agent, with its CLI's install state."""
    eps = available_agents()
    tools, others = _registered_tools()
    rows = []
    for name in sorted(eps):
        tool = tools.get(name)
        if tool is None:
            kind, what = others[name]
            rows.append(AgentRow(name, kind, None, None, None, None, what if kind == "broken" else None,
                                 eps[name].value))
            continue
        installed = tool.installed()
        rows.append(AgentRow(name, "cli", installed, tool.installed_version() if installed else None,
                             f"{tool.package} {tool.version}", tool.install_command, tool.speaks, eps[name].value))
    return rows
