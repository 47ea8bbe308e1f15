"""The agent contract: capabilities and hooks declared on `Agent`, called directly (no probing)."""

from __future__ import annotations

from dataclasses import replace

from agentic_eval.agents.adapters import CliAgent
from agentic_eval.agents.adapters.opencode import OpencodeAgent
from agentic_eval.agents.base import Agent, AgentContext, AgentOptions, AgentOutcome, _ForeignAgent
from agentic_eval.confine.docker import cli_refusal


class _Plain(Agent):
    name = "plain"

    def run(self, ctx: AgentContext) -> AgentOutcome:
        return AgentOutcome("completed")


def test_the_base_class_declares_every_hook_as_a_no_op() -> None:
    agent = _Plain()
    assert agent.uses_model and agent.program is None
    assert agent.check_options({"anything": 1}) is None
    assert agent.wire_api("http://127.0.0.1:1/v1", "k", AgentOptions()) is None


def test_an_agent_written_to_the_old_protocol_is_wrapped_and_its_hooks_called() -> None:
    seen: list[object] = []

    class Old:
        name, uses_model = "old", False

        def run(self, ctx: AgentContext) -> AgentOutcome:
            return AgentOutcome("completed", stop_reason="old")

        def check_options(self, extra: dict[str, object]) -> None:
            seen.append(extra)

    agent = _ForeignAgent(Old())
    assert (agent.name, agent.uses_model, agent.program) == ("old", False, None)
    agent.check_options({"k": "v"})
    assert seen == [{"k": "v"}] and agent.wire_api("u", "k", AgentOptions()) is None


def test_a_cli_agent_names_its_program_and_the_older_attribute_still_counts() -> None:
    program = OpencodeAgent.program
    assert OpencodeAgent().program is program and program is not None and program.kind == "npm"

    class Older(CliAgent):
        name = "older"
        tool = replace(program, agent="older", kind="pypi")

    assert Older.program is Older.tool  # type: ignore[attr-defined]
    assert "pypi package" in cli_refusal(Older())
    assert cli_refusal(OpencodeAgent()) == "" and cli_refusal(_Plain()) == ""
