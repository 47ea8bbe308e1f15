"""opencode (npm `opencode-ai`): `opencode run --format json` with the endpoint as an OpenAI-compatible provider.

It speaks streamed chat completions with usage. The provider, model, permissions
and the off switches go in through `OPENCODE_CONFIG_CONTENT`; the trial's key
comes from a file (`{file:...}`), not the environment its shell tool inherits,
and the file is removed once opencode's first request is through (see
`Invocation.key_files`). `--title` names the session so it makes no separate
title request.
Its stdout is JSON lines: `step_start`, `tool_use`, `text`, `step_finish`
(with the finish reason and tokens), `error`.
"""

from __future__ import annotations

import json
from pathlib import Path

from agentic_eval.agents.adapters.base import CliAgent, CliRun, Invocation, json_events, key_file
from agentic_eval.agents.adapters.install import CliTool
from agentic_eval.agents.base import AgentContext, AgentOutcome

PROVIDER = "agentic-eval"
CONTEXT_TOKENS = 32768
OUTPUT_TOKENS = 4096

TOOL = CliTool(agent="opencode", kind="npm", package="opencode-ai", version="1.18.33", binary="opencode",
               speaks="chat completions, streamed with usage")


KEY_FILE = ".agentic-eval-key"
"""Under the trial's HOME: the key, read once as opencode loads its configuration."""


def opencode_config(ctx: AgentContext, key_path: Path) -> dict[str, object]:
    """The whole opencode configuration of one trial (the key: a reference to `key_path`)."""
    extra = ctx.options.extra
    model = {"name": ctx.model, "tool_call": True,
             "limit": {"context": int(extra.get("context", CONTEXT_TOKENS)),
                       "output": int(extra.get("max_output", OUTPUT_TOKENS))}}
    return {
        "autoupdate": False,
        "share": "disabled",
        "provider": {PROVIDER: {"npm": "@ai-sdk/openai-compatible", "name": PROVIDER,
                                "options": {"baseURL": ctx.base_url, "apiKey": f"{{file:{key_path}}}"},
                                "models": {ctx.model: model}}},
        "model": f"{PROVIDER}/{ctx.model}",
        "small_model": f"{PROVIDER}/{ctx.model}",
        "permission": {"edit": "allow", "bash": "allow", "webfetch": "deny"},
        "agent": {"build": {"steps": ctx.max_turns}},
    }


class OpencodeAgent(CliAgent):
    """opencode run, headless, in the sandbox."""

    name = "opencode"
    program = TOOL

    def invocation(self, ctx: AgentContext, home: Path, executable: str) -> Invocation:
        key_path = key_file(home, KEY_FILE, ctx.api_key)
        env = {
            "OPENCODE_CONFIG_CONTENT": json.dumps(opencode_config(ctx, key_path)),
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
            "OPENCODE_DISABLE_SHARE": "1",
            "OPENCODE_DISABLE_CLAUDE_CODE": "1",
            "OPENCODE_DISABLE_EXTERNAL_SKILLS": "1",
        }
        argv = [executable, "run", "--pure", "--format", "json", "--auto", "--title", ctx.task.id, ctx.instruction]
        return Invocation(argv=argv, env=env, key_files={key_path: None})

    def completed(self, run: CliRun) -> AgentOutcome:
        events = json_events(run.stdout)
        errors = [e for e in events if e.get("type") == "error"]
        if errors:
            message = _error_text(errors[-1])
            failure = run.wire.last_model_failure
            if failure is not None:
                return self.outcome(run, "endpoint_error",
                                    detail=f"{self.name} stopped on an endpoint error: {failure}")
            return self.outcome(run, "agent_error", detail=f"{self.name} reported an error: {message}")
        finishes = [e for e in events if e.get("type") == "step_finish"]
        reason = ""
        if finishes:
            part = finishes[-1].get("part")
            if isinstance(part, dict):
                reason = str(part.get("reason", ""))
        return self.outcome(run, "completed", stop_reason=f"finish:{reason}" if reason else "exited")


def _error_text(event: dict[str, object]) -> str:
    err = event.get("error")
    if isinstance(err, dict):
        data = err.get("data")
        if isinstance(data, dict) and data.get("message"):
            return str(data["message"])[:300]
        return str(err.get("name") or err)[:300]
    return str(err or event)[:300]
