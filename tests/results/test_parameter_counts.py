"""A parameter claim whose rows have no runs is decided on the encoder sizes the rows' experiment
configs build (committed as results/<table>.parameters.csv, for the tables with such a claim only);
those counts are the ones runs record, and rows with runs are decided on their runs' counts."""
from __future__ import annotations

from pathlib import Path

import pytest

from rnnbench.campaign import definitions as experiments
from rnnbench.results import claims, decisions, evidence, ledger, verdicts
from rnnbench.results import table_page as report
from tests.results.test_ledger_budget import _line, _row

RESULTS = Path(__file__).resolve().parents[2] / "results"
PARAMS_CLAIM = "bi-2-lstm-params-equal-large-2-lstm"


def _claim(table: str, claim_id: str) -> dict:
    return next(c for c in claims.load_claims(table) if c["id"] == claim_id)


def _committed(table: str) -> dict:
    return evidence.read_parameter_counts(evidence.parameters_path(RESULTS / f"{table}.csv"))


@pytest.mark.parametrize("table", ["lstm_odyssey_table1", "lstm_odyssey_table2", "rcrn_table2"])
def test_the_counts_are_what_the_committed_runs_recorded(table):
    counts = experiments.parameter_counts(table)
    rows = evidence.read_csv(RESULTS / f"{table}.csv")
    compared = [(int(r["parameters"]), counts[name][0]) for r in rows
                if (name := f"{r['encoder']}/{r['variant']}" if r["variant"] else r["encoder"]) in counts]
    assert compared, f"no row of {table} was counted"
    assert all(recorded == counted for recorded, counted in compared)


@pytest.mark.parametrize("path", sorted(RESULTS.glob("*.parameters.csv")), ids=lambda p: p.name)
def test_a_counts_file_is_kept_for_a_size_claim_current_and_on_committed_code(path):
    """make_table writes the counts only for a table with a claim on parameters (no untracked file for
    the others); a count is seed-free, so it can always be redone on committed code (make_table --no-run)."""
    table = path.name.removesuffix(".parameters.csv")
    counts = experiments.claimed_parameter_counts(table)
    assert counts, f"{path.name}: {table} has no claim on parameters, so make_table keeps no counts file for it"
    assert _committed(table) == counts, f"{path.name} is stale: make_table --no-run rewrites it"
    assert "-dirty" not in path.read_text(), f"{path.name} was counted on uncommitted code: make_table --no-run recounts it"


def test_only_a_table_with_a_size_claim_gets_counts():
    assert experiments.claimed_parameter_counts("rcrn_table5") == {}  # accuracy claims only
    assert experiments.claimed_parameter_counts("synthetic_span_copy") == {}  # a table no paper printed
    assert "2l_bilstm/large" in experiments.claimed_parameter_counts("lstm_odyssey_table2")


def test_an_experiment_sweeping_several_encoders_counts_each_of_them():
    counts = experiments.parameter_counts("dcu_table2")  # conf/experiment/dcu_table2.yaml sweeps lstm1, sim_dcu, dcu
    assert {"lstm1", "sim_dcu", "dcu"} <= set(counts)
    assert len({counts[e][0] for e in ("lstm1", "sim_dcu", "dcu")}) == 3


def test_lstm_table2s_parameter_claim_is_decided_without_runs():
    claim = _claim("lstm_odyssey_table2", PARAMS_CLAIM)
    assert claims.evaluate("lstm_odyssey_table2", claim, [], []).verdict == verdicts.NOT_RUN  # no counts, no runs: nothing to go on
    result = claims.evaluate("lstm_odyssey_table2", claim, [], [], counts=_committed("lstm_odyssey_table2"))
    assert result.counted and result.verdict == verdicts.REPRODUCED and result.decision is None  # no statistics
    assert result.ours[0] == result.ours[1] == 1_632_960  # hidden 360, 50-d inputs: 4·360·(50+360) + 4·360·720 + biases
    assert "experiment=lstm_odyssey_table2_large_bi" in result.note and not result.seeds


@pytest.mark.parametrize(("relation", "lower", "sizes", "verdict"), [
    ("equal", False, (10, 10), verdicts.REPRODUCED), ("equal", False, (10, 11), verdicts.CONTRADICTED),
    ("equal", False, (1000, 1009), verdicts.REPRODUCED),  # within the declared 1%
    (None, True, (9, 10), verdicts.REPRODUCED), (None, True, (10, 10), verdicts.CONTRADICTED), (None, False, (11, 10), verdicts.REPRODUCED)])
