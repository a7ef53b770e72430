"""The deviations from each paper's setting, generated from the paper-settings files and the configs."""
from __future__ import annotations

from pathlib import Path

import pytest

from rnnbench.campaign.definitions import benchmarks, experiments_of
from rnnbench.campaign import deviations as found_from_configs
from rnnbench.results import deviations, evidence

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "results"
RCRN_TABLES = [f"rcrn_table{n}" for n in range(1, 9)]


def _config(encoder="bilstm", variant=None, hidden=200, grid=(1e-3, 4e-4, 3e-4), dropout=0.0, task="trec"):
    return {"experiment": "x", "encoder": {"name": encoder, "hidden_size": hidden, "dropout": dropout},
            "task": {"name": task, "reader": {"dev_fraction": 0.1, "dev_seed": 13}, "head": {"dropout": 0.0}},
            "embedding": {"name": "glove_6b_50d", "dim": 50, "freeze": None, "dropout": 0.0},
            "trainer": {"lr": 1e-3, "optimizer": "adam", "batch_size": 50},
            "table": {"variant": variant, "protocol": {"lr_grid": list(grid), "seeds": [1, 2, 3]}}}


SETTINGS = {"items": [
    {"id": "hidden", "item": "Hidden size", "value": 200, "cite": "§1", "config": "encoder.hidden_size"},
    {"id": "lr", "item": "Learning rate", "value": [1e-3, 4e-4, 3e-4], "text": "tuned among {1e-3, 4e-4, 3e-4}", "cite": "§2",
     "ours_from": "learning_rate"},
    {"id": "batch", "item": "Batch size", "value": None, "cite": "§3", "config": "trainer.batch_size"},
    {"id": "dropout", "item": "Dropout", "value": 0.0, "cite": "§4", "config": "encoder.dropout"},
]}


def test_the_differ_lists_a_changed_value_and_omits_an_equal_one():
    # every value as the paper's, but the open item: only that one is listed
    found = deviations.differences("t", [_config(), _config("rcrn")], SETTINGS)
    assert [d.item for d in found] == ["Batch size"]
    assert found[0].text == "**Batch size**: the paper does not say [§3]; ours: 50." and not found[0].said
    # a changed grid and a changed size on one row: listed, with the row named; the equal items are not
    found = deviations.differences("t", [_config(grid=(1e-3,)), _config("rcrn", hidden=100, grid=(1e-3,))], SETTINGS)
    by_item = {d.item: d for d in found}
    assert set(by_item) == {"Learning rate", "Hidden size", "Batch size"}
    assert by_item["Learning rate"].text == "**Learning rate**: paper: tuned among {1e-3, 4e-4, 3e-4} [§2]; ours: 1e-3, fixed."
    assert by_item["Hidden size"].ours == "100 (rcrn); the other rows as the paper"
    assert by_item["Hidden size"].paper == "200" and by_item["Hidden size"].said


def test_ours_is_named_per_row_where_rows_differ_and_a_missing_option_reads_as_declared():
    settings = {"items": [
        {"id": "d", "item": "Dropout", "value": None, "cite": "§4", "config": "encoder.dropout", "absent": 0.0,
         "describe": {0.0: "none"}},
        {"id": "ln", "item": "DT-GRU layer norm", "rows": ["dt_gru"], "value": True, "text": "applied", "cite": "fn. 3",
         "config": "encoder.gate_layer_norm", "absent": False, "describe": {False: "none", True: "on the gates"}},
    ]}
    rcrn = _config("rcrn")
    del rcrn["encoder"]["dropout"]  # an encoder without the option: ours is the declared `absent`
    found = {d.item: d for d in deviations.differences("t", [_config(dropout=0.5), rcrn, _config("dt_gru")], settings)}
    assert found["Dropout"].ours == "0.5 (bilstm); none (rcrn, dt_gru)"
    assert found["DT-GRU layer norm"].text == "**DT-GRU layer norm**: paper: applied [fn. 3]; ours: none."
    with_ln = _config("dt_gru")
    with_ln["encoder"]["gate_layer_norm"] = True
    assert "DT-GRU layer norm" not in {d.item for d in deviations.differences("t", [with_ln], settings)}


def test_dropout_chosen_on_dev_is_named_beside_the_configs_own():
    settings = {"items": [
        {"id": "d", "item": "Dropout", "value": None, "cite": "§4", "ours_from": "dropout"},
        {"id": "gd", "item": "DT-GRU dropout", "rows": ["dt_gru"], "value": None, "cite": "fn. 3",
         "config": "encoder.candidate_dropout", "absent": 0.0, "describe": {0.0: "none"}, "with_dev_dropout": True},
    ]}
    ladder = _config("dt_gru", variant="rung2")
    ladder["table"] = {"variant": "rung2", "protocol": {"dropout_grid": [0.5, 0.2]}}
    found = {d.item: d for d in deviations.differences("t", [_config(), ladder], settings)}
    chosen = "p chosen on dev from the config's own and {0.2, 0.5} at the chosen rate"
    assert found["Dropout"].ours.startswith("none (bilstm); " + chosen)
    assert found["Dropout"].ours.endswith("the config's own: none (dt_gru/rung2)")
    assert found["DT-GRU dropout"].ours.startswith("none, with " + chosen)
    # without a grid the item reads as before: the config's own
    plain = {d.item: d for d in deviations.differences("t", [_config("dt_gru")], settings)}
    assert plain["Dropout"].ours == "none" and plain["DT-GRU dropout"].ours == "none"


