"""Statistics that say what is noise: pure functions on counts, no I/O.

- a confidence interval on a pass rate: exact (Clopper-Pearson) for small samples, Wilson above;
- pass@k and pass^k from repeated attempts, with the unbiased estimators (Chen et al. 2021 for
  pass@k: the chance that at least one of k attempts drawn from the n made passes; tau-bench's
  pass^k: the chance that all k pass);
- the spread of one configuration's pass rate across repeated runs;
- a paired comparison of two runs on the same tasks: which tasks flipped, and McNemar's exact test
  (a two-sided binomial test on the flipped tasks) of whether the difference could be chance,
  put in words ("within noise", "A better, p = 0.02").
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

CONFIDENCE = 0.95
EXACT_BELOW = 30
"""Samples smaller than this get the exact interval; Wilson's is close enough from here on."""
ALPHA = 0.05
"""A paired difference with p below this is called a difference, at or above it noise."""


@dataclass(frozen=True)
class Interval:
    """A pass rate and its confidence interval, as fractions in [0, 1]."""

    successes: int
    n: int
    low: float
    high: float
    method: str
    """'exact' (Clopper-Pearson) or 'wilson'."""

    @property
    def rate(self) -> float | None:
        return self.successes / self.n if self.n else None

    def text(self) -> str:
        """'9/16 = 56 % (95 % CI 30-80)'; '0/0' when nothing was scored."""
        if not self.n:
            return "0/0"
        return f"{self.successes}/{self.n} = {100 * self.successes / self.n:.0f} % " \
               f"(95 % CI {100 * self.low:.0f}-{100 * self.high:.0f})"

    def to_json(self) -> dict[str, object]:
        return {"successes": self.successes, "n": self.n, "rate": self.rate, "low": round(self.low, 4),
                "high": round(self.high, 4), "confidence": CONFIDENCE, "method": self.method}


def _z(confidence: float) -> float:
    return statistics.NormalDist().inv_cdf(1 - (1 - confidence) / 2)


def wilson_interval(successes: int, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Wilson's score interval for `successes` out of `n`; (0, 1) when n is 0."""
    _check_counts(successes, n)
    if n == 0:
        return 0.0, 1.0
    z = _z(confidence)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def _binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p), summed exactly (n here is a task count, small)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    return min(1.0, sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1)))


