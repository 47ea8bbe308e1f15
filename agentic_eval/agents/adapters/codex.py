"""codex (npm `@openai/codex`): `codex exec --json` with the endpoint as a custom model provider.

This version speaks the Responses API only (streamed); a server without
`/v1/responses` makes the trial an `agent_error` that says so. Its state goes
to a per-trial CODEX_HOME, whose `config.toml` holds the endpoint as a model
provider with the trial's key (`experimental_bearer_token`): not the environment,
which its shell commands inherit. Once its first request is through, the file
is rewritten without the key (see `Invocation.key_files`). Plugin sync, apps, update checks and analytics are
off: with them on it looks up hosts on the internet at start.
stdout is JSON lines (`thread.started`, `item.*`, `turn.completed` with usage,
`turn.failed`, `error`).
"""

from __future__ import annotations

from pathlib import Path

from agentic_eval.agents.adapters.base import CliAgent, CliRun, Invocation, json_events
from agentic_eval.agents.adapters.install import CliTool
from agentic_eval.agents.base import AgentContext, AgentOutcome

PROVIDER = "agentic_eval"
DISABLED_FEATURES = ("multi_agent", "goals", "plugins", "remote_plugin", "plugin_sharing", "apps")
"""Features turned off: the two the measured command line turns off, and the ones that reach the network."""

TOOL = CliTool(agent="codex", kind="npm", package="@openai/codex", version="0.171.0", binary="codex",
               speaks="Responses API only, streamed")


def _toml_str(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def provider_toml(base_url: str, key: str | None) -> str:
    """config.toml: the endpoint as codex's model provider, with the key (None: without it)."""
    lines = [f"[model_providers.{PROVIDER}]", f"name = {_toml_str(PROVIDER)}", f"base_url = {_toml_str(base_url)}",
             'wire_api = "responses"']
    if key is not None:
        lines.append(f"experimental_bearer_token = {_toml_str(key)}")
    return "\n".join(lines) + "\n"


class CodexAgent(CliAgent):
    """codex exec, headless, in the sandbox, with approvals off and no sandboxing of its own."""

    name = "codex"
    program = TOOL
    home_dirs = (".codex",)
    system_config = ("/etc/codex",)  # its managed configuration

    def invocation(self, ctx: AgentContext, home: Path, executable: str) -> Invocation:
        config = home / ".codex" / "config.toml"
        config.write_text(provider_toml(ctx.base_url, ctx.api_key), encoding="utf-8")
        config.chmod(0o600)
        argv = [executable, "exec", "--json", "--ephemeral", "--skip-git-repo-check",
                "-c", f"model={_toml_str(ctx.model)}", "-c", f"model_provider={PROVIDER}",
                "-c", "approval_policy=never", "-c", "sandbox_mode=danger-full-access",
                "-c", 'web_search="disabled"', "-c", "check_for_update_on_startup=false",
                "-c", "analytics.enabled=false", "-c", "feedback.enabled=false"]
        if ctx.options.extra.get("context"):
            argv += ["-c", f"model_context_window={int(ctx.options.extra['context'])}"]
        for feature in DISABLED_FEATURES:
            argv += ["--disable", feature]
        argv.append(ctx.instruction)
        env = {"CODEX_HOME": str(home / ".codex")}
        return Invocation(argv=argv, env=env, key_files={config: provider_toml(ctx.base_url, None)})

    def diagnose(self, run: CliRun) -> AgentOutcome | None:
        missing = [p for p in run.wire.not_found_paths if p.rstrip("/").endswith("/responses")]
        if missing or (run.process.exit_code != 0 and _said_responses_404(run)):
            return self.outcome(run, "agent_error", detail="the endpoint has no /v1/responses (HTTP 404): codex "
                                "speaks only the Responses API; use a server that serves it, or another agent")
        return None

    def completed(self, run: CliRun) -> AgentOutcome:
        events = json_events(run.stdout)
        failed = [e for e in events if e.get("type") == "turn.failed"]
        if failed:
            err = failed[-1].get("error")
            message = str(err.get("message") if isinstance(err, dict) else err)[:300]
            if run.wire.last_model_failure is not None:
                return self.outcome(run, "endpoint_error", detail=f"codex turn failed: {message}")
            return self.outcome(run, "agent_error", detail=f"codex turn failed: {message}")
        if any(e.get("type") == "turn.completed" for e in events):
            return self.outcome(run, "completed", stop_reason="turn_completed")
        return self.outcome(run, "completed", stop_reason="exited")


def _said_responses_404(run: CliRun) -> bool:
    for event in json_events(run.stdout):
        text = str(event.get("message") or event.get("error") or "")
        if "404" in text and "/responses" in text:
            return True
    return False
