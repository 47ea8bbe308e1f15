"""The two agents that never call a model: `oracle` runs the task's reference fix, `nop` does nothing.

Both serve validation (oracle must pass every task, nop none) and the
harness's own benchmarks.
"""

from __future__ import annotations

from agentic_eval.agents.base import Agent, AgentContext, AgentOutcome, available_agents
from agentic_eval.errors import AgenticEvalError
from agentic_eval.grading.grader import ScriptRunner


class _NoOptions(Agent):
    """An agent with nothing to set: an `--agent-opt` given to it is one line naming the agents that read theirs,
    not a value silently dropped."""

    def check_options(self, extra: dict[str, object]) -> None:
        if extra:
            raise AgenticEvalError(f"--agent-opt {next(iter(extra))}: the {self.name} agent takes no options: drop "
                                   f"the flag (agents that take options: {', '.join(_agents_taking_options())})")


def _agents_taking_options() -> list[str]:
    """The registered agents other than these two (a plugin's agent that cannot be loaded is left out)."""
    names = []
    for name, entry in sorted(available_agents().items()):
        try:
            made = entry.load()
        except Exception:  # noqa: BLE001 - a broken plugin says so when it is run, not in this line
            continue
        if not (isinstance(made, type) and issubclass(made, _NoOptions)):
            names.append(name)
    return names


class OracleAgent(_NoOptions):
    """Runs the task's reference fix in the sandbox, under the agent's time limit."""

    name = "oracle"
    uses_model = False

    def run(self, ctx: AgentContext) -> AgentOutcome:
        transcript = ctx.trial_dir / "agent_output.txt"
        with ScriptRunner(ctx.task, ctx.sandbox, backend=ctx.backend) as runner:
            result = runner.apply_fix(timeout_s=ctx.timeout_s, cancel=ctx.cancel)
        transcript.write_text(result.output, encoding="utf-8")
        if result.cancelled:
            return AgentOutcome("cancelled", detail="the run was interrupted", transcript=transcript)
        if result.timed_out:
            return AgentOutcome("timeout", detail=f"reference fix still running after {ctx.timeout_s:g}s",
                                transcript=transcript)
        if result.exit_code != 0:
            why = result.start_error or f"exit {result.exit_code}"
            return AgentOutcome("agent_error", detail=f"reference fix failed: {why}", transcript=transcript)
        return AgentOutcome("completed", transcript=transcript, stop_reason="fix_applied")


class NopAgent(_NoOptions):
    """Does nothing: the sandbox stays pristine, so every valid grader must fail."""

    name = "nop"
    uses_model = False

    def run(self, ctx: AgentContext) -> AgentOutcome:
        return AgentOutcome("completed", stop_reason="nop")
