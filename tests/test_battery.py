"""Case generation: deterministic, in the campaign's proportions, and every case self-consistent."""

from __future__ import annotations

import json

import jsonschema
import pytest

from agentic_eval.instruments import catalog as cat
from agentic_eval.instruments.battery import CAMPAIGN_SIZES, PHASES, Case, case_key, generate_cases, phase_sizes
from agentic_eval.instruments.toolcheck import check_call, check_calls

SEED = 45739


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    return generate_cases(SEED)


def _canonical(cases: list[Case]) -> bytes:
    return json.dumps([c.to_json() for c in cases], sort_keys=True).encode()


def test_same_seed_gives_byte_identical_cases(cases: list[Case]) -> None:
    assert _canonical(generate_cases(SEED)) == _canonical(cases)


def test_another_seed_gives_other_cases(cases: list[Case]) -> None:
    other = generate_cases(SEED + 1)
    assert len(other) == len(cases)
    differing = sum(a.messages != b.messages or a.tools != b.tools for a, b in zip(cases, other))
    assert differing > 0.9 * len(cases)


def test_campaign_proportions(cases: list[Case]) -> None:
    assert len(cases) == 370
    assert {p: sum(c.phase == p for c in cases) for p in PHASES} == CAMPAIGN_SIZES
    assert len({c.id for c in cases}) == 370
    assert len({case_key(c) for c in cases}) == 370, "two cases ask the same thing with the same tools"


@pytest.mark.parametrize("total", [1, 6, 37, 100, 185, 370, 740, 1000])
def test_scaled_sizes_sum_and_keep_proportions(total: int) -> None:
    sizes = phase_sizes(total)
    assert sum(sizes.values()) == total
    for phase, size in sizes.items():
        assert abs(size - total * CAMPAIGN_SIZES[phase] / 370) < 1


def test_phase_filter_and_scaling() -> None:
    only = generate_cases(SEED, 37, ["chains", "negative"])
    assert [c.phase for c in only] == ["chains"] * 5 + ["negative"] * 4
    with pytest.raises(ValueError, match="unknown phase"):
        generate_cases(SEED, phases=["nope"])


def _schemas(case: Case) -> dict[str, dict]:
    return {t["function"]["name"]: t["function"]["parameters"] for t in case.tools}


def test_every_expected_call_is_offered_and_its_witness_is_valid_and_passes(cases: list[Case]) -> None:
    for tool in cat.TOOLS:
        jsonschema.Draft202012Validator.check_schema(tool.parameters)
    for case in cases:
        schemas = _schemas(case)
        assert all(schemas[name] == cat.TOOLS_BY_NAME[name].parameters for name in schemas)
        for step in case.steps:
            for exp in step.expected:
                assert exp["name"] in schemas, case.id
                jsonschema.Draft202012Validator(schemas[exp["name"]]).validate(exp["witness"])
                assert check_call(exp["name"], json.dumps(exp["witness"]), exp, schemas).passed, case.id
            witnesses = [(e["name"], e["witness"]) for e in step.expected]
            assert check_calls(witnesses, step.expected, schemas).passed, case.id


def test_decisions_offer_one_fitting_tool_among_several(cases: list[Case]) -> None:
    for case in (c for c in cases if c.phase == "decisions"):
        names = list(_schemas(case))
        assert 4 <= len(names) <= 8 and case.note in names
        assert not any(cat.TOOLS_BY_NAME[n].generic for n in names if n != case.note), case.id
    assert {c.note for c in cases if c.phase == "decisions"} == set(cat.TOOLS_BY_NAME)


def test_negative_cases_really_have_no_fitting_tool(cases: list[Case]) -> None:
    negatives = [c for c in cases if c.phase == "negative"]
    assert {c.note.split(":")[0] for c in negatives} == {"no_fit", "no_tool_needed"}
    for case in negatives:
        assert [s.expected for s in case.steps] == [[]]
        offered = list(_schemas(case))
        assert not any(cat.TOOLS_BY_NAME[n].generic for n in offered), case.id  # a shell or web search fits anything
        if case.note.startswith("no_fit:"):
            wanted = case.note.split(":", 1)[1]
            assert wanted not in offered
            assert cat.group_of(wanted) not in {cat.group_of(n) for n in offered}, case.id


def test_chains_need_the_results_they_are_given(cases: list[Case]) -> None:
    chains = [c for c in cases if c.phase == "chains"]
    assert len({c.note for c in chains}) == 10
    for case in chains:
        assert len(case.steps) >= 2
        prompt = case.messages[-1]["content"]
        for before, after in zip(case.steps, case.steps[1:]):
            assert len(before.results) == len(before.expected)
            returned = {v for v in _leaves(before.results) if isinstance(v, (str, float)) and str(v) not in prompt}
            needed = [w for e in after.expected for w in _leaves(e["witness"])]
            used = [r for r in returned for w in needed if r == w or (
                isinstance(r, str) and isinstance(w, str) and min(len(r), len(w)) >= 6 and (r in w or w in r))]
            assert used, f"{case.id}: the call after {before.expected[0]['name']} uses nothing it returned"


def _leaves(value: object) -> list[object]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in _leaves(v)]
    return [value]


def test_structured_and_freeform_phases_exercise_what_they_claim(cases: list[Case]) -> None:
    for case in (c for c in cases if c.phase == "structured"):
        spec = case.steps[0].expected[0]["args"]
        assert any("object" in s or "items" in s for s in spec.values()), case.id
    for case in (c for c in cases if c.phase == "freeform"):
        spec = case.steps[0].expected[0]["args"]
        assert any("text" in s for s in spec.values()), case.id
    functional = [c for c in cases if c.phase == "functional"]
    assert any(len(c.steps[0].expected) == 2 for c in functional), "no parallel calls in the functional phase"


def test_generation_does_not_depend_on_hash_seed(cases: list[Case]) -> None:
    import os
    import subprocess
    import sys

    from agentic_eval.instruments.battery import cases_digest

    code = ("from agentic_eval.instruments.battery import cases_digest, generate_cases; "
            "print(cases_digest(generate_cases(45739)))")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == cases_digest(cases)
