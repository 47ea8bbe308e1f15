"""The statistics module, table-driven against reference values (computed with scipy's beta quantiles,
binomtest and Wilson intervals, written down here so the tests need no scipy)."""

from __future__ import annotations

import pytest

from agentic_eval.report.stats import (
    Spread,
    compare_tasks,
    exact_interval,
    format_p,
    is_noise,
    mcnemar_exact_p,
    mean_over_tasks,
    pass_at_k,
    pass_hat_k,
    pass_rate_interval,
    verdict,
    wilson_interval,
)


@pytest.mark.parametrize(("successes", "n", "low", "high"), [
    (0, 5, 0.0, 0.5218),
    (1, 14, 0.0018, 0.3387),
    (11, 14, 0.4920, 0.9534),
    (9, 16, 0.2988, 0.8025),
    (50, 100, 0.3983, 0.6017),
    (3, 3, 0.2924, 1.0),
    (0, 0, 0.0, 1.0),
])
def test_exact_interval_matches_clopper_pearson(successes: int, n: int, low: float, high: float) -> None:
    got = exact_interval(successes, n)
    assert got == pytest.approx((low, high), abs=1e-4)


@pytest.mark.parametrize(("successes", "n", "low", "high"), [
    (0, 5, 0.0, 0.4345),
    (1, 14, 0.0127, 0.3147),
    (11, 14, 0.5241, 0.9243),
    (9, 16, 0.3318, 0.7690),
    (50, 100, 0.4038, 0.5962),
    (3, 3, 0.4385, 1.0),
])
def test_wilson_interval_matches_reference(successes: int, n: int, low: float, high: float) -> None:
    assert wilson_interval(successes, n) == pytest.approx((low, high), abs=1e-4)


@pytest.mark.parametrize(("successes", "n", "method"), [(9, 16, "exact"), (29, 29, "exact"), (30, 60, "wilson")])
def test_the_shown_interval_is_exact_for_small_samples(successes: int, n: int, method: str) -> None:
    interval = pass_rate_interval(successes, n)
    assert interval.method == method
    assert interval.low <= successes / n <= interval.high


def test_interval_text_says_the_count_the_rate_and_the_bounds() -> None:
    assert pass_rate_interval(9, 16).text() == "9/16 = 56 % (95 % CI 30-80)"
    assert pass_rate_interval(0, 0).text() == "0/0"


@pytest.mark.parametrize(("successes", "n"), [(-1, 3), (4, 3), (0, -1)])
def test_impossible_counts_are_refused(successes: int, n: int) -> None:
    with pytest.raises(ValueError):
        exact_interval(successes, n)


@pytest.mark.parametrize(("n", "c", "k", "at_k", "hat_k"), [
    (1, 1, 1, 1.0, 1.0),
    (1, 0, 1, 0.0, 0.0),
    (5, 2, 1, 0.4, 0.4),        # k = 1: both are the plain pass rate
    (5, 2, 2, 0.7, 0.1),        # 1 - C(3,2)/C(5,2) = 0.7;  C(2,2)/C(5,2) = 0.1
    (5, 5, 3, 1.0, 1.0),
    (4, 1, 4, 1.0, 0.0),        # every attempt drawn: one pass among them, but not all pass
    (10, 3, 5, 1 - 21 / 252, 0.0),
])
def test_unbiased_pass_at_k_and_pass_hat_k(n: int, c: int, k: int, at_k: float, hat_k: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(at_k)
    assert pass_hat_k(n, c, k) == pytest.approx(hat_k)


def test_pass_at_k_needs_k_attempts() -> None:
    with pytest.raises(ValueError, match="1 <= k <= n"):
        pass_at_k(2, 1, 3)


def test_mean_over_tasks_leaves_out_tasks_with_too_few_attempts() -> None:
    per_task = [(3, 3), (3, 0), (1, 1)]  # the last has one scored attempt: no pass@2 for it
    assert mean_over_tasks(per_task, 2, "pass@k") == pytest.approx(0.5)
    assert mean_over_tasks(per_task, 2, "pass^k") == pytest.approx(0.5)
    assert mean_over_tasks([(1, 1)], 2) is None


@pytest.mark.parametrize(("a_only", "b_only", "p"), [
    (0, 0, 1.0), (3, 0, 0.25), (6, 0, 0.03125), (5, 1, 0.21875), (2, 2, 1.0), (10, 2, 0.03857421875),
    (1, 7, 0.0703125),
])
def test_mcnemar_exact_is_a_two_sided_binomial_test_on_the_flips(a_only: int, b_only: int, p: float) -> None:
    assert mcnemar_exact_p(a_only, b_only) == pytest.approx(p)
    assert mcnemar_exact_p(b_only, a_only) == pytest.approx(p)


@pytest.mark.parametrize(("gap", "p", "noise", "flips", "words"), [
    (12.5, 0.63, None, 3, "within noise (p = 0.63)"),
    (-37.5, 0.03125, None, 6, "B better, p = 0.03"),
    (37.5, 0.0039, None, 8, "A better, p = 0.004"),
    (5.0, 0.0004, None, 20, "A better, p < 0.001"),
    (3.0, 0.01, 4.0, 9, "within noise: the 3.0 pt gap is inside the 4.0 pt run-to-run spread (p = 0.01)"),
    (0.0, 1.0, None, 0, "no task flipped: no difference"),
])
def test_verdict_words(gap: float, p: float, noise: float | None, flips: int, words: str) -> None:
    assert verdict("A", "B", gap, p, noise, flips=flips) == words


@pytest.mark.parametrize(("gap", "p", "noise", "noise_expected"), [
    (10.0, 0.5, None, True), (10.0, 0.01, None, False), (10.0, 0.01, 12.0, True), (10.0, 0.01, 9.0, False),
])
def test_is_noise(gap: float, p: float, noise: float | None, noise_expected: bool) -> None:
    assert is_noise(gap, p, noise) is noise_expected


def test_compare_tasks_pairs_by_task_and_leaves_out_unscored_ones() -> None:
    a = {"t1": True, "t2": True, "t3": False, "t4": None, "t5": True, "t6": True, "t7": True, "t8": True}
    b = {"t1": True, "t2": False, "t3": False, "t4": True, "t5": False, "t6": False, "t7": False, "t8": False}
    cmp = compare_tasks("A", a, "B", b)
    assert cmp.both == ["t1"] and cmp.neither == ["t3"] and cmp.left_out == ["t4"]
    assert cmp.a_only == ["t2", "t5", "t6", "t7", "t8"] and cmp.b_only == []
    assert cmp.n == 7 and cmp.gap_pts == pytest.approx(100 * 5 / 7)
    assert cmp.p_value == pytest.approx(0.0625)
    assert cmp.verdict == "within noise (p = 0.06)" and cmp.within_noise
    data = cmp.to_json()
    assert data["test"] == "McNemar exact" and data["a_only"] == cmp.a_only


def test_spread_over_repeated_runs() -> None:
    s = Spread((50.0, 56.25, 62.5))
    assert s.runs == 3 and s.range_pts == pytest.approx(12.5) and s.stdev_pts == pytest.approx(6.25)
    assert s.text() == "12.5 pts over 3 runs (sd 6.2)"
    assert Spread((50.0,)).text() == "-" and Spread((50.0,)).stdev_pts is None


@pytest.mark.parametrize(("p", "text"), [(0.5, "p = 0.50"), (0.02, "p = 0.02"), (0.0039, "p = 0.004"),
                                          (0.0001, "p < 0.001")])
def test_format_p(p: float, text: str) -> None:
    assert format_p(p) == text
