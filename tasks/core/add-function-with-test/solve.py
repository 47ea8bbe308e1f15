"""Reference fix: the function in billing.py and two tests in tests/test_billing.py."""

from pathlib import Path

from gradelib import task_vars

v = task_vars()
name = v["prorate_fn"]
billing = Path(v["src_dir"]) / "billing.py"
billing.write_text(billing.read_text(encoding="utf-8") + f'''

def {name}(amount_cents: int, days_used: int, days_in_period: int) -> int:
    """The share of `amount_cents` for `days_used` of `days_in_period` days, rounded half up."""
    if days_in_period <= 0:
        raise ValueError("days_in_period must be positive")
    if not 0 <= days_used <= days_in_period:
        raise ValueError("days_used must be between 0 and days_in_period")
    if amount_cents < 0:
        raise ValueError("amount_cents must not be negative")
    return (2 * amount_cents * days_used + days_in_period) // (2 * days_in_period)
''', encoding="utf-8")

tests = Path("tests/test_billing.py")
tests.write_text(tests.read_text(encoding="utf-8").replace(
    "from {pkg}.billing import ".format(pkg=v["pkg"]), "from {pkg}.billing import {name}, ".format(pkg=v["pkg"], name=name)
) + f'''

def test_{name}_rounds_half_up():
    assert {name}(1000, 7, 30) == 233
    assert {name}(100, 1, 8) == 13


def test_{name}_rejects_days_outside_the_period():
    with pytest.raises(ValueError):
        {name}(100, 11, 10)
''', encoding="utf-8")
