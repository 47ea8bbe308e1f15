"""Kilo Code's CLI (npm `@kilocode/cli`): `kilo run --format json` with the endpoint as an OpenAI-compatible provider.

Kilo's CLI grew out of opencode and keeps its shape: it speaks streamed chat
completions with usage, reads its whole configuration from `KILO_CONFIG_CONTENT`
(the provider, model, permissions), and prints JSON lines (`step_start`,
`tool_use`, `text`, `step_finish`, `error`), which `OpencodeAgent` reads. The
trial's key comes from a file (`{file:...}`), not the environment its shell tool
inherits, and the file is removed once kilo's first request is through (see
`Invocation.key_files`). Model catalogue fetches, auto-update, sharing, the
bundled plugins, telemetry, session ingest, codebase indexing, the daemon and
Claude Code imports are off, so nothing but the endpoint is asked for anything.

The npm package is a launcher; the program itself comes from a platform package
(`@kilocode/cli-linux-x64` on x86-64 Linux) that npm installs beside it.
"""

from __future__ import annotations

import json
from pathlib import Path

from agentic_eval.agents.adapters.base import Invocation, key_file
from agentic_eval.agents.adapters.install import CliTool
from agentic_eval.agents.adapters.opencode import OpencodeAgent, opencode_config
from agentic_eval.agents.base import AgentContext

TOOL = CliTool(agent="kilo", kind="npm", package="@kilocode/cli", version="7.7.7", binary="kilo",
               speaks="chat completions, streamed with usage")
KEY_FILE = ".agentic-eval-key"
OFF_SWITCHES = ("KILO_DISABLE_MODELS_FETCH", "KILO_DISABLE_AUTOUPDATE", "KILO_DISABLE_DEFAULT_PLUGINS",
                "KILO_DISABLE_LSP_DOWNLOAD", "KILO_DISABLE_SHARE", "KILO_DISABLE_CLAUDE_CODE",
                "KILO_DISABLE_EXTERNAL_SKILLS", "KILO_DISABLE_SESSION_INGEST", "KILO_DISABLE_CODEBASE_INDEXING",
                "KILO_DISABLE_PRESENCE", "KILO_DISABLE_PROJECT_CONFIG", "KILO_NO_DAEMON", "KILO_PURE")


class KiloAgent(OpencodeAgent):
    """kilo run, headless, in the sandbox."""

    name = "kilo"
    program = TOOL

    def invocation(self, ctx: AgentContext, home: Path, executable: str) -> Invocation:
        key_path = key_file(home, KEY_FILE, ctx.api_key)
        env = {name: "1" for name in OFF_SWITCHES}
        env["KILO_CONFIG_CONTENT"] = json.dumps(opencode_config(ctx, key_path))
        env["KILO_TELEMETRY_LEVEL"] = "off"
        argv = [executable, "run", "--pure", "--format", "json", "--auto", "--title", ctx.task.id, ctx.instruction]
        return Invocation(argv=argv, env=env, key_files={key_path: None})
