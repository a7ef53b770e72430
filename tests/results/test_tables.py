"""Table assembly: the paper's number beside ours, with seeds, std and the difference."""
from __future__ import annotations

import pytest

from rnnbench.results.tables import NO_RUNS, NOT_BUILT, NOT_OURS, build_rows, latex, markdown, ours_only_table, paper_table, table_title


def test_registry_holds_every_paper_table():
    t = paper_table("rcrn_table5")
    assert t["paper"] == "rcrn" and t["table"] == 5
    assert {r["encoder"] for r in t["rows"]} >= {"bilstm", "3l_bilstm", "rcrn"}
    with pytest.raises(KeyError, match="known"):
        paper_table("nope")


def test_rows_mark_other_systems_unbuilt_encoders_and_missing_runs():
    table = {"rows": [
        {"model": "CNN", "encoder": None, "values": {"TREC": 92.2}},
        {"model": "BiLSTM", "encoder": "bilstm", "values": {"TREC": 95.8}},
        {"model": "3L", "encoder": "3l_bilstm", "values": {"TREC": 95.4}},
        {"model": "New", "encoder": "zzz", "values": {"TREC": 96.2}},
    ]}
    rows = build_rows(table, ["TREC"], {("bilstm", None): {"TREC": [90.0, 92.0, 91.0]}}, built={"bilstm", "3l_bilstm"})
    assert [r.status for r in rows] == [NOT_OURS, "", NO_RUNS, NOT_BUILT]
    assert rows[1].mean("TREC") == pytest.approx(91.0) and rows[1].std("TREC") == pytest.approx(1.0)
    md = markdown("T", rows, ["note"], ["TREC"])
    assert "| BiLSTM | `bilstm` | 95.8 | 91.0 ± 1.0 (n=3) | -4.8 |" in md
    assert NOT_BUILT in md and "- note" in md
    tex = latex("T", rows, ["note"], ["TREC"])
    assert r"91.0 $\pm$ 1.0 (n=3)" in tex and r"\textit{not built yet}" in tex and "3l\\_bilstm" in tex


def test_single_seed_has_no_std():
    rows = build_rows({"rows": [{"model": "B", "encoder": "bilstm", "values": {"X": 50.0}}]}, ["X"], {("bilstm", None): {"X": [40.0]}}, {"bilstm"})
    assert "40.0 (n=1)" in markdown("T", rows, [], ["X"])


def test_several_columns_and_variants_fill_their_own_cells():
    table = {"rows": [
        {"model": "BiLSTM", "encoder": "bilstm", "values": {"W/MAP": 68.5, "T/MAP": 72.4}},
        {"model": "AP-BiLSTM", "encoder": "bilstm", "variant": "ap", "values": {"W/MAP": 63.9, "T/MAP": 75.1}},
    ]}
    ours = {("bilstm", None): {"W/MAP": [60.0, 62.0]}, ("bilstm", "ap"): {"T/MAP": [1.2345]}}
    rows = build_rows(table, ["W/MAP", "T/MAP"], ours, {"bilstm"}, digits=2)
    md = markdown("T", rows, [], ["W/MAP", "T/MAP"])
    assert "| BiLSTM | `bilstm` | 68.50 | 61.00 ± 1.41 (n=2) | -7.50 | 72.40 | no finished runs |  |" in md
    assert "| AP-BiLSTM | `bilstm` (ap) | 63.90 | no finished runs |  | 75.10 | 1.23 (n=1) | -73.87 |" in md
    tex = latex("T", rows, [], ["W/MAP", "T/MAP"])
    assert r"W/MAP paper & ours & $\Delta$" in tex and "bilstm (ap)" in tex


def test_identity_ignores_where_data_and_runs_live(monkeypatch):
    from rnnbench.compose import compose_config
    from rnnbench.results.identity import run_identity

    monkeypatch.setenv("RNNBENCH_DATA", "/one/place")
    a = run_identity(compose_config(["task=trec", "paths.runs_dir=/x"]))
    monkeypatch.setenv("RNNBENCH_DATA", "/another/place")
    b = run_identity(compose_config(["task=trec", "paths.runs_dir=/y", "trainer.progress=false"]))
    c = run_identity(compose_config(["task=trec", "embedding.path=/my/glove.txt"]))
    d = run_identity(compose_config(["task=trec", "trainer.lr=0.1"]))
    assert a == b and len({a, c, d}) == 3


