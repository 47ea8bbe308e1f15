"""Where the agent CLIs live and how they get there: pinned versions in the project's tools folder.

Which CLIs there are to install is the agent registry's to say (registered.py): every registered agent
that is a `CliAgent` with a `CliTool`, a third-party adapter as much as the built-in ones.

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
from typing import Literal

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
