"""A table run at several rungs of the regime ladder (RCRN Table 5: rungs 0 and 3): a claim is
decided at every rung with runs; rungs that decide it in opposite directions read "depends on the
setting", otherwise the chosen rung's verdict stands with each rung's beside; with runs at rung 0
only, the claim is exactly what it was without the declaration."""
from __future__ import annotations

import pytest

from rnnbench.results import cells, choices, decisions, ledger, settings, verdicts
from rnnbench.results.claims import evaluate, load_claims
from rnnbench.results.table_page import describe_result
from rnnbench.results.tables import paper_table

TABLE = "rcrn_table5"
COLUMN = "TREC"


def _claim() -> dict:
    return next(c for c in load_claims(TABLE) if c["id"] == "rcrn-beats-bilstm")


def _rows(encoder: str, variant: str, base: float) -> list[dict]:
    """Five seeds of one row in the claim's column."""
    return [{"model": encoder, "encoder": encoder, "variant": variant, "dataset": COLUMN, "metric": "accuracy", "seed": seed,
             "lr": 1e-3, "phase": "final", "reported": "yes", "dev": 90.0, "test": base + 0.2 * ((seed * 3) % 5),
             "selected_epoch": 5, "epoch_cap": 50, "epochs_run": 9, "seconds_per_epoch": 10.0, "status": "trained",
             "inference_seconds_per_example": 0.001, "parameters": 100, "threads": 1, "commit": "c", "versions": "{}",
             "device": "cpu", "hardware": "Test CPU", "dev_curve": "", "run": f"{encoder}-{variant}-s{seed}"}
            for seed in range(1, 6)]


def _evidence(rung0: tuple[float, float], rung3: tuple[float, float] | None) -> list[dict]:
    """(rcrn, bilstm) test means at rung 0 and at rung 3 (None: no rung-3 runs)."""
    rows = _rows("rcrn", "", rung0[0]) + _rows("bilstm", "", rung0[1])
    if rung3 is not None:
        rows += _rows("rcrn", "rung3", rung3[0]) + _rows("bilstm", "rung3", rung3[1])
    return rows


def test_rows_at_a_rung_carry_its_variant():
    assert settings.row_at("bilstm", 0) == "bilstm"
    assert settings.row_at("bilstm", 3) == "bilstm/rung3"
    assert settings.row_at("bilstm/ap", 3) == "bilstm/ap_rung3"


def test_with_runs_at_rung_0_only_the_claim_is_unchanged():
    assert paper_table(TABLE)["settings"]["rungs"] == [0, 3]  # declared; only rung 0 ran here
    result = evaluate(TABLE, _claim(), _evidence((91.0, 89.0), None), [])
    assert result.choice is None and result.verdict == verdicts.REPRODUCED


def test_the_direction_holding_at_every_rung_reads_the_chosen_rungs_verdict():
    result = evaluate(TABLE, _claim(), _evidence((91.0, 89.0), (95.0, 94.0)), [])
    assert [value for value, _ in result.choice.cells] == ["rung 0", "rung 3"]
    assert [cell.verdict for _, cell in result.choice.cells] == [verdicts.REPRODUCED, verdicts.REPRODUCED]
    rung3 = result.choice.cells[1][1]
    assert result.verdict == rung3.verdict and result.ours == rung3.ours
    assert rung3.compared == ("rcrn/rung3", "bilstm/rung3")
    assert result.note.startswith("the numbers of rung 3")
    assert choices.cells_text(result).startswith("setting: rung 0 ")
    assert ". Setting: rung 0 (`rcrn` vs `bilstm`)" in describe_result(result)  # a sentence of its own on the table's page


def test_a_claim_without_the_reference_row_reads_the_reference_row_at_its_rung():
    """RCRN > 3L-BiLSTM: the parity gate's BiLSTM is not one of the claim's rows; at rung 3 it is
    the BiLSTM of rung 3 (here 1 point from the paper's 95.8), not rung 0's (6 points below)."""
    claim = next(c for c in load_claims(TABLE) if c["id"] == "rcrn-beats-3l-bilstm")
    rows = (_rows("rcrn", "", 91.0) + _rows("3l_bilstm", "", 89.0) + _rows("bilstm", "", 89.4)
            + _rows("rcrn", "rung3", 95.5) + _rows("3l_bilstm", "rung3", 94.0) + _rows("bilstm", "rung3", 94.4))
    rung0, rung3 = (cell for _, cell in evaluate(TABLE, claim, rows, []).choice.cells)
    assert "reference row bilstm -6.0" in rung0.scope.why
    assert "reference row bilstm (ours: bilstm/rung3) -1.0" in rung3.scope.why and rung3.scope.kind == "about the paper"


def test_opposite_directions_depend_on_the_setting():
    result = evaluate(TABLE, _claim(), _evidence((91.0, 89.0), (92.0, 95.0)), [])
    assert [cell.verdict for _, cell in result.choice.cells] == [verdicts.REPRODUCED, verdicts.CONTRADICTED]
    assert result.verdict == settings.DEPENDS_ON_SETTING == verdicts.DEPENDS_ON_SETTING
    text = cells.verdict_cell(result)
    assert text.startswith("**depends on the setting**") and "rung 0" in text and "rung 3" in text
    assert "depends on the setting 1" in ledger.headline([result])
    section = decisions.Section(TABLE, paper_table(TABLE), [], [result], "t")
    header, _, line, _ = ledger._accuracy_table({"RCRN": [section]})
    columns = [c.strip() for c in header.split("|")[1:-1]]
    assert line.split("|")[1 + columns.index("depends on the setting")].strip() == "1"


