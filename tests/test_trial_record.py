"""A trial's record from its phases' parts (agentic_eval.runner.record): which rule decides the outcome, and the
record made once from the parts. Pure functions: no sandbox, no endpoint."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from agentic_eval.agents.base import AgentOutcome
from agentic_eval.faults import Ruling
from agentic_eval.grading.grader import GradeResult, ScriptResult, Verdict
from agentic_eval.packs.task import Task
from agentic_eval.results.run_folder import TrialSpec
from agentic_eval.runner.record import AgentPart, Ending, GradePart, Identity, TrialFolder, build_record, judge

GRADED = Ruling(None)


def _agent(ruling: Ruling = GRADED, status: str = "completed", **kw: object) -> AgentPart:
    outcome = AgentOutcome(status, turns=3, detail="it ended", stop_reason="no_tool_call")  # type: ignore[arg-type]
    return AgentPart(outcome, ruling, 1.23456, {"wire": "trials/t.a1/wire.jsonl"}, **kw)  # type: ignore[arg-type]


def _graded(verdict: Verdict, note: str = "", error: str = "", **kw: object) -> GradePart:
    script = ScriptResult(0 if verdict is Verdict.PASS else 1, "out", 0.5)
    return GradePart(GradeResult(verdict, script, note=note, error=error), 0.5, {"grader": "trials/t.a1/grader.txt"},
                     **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(("agent", "graded", "impossible", "want"), [
    # an end that was not the model's doing stays unscored, whatever the grader said
    (_agent(Ruling("agent_timeout", "endpoint", "in flight"), "timeout"), _graded(Verdict.PASS), False,
     ("agent_timeout", "endpoint")),
    # the verifier could not run what the model changed: the model's doing, scored
    (_agent(), _graded(Verdict.ERROR, tampering=("fail", "changed /usr/bin/python3"), error="no reward"), False,
     ("fail", "model")),
    (_agent(), _graded(Verdict.ERROR, side="machine", error="disk full"), False, ("grader_error", "machine")),
    (_agent(), _graded(Verdict.ERROR, error="no reward"), False, ("grader_error", "grader")),
    (_agent(), _graded(Verdict.FAIL, note="the control run got further"), False, ("fail", "model")),
    (_agent(), _graded(Verdict.PASS, behaviour={"behaviour": "tests_edited"}), True, ("cheated", "")),
    (_agent(), _graded(Verdict.FAIL), True, ("fail", "")),
    # a pass where the model changed what the verifier runs is its word, never a pass
    (_agent(), _graded(Verdict.PASS, tampering=("tampered", "changed pytest.py")), False, ("tampered", "model")),
    (_agent(Ruling(None, "model", "its own commands", note="graded anyway"), "timeout"), _graded(Verdict.FAIL),
     False, ("fail", "model")),
    (_agent(), _graded(Verdict.PASS), False, ("pass", "")),
])
def test_judge_takes_the_first_rule_that_applies(agent: AgentPart, graded: GradePart, impossible: bool,
                                                 want: tuple[str, str]) -> None:
    ending = judge(agent, graded, impossible=impossible)
    assert (ending.outcome, ending.fault) == want
    assert ending.behaviour == (graded.behaviour if impossible else {})


def test_the_record_is_made_once_from_the_parts(task: Task, tmp_path: Path) -> None:
    spec = TrialSpec(task, 2, "abc123")
    identity = Identity(spec, run_id="r1", agent="builtin", model="m", seed=7, sandbox="local")
    folder = TrialFolder(tmp_path / "t.a2", tmp_path / "tmp", "2026-01-01T00:00:00.000+00:00", time.monotonic())
    agent = _agent(tool_requests=2, engine={})
    graded = _graded(Verdict.FAIL, engine={"sandbox_engine": "unix:///grader.sock"})
    secret = "sk-secret-key"
    ending = Ending("fail", f"the endpoint said {secret}", "", f"key {secret}")
    record = build_record(identity, folder, ending, agent, graded, scrub=(secret,))
    assert (record.trial_id, record.attempt, record.task_id, record.seed) == ("abc123", 2, task.id, 7)
    assert (record.outcome, record.grader_verdict, record.agent_turns, record.tool_requests) == ("fail", "fail", 3, 2)
    assert record.agent_duration_s == 1.235 and record.grade_duration_s == 0.5
    assert record.files == {"wire": "trials/t.a1/wire.jsonl", "grader": "trials/t.a1/grader.txt"}
    assert record.sandbox_engine == "unix:///grader.sock"  # the agent's phase named none: the grader's
    assert secret not in record.model_dump_json()
    # a trial that ended before its agent ran: the identity and the ending, nothing made up for the rest
    early = build_record(identity, folder, Ending("agent_error", "sandbox setup failed", "grader", "its generator"))
    assert (early.outcome, early.fault, early.agent_status, early.grader_verdict, early.files) == (
        "agent_error", "grader", "", None, {})
