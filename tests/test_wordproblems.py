"""The word problem generator: deterministic, exact, several operations each, answers that follow
from the text."""

from __future__ import annotations

import re

import pytest

from agentic_eval.instruments.wordproblems import PROMPT_TEMPLATE, generate_problems


def test_same_seed_same_problems_and_prefix_stable() -> None:
    assert generate_problems(3, 10) == generate_problems(3, 10)
    assert generate_problems(3, 4) == generate_problems(3, 10)[:4]
    assert generate_problems(3, 10) != generate_problems(4, 10)


def test_pinned_problem_does_not_drift() -> None:
    """A saved think-check result names problems by id; the same id must mean the same text later."""
    first = generate_problems(0, 1)[0]
    assert first.id == "s0-p0" and first.answer == 955
    assert first.text.startswith("Ana the baker has 3,700 loaves on her shelves. She sells 3,130 loaves.")


@pytest.mark.parametrize("seed", [0, 1, 42])
def test_answers_follow_the_steps(seed: int) -> None:
    apply = {
        "add": lambda v, k: v + k, "sub": lambda v, k: v - k, "mul": lambda v, k: v * k,
        "add_times": lambda v, k: v + k * v, "half": lambda v, k: v // 2, "split_keep": lambda v, k: v // k,
        "all_but": lambda v, k: k,
    }
    for problem in generate_problems(seed, 60):
        assert 3 <= len(problem.steps) <= 5
        assert len({s.op for s in problem.steps}) >= 2 or len(problem.steps) >= 3
        value = problem.steps[0].before
        assert f"{value:,}" in problem.text.split(".")[0]
        for step in problem.steps:
            assert step.before == value
            if step.op == "half":
                assert value % 2 == 0
            if step.op == "split_keep":
                assert value % step.operand == 0
            value = apply[step.op](value, step.operand)
            assert value == step.after and value >= 1
            assert step.sentence in problem.text
        assert value == problem.answer
        assert problem.text.endswith("have now?")


def test_numbers_in_text_use_thousands_separators() -> None:
    problems = generate_problems(0, 40)
    large = [p for p in problems if p.steps[0].before >= 1000]
    assert large, "some problems should use large numbers"
    for problem in large:
        assert re.search(r"\d,\d{3}", problem.text)


def test_prompt_asks_for_the_answer_line() -> None:
    problem = generate_problems(0, 1)[0]
    assert problem.prompt == PROMPT_TEMPLATE.format(problem=problem.text)
    assert "Answer: N" in problem.prompt


def test_negative_count_rejected() -> None:
    with pytest.raises(ValueError):
        generate_problems(0, -1)
