"""Where the agent CLIs live and how they get there: pinned versions in the project's tools folder.

The CLIs to install are found in the agent registry (the `agentic_eval.agents` entry points), the
same one `agents list` reads: every registered agent that is a `CliAgent` with a `CliTool` is
installable, a third-party adapter as much as the built-in ones (`installable_tools`, `agent_rows`).

Each CLI gets its own folder under the tools folder (`paths.tools_dir()`: `AGENTIC_EVAL_TOOLS`, else
`tools/` in the cache folder, `~/.cache/agentic-eval/tools/` by default): an npm package is installed with
`npm install --prefix <folder> <package>@<version>`, a PyPI package into its own
virtual environment `<folder>` (made with the running Python). Nothing is
installed into the global environment, and nothing is fetched when a trial runs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentic_eval.errors import AgenticEvalError
from agentic_eval.paths import tools_dir

INSTALL_TIMEOUT_S = 1800.0
"""Longest a single install step may take before it is killed."""


@dataclass(frozen=True)
class CliTool:
    """One agent CLI: the package that provides it, its pinned version, its executable."""

    agent: str
    """The agent name this CLI backs (also its folder under the tools folder)."""
    kind: Literal["npm", "pypi"]
    package: str
    version: str
    binary: str
    """Executable name inside the install (node_modules/.bin/ or the venv's bin/)."""
    speaks: str
    """The API it uses, in words, for `agents list` and the README."""
    dist_name: str = ""
    """PyPI distribution name as in its .dist-info folder, if it differs from `package`."""

    @property
    def home(self) -> Path:
        return tools_dir() / self.agent

    @property
    def executable(self) -> Path:
        if self.kind == "npm":
            return self.home / "node_modules" / ".bin" / self.binary
        return self.home / "bin" / self.binary

    def installed(self) -> bool:
        exe = self.executable
        return exe.exists() and os.access(exe, os.X_OK)

    @property
    def install_command(self) -> str:
        """What a user types to install it."""
        return f"agentic-eval agents install {self.agent}"

    @property
    def spec(self) -> str:
        return f"{self.package}@{self.version}" if self.kind == "npm" else f"{self.package}=={self.version}"

    def installed_version(self) -> str | None:
        """The installed package's version, read from its metadata (no process started); None if absent."""
        if self.kind == "npm":
            manifest = self.home / "node_modules" / self.package / "package.json"
            try:
                return str(json.loads(manifest.read_text(encoding="utf-8"))["version"])
            except (OSError, ValueError, KeyError, TypeError):
                return None
        dist = (self.dist_name or self.package).replace("-", "_").lower()
        for site in sorted(self.home.glob("lib/python*/site-packages")):
            for info in site.glob("*.dist-info"):
                name, _, version = info.name.removesuffix(".dist-info").rpartition("-")
                if name.lower().replace("-", "_") == dist:
                    return version
        return None

    def install_steps(self) -> list[list[str]]:
        """The commands that install it, in order."""
        if self.kind == "npm":
            npm = shutil.which("npm")
            if npm is None:
                raise AgenticEvalError(f"{self.agent}: npm is not on PATH (install Node.js 20 or newer)")
            return [[npm, "install", "--prefix", str(self.home), "--no-audit", "--no-fund",
                     "--no-update-notifier", "--loglevel=error", self.spec]]
        python = self.home / "bin" / "python"
        return [[sys.executable, "-m", "venv", str(self.home)],
                [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", self.spec]]


@dataclass
class InstallResult:
    agent: str
    ok: bool
    seconds: float
    version: str | None
    message: str = ""


def install_tool(tool: CliTool, log: Path | None = None) -> InstallResult:
    """Install `tool` at its pinned version; a no-op if that version is already there. Never raises for
    a failed install: the result says what went wrong (the last line of the installer's output)."""
    t0 = time.monotonic()
    if tool.installed() and tool.installed_version() == tool.version:
        return InstallResult(tool.agent, True, 0.0, tool.version, "already installed")
    tool.home.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, NO_UPDATE_NOTIFIER="1", npm_config_update_notifier="false")
    for step in tool.install_steps():
        try:
            proc = subprocess.run(step, stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env,
                                  timeout=INSTALL_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return InstallResult(tool.agent, False, time.monotonic() - t0, None, f"{step[0]}: {exc}")
        if log is not None:
            with log.open("a", encoding="utf-8") as handle:
                handle.write(f"$ {' '.join(step)}\n{proc.stdout}{proc.stderr}\n")
        if proc.returncode != 0:
            lines = [ln for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()]
            why = lines[-1].strip() if lines else f"exit {proc.returncode}"
            return InstallResult(tool.agent, False, time.monotonic() - t0, None, f"{Path(step[0]).name}: {why}")
    version = tool.installed_version()
    ok = tool.installed() and version == tool.version
    message = "" if ok else f"installed, but found {version or 'no version'} at {tool.executable}"
    return InstallResult(tool.agent, ok, time.monotonic() - t0, version, message)


_VERSION_RE = re.compile(r"\d+\.\d+(?:\.\d+)?(?:[-.+][0-9A-Za-z.]+)?")


def version_from_output(text: str) -> str | None:
    """The first version-looking token of a `--version` output."""
    match = _VERSION_RE.search(text)
    return match.group(0) if match else None


def _registered_tools() -> tuple[dict[str, CliTool], dict[str, tuple[str, str]]]:
    """The CLI of every registered agent that drives one (name -> CliTool), and the agents that are not
    CLI adapters (name -> ('builtin' or 'broken', its entry point's value or why it cannot load))."""
    from agentic_eval.agents.adapters.base import CliAgent
    from agentic_eval.agents.base import available_agents

    tools: dict[str, CliTool] = {}
    others: dict[str, tuple[str, str]] = {}
    for name, ep in sorted(available_agents().items()):
        try:
            factory: Any = ep.load()
        except Exception as exc:  # noqa: BLE001 - a broken plugin is listed, not fatal
            others[name] = ("broken", f"{type(exc).__name__}: {exc}")
            continue
        tool = getattr(factory, "tool", None) if isinstance(factory, type) and issubclass(factory, CliAgent) else None
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
    from agentic_eval.agents.base import available_agents

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
