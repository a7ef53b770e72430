"""A comparison's reading (rnnbench.results.comparison): each encoder against the baseline, paired by
seed, decided together under Holm's correction, the same both ways; the minimum evidence, the
guards and the floor as for a paper's claim; the seeds that would decide an inconclusive pair."""
from __future__ import annotations

import statistics

from rnnbench.results import comparison, verdicts
from rnnbench.results.floors import Floor

TABLE, COLUMN, ITEMS = "test_comparison", "mine", 200


def _rows_and_items(rates: dict[str, float], seeds: int, cap: int = 50, selected: int = 5,
                    shifts: dict[str, int] | None = None) -> tuple[list[dict], list[dict]]:
    """Evidence rows in table units (%) and per-item scores: encoder -> share of items right. Item i is
    right in seed s when (i * 7 + s * 13 + shift) % 100 falls below the share: of two encoders with
    the same shift (0 by default), the better is right on a superset of the items the worse gets,
    seed by seed; another shift makes them right on other items."""
    rows, items = [], []
    for encoder, rate in rates.items():
        shift = (shifts or {}).get(encoder, 0)
        for seed in range(1, seeds + 1):
            scores = [100.0 if (i * 7 + seed * 13 + shift) % 100 < 100 * rate + (seed % 3) else 0.0 for i in range(ITEMS)]
            rows.append({"model": encoder, "encoder": encoder, "variant": "", "dataset": COLUMN, "metric": "accuracy", "seed": seed,
                         "lr": 1e-3, "phase": "select" if seed <= 2 else "final", "reported": "yes", "dev": 50.0,
                         "test": statistics.fmean(scores), "selected_epoch": selected, "epoch_cap": cap, "epochs_run": selected + 4,
                         "seconds_per_epoch": 3.0, "inference_seconds_per_example": 0.001, "parameters": 100, "threads": 1,
                         "commit": "c", "versions": "{}", "device": "cpu", "hardware": "Test CPU", "dev_curve": "",
                         "run": f"{encoder}-s{seed}",
                         "status": "trained", "majority": 30.0})
            items += [{"model": encoder, "variant": "", "dataset": COLUMN, "seed": seed, "item": f"mine.csv:{i + 2}", "score": score}
                      for i, score in enumerate(scores)]
    return rows, items


def _decide(rates: dict[str, float], seeds: int, floors: dict | None = None, **rows_options) -> dict[str, comparison.Pair]:
    encoders = list(rates)
    definition = comparison.definition("test", encoders, encoders[0], COLUMN, lower_is_better=False)
    rows, items = _rows_and_items(rates, seeds, **rows_options)
    return {pair.encoder: pair for pair in comparison.decide(TABLE, definition, rows, items, floors)}


def test_a_clear_difference_reads_better_or_worse_either_way_under_holm_over_the_pairs():
    pairs = _decide({"bilstm": 0.6, "rcrn": 0.8, "lstm1": 0.4}, seeds=5)
    assert pairs["rcrn"].verdict == comparison.BETTER and pairs["lstm1"].verdict == comparison.WORSE
    for name, pair in pairs.items():
        d = pair.result.decision
        assert d.size == 2 and d.p_holm >= d.p  # one family: the two pairs
        low, high = d.interval
        assert low <= pair.result.estimate.mean <= high
        assert (low > 0) if name == "rcrn" else (high < 0)
        ours = [r for r in _rows_and_items({"bilstm": 0.6, name: {"rcrn": 0.8, "lstm1": 0.4}[name]}, 5)[0]]
        means = {e: statistics.fmean(r["test"] for r in ours if r["encoder"] == e) for e in ("bilstm", name)}
        assert abs(pair.result.estimate.mean - (means[name] - means["bilstm"])) < 1e-9  # the mean difference is the rows'
    assert comparison.verdict_text(pairs["rcrn"]) == "rcrn better than bilstm"


def test_a_verdict_either_way_needs_five_paired_seeds():
    pairs = _decide({"bilstm": 0.6, "rcrn": 0.8, "lstm1": 0.4}, seeds=3)
    for name in ("rcrn", "lstm1"):
        assert pairs[name].verdict == verdicts.INCONCLUSIVE
        assert f"on 3 paired seeds: a verdict either way needs {verdicts.MIN_SEEDS}" in pairs[name].why
        assert pairs[name].result.decision.statistical in (verdicts.REPRODUCED, verdicts.CONTRADICTED)


def test_an_inconclusive_pair_says_the_seeds_that_would_decide_it():
    pairs = _decide({"bilstm": 0.6, "rcrn": 0.61}, seeds=5, shifts={"rcrn": 37})  # right on other items, about as often
    pair = pairs["rcrn"]
    assert pair.verdict == verdicts.INCONCLUSIVE and pair.result.decision.statistical == verdicts.INCONCLUSIVE
    assert "paired seeds for 80% power at the observed" in pair.would_decide or "not reachable" in pair.would_decide


def test_runs_at_their_epoch_cap_withhold_a_decided_pair():
    pairs = _decide({"bilstm": 0.6, "rcrn": 0.8}, seeds=5, cap=10, selected=10)
    assert pairs["rcrn"].verdict == verdicts.WITHHELD and "the statistics say better" in pairs["rcrn"].why


def test_a_row_at_the_majority_rate_is_not_evidence():
    floors = {(TABLE, COLUMN, "test"): Floor(TABLE, COLUMN, "test", 65.0, ITEMS, "a")}
    pairs = _decide({"bilstm": 0.6, "rcrn": 0.8}, seeds=5, floors=floors)
    assert pairs["rcrn"].verdict == "not evidence" and "bilstm" in pairs["rcrn"].why


def test_the_section_and_the_summary_state_every_pair():
    encoders = ["bilstm", "rcrn", "lstm1"]
    definition = comparison.definition("test", encoders, "bilstm", COLUMN, lower_is_better=False)
    rows, items = _rows_and_items({"bilstm": 0.6, "rcrn": 0.8, "lstm1": 0.4}, 5)
    section = "\n".join(comparison.section(TABLE, definition, rows, items, {}, 1))
    assert section.startswith("## Against `bilstm`") and "p, Holm over 2 pair(s)" in section
    assert "**rcrn better than bilstm**" in section and "**lstm1 worse than bilstm**" in section
    summary = comparison.summary(TABLE, definition, rows, items, {})
    assert len(summary) == 3 and summary[1].lstrip().startswith("rcrn  − bilstm:")


def test_no_runs_of_a_row_is_not_run():
    definition = comparison.definition("test", ["bilstm", "rcrn"], "bilstm", COLUMN, lower_is_better=False)
    rows, items = _rows_and_items({"bilstm": 0.6}, 5)
    (pair,) = comparison.decide(TABLE, definition, rows, items)
    assert pair.verdict == verdicts.NOT_RUN and comparison.cells(pair, 1) == ("–", "–", "–", "–")
