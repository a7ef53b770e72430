"""The statistics of the claims ledger: hand-computed cases, and simulations with no true
difference that must decide at about the nominal 5%."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sstats

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


def test_seed_estimate_is_the_paired_t():
    e = stats.seed_estimate([1.0, 2.0, 3.0])
    t = stats.paired_t_interval([1.0, 2.0, 3.0], [0.0] * 3)
    assert (e.mean, e.se, e.df, e.seeds, e.clusters, e.item_var) == (2.0, pytest.approx(1 / math.sqrt(3)), 2.0, 3, 0, 0.0)
    assert e.interval(0.05) == (pytest.approx(t.low), pytest.approx(t.high))
    assert e.p_value() == pytest.approx(2 * sstats.t.sf(2 / (1 / math.sqrt(3)), 2))
    assert stats.seed_estimate([1.0]) is None


def test_two_level_estimate_matches_the_hand_computation():
    """2 seeds x 4 items in 2 clusters of 2. Differences d = a - b:
        seed 1: 1 0 | 1 1        seed 2: 0 0 | 1 0
    mean 4/8 = 0.5. Cluster totals less 0.5 x size: seed 1: [0, 1], seed 2: [-1, 0].
    By seed: [1, -1]; by cluster: [-1, 1]. Residual e - (by_seed / 4) x size - by_cluster / 2:
    seed 1: [0 - 0.5 + 0.5, 1 - 0.5 - 0.5] = [0, 0]; seed 2: [-1 + 0.5 + 0.5, 0 + 0.5 - 0.5] = [0, 0].
    V_S = 2/1 x (1 + 1) / 8² = 1/16; V_C = 2/1 x (1 + 1) / 64 = 1/16; V_SC = 0: se² = 1/8.
    Satterthwaite: (1/8)² / ((1/16)²/1 + (1/16)²/1) = 2 degrees of freedom."""
    a = np.array([[1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 0.0]])
    b = np.zeros_like(a)
    e = stats.two_level_estimate(a, b, ["x", "x", "y", "y"])
    assert e.mean == pytest.approx(0.5) and e.se == pytest.approx(math.sqrt(1 / 8)) and e.df == pytest.approx(2.0)
    assert (e.seeds, e.clusters) == (2, 2)
    assert e.seed_var == pytest.approx(2 / 16) and e.item_var == pytest.approx(1 / 16)
    # the seeds alone (the paired t) miss the test set's half of the variance
    assert stats.seed_estimate(list(a.mean(axis=1))).se == pytest.approx(math.sqrt(1 / 16))


def test_two_level_estimate_is_the_two_way_anova_estimate_on_single_items():
    """Items as their own clusters: se² = (MS_seeds + MS_items - MS_residual) / (seeds x items), the
    unbiased estimate of var(mean) under seed, item and seed x item effects, written here from the
    two-way analysis of variance (the interaction is in both the seeds' and the items' mean squares)."""
    rng = np.random.default_rng(3)
    d = rng.normal(0, 0.5, (4, 1)) + rng.normal(0, 1.0, 50)[None, :] + rng.normal(0, 2.0, (4, 50))
    s, i = d.shape
    grand, rows, cols = d.mean(), d.mean(axis=1), d.mean(axis=0)
    ms_seeds = i * ((rows - grand) ** 2).sum() / (s - 1)
    ms_items = s * ((cols - grand) ** 2).sum() / (i - 1)
    ms_residual = ((d - rows[:, None] - cols[None, :] + grand) ** 2).sum() / ((s - 1) * (i - 1))
    e = stats.two_level_estimate(d, np.zeros_like(d))
    assert e.se**2 == pytest.approx((ms_seeds + ms_items - ms_residual) / (s * i))
    assert e.seed_var / s == pytest.approx(ms_seeds / (s * i))  # the seeds' part is the paired t's se²


def test_two_level_estimate_refuses_what_it_cannot_pair():
    with pytest.raises(ValueError, match="same seeds and items"):
        stats.two_level_estimate(np.zeros((2, 3)), np.zeros((2, 4)))
    with pytest.raises(ValueError, match="one cluster per item"):
        stats.two_level_estimate(np.zeros((2, 3)), np.zeros((2, 3)), ["a", "b"])
    assert stats.two_level_estimate(np.zeros((1, 3)), np.zeros((1, 3))) is None  # one seed: run-to-run variance unknown


def _null_rejections(rng, seeds: int, clusters: int, size: int, seed_sd: float, item_sd: float, noise_sd: float,
                     reps: int = 300, clustered: bool = True) -> tuple[float, float]:
    """Share of simulated null comparisons (no true difference) that the two-level estimate and the
    paired t over seeds decide at 5%. Per replicate: d[s, i] = seed effect + cluster effect + noise."""
    labels = np.repeat(np.arange(clusters), size)
    ours = seeds_only = 0
    for _ in range(reps):
        d = (rng.normal(0, seed_sd, (seeds, 1)) + rng.normal(0, item_sd, clusters)[labels][None, :]
             + rng.normal(0, noise_sd, (seeds, clusters * size)))
        e = stats.two_level_estimate(d, np.zeros_like(d), labels if clustered else None)
        ours += e.p_value() < 0.05
        seeds_only += stats.seed_estimate(list(d.mean(axis=1))).p_value() < 0.05
    return ours / reps, seeds_only / reps


@pytest.mark.parametrize(("seeds", "clusters", "size", "seed_sd", "item_sd", "noise_sd"), [
    (5, 300, 1, 0.3, 0.0, 1.0),   # run-to-run noise dominates: the paired t is right
    (5, 300, 1, 0.0, 0.5, 1.0),   # items favour one row in every seed (SST-5's case): the t alone over-decides
    (3, 150, 3, 0.1, 0.3, 1.0),   # three seeds, clusters of three items sharing an effect
    (10, 200, 2, 0.02, 0.3, 2.0),  # ten seeds, mostly item and interaction noise
])
def test_a_null_difference_is_decided_at_about_the_nominal_rate(seeds, clusters, size, seed_sd, item_sd, noise_sd):
    rng = np.random.default_rng(7)
    ours, _ = _null_rejections(rng, seeds, clusters, size, seed_sd, item_sd, noise_sd)
    # 300 replicates: a 5% rate's binomial standard deviation is 1.3 points
    assert 0.015 <= ours <= 0.09, ours


def test_the_seeds_alone_or_unclustered_items_over_decide_where_the_test_set_matters():
    """Why both levels and the clusters: with a consistent item effect the paired t over seeds
    decides a null difference far above 5%, and clusters resampled as single items do too."""
    rng = np.random.default_rng(11)
    _, seeds_only = _null_rejections(rng, 5, 300, 1, 0.0, 0.5, 1.0)
    assert seeds_only > 0.1  # twice the nominal rate and more
    unclustered, _ = _null_rejections(rng, 5, 60, 5, 0.0, 0.5, 0.5, clustered=False)
    clustered, _ = _null_rejections(np.random.default_rng(11), 5, 60, 5, 0.0, 0.5, 0.5)
    assert unclustered > 0.15 and clustered <= 0.09


def test_seeds_for_power_by_hand():
    # seeds only, variance 4 per seed; two-sided 5%, 80% power for an effect of 2: the least n whose
    # paired t test rejects with probability 0.8 (the noncentral t, ncp = 2 / (2 / sqrt(n)))
    e = stats.Estimate(0.0, 1.0, 4.0, 5, 0, 4.0, 0.0)
    n = stats.seeds_for_power(e, 2.0, 0.05)

    def power(k):
        crit = sstats.t.ppf(0.975, k - 1)
        return sstats.nct.sf(crit, k - 1, math.sqrt(k)) + sstats.nct.cdf(-crit, k - 1, math.sqrt(k))
    assert power(n) >= 0.8 > power(n - 1)
    assert n == 10  # power 0.80 at 10 seeds, 0.75 at 9
    # at a Holm level of 0.0125, variance 1 and an effect of 2 the shortcut t(1 - a/2) + t(0.8) says 6 seeds; their power is under 0.8
    strict = stats.seeds_for_power(stats.Estimate(0.0, 1.0, 4.0, 5, 0, 1.0, 0.0), 2.0, 0.0125)
    assert strict == 7
    # a test-set floor of variance 1 (many clusters): (1.96 + 0.84) x 1 > 2, no number of seeds reaches it
    floored = stats.Estimate(0.0, 1.0, 50.0, 5, 1000, 4.0, 1.0)
    assert stats.seeds_for_power(floored, 2.0, 0.05) is None
    assert stats.seeds_for_power(floored, 3.5, 0.05) > stats.seeds_for_power(e, 3.5, 0.05)  # reachable, with more seeds
    assert stats.seeds_for_power(e, 0.0, 0.05) is None
    assert stats.seeds_for_power(e, 0.01, 0.05, most=100) == 101  # past the most asked for


def test_seeds_for_power_as_a_range_carries_the_variance_estimates_uncertainty():
    e = stats.Estimate(0.0, 1.0, 4.0, 5, 0, 4.0, 0.0)  # the seeds' variance from 5 seeds: 4 degrees of freedom
    low, high = stats.seeds_for_power_range(e, 2.0, 0.05)
    assert low < stats.seeds_for_power(e, 2.0, 0.05) < high
    assert high / low > 5  # at 4 degrees of freedom the 95% interval of a variance spans a factor of about 13
    many = stats.Estimate(0.0, 1.0, 4.0, 101, 0, 4.0, 0.0)
    low, high = stats.seeds_for_power_range(many, 2.0, 0.05)
    assert high - low <= 6  # known well from 101 seeds


def test_sign_test():
    wins, losses, p = stats.sign_test([2.0] * 8, [1.0] * 8)
    assert (wins, losses) == (8, 0) and p == pytest.approx(2 * 0.5**8)
    wins, losses, p = stats.sign_test([2.0, 1.0, 1.0], [1.0, 2.0, 1.0])  # one tie dropped
    assert (wins, losses) == (1, 1) and p == pytest.approx(1.0)


@pytest.mark.parametrize(("seeds", "clusters", "seed_sd", "item_sd"), [(5, 300, 0.3, 0.0), (5, 300, 0.0, 0.5), (10, 200, 0.1, 0.3)])
def test_the_closed_form_and_the_hierarchical_bootstrap_agree_with_the_generating_model(seeds, clusters, seed_sd, item_sd):
    """Simulated crossed designs with a known variance of the mean difference: the closed form is
    about unbiased, the two-level bootstrap a little narrow (its (S - 1) / S), and both far closer
    to the truth than the seeds' part alone when the items carry the noise."""
    rng = np.random.default_rng(5)
    truth = seed_sd**2 / seeds + item_sd**2 / clusters + 1.0 / (seeds * clusters)
    closed, boot = [], []
    for rep in range(60):
        d = rng.normal(0, seed_sd, (seeds, 1)) + rng.normal(0, item_sd, clusters)[None, :] + rng.normal(0, 1.0, (seeds, clusters))
        closed.append(stats.two_level_estimate(d, np.zeros_like(d)).se ** 2)
        mean, se = stats.hierarchical_bootstrap(d, np.zeros_like(d), draws=150, seed=rep)
        assert mean == pytest.approx(float(d.mean()))
        boot.append(se**2)
    assert 0.85 <= np.mean(closed) / truth <= 1.2
    assert 0.7 <= np.mean(boot) / truth <= 1.05


def test_the_hierarchical_bootstrap_resamples_clusters_and_is_repeatable():
    d = np.array([[1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0]])
    together = stats.hierarchical_bootstrap(d, np.zeros_like(d), clusters=[0, 0, 1, 1], draws=400, seed=1)
    assert together == stats.hierarchical_bootstrap(d, np.zeros_like(d), clusters=[0, 0, 1, 1], draws=400, seed=1)
    apart = stats.hierarchical_bootstrap(d, np.zeros_like(d), draws=400, seed=1)
    assert together[0] == apart[0] == 0.5 and together[1] > apart[1]  # two clusters of two vary more than four items
