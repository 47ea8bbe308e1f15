"""Agents that drive real coding-agent CLIs: opencode, codex, qwen-code, claude-code, kilo, cline, mini-swe-agent,
aider.

Each adapter runs its CLI headless in the sandbox against the wire recorder, so
its turns are recorded and classified exactly like the built-in agent's. The
CLIs are installed at pinned versions into the project's tools folder by
`agentic-eval agents install NAME|all` (see `install.py`); the adapters are
registered in the `agentic_eval.agents` entry-point group like any plugin, and
that registry is the only list of them: `agents list` and `agents install` read it.

A third-party adapter can subclass `CliAgent`, give it a `CliTool`, and
register it under the same entry-point group; `agents install` installs it too.

    base            CliAgent: isolation, the headless run, its end turned into an outcome
    install         CliTool, the tools folder, installs
    registered      the registry's CLI agents: what `agents install` installs and `agents list` shows
    process         run a CLI headless in its own process group, with a time limit
    wirelog         what the wire log says about a CLI's run (model calls, failures)
    opencode        the opencode adapter
    codex           the codex adapter
    qwen_code       the qwen-code adapter
    claude_code     the claude-code adapter (Anthropic Messages API: passed through or translated)
    kilo            the kilo adapter (Kilo Code's CLI, an opencode fork: OpencodeAgent with its own switches)
    cline           the cline adapter
    mini_swe_agent  the mini-swe-agent adapter
    aider           the aider adapter
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval._lazy import lazy_face

if TYPE_CHECKING:
    from .aider import AiderAgent as AiderAgent
    from .base import VERSION_FILE as VERSION_FILE
    from .base import CliAgent as CliAgent
    from .base import CliRun as CliRun
    from .base import Invocation as Invocation
    from .claude_code import ClaudeCodeAgent as ClaudeCodeAgent
    from .cline import ClineAgent as ClineAgent
    from .codex import CodexAgent as CodexAgent
    from .install import CliTool as CliTool
    from .install import InstallResult as InstallResult
    from .install import install_tool as install_tool
    from .install import tools_dir as tools_dir
    from .kilo import KiloAgent as KiloAgent
    from .mini_swe_agent import MiniSweAgent as MiniSweAgent
    from .opencode import OpencodeAgent as OpencodeAgent
    from .qwen_code import QwenCodeAgent as QwenCodeAgent
    from .registered import AgentRow as AgentRow
    from .registered import agent_rows as agent_rows
    from .registered import installable_tools as installable_tools

_EXPORTS = {
    "VERSION_FILE": ".base",
    "CliAgent": ".base",
    "CliRun": ".base",
    "Invocation": ".base",
    "CliTool": ".install",
    "InstallResult": ".install",
    "install_tool": ".install",
    "tools_dir": ".install",
    "AgentRow": ".registered",
    "agent_rows": ".registered",
    "installable_tools": ".registered",
    "AiderAgent": ".aider",
    "ClaudeCodeAgent": ".claude_code",
    "ClineAgent": ".cline",
    "KiloAgent": ".kilo",
    "CodexAgent": ".codex",
    "MiniSweAgent": ".mini_swe_agent",
    "OpencodeAgent": ".opencode",
    "QwenCodeAgent": ".qwen_code",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)
