"""Choices the paper leaves open (MZU Table 6's disagreement normalisation): a claim is decided in
every cell consistent with the paper's text; a contradiction stands only where it holds in every
cell, cells that differ read "depends on an unspecified choice", and a cell without runs leaves the
claim not run, the claim's own rows shown beside and deciding nothing."""
from __future__ import annotations

import pytest

from rnnbench.results import cells, choices, decisions, ledger, verdicts
from rnnbench.results.claims import evaluate, load_claims
from rnnbench.results.tables import paper_table

TABLE = "mzu_table6"
COLUMN = "Restaurant-DS/accuracy_mean"
CELLS = {"token": "a_token", "token_mean": "a_token_mean", "sequence": "a_sequence"}


def _claim() -> dict:
    return next(c for c in load_claims(TABLE) if c["id"] == "cap-mzu-beats-gru-restaurant-ds")


def _rows(encoder: str, variant: str, base: float, cosine: float | None = 50.0) -> list[dict]:
    """Five seeds of one row in the claim's column (and the candidate's cosine for the mechanism gate),
    in the table's units as the evidence is read (percent: a cosine of 0.5 is 50.0)."""
    rows = []
    for seed in range(1, 6):
        run = {"model": encoder, "encoder": encoder, "variant": variant, "dataset": COLUMN, "metric": "accuracy", "seed": seed,
               "lr": 1e-3, "phase": "final", "reported": "yes", "dev": 70.0, "test": base + 0.2 * ((seed * 3) % 5),
               "selected_epoch": 5, "epoch_cap": 50, "epochs_run": 9, "seconds_per_epoch": 10.0, "status": "trained",
               "inference_seconds_per_example": 0.001, "parameters": 100, "threads": 1, "commit": "c", "versions": "{}",
               "device": "cpu", "hardware": "Test CPU", "dev_curve": "", "run": f"{encoder}-{variant}-s{seed}"}
        rows.append(run)
        if cosine is not None and encoder == "mzu_cap":
            rows.append({**run, "dataset": "candidate cosine", "metric": "stats:candidate_cosine", "test": cosine})
    return rows


def _evidence(cap: dict[str, float], gru: float = 78.0) -> list[dict]:
    rows = _rows("dt_gru", "fn3", gru) + _rows("dt_gru", "", gru) + _rows("mzu_cap", "", gru - 5.0)
    for value, mean in cap.items():
        rows += _rows("mzu_cap", CELLS[value], mean)
    return rows


def test_every_cell_contradicted_is_contradicted():
    result = evaluate(TABLE, _claim(), _evidence({"token": 74.0, "token_mean": 74.5, "sequence": 73.5}), [])
    assert [cell.verdict for _, cell in result.choice.cells] == [verdicts.CONTRADICTED] * 3
    assert result.verdict == verdicts.CONTRADICTED and result.decision is not None
    least = max((cell for _, cell in result.choice.cells), key=lambda c: c.decision.p_holm)
    assert result.decision is least.decision  # the claim's numbers: its least decisive cell's
    cell = cells.verdict_cell(result)
    assert "`encoder.disagreement_normalizer`: token (`mzu_cap/a_token` vs `dt_gru/fn3`) contradicted, about the paper (" in cell
    # each cell's verdict says what it is about, as a claim's does (the cells' DT-GRU is 0.25 from the paper's)
    assert "outside the paper's cells (`mzu_cap` vs `dt_gru`" in cell


def test_cells_that_differ_depend_on_the_unspecified_choice():
    result = evaluate(TABLE, _claim(), _evidence({"token": 74.0, "token_mean": 82.0, "sequence": 74.0}), [])
    assert result.verdict == choices.DEPENDS == verdicts.DEPENDS
    text = cells.verdict_cell(result)
    assert text.startswith("**depends on an unspecified choice** (`encoder.disagreement_normalizer`: token (")
    assert "token_mean (`mzu_cap/a_token_mean` vs `dt_gru/fn3`) reproduced" in text and "sequence" in text
    assert choices.cells_text(result) == ("encoder.disagreement_normalizer: token contradicted; token_mean reproduced; "
                                          "sequence contradicted")
    # a contradiction in one cell, the gate in another: the contradiction does not stand
    gated = _evidence({"token": 74.0, "token_mean": 74.0}) + _rows("mzu_cap", "a_sequence", 74.0, cosine=99.0)
    assert evaluate(TABLE, _claim(), gated, []).verdict == verdicts.DEPENDS


