"""Claude Code (npm `@anthropic-ai/claude-code`): `claude -p TASK --output-format stream-json` against the endpoint.

It speaks the Anthropic Messages API (`POST /v1/messages`, streamed, with about a dozen tools and a large
system prompt), sent to `ANTHROPIC_BASE_URL`: the trial's wire recorder. How the recorder serves it is
chosen once per run (`--agent-opt api=auto|native|translate`, default auto): `native` passes it through
to an endpoint that serves `/v1/messages` itself (vLLM, llama.cpp and Ollama do, in current versions);
`translate` turns each exchange into chat completions and back (agentic_eval.wire.translate); `auto` asks
the endpoint once (`POST /v1/messages` with an empty body: a 404 or 405 means it has none) and says which
it chose on stderr. Each trial records the choice (`wire_api` in trials.jsonl).

It runs in print mode, offline: `IS_SANDBOX=1` (it runs as root in a container or bwrap),
`--dangerously-skip-permissions`, `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1` (no telemetry, error
reports, update checks or feedback surveys), auto-updates off, and every model it might pick for a side job
(the small/fast model, the opus/sonnet/haiku aliases, subagents) set to the model under test. Its files
(`~/.claude.json`, `~/.claude/`) are in the trial's HOME, never the user's. The trial's key reaches it through
`apiKeyHelper` in `~/.claude/settings.json`, a command that prints a key file under that HOME (not the
environment, which its Bash tool inherits); once its first request is through, the key file is removed (see
`Invocation.key_files`), and the helper's answer is cached for the whole trial. Web tools are off
(`--disallowedTools WebFetch WebSearch`); `--agent-opt max_output=N` sets the output tokens it asks for
(`CLAUDE_CODE_MAX_OUTPUT_TOKENS`; its own default is 32,000, which a server whose context is smaller than the
prompt plus that may refuse); a failed request is retried twice (`CLAUDE_CODE_MAX_RETRIES`). The
turn limit is the task's (`--max-turns`). stdout is stream-json: `system`, `assistant`, `user`, then a `result`
event whose `subtype` and `is_error` say how it ended.
"""

from __future__ import annotations

import json
import shlex
import sys
import threading
from pathlib import Path
from typing import ClassVar

from agentic_eval.agents.adapters.base import CliAgent, CliRun, Invocation, key_file
from agentic_eval.agents.adapters.install import CliTool
from agentic_eval.agents.base import AgentContext, AgentOptions, AgentOutcome

TOOL = CliTool(agent="claude-code", kind="npm", package="@anthropic-ai/claude-code", version="2.1.328",
               binary="claude", speaks="Anthropic Messages API, streamed (native or translated)")
KEY_FILE = ".agentic-eval-key"
"""Under the trial's HOME: the key, printed once by the apiKeyHelper as Claude Code starts."""
DISALLOWED_TOOLS = ("WebFetch", "WebSearch")
API_CHOICES = ("auto", "native", "translate")
PROBE_TIMEOUT_S = 15.0
MAX_RETRIES = 2
"""Retries of a failed model request (its own default is 10, with back-off: three minutes against a dead
endpoint); 2 is the OpenAI SDKs' default, which the other CLIs keep."""
DAY_MS = 24 * 3600 * 1000

SETTINGS: dict[str, object] = {
    "autoUpdates": False,
    "includeCoAuthoredBy": False,
    "cleanupPeriodDays": 1,
    "env": {"DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1"},
}


def settings(key_path: Path | None) -> dict[str, object]:
    """~/.claude/settings.json: SETTINGS, with the apiKeyHelper that prints the key file (None: without it)."""
    if key_path is None:
        return dict(SETTINGS)
    return {**SETTINGS, "apiKeyHelper": f"cat {shlex.quote(str(key_path))}"}


def probe_messages_api(base_url: str, api_key: str) -> tuple[bool, str]:
    """(whether the endpoint serves the Messages API, why it is thought so): a POST of an empty body to
    `{base_url}/messages`, which a server with the route refuses as invalid and one without answers 404/405."""
    import httpx

    from agentic_eval.endpoint import auth_headers, shared_ssl_context

    url = base_url.rstrip("/") + "/messages"
    headers = {**auth_headers(api_key), "x-api-key": api_key, "anthropic-version": "2023-06-01"}
    try:
        reply = httpx.post(url, json={}, headers=headers, timeout=PROBE_TIMEOUT_S, verify=shared_ssl_context())
    except httpx.HTTPError as exc:
        return False, f"POST /v1/messages failed ({type(exc).__name__}): translating to chat completions"
    if reply.status_code in (404, 405, 501):
        return False, f"POST /v1/messages is HTTP {reply.status_code}: translating to chat completions"
    return True, f"POST /v1/messages is served (HTTP {reply.status_code} to an empty request): passed through"