def test_counted_verdicts_are_exact_within_the_declared_margin(relation, lower, sizes, verdict):
    claim = {**_claim("lstm_odyssey_table2", PARAMS_CLAIM), "relation": relation, "lower_is_better": lower}
    counts = {"2l_bilstm/large": (sizes[0], "a"), "2l_lstm/large": (sizes[1], "b")}
    assert claims.evaluate("lstm_odyssey_table2", claim, [], [], counts=counts).verdict == verdict


def test_rows_with_runs_are_decided_on_their_runs_counts():
    rows = [_row("2l_lstm", "large", s, 2.0, 2_500_000) for s in (1, 2)] + [_row("2l_bilstm", "large", s, 3.0, 2_000_000) for s in (1, 2)]
    counts = {"2l_bilstm/large": (5, "a"), "2l_lstm/large": (5, "b")}  # would say "reproduced"
    result = claims.evaluate("lstm_odyssey_table2", _claim("lstm_odyssey_table2", PARAMS_CLAIM), rows, [], counts=counts)
    assert result.counted and result.verdict == verdicts.CONTRADICTED and result.decision is None
    assert "counted in the runs: 2,000,000 and 2,500,000 parameters; ratio 0.80, the claim allows 0.99-1.01" in result.note


def test_the_ledger_and_the_tables_claims_section_say_a_verdict_was_counted():
    table_claims = claims.load_claims("lstm_odyssey_table2")
    results = decisions.table_results("lstm_odyssey_table2", table_claims, [], [], None, set(), _committed("lstm_odyssey_table2"))
    lines = [ledger.claim_line(r, []) for r in results]
    line = _line(lines, PARAMS_CLAIM, table_claims)
    assert "| count: 1,632,960 / 1,632,960 (1.00×) |" in line and "**reproduced** (count; counted from the configs" in line
    assert "no runs: counted" in line
    result = claims.evaluate("lstm_odyssey_table2", _claim("lstm_odyssey_table2", PARAMS_CLAIM), [], [], counts=_committed("lstm_odyssey_table2"))
    text = report.describe_result(result)
    assert text.startswith("**reproduced** (exact counts)") and "Ours: 1,632,960 / 1,632,960." in text and "paired seeds" not in text


def test_the_counts_file_is_rewritten_only_when_a_count_changes(tmp_path):
    path = tmp_path / "t.parameters.csv"
    evidence.write_parameter_counts(path, {"a": (1, "x")}, "c1")
    evidence.write_parameter_counts(path, {"a": (1, "x")}, "c2")
    assert "c1" in path.read_text()  # same counts: the commit they were counted at stays
    evidence.write_parameter_counts(path, {"a": (2, "x")}, "c3")
    assert evidence.read_parameter_counts(path) == {"a": (2, "x")} and "c3" in path.read_text()


def test_counts_made_on_uncommitted_code_take_the_commit_once_it_is_committed(tmp_path):
    path = tmp_path / "t.parameters.csv"
    evidence.write_parameter_counts(path, {"a": (1, "x")}, "c1-dirty")
    evidence.write_parameter_counts(path, {"a": (1, "x")}, "c2-dirty")
    assert "c1-dirty" in path.read_text()  # still uncommitted: nothing better to record
    evidence.write_parameter_counts(path, {"a": (1, "x")}, "c3")
    assert "dirty" not in path.read_text() and "c3" in path.read_text()


def test_a_size_claim_is_decided_even_where_the_tables_data_is_missing():
    """DCU Table 2 (SearchQA, absent from the data folder): its footnote's size claim needs no data."""
    table_claims = claims.load_claims("dcu_table2")
    sizes = {"bilstm": (542_400, "dcu_table2_150d"), "lstm1": (722_400, "dcu_table2")}
    results = decisions.table_results("dcu_table2", table_claims, [], [], verdicts.DATA_MISSING, set(), sizes)
    lines = [ledger.claim_line(r, []) for r in results]
    assert "**contradicted** (count; counted from the configs" in _line(lines, "bilstm-150-params-equal-lstm-300", table_claims)
    assert sum("**data missing**" in line for line in lines) == len(table_claims) - 1  # the others still need the data
    assert experiments.parameter_counts("dcu_table2")["bilstm"][0] == 542_400  # 2 directions x 4 gates x 150 x (300 in + 150 + 2 biases)
