"""mini-swe-agent (PyPI `mini-swe-agent`): `mini -y --exit-immediately` with its stock `mini.yaml`.

It speaks non-streamed chat completions through LiteLLM (`openai/MODEL` with
`api_base` set to the recorder) and offers one tool, `bash`. The task's turn
limit is its `agent.step_limit`. It finishes when the model runs
`echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`; its trajectory (`traj.json` in
the trial folder) records the exit status.
"""

from __future__ import annotations

import json
from pathlib import Path

from agentic_eval.agents.adapters.base import CliAgent, CliRun, Invocation
from agentic_eval.agents.adapters.install import CliTool
from agentic_eval.agents.base import AgentContext, AgentOutcome

TOOL = CliTool(agent="mini-swe-agent", kind="pypi", package="mini-swe-agent", version="2.4.6", binary="mini",
               speaks="chat completions, not streamed, one bash tool")

STOP_REASONS = {"Submitted": "submitted", "LimitsExceeded": "max_turns", "TimeExceeded": "time_limit",
                "RepeatedFormatError": "repeated_format_error"}
"""Exit statuses that mean the agent loop ended by itself (the model's doing, so the trial is graded)."""


class MiniSweAgent(CliAgent):
    """mini-swe-agent's `mini` command, confirmation off, exiting when the model submits."""

    name = "mini-swe-agent"
    program = TOOL

    def invocation(self, ctx: AgentContext, home: Path, executable: str) -> Invocation:
        traj = ctx.trial_dir / "traj.json"
        argv = [executable, "-m", f"openai/{ctx.model}", "-t", ctx.instruction, "-y", "--exit-immediately",
                "-o", str(traj), "-c", "mini.yaml", "-c", f"model.model_kwargs.api_base={ctx.base_url}",
                "-c", f"agent.step_limit={ctx.max_turns}", "-c", "agent.cost_limit=0"]
        env = {
            "OPENAI_API_KEY": ctx.api_key,
            "MSWEA_CONFIGURED": "true",
            "MSWEA_COST_TRACKING": "ignore_errors",
            "MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT": "3",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "LITELLM_TELEMETRY": "False",
            "PYTHONUNBUFFERED": "1",
        }
        return Invocation(argv=argv, env=env, transcript=traj, outputs=(traj,))

    def completed(self, run: CliRun) -> AgentOutcome:
        status = _exit_status(run.invocation.transcript)
        if status in STOP_REASONS:
            return self.outcome(run, "completed", stop_reason=STOP_REASONS[status])
        if run.wire.last_model_failure is not None:
            return self.outcome(run, "endpoint_error", detail=f"mini-swe-agent: {run.wire.last_model_failure}")
        if status:
            return self.outcome(run, "agent_error", detail=f"mini-swe-agent ended with {status}")
        return self.outcome(run, "completed", stop_reason="exited")

    def diagnose(self, run: CliRun) -> AgentOutcome | None:
        if run.process.exit_code == 0:
            return None
        status = _exit_status(run.invocation.transcript)
        if status and run.wire.last_model_failure is None:
            return self.outcome(run, "agent_error", detail=f"mini-swe-agent exited {run.process.exit_code} "
                                f"with {status}")
        return None


def _exit_status(traj: Path | None) -> str:
    if traj is None:
        return ""
    try:
        info = json.loads(traj.read_text(encoding="utf-8")).get("info", {})
    except (OSError, ValueError, AttributeError):
        return ""
    return str(info.get("exit_status", "")) if isinstance(info, dict) else ""