class ClaudeCodeAgent(CliAgent):
    """Claude Code in print mode, permissions skipped, in the sandbox."""

    name = "claude-code"
    program = TOOL
    home_dirs = (".claude",)
    system_config = ("/etc/claude-code",)  # managed-settings.json, managed-mcp.json
    whole_number_options: ClassVar[tuple[str, ...]] = ("max_output",)

    def __init__(self) -> None:
        super().__init__()
        self._api: dict[str, str] = {}
        """The choice per endpoint (one run has one; asked once)."""
        self._api_lock = threading.Lock()

    def check_options(self, extra: dict[str, object]) -> None:
        from agentic_eval.errors import AgenticEvalError

        super().check_options(extra)
        unknown = sorted(set(extra) - {"bin", "api", "max_output"})
        if unknown:
            raise AgenticEvalError(f"--agent-opt {unknown[0]}: claude-code takes api=auto|native|translate, "
                                   "max_output=N and bin=PATH")
        if "api" in extra and str(extra["api"]) not in API_CHOICES:
            raise AgenticEvalError(f"--agent-opt api={extra['api']}: expected one of {', '.join(API_CHOICES)}")

    def wire_api(self, base_url: str, api_key: str, options: AgentOptions) -> str:
        """How the wire recorder serves this run's Messages requests ('native' or 'translate'): the `api` option,
        or (auto) the endpoint's answer to one probe, asked once per run and said on stderr."""
        with self._api_lock:
            if base_url not in self._api:
                chosen = str(options.extra.get("api", "auto"))
                if chosen == "auto":
                    native, why = probe_messages_api(base_url, api_key)
                    chosen = "native" if native else "translate"
                    print(f"agentic-eval: claude-code: {why}", file=sys.stderr, flush=True)
                self._api[base_url] = chosen
            return self._api[base_url]

    def invocation(self, ctx: AgentContext, home: Path, executable: str) -> Invocation:
        key_path = key_file(home, KEY_FILE, ctx.api_key)
        settings_path = home / ".claude" / "settings.json"
        settings_path.write_text(json.dumps(settings(key_path), indent=2), encoding="utf-8")
        (home / ".claude.json").write_text(json.dumps({"hasCompletedOnboarding": True, "autoUpdates": False,
                                                       "bypassPermissionsModeAccepted": True}), encoding="utf-8")
        base = ctx.base_url.removesuffix("/").removesuffix("/v1")  # it appends /v1/messages itself
        env = {
            "ANTHROPIC_BASE_URL": base,
            "IS_SANDBOX": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_API_KEY_HELPER_TTL_MS": str(DAY_MS),
            "CLAUDE_CODE_MAX_RETRIES": str(MAX_RETRIES),
            "ANTHROPIC_MODEL": ctx.model,
            "ANTHROPIC_SMALL_FAST_MODEL": ctx.model,
            "ANTHROPIC_DEFAULT_OPUS_MODEL": ctx.model,
            "ANTHROPIC_DEFAULT_SONNET_MODEL": ctx.model,
            "ANTHROPIC_DEFAULT_HAIKU_MODEL": ctx.model,
            "CLAUDE_CODE_SUBAGENT_MODEL": ctx.model,
        }
        if ctx.options.extra.get("max_output"):  # its default asks for 32,000: more than a small context holds
            env["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] = str(int(str(ctx.options.extra["max_output"])))
        argv = [executable, "-p", ctx.instruction, "--output-format", "stream-json", "--verbose",
                "--dangerously-skip-permissions", "--model", ctx.model, "--max-turns", str(ctx.max_turns),
                "--disallowedTools", *DISALLOWED_TOOLS]
        return Invocation(argv=argv, env=env, key_files={key_path: None})

    def completed(self, run: CliRun) -> AgentOutcome:
        return self.result_event_outcome(run)
