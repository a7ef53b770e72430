"""The gates: a verdict is about the paper only where the table's reference row is near the paper's
number (parity), no row of the claim sits at the majority rate (floor), the mechanism the paper
credits is present (mechanism) and the training data is the paper's (pipeline check); minimum
evidence before "smaller than claimed" or "contradicted". Each test fails without its gate."""
from __future__ import annotations

import pytest

from rnnbench.results import cells, evidence, gates, ledger, verdicts
from rnnbench.results.claims import evaluate, load_claims
from rnnbench.results.floors import Floor
from rnnbench.results.stats import Estimate

REGISTRY = {
    "paper": "demo", "table": 1, "caption": "demo",
    "rows": [{"model": "BiLSTM", "encoder": "bilstm", "values": {"A": 90.0, "B": 80.0, "C/accuracy_mean": 70.0, "C/accuracy_std": 3.0}},
             {"model": "AP-BiLSTM", "encoder": "bilstm", "variant": "ap", "values": {"A": 91.0}},
             {"model": "RCRN", "encoder": "rcrn", "values": {"A": 92.0}}],
    "reference": {"rows": ["bilstm", "bilstm/ap"]},
}
CLAIM = {"id": "c", "text": "rcrn > bilstm", "better": "rcrn", "worse": "bilstm", "column": "A"}


def _rows(encoder: str, dataset: str, values: list[float], variant: str = "", metric: str = "accuracy") -> list[dict]:
    return [{"encoder": encoder, "variant": variant, "dataset": dataset, "metric": metric, "seed": s, "reported": "yes",
             "test": v, "status": "trained"} for s, v in enumerate(values, 1)]


def test_parity_within_the_margin_is_about_the_paper():
    rows = _rows("bilstm", "A", [89.0, 89.5, 88.5]) + _rows("rcrn", "A", [90.0] * 3)
    scope = gates.parity(REGISTRY, rows, CLAIM, ["rcrn", "bilstm"], {"A"})
    assert scope.kind == gates.ABOUT_PAPER and scope.gap == pytest.approx(-1.0) and scope.margin == 2.0


def test_parity_outside_the_margin_is_in_our_setting_with_the_gap():
    rows = _rows("bilstm", "A", [85.0, 85.0, 86.0]) + _rows("rcrn", "A", [90.0] * 3)
    scope = gates.parity(REGISTRY, rows, CLAIM, ["rcrn", "bilstm"], {"A"})
    assert scope.kind == gates.IN_OUR_SETTING and "bilstm -4.7 from the paper" in scope.label()


def test_the_margin_is_twice_the_papers_std_where_larger():
    rows = _rows("bilstm", "C/accuracy_mean", [65.0] * 3)  # 5 below the paper's 70, within 2 x 3.0
    scope = gates.parity(REGISTRY, rows, {**CLAIM, "column": "C/accuracy_mean"}, ["rcrn", "bilstm"], {"C/accuracy_mean"})
    assert scope.kind == gates.ABOUT_PAPER and scope.margin == 6.0


def test_a_claim_reads_the_reference_row_of_its_own_variant():
    rows = _rows("bilstm", "A", [80.0] * 3) + _rows("bilstm", "A", [90.5] * 3, "ap")
    scope = gates.parity(REGISTRY, rows, CLAIM, ["rcrn/ap", "bilstm/ap"], {"A"})
    assert scope.kind == gates.ABOUT_PAPER and "bilstm/ap" in scope.why


def test_an_open_choices_cell_reads_its_own_variant_of_the_reference_row():
    # MZU Table 6's cells compare against dt_gru/fn3: its parity is that row's, not the plain dt_gru's
    registry = {**REGISTRY, "reference": {"rows": ["bilstm"]}}
    rows = _rows("bilstm", "A", [80.0] * 3) + _rows("bilstm", "A", [89.5] * 3, "fn3") + _rows("rcrn", "A", [90.0] * 3, "x")
    cell = {**CLAIM, "better": "rcrn/x", "worse": "bilstm/fn3", "cell_of": {"rcrn": "rcrn/x", "bilstm": "bilstm/fn3"}}
    scope = gates.parity(registry, rows, cell, ["rcrn/x", "bilstm/fn3"], {"A"})
    assert scope.kind == gates.ABOUT_PAPER and "ours: bilstm/fn3" in scope.why
    plain = gates.parity(registry, rows, CLAIM, ["rcrn/x", "bilstm"], {"A"})
    assert plain.kind == gates.IN_OUR_SETTING and "bilstm -10.0" in plain.why
    # outside a cell, a claim comparing another variant of the reference row's encoder reads the reference row
    other = gates.parity(registry, rows, {**CLAIM, "worse": "bilstm/fn3"}, ["rcrn/x", "bilstm/fn3"], {"A"})
    assert other.kind == gates.IN_OUR_SETTING and "bilstm -10.0" in other.why


