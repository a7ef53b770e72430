"""Statistics for comparing two encoders: paired over seeds, and paired over test items.

- ``paired_t_interval``: the mean of per-seed differences (seed s of A minus seed s of B:
  the same seed gives both the same data order) with a Student-t interval.
- ``paired_bootstrap``: resampling test items. Per item, the difference of the two
  encoders' scores averaged over seeds; the items are resampled with replacement
  (scipy.stats.bootstrap, percentile interval) and the interval is that of the mean.
- ``verdict``: "reproduced" when every interval given excludes 0 in the paper's
  direction, "contradicted" when every one excludes it the other way, else
  "inconclusive".
- ``sign_test``: a two-sided binomial sign test over paired units (e.g. datasets).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

REPRODUCED, CONTRADICTED, INCONCLUSIVE = "reproduced", "contradicted", "inconclusive"
NOT_RUN, DATA_MISSING = "not run", "data missing"


@dataclass(frozen=True)
class Interval:
    mean: float
    low: float
    high: float
    n: int  # seeds (t interval) or items (bootstrap)

    def excludes_zero(self) -> int:
        """+1 when the interval lies above 0, -1 below, 0 when it contains 0."""
        if self.low > 0:
            return 1
        if self.high < 0:
            return -1
        return 0


def paired_t_interval(a: list[float], b: list[float], confidence: float = 0.95) -> Interval | None:
    """Mean of a_i - b_i with its t interval; None for fewer than 2 pairs."""
    if len(a) != len(b):
        raise ValueError(f"paired values need equal lengths, got {len(a)} and {len(b)}")
    diffs = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    n = len(diffs)
    if n < 2:
        return None
    mean = float(diffs.mean())
    sem = float(diffs.std(ddof=1)) / math.sqrt(n)
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * sem
    return Interval(mean, mean - half, mean + half, n)


def paired_bootstrap(a: np.ndarray, b: np.ndarray, confidence: float = 0.95, samples: int = 10000, seed: int = 0) -> Interval | None:
    """Bootstrap over test items. ``a`` and ``b`` are [seeds, items] per-item scores, items aligned."""
    a, b = np.atleast_2d(np.asarray(a, dtype=float)), np.atleast_2d(np.asarray(b, dtype=float))
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"paired items need the same items, got {a.shape[1]} and {b.shape[1]}")
    per_item = a.mean(axis=0) - b.mean(axis=0)
    if per_item.size < 2:
        return None
    mean = float(per_item.mean())
    if np.all(per_item == per_item[0]):  # no spread: every resample has the same mean
        return Interval(mean, mean, mean, per_item.size)
    res = stats.bootstrap((per_item,), np.mean, confidence_level=confidence, n_resamples=samples, method="percentile",
                          random_state=np.random.default_rng(seed))
    return Interval(mean, float(res.confidence_interval.low), float(res.confidence_interval.high), per_item.size)


def verdict(intervals: list[Interval | None], better_is_higher: bool = True) -> str:
    """Reproduced / contradicted / inconclusive from intervals of (claimed better - claimed worse)."""
    given = [i for i in intervals if i is not None]
    if not given:
        return INCONCLUSIVE
    want = 1 if better_is_higher else -1
    sides = {i.excludes_zero() for i in given}
    if sides == {want}:
        return REPRODUCED
    if sides == {-want}:
        return CONTRADICTED
    return INCONCLUSIVE


def sign_test(a: list[float], b: list[float]) -> tuple[int, int, float]:
    """(wins of a, losses of a, two-sided p-value) over paired units; ties are dropped."""
    wins = sum(x > y for x, y in zip(a, b, strict=True))
    losses = sum(x < y for x, y in zip(a, b, strict=True))
    if wins + losses == 0:
        return 0, 0, 1.0
    return wins, losses, float(stats.binomtest(wins, wins + losses, 0.5).pvalue)
