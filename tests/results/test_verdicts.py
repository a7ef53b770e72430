"""The verdict kinds, decided with the family (Holm) and withheld by a guard whichever side it
favours; what an inconclusive verdict says would decide it; the seeds that chose the rate."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import pytest

from rnnbench.results import claims, stats, verdicts
from rnnbench.results.verdicts import Hypothesis


def _estimate(mean: float, se: float, df: float = 1e9, seeds: int = 5, clusters: int = 0, item_var: float = 0.0) -> stats.Estimate:
    return stats.Estimate(mean, se, df, seeds, clusters, (se**2 - item_var) * seeds, item_var)


@dataclass
class _Result:  # what decide reads of a claims.ClaimResult
    estimate: stats.Estimate
    test: Hypothesis
    guards: list = field(default_factory=list)
    held_out: stats.Estimate | None = None
    price: tuple | None = None
    counted: bool = False
    verdict: str = ""
    decision: verdicts.Decision | None = None


def _decide(*results, family=lambda r: "") -> list:
    verdicts.decide(list(results), family)
    return [r.verdict for r in results]


@pytest.mark.parametrize(("mean", "reference", "verdict"), [
    (3.0, 2.0, verdicts.REPRODUCED),     # [1.04, 4.96] excludes 0 in the claim's direction
    (-3.0, 2.0, verdicts.CONTRADICTED),  # excludes 0 the other way
    (0.5, 4.0, verdicts.SMALLER),        # [-1.46, 2.46]: 0 inside, the paper's 4 outside
    (0.5, 2.0, verdicts.INCONCLUSIVE),   # both inside
    (0.5, None, verdicts.INCONCLUSIVE),  # no paper difference to be smaller than
])
def test_the_four_kinds_at_5_percent(mean, reference, verdict):
    assert _decide(_Result(_estimate(mean, 1.0), Hypothesis(verdicts.DIFFERENCE, 1, reference=reference))) == [verdict]


def test_lower_is_better_reads_the_interval_the_other_way():
    # bits per character: better - worse = -3 supports "lower"; the paper's -2 (1.2 vs 1.4 would be -0.2)
    assert _decide(_Result(_estimate(-3.0, 1.0), Hypothesis(verdicts.DIFFERENCE, -1, reference=2.0))) == [verdicts.REPRODUCED]
    assert _decide(_Result(_estimate(-0.5, 1.0), Hypothesis(verdicts.DIFFERENCE, -1, reference=4.0))) == [verdicts.SMALLER]


def test_a_claim_of_size_needs_its_factor():
    two = math.log(2)
    faster = lambda ratio, se=0.05: _Result(_estimate(math.log(ratio), se), Hypothesis(verdicts.LOG_RATIO, -1, threshold=two))  # noqa: E731
    assert _decide(faster(0.3)) == [verdicts.REPRODUCED]      # 3.3 times faster: beyond 2
    assert _decide(faster(0.9)) == [verdicts.SMALLER]         # faster, by far less than 2 times
    assert _decide(faster(1.3)) == [verdicts.CONTRADICTED]    # slower
    assert _decide(faster(0.5, 0.5)) == [verdicts.INCONCLUSIVE]


def test_equality_is_two_one_sided_tests_within_the_margin():
    bounds = (math.log(0.9), math.log(1.1))
    equal = lambda ratio, se: _Result(_estimate(math.log(ratio), se), Hypothesis(verdicts.LOG_RATIO, 1, bounds=bounds))  # noqa: E731
    assert _decide(equal(1.0, 0.02)) == [verdicts.REPRODUCED]   # the 90% interval within ±10%
    assert _decide(equal(0.7, 0.02)) == [verdicts.CONTRADICTED]  # the 95% interval outside
    assert _decide(equal(1.0, 0.2)) == [verdicts.INCONCLUSIVE]
    r = equal(1.0, 0.02)
    verdicts.decide([r])
    assert r.decision.p == pytest.approx(max(r.estimate.p_above(bounds[0]), r.estimate.p_below(bounds[1])))


def test_holm_within_the_family_decides_and_bh_across_all_is_beside():
    """Two claims at p = 0.03: alone each is reproduced; in one family Holm makes both 0.06 (not
    decided), and their intervals, at the family's level, contain 0. In two families each stands."""
    z = 2.1700903775845606  # two-sided p = 0.03 on a normal
    a, b = (_Result(_estimate(z, 1.0), Hypothesis(verdicts.DIFFERENCE, 1)) for _ in range(2))
    assert _decide(a, b) == [verdicts.INCONCLUSIVE] * 2
    assert a.decision.p == pytest.approx(0.03) and a.decision.p_holm == pytest.approx(0.06) and a.decision.p_bh == pytest.approx(0.03)
    assert a.decision.size == 2 and a.decision.level == pytest.approx(0.025) and a.decision.interval[0] < 0
    assert _decide(a, b, family=lambda r: id(r)) == [verdicts.REPRODUCED] * 2
    assert a.decision.p_holm == pytest.approx(0.03) and a.decision.p_bh == pytest.approx(0.03)


