"""The statistics of the claims ledger against hand-computed cases."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rnnbench.results import stats


def test_paired_t_interval_matches_the_hand_computation():
    # differences 1, 2, 3: mean 2, sd 1, sem 1/sqrt(3); t(0.975, 2 df) = 4.302653
    i = stats.paired_t_interval([1.0, 2.0, 3.0], [0.0, 0.0, 0.0])
    half = 4.302653 / math.sqrt(3)
    assert i.n == 3 and i.mean == pytest.approx(2.0)
    assert i.low == pytest.approx(2.0 - half, abs=1e-5) and i.high == pytest.approx(2.0 + half, abs=1e-5)
    assert i.excludes_zero() == 0  # -0.48 .. 4.48 contains 0


def test_paired_t_interval_pairs_by_position_not_by_pooled_means():
    # A is always exactly 1 above B while both vary a lot: paired, the difference is certain
    a, b = [80.0, 90.0, 70.0, 85.0], [79.0, 89.0, 69.0, 84.0]
    i = stats.paired_t_interval(a, b)
    assert i.low == pytest.approx(1.0) and i.high == pytest.approx(1.0) and i.excludes_zero() == 1


def test_paired_t_interval_needs_two_pairs_and_equal_lengths():
    assert stats.paired_t_interval([1.0], [0.0]) is None
    with pytest.raises(ValueError):
        stats.paired_t_interval([1.0, 2.0], [0.0])


def test_bootstrap_agrees_with_a_direct_percentile_bootstrap():
    rng = np.random.default_rng(3)
    a = (rng.random((3, 400)) < 0.8).astype(float)  # 3 seeds x 400 items of 0/1 correctness
    b = (rng.random((3, 400)) < 0.7).astype(float)
    got = stats.paired_bootstrap(a, b, samples=4000, seed=1)
    per_item = a.mean(0) - b.mean(0)
    means = [per_item[rng.integers(0, 400, 400)].mean() for _ in range(4000)]
    low, high = np.percentile(means, [2.5, 97.5])
    assert got.mean == pytest.approx(per_item.mean())
    assert got.low == pytest.approx(low, abs=0.01) and got.high == pytest.approx(high, abs=0.01)
    assert got.low > 0  # a 10-point gap on 400 items is decided


def test_bootstrap_of_identical_predictions_is_a_point_at_zero():
    a = np.ones((2, 50))
    i = stats.paired_bootstrap(a, a.copy())
    assert (i.mean, i.low, i.high) == (0.0, 0.0, 0.0) and i.excludes_zero() == 0


@pytest.mark.parametrize("intervals,higher,expected", [
    ([stats.Interval(1, 0.5, 1.5, 5), stats.Interval(1, 0.2, 1.8, 500)], True, stats.REPRODUCED),
    ([stats.Interval(-1, -1.5, -0.5, 5)], True, stats.CONTRADICTED),
    ([stats.Interval(-1, -1.5, -0.5, 5)], False, stats.REPRODUCED),  # lower is better (seconds, BPC)
    ([stats.Interval(1, 0.5, 1.5, 5), stats.Interval(1, -0.2, 1.8, 500)], True, stats.INCONCLUSIVE),  # the two disagree
    ([stats.Interval(0.1, -0.5, 0.7, 5), None], True, stats.INCONCLUSIVE),
    ([None], True, stats.INCONCLUSIVE),
])
def test_verdicts(intervals, higher, expected):
    assert stats.verdict(intervals, better_is_higher=higher) == expected


def test_sign_test():
    wins, losses, p = stats.sign_test([2.0] * 8, [1.0] * 8)
    assert (wins, losses) == (8, 0) and p == pytest.approx(2 * 0.5**8)
    wins, losses, p = stats.sign_test([2.0, 1.0, 1.0], [1.0, 2.0, 1.0])  # one tie dropped
    assert (wins, losses) == (1, 1) and p == pytest.approx(1.0)
