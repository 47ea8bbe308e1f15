"""Adversarial review: a model reply nested deeper than Python's recursion limit (JSON, a call's arguments,
Python-style calls) must read as "no readable call", never raise out of the classifier or the engine parsers.

In the built-in agent's lenient mode the text-call finder runs inside the agent's loop: a RecursionError there
ended the run as agent_error, which faults.rule_agent_end rules the harness's fault, unscored: a model could
turn any failing trial into an unscored one by ending its reply with `{"name":` three thousand times."""

from __future__ import annotations

from typing import Any

import pytest

from agentic_eval.agents.builtin.tools import TOOL_SCHEMAS
from agentic_eval.classify.parsers import readers
from agentic_eval.classify.turn import classify_turn, find_text_tool_calls
from agentic_eval.faults import rule_agent_end
from tests.helpers import RunAgent, reply

NAME = TOOL_SCHEMAS[0]["function"]["name"]
CALL = f'<tool_call>\n{{"name": "{NAME}", "arguments": {{"path": "a"}}}}\n</tool_call>\n'
DEPTH = 1100
"""Past the recursion limit (1000), no deeper: a scan that retries at every opener costs the square of it."""
DEEP = {
    "json-objects": '{"name":' * DEPTH,
    "json-lists": "[" * 20000,
    "call-then-objects": CALL + '{"name":' * DEPTH,
    "arguments-string": f'<tool_call>\n{{"name": "{NAME}", "arguments": "{"[" * DEPTH}"}}\n</tool_call>',
    "pythonic-unary": f"[{NAME}(path={'-' * 50000}1)]",
    "pythonic-sum": f"{NAME}(path=1{'+1' * 50000})",
}


@pytest.mark.parametrize("text", list(DEEP.values()), ids=list(DEEP))
def test_deep_text_is_read_without_raising(text: str) -> None:
    request: dict[str, Any] = {"tools": TOOL_SCHEMAS}
    find_text_tool_calls(text, request)
    readers(text, TOOL_SCHEMAS)
    classify_turn(request, {"choices": [{"message": {"role": "assistant", "content": text}}]})


def test_a_deep_reply_in_lenient_mode_is_the_models_end_not_the_harness(run_agent: RunAgent,
                                                                         fake: Any) -> None:
    fake.enqueue(reply(False, DEEP["call-then-objects"]), reply(False, "Done."))
    outcome = run_agent(lenient_text_calls=True)
    assert outcome.status != "agent_error", outcome.detail
    assert rule_agent_end(outcome, uses_model=True).unscored is None
