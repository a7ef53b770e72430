"""Statistics for comparing two encoders on paired runs: one estimate for both sources of noise.

A claim's evidence is the paired difference of two rows, seed by seed (seed s gives both rows
the same data order). Two things make it noisy: the runs (another seed trains another model)
and the test set (another sample of items scores them differently). ``Estimate`` carries both:

- ``two_level_estimate``: the mean over seeds and test items of the per-item difference, with
  a standard error from both levels. Test items that share a unit (the sentence of two aspect
  terms, the passage of five questions: ``rnnbench.results.clusters``) count as one cluster.
  The items are crossed with the seeds, not nested in them: every seed scores the same test
  set. Its variance is therefore that of the seeds (their means differ: V_S), plus that of the
  clusters (their seed-averaged differences differ: V_C), less the seed x cluster interaction
  both of those contain (V_SC): the unbiased two-way (method of moments) estimator, which is
  the two-way cluster-robust variance of Cameron, Gelbach and Miller (2011). It is what a
  two-level bootstrap sets out to estimate, computed exactly and without random draws. The
  bootstraps themselves miss it on such a design: resampling items anew within each seed
  shrinks the test set's part by the number of seeds and doubles the interaction (on RCRN
  Table 2's SST-5, 10 seeds, a standard error 13% too small; on Table 5's TREC, 5 seeds, 34%
  too large), and resampling seeds and items independently counts the interaction three times
  (5-70% too large on RCRN Tables 2, 5, 7 and 8). The interval and the p-value refer
  the estimate to a t distribution whose degrees of freedom combine the seeds' (S-1) and the
  clusters' (C-1) by Satterthwaite's rule: with seeds alone it is the paired t, with a large
  test set and consistent seeds a z-test. The standard error is never below the seeds' alone.
- ``seed_estimate``: the same without per-item scores (seconds, bits per character, a macro
  average over datasets, a log ratio of times): the paired t over seeds.
- ``paired_t_interval``: the paired t interval over seeds, printed beside as a cross-check.
- ``hierarchical_bootstrap``: the two-level bootstrap itself (seeds, then clusters within each),
  a cross-check of ``two_level_estimate`` with random draws; not used for verdicts.
- ``seeds_for_power``: the paired seeds that would give 80% power for a difference at the
  observed variances, or None where the test set's part alone keeps that out of reach.
- ``sign_test``: a two-sided binomial sign test over paired units (e.g. datasets).

Everything is computed in closed form, in a fixed order: the same evidence gives the same
numbers on every machine (the ledger regenerates byte for byte).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class Interval:
    mean: float
    low: float
    high: float
    n: int  # seeds

    def excludes_zero(self) -> int:
        """+1 when the interval lies above 0, -1 below, 0 when it contains 0."""
        if self.low > 0:
            return 1
        if self.high < 0:
            return -1
        return 0


@dataclass(frozen=True)
class Estimate:
    """A paired difference with its standard error over seeds and test items together."""

    mean: float
    se: float
    df: float  # degrees of freedom of the t reference (Satterthwaite: seeds and clusters)
    seeds: int
    clusters: int  # resampled units of test items; 0 without per-item scores
    seed_var: float  # the variance of one seed's difference: the seeds' part of se² is seed_var / seeds
    item_var: float  # the rest of se²: the test set's part, which more seeds do not shrink

    def quantile(self, q: float) -> float:
        return float(stats.t.ppf(q, self.df)) if math.isfinite(self.df) else float(stats.norm.ppf(q))

    def _sf(self, x: float) -> float:
        return float(stats.t.sf(x, self.df)) if math.isfinite(self.df) else float(stats.norm.sf(x))

    def interval(self, alpha: float) -> tuple[float, float]:
        """The two-sided 1 - alpha interval."""
        half = self.quantile(1 - alpha / 2) * self.se
        return self.mean - half, self.mean + half

    def p_value(self, null: float = 0.0) -> float:
        """Two-sided p-value of "the difference is ``null``": the inversion of ``interval``
        (the 1 - alpha interval excludes ``null`` exactly when p < alpha)."""
        if self.se == 0:
            return 1.0 if self.mean == null else 0.0
        return min(1.0, 2 * self._sf(abs(self.mean - null) / self.se))

    def p_above(self, bound: float) -> float:
        """One-sided p-value of "the difference is at most ``bound``" (small: it is above)."""
        if self.se == 0:
            return 0.0 if self.mean > bound else 1.0
        return self._sf((self.mean - bound) / self.se)

    def p_below(self, bound: float) -> float:
        """One-sided p-value of "the difference is at least ``bound``" (small: it is below)."""
        if self.se == 0:
            return 0.0 if self.mean < bound else 1.0
        return self._sf((bound - self.mean) / self.se)


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


def seed_estimate(diffs: list[float]) -> Estimate | None:
    """Per-seed differences alone (no per-item scores): the paired t. None for fewer than 2 seeds."""
    d = np.asarray(diffs, dtype=float)
    if d.size < 2:
        return None
    var = float(d.var(ddof=1))
    return Estimate(float(d.mean()), math.sqrt(var / d.size), d.size - 1.0, int(d.size), 0, var, 0.0)


def _satterthwaite(seed_part: float, seeds: int, item_part: float, clusters: int) -> float:
    parts = seed_part**2 / (seeds - 1) + (item_part**2 / (clusters - 1) if item_part > 0 else 0.0)
    return (seed_part + item_part) ** 2 / parts if parts > 0 else math.inf


def two_level_estimate(a, b, clusters=None) -> Estimate | None:
    """Seeds and test items together. ``a``, ``b``: [seeds, items] per-item scores of the two rows,
    seeds paired by row and items aligned by column; ``clusters``: each item's unit (None: every
    item its own). None for fewer than 2 seeds (the run-to-run variance is then unknown)."""
    a, b = np.atleast_2d(np.asarray(a, dtype=float)), np.atleast_2d(np.asarray(b, dtype=float))
    if a.shape != b.shape:
        raise ValueError(f"paired scores need the same seeds and items, got {a.shape} and {b.shape}")
    d = a - b
    n_seeds, n_items = d.shape
    if n_seeds < 2:
        return None
    labels = np.arange(n_items) if clusters is None else np.unique(np.asarray(clusters), return_inverse=True)[1]
    if len(labels) != n_items:
        raise ValueError(f"one cluster per item, got {len(labels)} for {n_items} items")
    n_clusters = int(labels.max()) + 1 if n_items else 0
    seed_means = d.mean(axis=1)
    if n_clusters < 2:
        return seed_estimate(list(seed_means))
    mean = float(d.mean())
    sizes = np.bincount(labels, minlength=n_clusters).astype(float)
    # e[s, c]: cluster c's total in seed s, less what the overall mean predicts for its size
    e = np.stack([np.bincount(labels, weights=row, minlength=n_clusters) for row in d]) - mean * sizes
    scale = (n_seeds * n_items) ** 2
    by_seed, by_cluster = e.sum(axis=1), e.sum(axis=0)
    seed_part = n_seeds / (n_seeds - 1) * float((by_seed**2).sum()) / scale  # = the paired t's se²
    cluster_part = n_clusters / (n_clusters - 1) * float((by_cluster**2).sum()) / scale
    residual = e - np.outer(by_seed / n_items, sizes) - by_cluster / n_seeds  # what neither explains
    interaction = (n_clusters * float((residual**2).sum()) / ((n_seeds - 1) * (n_clusters - 1))
                   / (n_seeds * n_items**2))
    total = max(seed_part + cluster_part - interaction, seed_part, cluster_part)
    item_part = total - seed_part
    seed_var = seed_part * n_seeds
    df = _satterthwaite(seed_part, n_seeds, item_part, n_clusters)
    return Estimate(mean, math.sqrt(total), df, n_seeds, n_clusters, seed_var, item_part)


def hierarchical_bootstrap(a, b, clusters=None, draws: int = 1000, seed: int = 0) -> tuple[float, float]:
    """The two-level bootstrap, as a cross-check of ``two_level_estimate``: (mean difference, its
    standard error over ``draws`` resamples). Each draw resamples the seeds (pairs: both rows keep
    their seed), then within each drawn seed the item clusters, both with replacement; a fixed
    ``seed`` makes it repeatable. On simulated crossed designs (tests/results/test_stats.py) its
    variance is 4-12% below the generating model's at 3-10 seeds (a bootstrap's (S - 1) / S at the
    seed level), where the closed form is within a few percent; the ledger uses the closed form."""
    a, b = np.atleast_2d(np.asarray(a, dtype=float)), np.atleast_2d(np.asarray(b, dtype=float))
    if a.shape != b.shape:
        raise ValueError(f"paired scores need the same seeds and items, got {a.shape} and {b.shape}")
    d = a - b
    n_seeds, n_items = d.shape
    labels = np.arange(n_items) if clusters is None else np.unique(np.asarray(clusters), return_inverse=True)[1]
    n_clusters = int(labels.max()) + 1
    totals = np.stack([np.bincount(labels, weights=row, minlength=n_clusters) for row in d])  # [seed, cluster]
    sizes = np.bincount(labels, minlength=n_clusters).astype(float)
    rng = np.random.default_rng(seed)
    means = np.empty(draws)
    for i in range(draws):
        drawn_seeds = rng.integers(0, n_seeds, n_seeds)
        drawn_clusters = rng.integers(0, n_clusters, (n_seeds, n_clusters))
        means[i] = totals[drawn_seeds[:, None], drawn_clusters].sum() / sizes[drawn_clusters].sum()
    return float(d.mean()), float(means.std(ddof=1))


def seeds_for_power(estimate: Estimate, effect: float, alpha: float, power: float = 0.8, most: int = 1000,
                    seed_var: float | None = None) -> int | None:
    """The paired seeds at which a two-sided test at ``alpha`` detects ``effect`` (the distance
    from the tested value) with probability ``power``, at the estimate's variances (or at
    ``seed_var`` for the seeds' part): the seeds' part shrinks as 1/seeds, the test set's does
    not. The power is the noncentral t's, exactly (the sum of two t quantiles, a common shortcut,
    comes out one seed short at the strict levels of Holm's correction and few seeds). None where the test set's part alone keeps that out
    of reach; ``most`` + 1 where it needs more than ``most`` seeds."""
    effect = abs(effect)
    if effect == 0:
        return None
    floor = estimate.item_var
    seed_var = estimate.seed_var if seed_var is None else seed_var
    if floor > 0 and _power(math.sqrt(floor), estimate.clusters - 1.0, effect, alpha) < power:
        return None
    n = np.arange(2, most + 1, dtype=float)
    seed_part = seed_var / n
    se = np.sqrt(seed_part + floor)
    with np.errstate(divide="ignore", invalid="ignore"):
        parts = seed_part**2 / (n - 1) + (floor**2 / (estimate.clusters - 1) if floor > 0 else 0.0)
        df = np.where(parts > 0, (seed_part + floor) ** 2 / np.where(parts > 0, parts, 1.0), np.inf)
    enough = np.nonzero(_power(se, df, effect, alpha) >= power)[0]
    return int(n[enough[0]]) if enough.size else most + 1


def seeds_for_power_range(estimate: Estimate, effect: float, alpha: float, power: float = 0.8, most: int = 1000,
                          confidence: float = 0.95) -> tuple[int | None, int | None]:
    """The seeds for ``power`` at the ends of the ``confidence`` interval of the seeds' variance
    (estimated on seeds - 1 degrees of freedom: chi-square), fewest first. With 3-5 seeds the
    variance is known only to a factor of several, and so is the number of seeds it implies."""
    k = estimate.seeds - 1
    if k < 1:
        return None, None
    low_var = estimate.seed_var * k / float(stats.chi2.ppf(1 - (1 - confidence) / 2, k))
    high_var = estimate.seed_var * k / float(stats.chi2.ppf((1 - confidence) / 2, k))
    return (seeds_for_power(estimate, effect, alpha, power, most, low_var),
            seeds_for_power(estimate, effect, alpha, power, most, high_var))


def _power(se, df, effect: float, alpha: float):
    """The probability that a two-sided t test at ``alpha`` with ``df`` degrees of freedom rejects
    when the true difference is ``effect`` and its standard error ``se`` (the noncentral t's)."""
    se, df = np.asarray(se, dtype=float), np.asarray(df, dtype=float)
    finite = np.where(np.isfinite(df), df, 1e9)
    crit = stats.t.ppf(1 - alpha / 2, finite)
    ncp = effect / se
    return stats.nct.sf(crit, finite, ncp) + stats.nct.cdf(-crit, finite, ncp)


def sign_test(a: list[float], b: list[float]) -> tuple[int, int, float]:
    """(wins of a, losses of a, two-sided p-value) over paired units; ties are dropped."""
    wins = sum(x > y for x, y in zip(a, b, strict=True))
    losses = sum(x < y for x, y in zip(a, b, strict=True))
    if wins + losses == 0:
        return 0, 0, 1.0
    return wins, losses, float(stats.binomtest(wins, wins + losses, 0.5).pvalue)