def test_a_cell_without_runs_leaves_the_claim_not_run_and_names_it():
    result = evaluate(TABLE, _claim(), _evidence({"token": 74.0, "token_mean": 74.0}), [])
    assert result.verdict == verdicts.NOT_RUN
    assert "no runs of the paper-consistent cell(s) sequence (`mzu_cap/a_sequence` vs `dt_gru/fn3`)" in result.note
    assert "token (" not in result.note.split("cell(s)")[1].split(";")[0]
    assert "outside the paper's cells (`mzu_cap` vs `dt_gru`, alone at 95%): contradicted" in result.note
    assert result.choice.outside.decision.size == 1  # the claim's own rows: decided alone, deciding nothing
    assert "outside the paper's cells" in cells.verdict_cell(result)


def test_the_cells_are_hypotheses_of_the_papers_family():
    results = [evaluate(TABLE, c, _evidence({"token": 74.0, "token_mean": 74.0, "sequence": 74.0}), [])
               for c in load_claims(TABLE)]
    verdicts.decide(results, lambda r: "MZU accuracy")
    sizes = {cell.decision.size for r in results for _, cell in r.choice.cells if cell.decision is not None}
    assert sizes == {3}  # one column has runs: its three cells, not the claim's own rows


@pytest.mark.parametrize("bad, says", [
    ({"option": "o", "claims": ["cap-mzu-beats-gru-restaurant-ds"], "cells": []}, "lacks why"),
    ({"option": "o", "claims": ["nope"], "cells": [{"value": 1, "better": "a", "worse": "b"}] * 2, "why": "w"},
     "'nope' is not a claim id"),
    ({"option": "o", "claims": ["cap-mzu-beats-gru-restaurant-ds"], "cells": [{"value": 1, "better": "a"}] * 2, "why": "w"},
     "a cell names its value, better and worse"),
    ({"option": "o", "claims": ["cap-mzu-beats-gru-restaurant-ds"], "cells": [{"value": 1, "better": "a", "worse": "b"}] * 2,
      "why": "w"}, "two cells share a value"),
])
def test_a_malformed_open_choice_is_one_line_naming_the_file(bad, says):
    registry = {**paper_table(TABLE), "open_choices": [bad]}
    with pytest.raises(ValueError, match=f"paper_numbers/{TABLE}.yaml: open choice .*{says}"):
        choices.check_registry(registry, f"paper_numbers/{TABLE}.yaml", {c["id"] for c in registry["claims"]})


def test_the_headline_and_the_accuracy_table_count_the_kind():
    result = evaluate(TABLE, _claim(), _evidence({"token": 74.0, "token_mean": 82.0, "sequence": 74.0}), [])
    assert "depends on an unspecified choice 1" in ledger.headline([result])
    section = decisions.Section(TABLE, paper_table(TABLE), [], [result], "t")
    header, _, line, _ = ledger._accuracy_table({"MZU": [section]})
    columns = [c.strip() for c in header.split("|")[1:-1]]
    assert line.split("|")[1 + columns.index("depends on an unspecified choice")].strip() == "1"


def test_the_mechanism_range_is_in_the_units_of_the_committed_evidence():
    """The registry's range and the evidence's statistic share the table's units (percent): on the
    committed laptop cells, token_mean's candidate (cosine 0.72) varies across tokens and sequence's
    (0.999) is one vector."""
    from rnnbench.results import evidence, gates
    from tests.helpers import REPO

    rows = evidence.read_csv(REPO / "results" / f"{TABLE}.csv")
    registry = paper_table(TABLE)
    assert gates.mechanism_gate(registry, rows, ["mzu_cap/a_token_mean"]) is None
    absent = gates.mechanism_gate(registry, rows, ["mzu_cap/a_sequence"])
    assert absent is not None and "mzu_cap/a_sequence: candidate_cosine = 99.9 (present: ≤ 90)" in absent.why