def _bisect(f: Callable[[float], float], target: float) -> float:
    """The p in [0, 1] where the decreasing function f(p) crosses target (60 halvings: exact to 1e-18)."""
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if f(mid) > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def exact_interval(successes: int, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Clopper-Pearson's exact interval: never narrower than the truth, for any n."""
    _check_counts(successes, n)
    if n == 0:
        return 0.0, 1.0
    tail = (1 - confidence) / 2
    # low: where P(X >= successes) rises to tail; high: where P(X <= successes) falls to tail
    low = 0.0 if successes == 0 else _bisect(lambda p: _binom_cdf(successes - 1, n, p), 1 - tail)
    high = 1.0 if successes == n else _bisect(lambda p: _binom_cdf(successes, n, p), tail)
    return low, high


def pass_rate_interval(successes: int, n: int, confidence: float = CONFIDENCE) -> Interval:
    """The interval the reports show: exact below EXACT_BELOW samples, Wilson from there on."""
    if n < EXACT_BELOW:
        return Interval(successes, n, *exact_interval(successes, n, confidence), method="exact")
    return Interval(successes, n, *wilson_interval(successes, n, confidence), method="wilson")


def _check_counts(successes: int, n: int) -> None:
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one task with c passes in n attempts: 1 - C(n-c, k) / C(n, k)."""
    _check_counts(c, n)
    if not 1 <= k <= n:
        raise ValueError(f"pass@k needs 1 <= k <= n attempts, got k={k}, n={n}")
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k for one task (all k attempts pass): C(c, k) / C(n, k)."""
    _check_counts(c, n)
    if not 1 <= k <= n:
        raise ValueError(f"pass^k needs 1 <= k <= n attempts, got k={k}, n={n}")
    return math.comb(c, k) / math.comb(n, k)


def mean_over_tasks(per_task: list[tuple[int, int]], k: int, estimator: str = "pass@k") -> float | None:
    """pass@k or pass^k averaged over tasks, each given as (scored attempts n, passes c).

    Tasks with fewer than k scored attempts are left out; None when none is left."""
    fn = pass_at_k if estimator == "pass@k" else pass_hat_k
    values = [fn(n, c, k) for n, c in per_task if n >= k]
    return sum(values) / len(values) if values else None


@dataclass(frozen=True)
class Spread:
    """One configuration's pass rate (percent) over repeated runs."""

    rates_pct: tuple[float, ...]

    @property
    def runs(self) -> int:
        return len(self.rates_pct)

    @property
    def range_pts(self) -> float:
        return max(self.rates_pct) - min(self.rates_pct) if self.rates_pct else 0.0

    @property
    def stdev_pts(self) -> float | None:
        return statistics.stdev(self.rates_pct) if len(self.rates_pct) >= 2 else None

    def text(self) -> str:
        if self.runs < 2:
            return "-"
        return f"{self.range_pts:.1f} pts over {self.runs} runs (sd {self.stdev_pts:.1f})"

    def to_json(self) -> dict[str, object]:
        return {"runs": self.runs, "rates_pct": list(self.rates_pct), "range_pts": round(self.range_pts, 2),
                "stdev_pts": None if self.stdev_pts is None else round(self.stdev_pts, 2)}


def mcnemar_exact_p(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p: under 'no difference' each flipped task is a fair coin."""
    if a_only < 0 or b_only < 0:
        raise ValueError("flip counts cannot be negative")
    n = a_only + b_only
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(a_only, b_only) + 1)) / 2**n
    return min(1.0, 2 * tail)


@dataclass
class PairedComparison:
    """Two runs on the same tasks, task by task (a task passes when any of its attempts passed)."""

    label_a: str
    label_b: str
    both: list[str] = field(default_factory=list)
    a_only: list[str] = field(default_factory=list)
    b_only: list[str] = field(default_factory=list)
    neither: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    """Tasks not scored in both runs (missing, or unscored in one): not compared."""
    noise_pts: float | None = None
    """The measured run-to-run spread of either configuration (percentage points), if known."""

    @property
    def n(self) -> int:
        return len(self.both) + len(self.a_only) + len(self.b_only) + len(self.neither)

    @property
    def gap_pts(self) -> float:
        """A's pass rate minus B's on the shared tasks, in percentage points."""
        return 100 * (len(self.a_only) - len(self.b_only)) / self.n if self.n else 0.0

    @property
    def p_value(self) -> float:
        return mcnemar_exact_p(len(self.a_only), len(self.b_only))

    @property
    def verdict(self) -> str:
        return verdict(self.label_a, self.label_b, self.gap_pts, self.p_value, self.noise_pts, flips=self.flips)

    @property
    def flips(self) -> int:
        return len(self.a_only) + len(self.b_only)

    def to_json(self) -> dict[str, object]:
        return {"a": self.label_a, "b": self.label_b, "tasks": self.n, "both_pass": self.both,
                "a_only": self.a_only, "b_only": self.b_only, "neither": self.neither, "left_out": self.left_out,
                "gap_pts": round(self.gap_pts, 2), "p_value": round(self.p_value, 4), "test": "McNemar exact",
                "noise_pts": self.noise_pts, "verdict": self.verdict, "within_noise": self.within_noise}

    @property
    def within_noise(self) -> bool:
        return is_noise(self.gap_pts, self.p_value, self.noise_pts)


def is_noise(gap_pts: float, p_value: float, noise_pts: float | None, alpha: float = ALPHA) -> bool:
    """A gap is noise when the exact test cannot tell it from chance, or it is within the run-to-run spread."""
    return p_value >= alpha or (noise_pts is not None and abs(gap_pts) <= noise_pts)


def format_p(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}".rstrip("0").rstrip(".") if p < 0.01 else f"p = {p:.2f}"


def verdict(label_a: str, label_b: str, gap_pts: float, p_value: float, noise_pts: float | None,
            flips: int | None = None, alpha: float = ALPHA) -> str:
    """The comparison in words: 'within noise (p = 0.63)', 'A better, p = 0.02', ..."""
    if flips == 0:
        return "no task flipped: no difference"
    if p_value >= alpha:
        return f"within noise ({format_p(p_value)})"
    if noise_pts is not None and abs(gap_pts) <= noise_pts:
        return f"within noise: the {abs(gap_pts):.1f} pt gap is inside the {noise_pts:.1f} pt run-to-run spread " \
               f"({format_p(p_value)})"
    better = label_a if gap_pts > 0 else label_b
    return f"{better} better, {format_p(p_value)}"


def compare_tasks(label_a: str, outcomes_a: dict[str, bool | None], label_b: str,
                  outcomes_b: dict[str, bool | None], noise_pts: float | None = None) -> PairedComparison:
    """Pair two runs task by task. Each maps task id to passed (True/False) or None when unscored."""
    cmp = PairedComparison(label_a, label_b, noise_pts=noise_pts)
    for task in sorted(set(outcomes_a) | set(outcomes_b)):
        a, b = outcomes_a.get(task), outcomes_b.get(task)
        if a is None or b is None:
            cmp.left_out.append(task)
        elif a and b:
            cmp.both.append(task)
        elif a:
            cmp.a_only.append(task)
        elif b:
            cmp.b_only.append(task)
        else:
            cmp.neither.append(task)
    return cmp
