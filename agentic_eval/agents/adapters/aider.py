"""aider (PyPI `aider-chat`): one `aider --message TASK` run, auto-approving, with no commits of its own.

It speaks streamed chat completions and makes no tool calls at all, by design:
the model writes its edits as blocks in the reply text, and aider applies them.
Its trials therefore end with `stop_reason` `no_tool_calls_by_design`, so a
report does not count its prose turns as a model failing to call tools. Its
chat history (`aider_chat.md` in the trial folder) is the transcript. aider
stages the files it creates even with `--no-auto-commits`; graders read the
working tree, so the index does not matter.
"""

from __future__ import annotations

import json
from pathlib import Path

from agentic_eval.agents.adapters.base import CliAgent, CliRun, Invocation
from agentic_eval.agents.adapters.install import CliTool
from agentic_eval.agents.adapters.process import last_line
from agentic_eval.agents.base import NO_TOOL_CALLS_BY_DESIGN, AgentContext, AgentOutcome

TOOL = CliTool(agent="aider", kind="pypi", package="aider-chat", version="0.86.2", binary="aider",
               dist_name="aider_chat", speaks="chat completions, streamed; no tool calls (edit blocks in text)")


class AiderAgent(CliAgent):
    """aider in one-message mode; edit format chosen by aider unless `--agent-opt edit_format=...`."""

    name = "aider"
    program = TOOL

    def invocation(self, ctx: AgentContext, home: Path, executable: str) -> Invocation:
        history = ctx.trial_dir / "aider_chat.md"
        metadata = _write_offline_metadata(ctx, home)
        argv = [executable, "--model", f"openai/{ctx.model}", "--openai-api-base", ctx.base_url,
                "--yes-always", "--no-auto-commits", "--no-dirty-commits", "--no-gitignore", "--no-check-update",
                "--analytics-disable", "--no-show-model-warnings", "--no-show-release-notes", "--no-pretty",
                "--no-fancy-input", "--no-detect-urls", "--no-browser", "--map-tokens", "0",
                "--model-metadata-file", str(metadata),
                "--chat-history-file", str(history),
                "--input-history-file", str(ctx.trial_dir / "aider_input.history"),
                "--llm-history-file", str(ctx.trial_dir / "aider_llm.log")]
        edit_format = ctx.options.extra.get("edit_format")
        if edit_format:
            argv += ["--edit-format", edit_format]
        argv += ["--message", ctx.instruction]
        env = {
            "OPENAI_API_KEY": ctx.api_key,
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "LITELLM_TELEMETRY": "False",
            "AIDER_CHECK_UPDATE": "false",
            "AIDER_ANALYTICS_DISABLE": "true",
            "PYTHONUNBUFFERED": "1",
        }
        outputs = (history, ctx.trial_dir / "aider_input.history", ctx.trial_dir / "aider_llm.log")
        return Invocation(argv=argv, env=env, transcript=history, outputs=outputs)

    def completed(self, run: CliRun) -> AgentOutcome:
        failure = run.wire.last_model_failure
        if failure is not None:
            return self.outcome(run, "endpoint_error", detail=f"aider: {failure}")
        if run.wire.present and run.wire.model_calls == 0:
            return self.outcome(run, "agent_error", detail="aider exited without calling the model: "
                                + (last_line(run.stdout) or "no output"))
        # text-only by design, not a model failure
        return self.outcome(run, "completed", stop_reason=NO_TOOL_CALLS_BY_DESIGN)



def _write_offline_metadata(ctx: AgentContext, home: Path) -> Path:
    """Model metadata for the run's model, and a non-empty price cache: without them aider downloads
    LiteLLM's price table at start."""
    entry = {"max_input_tokens": int(ctx.options.extra.get("context", 32768)),
             "max_output_tokens": int(ctx.options.extra.get("max_output", 4096)),
             "input_cost_per_token": 0.0, "output_cost_per_token": 0.0, "litellm_provider": "openai", "mode": "chat"}
    metadata = home / "aider_model_metadata.json"
    metadata.write_text(json.dumps({f"openai/{ctx.model}": entry}, indent=2), encoding="utf-8")
    cache = home / ".aider" / "caches"
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "model_prices_and_context_window.json").write_text(json.dumps({f"openai/{ctx.model}": entry}),
                                                                 encoding="utf-8")
    return metadata
