"""qwen-code (npm `@qwen-code/qwen-code`): `qwen -p TASK -o stream-json --yolo` with OpenAI auth.

It speaks streamed chat completions. Telemetry, usage statistics and auto-update
are off in its settings file (`~/.qwen/settings.json` of the trial's HOME), and
so is its background memory extraction (a second model session after the task);
`web_fetch` is excluded (repeat `--exclude-tools` per tool). The trial's key is
in that settings file too (`security.auth.apiKey`), not the environment its
shell tool inherits; once its first request is through, the file is rewritten
without it (see `Invocation.key_files`). The turn limit is the task's. stdout
is stream-json: `system`, `assistant`, `user`, then a `result` event whose
`subtype` says how it ended.
"""

from __future__ import annotations

import json
from pathlib import Path

from agentic_eval.agents.adapters.base import CliAgent, CliRun, Invocation
from agentic_eval.agents.adapters.install import CliTool
from agentic_eval.agents.base import AgentContext, AgentOutcome

EXCLUDED_TOOLS = ("web_fetch", "web_search")
SETTINGS = {
    "general": {"enableAutoUpdate": False, "disableUpdateNag": True},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False, "logPrompts": False},
    "memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False, "enableAutoSkill": False},
    "$version": 4,
}

def settings_with_key(key: str | None) -> dict[str, object]:
    """The settings file: SETTINGS, with the key for its OpenAI auth (None: without it)."""
    auth: dict[str, object] = {"selectedType": "openai"}
    if key is not None:
        auth["apiKey"] = key
    return {**SETTINGS, "security": {"auth": auth}}


TOOL = CliTool(agent="qwen-code", kind="npm", package="@qwen-code/qwen-code", version="0.15.10", binary="qwen",
               speaks="chat completions, streamed")


class QwenCodeAgent(CliAgent):
    """qwen-code in headless prompt mode, auto-approving every tool."""

    name = "qwen-code"
    program = TOOL
    home_dirs = (".qwen",)
    system_config = ("/etc/qwen-code",)  # settings.json (over the user's), system-defaults.json

    def invocation(self, ctx: AgentContext, home: Path, executable: str) -> Invocation:
        settings = home / ".qwen" / "settings.json"
        settings.write_text(json.dumps(settings_with_key(ctx.api_key), indent=2), encoding="utf-8")
        settings.chmod(0o600)
        argv = [executable, "--auth-type", "openai", "--openai-base-url", ctx.base_url, "-m", ctx.model, "--yolo",
                "-o", "stream-json", "--max-session-turns", str(ctx.max_turns)]
        for tool in EXCLUDED_TOOLS:
            argv += ["--exclude-tools", tool]
        argv += ["-p", ctx.instruction]
        # The key goes by the settings file, neither argv nor the environment (both readable by its tools).
        return Invocation(argv=argv, env={"OPENAI_BASE_URL": ctx.base_url, "OPENAI_MODEL": ctx.model},
                          key_files={settings: json.dumps(settings_with_key(None), indent=2)})

    def completed(self, run: CliRun) -> AgentOutcome:
        return self.result_event_outcome(run, ("error", "result"))
