"""A tool-call case and its verdict: the unit the battery generates, BFCL's cases become, and
`battery.run_battery` plays against the endpoint step by step.

    Case(id, phase, messages, tools, steps=[Step(expected=[...], results=[...])], note)
    CaseResult(id, phase, passed, reason, detail, turns, note)

Plain data, so the battery and BFCL share it without one instrument importing the other.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from agentic_eval.instruments.catalog import JSON


@dataclass(frozen=True)
class Step:
    """One model turn of a case: the calls expected ([] = none), and the tool results then returned."""

    expected: list[JSON]
    results: list[Any] = field(default_factory=list)


@dataclass(frozen=True)
class Case:
    """One battery case: the conversation's opening messages, the offered tools, and its steps."""

    id: str
    phase: str
    messages: list[JSON]
    tools: list[JSON]
    steps: list[Step]
    note: str = ""
    """What the case is about: the target tool(s), the chain template, or the negative kind."""

    def to_json(self) -> JSON:
        return asdict(self)


@dataclass
class CaseResult:
    """The verdict on one case and every turn that led to it."""

    id: str
    phase: str
    passed: bool
    reason: str
    detail: str
    turns: list[JSON]
    note: str = ""

    def to_json(self) -> JSON:
        return asdict(self)