def test_a_guard_withholds_a_decided_verdict_either_way_and_says_what_the_statistics_say():
    for mean, statistical in ((3.0, verdicts.REPRODUCED), (-3.0, verdicts.CONTRADICTED), (0.5, verdicts.SMALLER)):
        r = _Result(_estimate(mean, 1.0), Hypothesis(verdicts.DIFFERENCE, 1, reference=4.0), guards=["a row stopped at its epoch cap"])
        assert _decide(r) == [verdicts.WITHHELD] and r.decision.statistical == statistical
    r = _Result(_estimate(0.5, 1.0), Hypothesis(verdicts.DIFFERENCE, 1, reference=2.0), guards=["a row stopped at its epoch cap"])
    assert _decide(r) == [verdicts.INCONCLUSIVE]  # nothing decided, nothing to withhold


def test_an_inconclusive_verdict_says_the_seeds_and_hours_that_would_decide_it():
    seeds_only = _Result(_estimate(0.5, 1.0), Hypothesis(verdicts.DIFFERENCE, 1, reference=2.0), price=(0.5, "CPU h"))
    verdicts.decide([seeds_only])
    n = stats.seeds_for_power(seeds_only.estimate, 2.0, 0.05)
    assert seeds_only.decision.power.startswith(f"{n} paired seeds for 80% power at the paper's +2.00 (plausibly ")
    assert seeds_only.decision.power.endswith(f"(5 run; {n - 5} more ≈ {(n - 5) * 0.5:.1f} CPU h)")
    # the test set's part alone (variance 1 of 1.1) keeps 80% power at +2 out of reach at any number of seeds
    floored = _Result(_estimate(0.5, math.sqrt(1.1), clusters=500, item_var=1.0), Hypothesis(verdicts.DIFFERENCE, 1, reference=2.0))
    verdicts.decide([floored])
    assert floored.decision.power.startswith("not reachable by seeds: with the test set's part alone (±1.96 at this level)")
    tie = _Result(_estimate(0.5, 1.0), Hypothesis(verdicts.DIFFERENCE, 1, reference=0.0))
    verdicts.decide([tie])
    assert tie.decision.power == "the paper's own numbers tie or reverse"


def test_the_seeds_that_chose_the_rate_are_shown_apart():
    r = _Result(_estimate(3.0, 1.0), Hypothesis(verdicts.DIFFERENCE, 1), held_out=_estimate(3.0, 3.0, seeds=3))
    verdicts.decide([r])
    assert r.verdict == verdicts.REPRODUCED and r.decision.held_out == verdicts.INCONCLUSIVE


# --- on evidence rows: the guards and the selection seeds as claims.evaluate finds them -----------------------------