def test_our_baselines_without_a_paper_row_are_appended():
    table = {"rows": [{"model": "capMZRNN", "encoder": "mzu_cap", "values": {"R": 80.0}}]}
    rows = build_rows(table, ["R"], {("mzu_cap", None): {"R": [70.0]}, ("bilstm", None): {"R": [60.0, 62.0]}, ("bigru", None): {}}, {"mzu_cap", "bilstm", "bigru"})
    assert [r.model for r in rows] == ["capMZRNN", "bilstm (our baseline, not in the paper)"]
    assert "| bilstm (our baseline, not in the paper) | `bilstm` | – | 61.0 ± 1.4 (n=2) |  |" in markdown("T", rows, [], ["R"])


def test_the_registry_names_our_rows_where_the_plain_row_is_an_enhanced_model():
    """LSTM-baseline Table 1: the paper's plain `2l_lstm` row is 2-LSTM+MC+Pooling+ResV+ResL; our
    one-trick rows (forget bias and dropout only) must not read as that model."""
    from rnnbench.results.tables import model_name, paper_table

    table = paper_table("lstm_odyssey_table1")
    assert model_name(table, "2l_lstm", "fb+dropout") == "2-LSTM (fb+dropout variant, ours)"
    assert model_name(table, "2l_bilstm", "bi+fb+dropout") == "Bi-2-LSTM (bi+fb+dropout variant, ours)"
    assert model_name(table, "2l_lstm", "baseline") == "Baseline 2-LSTM"  # a paper row keeps the paper's name
    assert model_name(table, "2l_lstm", None) == "2-LSTM+MC+Pooling+ResV+ResL"
    mzu = paper_table("mzu_table1")  # the paper marks its own models "(ours)": ours read once
    assert model_name(mzu, "mzu_cap", "small") == "capMZU+DT (small variant, ours)"
    assert model_name(mzu, "mzu_cap", None) == "capMZU+DT (ours)"


def test_a_paper_model_in_our_own_setting_is_labelled_as_our_variant():
    table = {"rows": [{"model": "capMZU+DT (ours)", "encoder": "mzu_cap", "values": {"BPC": 1.181}},
                      {"model": "capMZU ensemble", "encoder": "mzu_cap", "variant": "ensemble", "values": {"BPC": 1.1}}]}
    rows = build_rows(table, ["BPC"], {("mzu_cap", "small"): {"BPC": [2.2]}}, {"mzu_cap"}, digits=3)
    assert [r.model for r in rows] == ["capMZU+DT (ours)", "capMZU ensemble", "capMZU+DT (ours) (small variant, ours)"]
    assert rows[0].status == NO_RUNS  # the paper's row is not filled by a run of another size
    assert rows[2].paper == {"BPC": None}


def test_a_table_no_paper_printed_lists_our_encoders_with_our_columns_only():
    table = ours_only_table("Synthetic copy (ours)")
    rows = build_rows(table, ["EM", "F1"], {("bilstm", None): {"EM": [100.0], "F1": [100.0]}, ("fhe", None): {"EM": [19.8], "F1": [40.0]}}, {"bilstm", "fhe"})
    assert [r.model for r in rows] == ["bilstm", "fhe"]
    md = markdown(table_title(table, ["answer_em", "answer_f1"], ", %"), rows, ["a note"], ["EM", "F1"], paper=False)
    assert md.startswith("# Synthetic copy (ours) (test answer_em, answer_f1, %)\n")
    assert "| bilstm | `bilstm` | 100.0 (n=1) | 100.0 (n=1) |" in md and "paper" not in md.lower()
    tex = latex("T", rows, [], ["EM", "F1"], paper=False)
    assert r"fhe & fhe & 19.8 (n=1) & 40.0 (n=1) \\" in tex


def test_a_row_left_out_of_the_campaign_says_so_and_one_with_runs_shows_them():
    """table.not_run: a row left out (LSTM Table 2's Large rows) must not read as one still running."""
    table = {"rows": [{"model": "L", "encoder": "2l_lstm", "variant": "large"}, {"model": "B", "encoder": "2l_lstm"},
                      {"model": "E", "encoder": "2l_bilstm"}]}
    why = "not run on this budget (see note)"
    not_run = {("2l_lstm", "large"): why, ("2l_lstm", None): why}
    rows = build_rows(table, ["A"], {("2l_lstm", None): {"A": [80.0]}}, {"2l_lstm", "2l_bilstm"}, not_run=not_run)
    assert [r.status for r in rows] == [why, "", NO_RUNS]