def test_a_table_without_a_reference_row_is_in_our_setting():
    registry = {k: v for k, v in REGISTRY.items() if k != "reference"}
    scope = gates.parity(registry, _rows("bilstm", "A", [90.0] * 3), CLAIM, ["rcrn", "bilstm"], {"A"})
    assert scope.kind == gates.IN_OUR_SETTING


def test_declared_reference_columns_are_read_instead_of_the_claims():
    registry = {**REGISTRY, "reference": {"rows": ["bilstm"], "columns": ["B"]}}
    rows = _rows("bilstm", "A", [70.0] * 3) + _rows("bilstm", "B", [79.0] * 3)
    assert gates.parity(registry, rows, CLAIM, ["rcrn", "bilstm"], {"A"}).kind == gates.ABOUT_PAPER


def test_a_row_at_the_majority_rate_is_not_evidence():
    floors = {("t", "A", "test"): Floor("t", "A", "test", 60.4, 100, "neutral")}
    rows = _rows("bilstm", "A", [60.0, 60.5, 60.3]) + _rows("rcrn", "A", [62.0, 62.1, 61.9])
    gate = gates.floor_gate("t", rows, ["rcrn", "bilstm"], {"A"}, floors)
    assert gate.kind == gates.NOT_EVIDENCE and "bilstm 60.27 on A (one-sided 95% lower bound" in gate.why and "60.40" in gate.why
    assert "rcrn" not in gate.why
    assert gates.floor_gate("t", _rows("bilstm", "A", [61.0, 61.1, 60.9]) + _rows("rcrn", "A", [62.0] * 3),
                            ["rcrn", "bilstm"], {"A"}, floors) is None
    # a mean a hair above the floor, with seeds spread wider than the gap, does not beat it (MZU Table 6 laptops)
    hair = _rows("bilstm", "A", [52.29 + d for d in (-2.0, 1.5, 0.3, -1.2, 1.4)]) + _rows("rcrn", "A", [62.0] * 3)
    assert "bilstm 52.29" in gates.floor_gate("t", hair, ["rcrn", "bilstm"], {"A"},
                                              {("t", "A", "test"): Floor("t", "A", "test", 52.14, 654, "positive")}).why


def test_the_mechanism_absent_or_unmeasured_is_not_tested():
    registry = {**REGISTRY, "mechanism": [{"row": "rcrn", "statistic": "gate_openness", "present": {"max": 50}, "why": "w"}]}
    rows = _rows("rcrn", "A", [90.0] * 3)
    assert "not measured" in gates.mechanism_gate(registry, rows, ["rcrn", "bilstm"]).why
    open_gates = rows + _rows("rcrn", "gate openness", [99.0, 99.5, 99.6], metric="stats:gate_openness")
    gate = gates.mechanism_gate(registry, open_gates, ["rcrn", "bilstm"])
    assert gate.kind == gates.NOT_TESTED and "gate_openness = 99.4 (present: ≤ 50)" in gate.why
    sparse = rows + _rows("rcrn", "gate openness", [20.0, 30.0, 25.0], metric="stats:gate_openness")
    assert gates.mechanism_gate(registry, sparse, ["rcrn", "bilstm"]) is None


def test_a_stand_in_for_the_training_data_makes_a_pipeline_check():
    registry = {**REGISTRY, "training_data_stand_in": {"B": "TRAIN, not TRAIN-ALL"}}
    assert gates.pipeline_check(registry, {"A"}) is None
    assert gates.pipeline_check(registry, {"B"}).label() == "pipeline check (training data: TRAIN, not TRAIN-ALL)"
    assert gates.pipeline_check({**REGISTRY, "training_data_stand_in": {"*": "dev pairs"}}, {"A"}).kind == gates.PIPELINE_CHECK


@pytest.mark.parametrize("bad, says", [({"reference": {"rows": ["lstm9"]}}, "reference row 'lstm9'"),
                                       ({"reference": {"rows": ["bilstm"], "margin": 3}}, "reference.why"),
                                       ({"mechanism": [{"row": "rcrn", "statistic": "s", "present": {"top": 1}, "why": "w"}]}, "range"),
                                       ({"training_data_stand_in": {"A": ""}}, "training_data_stand_in")])
def test_malformed_gate_entries_are_one_line(bad, says):
    with pytest.raises(ValueError, match=says):
        gates.check_registry({**REGISTRY, **bad}, "paper_numbers/demo.yaml")


def _estimate(mean: float, se: float, seeds: int) -> Estimate:
    return Estimate(mean=mean, se=se, df=float(seeds - 1), seeds=seeds, clusters=0, seed_var=se * se * seeds, item_var=0.0)


