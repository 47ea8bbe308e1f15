"""Cline's CLI (npm `cline`): `cline --json -P openai-compatible -m MODEL TASK` with the endpoint as its
OpenAI-compatible provider.

It speaks streamed chat completions with usage, offering its own tools (`run_commands`, `editor`,
`read_files`, `search_codebase` ...). Its provider settings live in
`~/.cline/data/settings/providers.json` of the trial's HOME (each entry needs an `updatedAt`, or the file
is ignored and Cline falls back to its own hosted provider): the base URL, the model and the trial's key,
which is not put in the environment its commands inherit; once its first request is through, the file is
rewritten without the key (see `Invocation.key_files`). `--data-dir` keeps all its state in that HOME, and
`CLINE_SESSION_BACKEND_MODE=local` runs the session in the CLI's own process instead of a background hub
daemon on a fixed port that every trial would share. Telemetry and auto-update are off in
`settings/global-settings.json`. Its feature-flag lookup at start (its vendor's analytics host) has no
off switch but a test-mode variable, which would change more than that: confined (bwrap, docker), the
lookup finds no network; with `--sandbox local` it is tried. Tools are auto-approved (its default with
a prompt).
stdout is JSON lines: `hook_event`, `agent_event` (iterations, errors), then a `run_result` whose
`finishReason` says how it ended, and an `error` line when it failed.
"""

from __future__ import annotations

import json
from pathlib import Path

from agentic_eval.agents.adapters.base import CliAgent, CliRun, Invocation, json_events
from agentic_eval.agents.adapters.install import CliTool
from agentic_eval.agents.base import AgentContext, AgentOutcome

PROVIDER = "openai-compatible"
DATA_DIR = ".cline/data"
TOOL = CliTool(agent="cline", kind="npm", package="cline", version="3.0.65", binary="cline",
               speaks="chat completions, streamed with usage")
GLOBAL_SETTINGS = {"telemetryOptOut": True, "autoUpdateEnabled": False}
"""settings/global-settings.json: its telemetry exporter (OpenTelemetry to its vendor) and auto-update off."""
SETTINGS_TIME = "2026-01-01T00:00:00.000Z"
"""The `updatedAt` its settings schema requires (any valid time; Cline only shows it)."""


def providers_file(base_url: str, model: str, key: str | None) -> str:
    """providers.json: the endpoint as Cline's OpenAI-compatible provider, with the key (None: without it)."""
    settings: dict[str, object] = {"provider": PROVIDER, "model": model, "baseUrl": base_url}
    if key is not None:
        settings["apiKey"] = key
    return json.dumps({"version": 1, "lastUsedProvider": PROVIDER, "modes": {},
                       "providers": {PROVIDER: {"settings": settings, "updatedAt": SETTINGS_TIME,
                                                "tokenSource": "manual"}}}, indent=2)


class ClineAgent(CliAgent):
    """cline with a prompt, headless (JSON lines), in the sandbox."""

    name = "cline"
    program = TOOL
    home_dirs = (f"{DATA_DIR}/settings",)

    def invocation(self, ctx: AgentContext, home: Path, executable: str) -> Invocation:
        settings = home / DATA_DIR / "settings" / "providers.json"
        settings.write_text(providers_file(ctx.base_url, ctx.model, ctx.api_key), encoding="utf-8")
        settings.chmod(0o600)
        (settings.parent / "global-settings.json").write_text(json.dumps(GLOBAL_SETTINGS), encoding="utf-8")
        argv = [executable, "--json", "--data-dir", str(home / DATA_DIR), "-P", PROVIDER, "-m", ctx.model,
                "--auto-approve", "true", ctx.instruction]
        env = {"CLINE_SESSION_BACKEND_MODE": "local", "CLINE_NO_AUTO_UPDATE": "1", "CLINE_NO_INTERACTIVE": "1"}
        return Invocation(argv=argv, env=env, key_files={settings: providers_file(ctx.base_url, ctx.model, None)})

    def completed(self, run: CliRun) -> AgentOutcome:
        return self._ended(run) or self.outcome(run, "completed", stop_reason="exited")

    def diagnose(self, run: CliRun) -> AgentOutcome | None:
        return self._ended(run) if run.process.exit_code != 0 else None

    def _ended(self, run: CliRun) -> AgentOutcome | None:
        """The outcome its last `run_result` line says (None without one)."""
        results = [e for e in json_events(run.stdout) if e.get("type") == "run_result"]
        if not results:
            return None
        last = results[-1]
        reason = str(last.get("finishReason") or "")
        if reason in ("error", "aborted"):
            message = " ".join(str(last.get("text") or reason).split())[:300]
            if run.wire.last_model_failure is not None:
                return self.outcome(run, "endpoint_error", detail=f"cline stopped on an endpoint error: "
                                    f"{run.wire.last_model_failure}")
            return self.outcome(run, "agent_error", detail=f"cline ended with {reason}: {message}")
        return self.outcome(run, "completed", stop_reason=f"finish:{reason}" if reason else "exited")
