"""A claim's verdict from its evidence, decided with the other claims of its family.

``decide`` takes the claims' results (``claims.evaluate``: each with its estimate over seeds and
test items, ``stats.Estimate``, and what its claim says, ``Hypothesis``), adjusts their p-values (Holm
within each family, Benjamini-Hochberg across all given: ``multiplicity``), and gives each its
verdict from its interval at its Holm level (``multiplicity.holm_levels``), in the claim's
direction:

- **reproduced**: the interval excludes the claim's null (0; for a claim of size, the factor it
  states) in the paper's direction;
- **contradicted**: it excludes 0 the other way;
- **smaller than claimed**: it excludes the paper's own difference (or the claim's declared
  ``smallest_effect``, or its factor) but not 0;
- **inconclusive**: none of these; the result says what would decide it: the paired seeds for
  80% power at the paper's difference (at the observed variances, at the family's strictest
  Holm level alpha / m) and their price in hours, or "not reachable by seeds" where the test
  set alone keeps the interval wider than that;
- **withheld**: the statistics decided it, but a guard (``guards``) stops it, whichever side it
  favours; the result says what the statistics say.

Minimum evidence (``minimum_evidence``): an accuracy claim (a difference) is decided (reproduced,
smaller than claimed or contradicted) only on at least ``MIN_SEEDS`` paired seeds, and "smaller
than claimed" only with an interval whose half-width is below half of the paper's difference;
otherwise it is inconclusive and says what is missing. Then the gates (``gates``: pipeline check, floor,
mechanism) replace the verdict of a claim whose runs cannot speak to it, the statistics' verdict
kept beside.

A claim of equality (``relation: equal`` with a declared margin) is judged by two one-sided
tests: reproduced when the interval at 1 - 2 x level lies within the margin, contradicted when
the interval at the level lies outside it. Counts (parameters) are exact: decided on the counts
alone, outside the families. Results without an estimate (one paired seed, no runs) keep their
verdict and take no part in the adjustment.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from rnnbench.results import choices, multiplicity
from rnnbench.results.choices import DEPENDS
from rnnbench.results.settings import DEPENDS_ON_SETTING
from rnnbench.results.gates import GATED, NOT_EVIDENCE, NOT_TESTED, PIPELINE_CHECK

REPRODUCED, CONTRADICTED, SMALLER, INCONCLUSIVE = "reproduced", "contradicted", "smaller than claimed", "inconclusive"
WITHHELD = "withheld"
NOT_RUN, DATA_MISSING = "not run", "data missing"
DECIDED = (REPRODUCED, CONTRADICTED, SMALLER)
STATISTICAL = (REPRODUCED, CONTRADICTED, SMALLER, INCONCLUSIVE, WITHHELD)
KINDS = (*STATISTICAL, PIPELINE_CHECK, NOT_EVIDENCE, NOT_TESTED, DEPENDS, DEPENDS_ON_SETTING, NOT_RUN, DATA_MISSING)
ALPHA = 0.05
POWER = 0.8
MIN_SEEDS = 5  # paired seeds before an accuracy claim is decided, whichever way

DIFFERENCE, LOG_RATIO = "difference", "log ratio"  # the effect: better - worse, or log(better / worse)


@dataclass(frozen=True)
class Hypothesis:
    """What a claim says, on its effect."""

    effect: str  # DIFFERENCE or LOG_RATIO
    direction: int  # +1: the claim says the effect is positive (higher is better); -1: negative
    threshold: float = 0.0  # what the claim needs, in its direction: 0, or log(min_factor) for a claim of size
    reference: float | None = None  # the paper's own effect (or the declared smallest effect), in the claim's direction
    bounds: tuple[float, float] | None = None  # an equality claim: the effect's allowed range

    def p_value(self, estimate) -> float:
        if self.bounds is not None:  # two one-sided tests: the larger of their p-values
            return max(estimate.p_above(self.bounds[0]), estimate.p_below(self.bounds[1]))
        return estimate.p_value(self.direction * self.threshold)

    def interval(self, estimate, level: float) -> tuple[float, float]:
        return estimate.interval(2 * level if self.bounds is not None else level)

    def verdict(self, estimate, level: float) -> str:
        if self.bounds is not None:
            low, high = estimate.interval(2 * level)
            if self.bounds[0] < low and high < self.bounds[1]:
                return REPRODUCED
            low, high = estimate.interval(level)
            return CONTRADICTED if high < self.bounds[0] or low > self.bounds[1] else INCONCLUSIVE
        low, high = (self.direction * x for x in estimate.interval(level))
        low, high = min(low, high), max(low, high)
        if low > self.threshold:
            return REPRODUCED
        if high < 0:
            return CONTRADICTED
        if high < self.threshold or (self.reference is not None and high < self.reference):
            return SMALLER
        return INCONCLUSIVE

    def aim(self) -> float | None:
        """The difference between the paper's effect and the claim's null: what a power
        calculation aims to detect (None without a paper effect beyond the null)."""
        if self.bounds is not None or self.reference is None or self.reference <= self.threshold:
            return None
        return self.reference - self.threshold


@dataclass
class Decision:
    family: str
    size: int  # the claims tested in the family
    p: float  # raw, two-sided (two one-sided tests for an equality claim)
    p_holm: float
    p_bh: float
    level: float  # the claim's Holm level: its interval excludes the null exactly when p_holm < alpha
    interval: tuple[float, float]  # at that level, in the effect's units
    statistical: str  # the verdict of the statistics, before the guards
    held_out: str = ""  # the statistics' verdict on the seeds that did not choose the rate, at the same level
    power: str = ""  # an inconclusive verdict: what would decide it
    missing: str = ""  # what minimum evidence lacks where it turned a decided verdict inconclusive


def decide(results: list, family_of=lambda r: "", alpha: float = ALPHA) -> None:
    """Set each result's ``decision`` and ``verdict``. ``family_of(result)`` names its family. A
    claim with an open choice (``choices``) is decided by its cells, each a hypothesis of the
    claim's family; its own rows outside the cells are decided alone."""
    expanded = choices.expand(results)
    claim_of = {id(r): owner for r, owner in expanded}
    tested = [r for r, _ in expanded if getattr(r, "estimate", None) is not None and r.test is not None and not r.counted]
    for r in tested:
        r.decision = None
    bh = multiplicity.benjamini_hochberg([r.test.p_value(r.estimate) for r in tested])
    families: dict[str, list] = {}
    for r, q in zip(tested, bh):
        families.setdefault(family_of(claim_of[id(r)]), []).append((r, q))
    for family, members in families.items():
        raw = [r.test.p_value(r.estimate) for r, _ in members]
        for (r, q), p, p_holm, level in zip(members, raw, multiplicity.holm(raw), multiplicity.holm_levels(raw, alpha)):
            statistical = r.test.verdict(r.estimate, level)
            decision = Decision(family, len(members), p, p_holm, q, level, r.test.interval(r.estimate, level), statistical)
            if r.held_out is not None:
                decision.held_out = r.test.verdict(r.held_out, level)
            decision.missing = minimum_evidence(r.test, r.estimate, statistical, decision.interval)
            if statistical == INCONCLUSIVE or decision.missing:
                decision.power = _power(r, alpha / len(members))
            r.decision = decision
            verdict = INCONCLUSIVE if decision.missing else statistical
            r.verdict = WITHHELD if verdict in DECIDED and r.guards else verdict
    for r, _ in expanded:  # the gates last: their verdict stands whatever the statistics say (shown beside)
        gate = getattr(r, "gate", None)
        if gate is not None and r.verdict not in (NOT_RUN, DATA_MISSING) and not r.counted:
            r.verdict = gate.kind
    for r in results:  # a claim with an open choice: its verdict from its cells'
        choice = getattr(r, "choice", None)
        if choice is not None:
            if choice.outside is not None:
                decide([choice.outside])
            choices.combine(r)


