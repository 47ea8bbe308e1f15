"""Adversarial review: the model's own commands can reach the wire relay with the trial's key (a CLI agent's
key is in its environment, in the sandbox), so the run's *last* model call on the wire may be one the model's
background process sent, not the agent's. `wire_end` judges the agent's end by that last call: a model that
filled its context (the agent's request refused, endpoint_error: the model's doing, scored) can have a
background loop send one small request after it, and the trial becomes an unscored endpoint error."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from agentic_eval.agents.base import AgentOutcome
from agentic_eval.faults import rule_agent_end, wire_end

CHAT = "/v1/chat/completions"
REFUSED = {"error": {"message": "This model's maximum context length is 8192 tokens. However, you requested 9100"}}


def call(messages: list[dict[str, Any]], status: int, response: Any = None) -> SimpleNamespace:
    return SimpleNamespace(method="POST", path=CHAT, request={"model": "m", "messages": messages}, status=status,
                           response=response if response is not None else {"choices": []}, error=None)


SYSTEM = [{"role": "system", "content": "you are an agent"}, {"role": "user", "content": "fix the bug"}]
TURN = [{"role": "assistant", "content": "", "tool_calls": []}, {"role": "tool", "content": "x" * 50}]
AGENT = [call(SYSTEM, 200), call(SYSTEM + TURN, 200), call(SYSTEM + TURN * 3, 400, REFUSED)]
"""The agent's own calls: accepted twice, then refused once the model's reads filled the context."""


@pytest.mark.parametrize("after", [
    call([{"role": "user", "content": "hi"}], 200),  # a small request that the endpoint answers
    call([{"role": "user", "content": "y" * 40_000}], 400, REFUSED),  # one it refuses, holding none of the model's
], ids=["answered", "refused-without-model-items"])
def test_a_background_request_after_the_agents_refusal_does_not_unscore_the_trial(after: SimpleNamespace) -> None:
    baseline = rule_agent_end(AgentOutcome("endpoint_error", detail="context"), uses_model=True,
                              wire=wire_end(AGENT))
    assert baseline.unscored is None and baseline.fault == "model"  # the model filled it: scored
    ruling = rule_agent_end(AgentOutcome("endpoint_error", detail="context"), uses_model=True,
                            wire=wire_end([*AGENT, after]))
    assert ruling.unscored is None and ruling.fault == "model"