def test_a_grid_equals_the_papers_in_any_order_and_a_one_rate_grid_its_rate():
    assert deviations.same([1e-3, 4e-4, 3e-4], (3e-4, 1e-3, 4e-4))
    assert not deviations.same([1e-3, 4e-4, 3e-4], (1e-3, 4e-4))
    assert deviations.same(1e-4, (1e-4,)) and not deviations.same(1e-4, 2e-4)
    assert deviations.same("adam", "Adam") and not deviations.same(True, 1) and deviations.same(None, None)
    assert deviations.fmt(5e-05) == "5e-5" and deviations.fmt(0.2) == "0.2" and deviations.fmt([2.5e-4, 1e-3]) == "{2.5e-4, 1e-3}"


def test_every_table_with_committed_evidence_has_a_paper_settings_file_that_reads():
    tables = {p.stem for p in RESULTS.glob("*.csv") if "." not in p.stem} - set(benchmarks())  # <table>.csv, not .parameters.csv
    paper_tables = sorted(t for t in tables if experiments_of(t) and not t.startswith(("synthetic", "rcrn_table10")))
    assert paper_tables, "no committed tables found"
    missing = [t for t in paper_tables if not deviations.has_settings(t)]
    assert not missing, f"tables without src/rnnbench/results/paper_settings/<table>.yaml: {missing}"
    problems = [p for t in paper_tables for p in deviations.check(deviations.load_settings(t), f"{t}: ")]
    assert not problems, problems


def _generated(table: str) -> str:
    """The section the table writer prints under ``table``, from its committed evidence."""
    return deviations.section(table, found_from_configs.lines(table, evidence.read_csv(RESULTS / f"{table}.csv")))


class Generated(dict):
    """Each table's generated section, composed once per test module."""

    def __missing__(self, table: str) -> str:
        self[table] = _generated(table)
        return self[table]


@pytest.fixture(scope="module")
def generated() -> Generated:
    return Generated()


DROPOUT = "- **Dropout**: the paper does not say [§4.2]; ours: none"
AUTHORS_DROPOUT = "The authors' public code passes a dropout keep-probability to each of RCRN's three BiRNNs"
DEV_DROPOUT = "p chosen on dev from the config's own and {0.2, 0.5} at the chosen rate"


def test_the_deviations_a_referee_found_unstated_are_printed(generated):
    # RCRN Table 5: the dev split taken out of train, and no dropout (the authors' code has it in every BiRNN)
    assert deviations.HEADING in generated["rcrn_table5"] and DROPOUT in generated["rcrn_table5"]
    assert AUTHORS_DROPOUT in generated["rcrn_table5"]
    # its ladder rows choose dropout on dev, and the line names them
    assert (f"; {DEV_DROPOUT} (the word vectors' output, or the input of each layer of a stacked encoder, and the head); "
            "the config's own: none (bilstm/rung3, 3l_bilstm/rung3, rcrn/rung3)." in generated["rcrn_table5"])
    assert ("- **Dev split**: the paper does not say (TREC has no official dev split) [§4.1-4.2]; ours: 10% of the training "
            "split held out (seed 13)." in generated["rcrn_table5"])
    # the LSTM baseline paper's fixed rate against our grid
    assert ("- **Learning rate**: paper: 1e-4, fixed [§6.2]; ours: chosen from {8e-4, 4e-4, 2e-4, 1e-4, 5e-5} on the dev split."
            in generated["lstm_odyssey_table1"])
    mzu = generated["mzu_table6"]
    # MZU Table 6: the disagreement term's normalisation (ours per token), the hidden size, the DT-GRU's layer norm and dropout
    assert "- **Zone-disagreement normalisation**: paper: λ times the sum of D_zone" in mzu and "ours: per token: the 8 zone cosines" in mzu
    assert "- **Hidden size**: the paper does not say for ABSA (its PTB models: 800) [Training Details]; ours: 200." in mzu
    # (the footnote-3 ladder row has both, so the line names which row deviates)
    assert ("- **DT-GRU layer normalisation**: paper: applied, as to the MZUs (place not given) [footnote 3]; ours: none "
            "(dt_gru, dt_gru/rung3); the other rows as the paper." in mzu)
    # the rung-3 DT-GRU keeps its GRU without dropout; the protocol's p goes around it, chosen on dev
    assert ("- **DT-GRU dropout**: the paper applies dropout to its GRUs as to its MZUs, at a rate not given for ABSA [footnote 3]; "
            f"ours: none (dt_gru); 0.3 (dt_gru/fn3); none, with {DEV_DROPOUT} (the word vectors' output, or the input of "
            "each layer of a stacked encoder, and the head) (dt_gru/rung3)." in mzu)


@pytest.mark.slow
@pytest.mark.parametrize("table", RCRN_TABLES)
def test_every_rcrn_table_says_it_has_no_dropout(generated, table):
    assert DROPOUT in generated[table] and AUTHORS_DROPOUT in generated[table]


def test_a_value_as_the_papers_is_not_listed(generated):
    # RCRN Table 5 keeps the paper's grid, optimiser and hidden size: none of them is listed; its frozen
    # embeddings are the paper's too, so only its rung-3 rows, which train them, are named
    section = generated["rcrn_table5"]
    for item in ("Learning rate", "Optimiser", "Hidden size", "Pooling"):
        assert f"- **{item}**:" not in section, item
    assert ("- **Embeddings trained**: paper: frozen [§4.2, Classification Model]; ours: trained (bilstm/rung3, "
            "3l_bilstm/rung3, rcrn/rung3); the other rows as the paper." in section)
    assert "- **Embeddings**: paper: 300-d GloVe with 600-d CoVe" in section  # a different value is