def minimum_evidence(test: Hypothesis, estimate, statistical: str, interval: tuple[float, float]) -> str:
    """What an accuracy claim's decided verdict lacks ("" where nothing): at least ``MIN_SEEDS``
    paired seeds, whichever way it is decided (fewer leave the seeds' variance on one to three
    degrees of freedom: two seeds whose differences happen to agree give a narrow interval that
    the next seed can undo), and for "smaller than claimed" an interval half-width below half of
    the paper's difference (a wider interval cannot tell that difference from 0). A
    contradiction's interval lies wholly beyond 0 on the other side of the paper's difference, so
    its width is not required to be smaller. Cost claims and equality claims are not held to it
    (timing rounds and declared margins decide those)."""
    if test.effect != DIFFERENCE or test.bounds is not None or statistical not in DECIDED:
        return ""
    missing = []
    if estimate.seeds < MIN_SEEDS:
        missing.append(f"{estimate.seeds} paired seeds, {MIN_SEEDS} needed")
    if statistical == SMALLER and test.reference is not None:
        half = (interval[1] - interval[0]) / 2
        if half >= abs(test.reference) / 2:
            missing.append(f"interval ±{half:.2f}, narrower than half the paper's difference (±{abs(test.reference) / 2:.2f}) needed")
    return "; ".join(missing)


def _power(result, alpha: float) -> str:
    """What would decide an inconclusive claim: paired seeds for 80% power at the paper's effect."""
    from rnnbench.results import stats

    aim = result.test.aim()
    if aim is None:
        return ("the paper's own numbers tie or reverse" if result.test.reference is not None and result.test.bounds is None
                else "no paper difference to aim at")
    shown = _shown(result.test, aim + result.test.threshold)
    estimate = result.estimate
    seeds = stats.seeds_for_power(estimate, aim, alpha, POWER)
    if seeds is None:
        floor = estimate.quantile(1 - alpha / 2) * math.sqrt(estimate.item_var)
        return (f"not reachable by seeds: with the test set's part alone (±{floor:.2f} at this level), no number of seeds "
                f"gives 80% power at the paper's {shown}")
    if seeds > 1000:
        return f"more than 1,000 paired seeds for 80% power at the paper's {shown}"
    text = f"{seeds} paired seeds for 80% power at the paper's {shown}{_plausibly(estimate, aim, alpha)} ({estimate.seeds} run"
    more = seeds - estimate.seeds
    if more > 0 and result.price is not None:
        hours, unit = result.price
        text += f"; {more} more ≈ {more * hours:.1f} {unit}"
    return text + ")"


def _plausibly(estimate, aim: float, alpha: float) -> str:
    """The seeds needed at the ends of the 95% interval of the seeds' variance, in words."""
    from rnnbench.results import stats

    low, high = stats.seeds_for_power_range(estimate, aim, alpha, POWER)
    if low is None and high is None:
        return ""
    said = lambda n: "unreachable" if n is None else "over 1,000" if n > 1000 else f"{n}"  # noqa: E731
    return (f" (plausibly {said(low)} to {said(high)}: the seeds' variance rests on {estimate.seeds - 1} degree(s) of freedom)"
            if (low, high) != (None, None) else "")


def _shown(test: Hypothesis, value: float) -> str:
    """An effect in the claim's direction, as the ledger writes it."""
    value = test.direction * value
    return f"{math.exp(value):.2f}×" if test.effect == LOG_RATIO else f"{value:+.2f}"
