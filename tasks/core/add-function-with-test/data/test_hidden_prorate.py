"""Hidden checks for add-function-with-test: the proration rule and its errors."""

import importlib
import json
import os
from pathlib import Path

import pytest

VARS = json.loads(Path(os.environ["AGENTIC_EVAL_VARS"]).read_text(encoding="utf-8"))


def prorate():
    billing = importlib.import_module(f"{VARS['pkg']}.billing")
    return getattr(billing, VARS["prorate_fn"])


@pytest.mark.parametrize(
    "amount, used, period, expected",
    [
        (1000, 7, 30, 233),  # 233.33
        (100, 1, 8, 13),  # 12.5 rounds up
        (100, 3, 8, 38),  # 37.5 rounds up
        (1, 1, 2, 1),  # 0.5 rounds up
        (999, 0, 30, 0),
        (999, 30, 30, 999),
        (0, 5, 10, 0),
        (3100, 10, 31, 1000),
        (12345, 17, 28, 7495),  # 7495.18
    ],
)
def test_prorates_rounding_half_up(amount, used, period, expected):
    assert prorate()(amount, used, period) == expected


def test_returns_an_int():
    assert type(prorate()(1000, 15, 30)) is int


@pytest.mark.parametrize("amount, used, period", [(100, 1, 0), (100, 0, -5), (100, -1, 10), (100, 11, 10), (-1, 1, 10)])
def test_rejects_bad_input(amount, used, period):
    with pytest.raises(ValueError):
        prorate()(amount, used, period)