def _rows(gap: float, lrs: dict[str, list[float]], chosen: dict[str, float], **status) -> list[dict]:
    """TREC-like evidence: rcrn and bilstm, seeds 1-5; seeds 1-2 run every rate of the row's grid
    (phase select), 3-5 the chosen one. rcrn is ``gap`` points better in every seed (plus noise)."""
    rows = []
    for encoder, base in (("rcrn", 85.0 + gap), ("bilstm", 85.0)):
        for seed in range(1, 6):
            for lr in (lrs[encoder] if seed <= 2 else [chosen[encoder]]):
                reported = lr == chosen[encoder]
                rows.append({"model": encoder, "encoder": encoder, "variant": "", "dataset": "TREC", "metric": "accuracy",
                             "seed": seed, "lr": lr, "phase": "select" if seed <= 2 else "final", "reported": "yes" if reported else "no",
                             "dev": 80.0, "test": base + 0.3 * ((seed * 7) % 3), "selected_epoch": 10, "epoch_cap": 50, "epochs_run": 14,
                             "seconds_per_epoch": 100.0, "inference_seconds_per_example": 0.001, "parameters": 10, "threads": 1,
                             "device": "cpu", "hardware": "Test CPU", "run": f"{encoder}-s{seed}-{lr}",
                             "status": status.get(f"{encoder}{seed}", "trained")})
    return rows


CLAIM = {"id": "c", "text": "t", "better": "rcrn", "worse": "bilstm", "column": "TREC"}
GRID = [3e-4, 4e-4, 1e-3]


def test_a_rate_at_the_grids_edge_withholds_the_verdict_on_either_side():
    inside = claims.evaluate("rcrn_table5", CLAIM, _rows(3.0, {"rcrn": GRID, "bilstm": GRID}, {"rcrn": 4e-4, "bilstm": 4e-4}), [])
    assert inside.verdict == verdicts.REPRODUCED and inside.guards == []
    for side in ("rcrn", "bilstm"):  # the winner's edge as much as the loser's
        chosen = {"rcrn": 4e-4, "bilstm": 4e-4, side: 1e-3}
        edge = claims.evaluate("rcrn_table5", CLAIM, _rows(3.0, {"rcrn": GRID, "bilstm": GRID}, chosen), [])
        assert edge.verdict == verdicts.WITHHELD and edge.decision.statistical == verdicts.REPRODUCED
        assert edge.guards == [f"{side} chose the grid's largest rate (0.001 of 0.0003, 0.0004, 0.001): its best rate may lie outside the grid"]


def test_a_run_that_did_not_train_withholds_the_verdict():
    rows = _rows(3.0, {"rcrn": GRID, "bilstm": GRID}, {"rcrn": 4e-4, "bilstm": 4e-4}, rcrn4="did not train", bilstm5="needs re-run")
    result = claims.evaluate("rcrn_table5", CLAIM, rows, [])
    assert result.verdict == verdicts.WITHHELD
    assert result.guards == ["the runs of rcrn in seed(s) 4 did not train",
                             "the runs of bilstm in seed(s) 5 predate the patience rule and need a re-run"]


def test_the_selection_seeds_are_left_out_beside_only_where_they_chose_among_rates():
    chose = claims.evaluate("rcrn_table5", CLAIM, _rows(3.0, {"rcrn": GRID, "bilstm": GRID}, {"rcrn": 4e-4, "bilstm": 4e-4}), [])
    assert chose.seeds == [1, 2, 3, 4, 5] and chose.held_out_seeds == [3, 4, 5] and chose.held_out.seeds == 3
    assert chose.decision.held_out == verdicts.REPRODUCED  # 3 points in every seed: decided without seeds 1-2 too
    one_rate = claims.evaluate("rcrn_table5", CLAIM, _rows(3.0, {"rcrn": [1e-3], "bilstm": [1e-3]}, {"rcrn": 1e-3, "bilstm": 1e-3}), [])
    assert one_rate.held_out_seeds == [] and one_rate.held_out is None  # nothing was chosen on seeds 1-2


def test_one_more_paired_seed_is_priced_from_the_rows_runs():
    result = claims.evaluate("rcrn_table5", CLAIM, _rows(0.0, {"rcrn": GRID, "bilstm": GRID}, {"rcrn": 4e-4, "bilstm": 4e-4}), [])
    assert result.price == (pytest.approx(2 * 100.0 * 14 / 3600), "CPU h")  # a run of each row: 14 epochs of 100 s, one thread