def test_the_accuracy_table_has_no_setting_column_until_a_claim_depends_on_it():
    result = evaluate(TABLE, _claim(), _evidence((91.0, 89.0), None), [])
    header = ledger._accuracy_table({"RCRN": [decisions.Section(TABLE, paper_table(TABLE), [], [result], "t")]})[0]
    assert "depends on the setting" not in header


def test_each_rung_with_runs_is_a_hypothesis_of_the_papers_family():
    results = [evaluate(TABLE, c, _evidence((91.0, 89.0), (95.0, 94.0)) + _rows("3l_bilstm", "", 88.0)
                        + _rows("3l_bilstm", "rung3", 93.0), []) for c in load_claims(TABLE)]
    verdicts.decide(results, lambda r: "RCRN accuracy")
    sizes = {cell.decision.size for r in results for _, cell in r.choice.cells if cell.decision is not None}
    assert sizes == {4}  # two claims, two rungs each


@pytest.mark.parametrize("bad, says", [
    ({"rungs": [0, 3], "chosen": 3}, "settings is a mapping of rungs"),
    ({"rungs": [3], "chosen": 3, "why": "w"}, "0 among them"),
    ({"rungs": [0, 3, 3], "chosen": 3, "why": "w"}, "lists a rung twice"),
    ({"rungs": [0, 3], "chosen": 2, "why": "w"}, r"settings.chosen \(2\) is not one of"),
    ({"rungs": [0, 7], "chosen": 0, "why": "w"}, "the ladder's rungs"),
])
def test_malformed_settings_are_one_line_naming_the_file(bad, says):
    registry = {**paper_table(TABLE), "settings": bad}
    with pytest.raises(ValueError, match=f"paper_numbers/{TABLE}.yaml: .*{says}"):
        settings.check_registry(registry, f"paper_numbers/{TABLE}.yaml")


def _amazon_rows(encoder: str, variant: str, base: float, domains: list[str]) -> list[dict]:
    """Three seeds of one row in each of ``domains`` (RCRN Table 1's columns)."""
    return [{**row, "dataset": domain, "run": f"{row['run']}-{domain}", "test": row["test"] + (0.3 * row["seed"] if encoder == "rcrn" else 0)}
            for domain in domains for row in _rows(encoder, variant, base)[:3]]


def test_a_macro_average_is_read_at_a_rung_only_once_it_covers_rung_0s_datasets():
    claim = next(c for c in load_claims("rcrn_table1") if c["id"] == "rcrn-beats-bilstm-macro")
    assert paper_table("rcrn_table1")["settings"]["rungs"] == [0, 1]
    domains = ["Apparel", "Baby", "Camera", "MR"]
    rung0 = _amazon_rows("rcrn", "", 80.0, domains) + _amazon_rows("bilstm", "", 78.0, domains)
    partial = rung0 + _amazon_rows("rcrn", "rung1", 70.0, domains[:2]) + _amazon_rows("bilstm", "rung1", 75.0, domains[:2])
    result = evaluate("rcrn_table1", claim, partial, [])
    assert result.choice is None and result.ours == evaluate("rcrn_table1", claim, rung0, []).ours
    assert "rung 1 has runs on 2 of the 4 datasets rung 0 compares, not read until it covers them all" in result.note
    complete = rung0 + _amazon_rows("rcrn", "rung1", 70.0, domains) + _amazon_rows("bilstm", "rung1", 75.0, domains)
    result = evaluate("rcrn_table1", claim, complete, [])
    assert [value for value, _ in result.choice.cells] == ["rung 0", "rung 1"]
    assert result.note.startswith("the numbers of rung 1") and "not read until" not in result.note


def test_a_table_may_declare_rung_0_alone_and_its_claims_read_as_without_the_declaration():
    """RCRN Table 8 stays at rung 0 (no rung came nearer the paper's than two seeds' spread): the
    page says so and why; a claim is exactly what it is without the declaration."""
    entry = paper_table("rcrn_table8")["settings"]
    assert entry["rungs"] == [0] and entry["chosen"] == 0
    settings.check_registry(paper_table("rcrn_table8"), "paper_numbers/rcrn_table8.yaml")
    assert settings.note(entry).startswith("Settings: this table is run at rung 0 of the regime ladder (today's setting) "
                                           "alone, the rung chosen (results/regime_ladder.md): no rung came nearer")
    declared = {**paper_table(TABLE), "settings": {"rungs": [0], "chosen": 0, "why": "w"}}
    rows = _evidence((91.0, 89.0), (95.0, 94.0))  # rung-3 runs a rung-0-only table does not read
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("rnnbench.results.claims.paper_table", lambda table: declared)
        result = evaluate(TABLE, _claim(), rows, [])
    assert result.choice is None and result.verdict == verdicts.REPRODUCED
    assert result.ours == evaluate(TABLE, _claim(), _evidence((91.0, 89.0), None), []).ours


def test_the_page_names_each_higher_rung_and_its_variant():
    line = settings.note({"rungs": [0, 3], "chosen": 3, "why": "w"})
    assert "at rung 3 (variant `rung3`)" in line and "its claims are read at rung 3" in line and line.endswith(": w.")