@pytest.mark.parametrize("verdict, seeds, se, missing", [
    (verdicts.SMALLER, 3, 0.5, "3 paired seeds, 5 needed"),
    (verdicts.CONTRADICTED, 3, 0.5, "3 paired seeds, 5 needed"),
    (verdicts.SMALLER, 5, 5.0, "narrower than half the paper's difference"),
    (verdicts.CONTRADICTED, 5, 5.0, ""),  # a contradiction lies beyond 0: its width is not held against it
    (verdicts.SMALLER, 5, 0.5, ""),
    (verdicts.REPRODUCED, 2, 0.02, "2 paired seeds, 5 needed"),  # two agreeing seeds: a narrow interval on one degree of freedom
    (verdicts.REPRODUCED, 5, 0.5, ""),
])
def test_minimum_evidence(verdict, seeds, se, missing):
    test = verdicts.Hypothesis(verdicts.DIFFERENCE, 1, 0.0, reference=10.0)
    estimate = _estimate(1.0, se, seeds)
    said = verdicts.minimum_evidence(test, estimate, verdict, estimate.interval(0.05))
    assert (missing in said) if missing else said == ""


def _accuracy_rows(bilstm: float) -> list[dict]:
    rows = []
    for encoder, base in (("rcrn", bilstm + 2.0), ("bilstm", bilstm), ("3l_bilstm", bilstm + 1.0)):
        for seed in range(1, 6):
            rows.append({"model": encoder, "encoder": encoder, "variant": "", "dataset": "SST-5", "metric": "accuracy", "seed": seed,
                         "lr": 1e-3, "phase": "final", "reported": "yes", "dev": 40.0, "test": base + 0.1 * ((seed * 3) % 5),
                         "selected_epoch": 5, "epoch_cap": 50, "epochs_run": 9, "seconds_per_epoch": 10.0,
                         "inference_seconds_per_example": 0.001, "parameters": 100, "threads": 1, "commit": "c", "versions": "{}",
                         "device": "cpu", "hardware": "Test CPU", "dev_curve": "", "run": f"{encoder}-s{seed}"})
    return rows


def test_the_ledger_counts_verdicts_about_the_paper_and_in_our_setting_apart(tmp_path):
    claim = next(c for c in load_claims("rcrn_table2") if c["worse"] == "bilstm")
    near = evaluate("rcrn_table2", claim, _accuracy_rows(51.0), [])
    far = evaluate("rcrn_table2", claim, _accuracy_rows(42.0), [])
    assert near.scope.kind == gates.ABOUT_PAPER and far.scope.kind == gates.IN_OUR_SETTING
    evidence.write_csv(tmp_path / "rcrn_table2.csv", _accuracy_rows(42.0))
    md = ledger.build(tmp_path)
    assert "accuracy, in our setting: reproduced 2" in md.splitlines()[next(i for i, l in enumerate(md.splitlines()) if l.startswith("**"))]
    line = next(l for l in md.splitlines() if l.startswith("| RCRN outperforms the BiLSTM on SST-5"))
    assert "in our setting (reference row bilstm -9." in line


def test_a_gated_claim_reads_the_gate_with_the_statistics_beside(tmp_path):
    claim = next(c for c in load_claims("rcrn_table2") if c["worse"] == "bilstm")
    floors = {("rcrn_table2", "SST-5", "test"): Floor("rcrn_table2", "SST-5", "test", 45.0, 2210, "negative")}
    result = evaluate("rcrn_table2", claim, _accuracy_rows(42.0), [], floors=floors)
    assert result.verdict == gates.NOT_EVIDENCE and result.decision.statistical == verdicts.REPRODUCED
    assert "the statistics say reproduced" in cells.verdict_cell(result)


def test_a_collapsed_run_withholds_the_claims_on_its_row():
    from rnnbench.results import guards

    runs = {"3l_bilstm": [{"encoder": "3l_bilstm", "dataset": "IMDb", "seed": s, "dev": d, "majority": 50.16}
                          for s, d in enumerate([85.7, 85.6, 58.6, 85.3, 86.2], 1)]}
    notes = guards.collapsed(runs)
    assert len(notes) == 1 and "3l_bilstm in seed 3 collapsed (dev 58.6, majority 50.2, the row's median 85.6)" in notes[0]
    runs["3l_bilstm"][2]["dev"] = 80.0
    assert guards.collapsed(runs) == []


def test_a_difference_on_two_agreeing_seeds_is_not_yet_reproduced():
    claim = next(c for c in load_claims("rcrn_table2") if c["worse"] == "bilstm")
    rows = [r for r in _accuracy_rows(51.0) if r["seed"] <= 2]
    rows[1]["test"] += 0.2  # RCRN's seed 2: +2.2 where seed 1 says +2.0
    result = evaluate("rcrn_table2", claim, rows, [])
    assert result.decision.statistical == verdicts.REPRODUCED  # RCRN 2 points ahead on both seeds
    assert result.verdict == verdicts.INCONCLUSIVE and result.decision.missing == "2 paired seeds, 5 needed"
