"""Agents that drive real coding-agent CLIs: opencode, codex, qwen-code, mini-swe-agent, aider.

Each adapter runs its CLI headless in the sandbox against the wire recorder, so
its turns are recorded and classified exactly like the built-in agent's. The
CLIs are installed at pinned versions into the project's tools folder by
`agentic-eval agents install NAME|all` (see `install.py`); the adapters are
registered in the `agentic_eval.agents` entry-point group like any plugin.

A third-party adapter can subclass `CliAgent`, give it a `CliTool`, and
register it under the same entry-point group.
"""

from __future__ import annotations

from agentic_eval.agents.adapters.aider import TOOL as AIDER_TOOL
from agentic_eval.agents.adapters.aider import AiderAgent
from agentic_eval.agents.adapters.base import VERSION_FILE, CliAgent, CliRun, Invocation
from agentic_eval.agents.adapters.codex import TOOL as CODEX_TOOL
from agentic_eval.agents.adapters.codex import CodexAgent
from agentic_eval.agents.adapters.install import CliTool, InstallResult, install_tool, tools_dir
from agentic_eval.agents.adapters.mini_swe_agent import TOOL as MINI_TOOL
from agentic_eval.agents.adapters.mini_swe_agent import MiniSweAgent
from agentic_eval.agents.adapters.opencode import TOOL as OPENCODE_TOOL
from agentic_eval.agents.adapters.opencode import OpencodeAgent
from agentic_eval.agents.adapters.qwen_code import TOOL as QWEN_TOOL
from agentic_eval.agents.adapters.qwen_code import QwenCodeAgent

CLI_TOOLS: dict[str, CliTool] = {t.agent: t for t in (OPENCODE_TOOL, CODEX_TOOL, QWEN_TOOL, MINI_TOOL, AIDER_TOOL)}
"""The CLIs this project installs, by agent name, in the order `all` installs them (fast npm ones first)."""

__all__ = [
    "CLI_TOOLS", "VERSION_FILE", "AiderAgent", "CliAgent", "CliRun", "CliTool", "CodexAgent", "InstallResult",
    "Invocation", "MiniSweAgent", "OpencodeAgent", "QwenCodeAgent", "install_tool", "tools_dir",
]
