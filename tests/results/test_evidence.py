"""The committed evidence a campaign goes on from: lookup by run, and what counts as used."""
from rnnbench.results.evidence import FIELDS, CommittedEvidence, write_csv


def _row(run: str, seed: int, dataset: str = "SST-5") -> dict:
    return {"model": "BiLSTM", "encoder": "bilstm", "variant": "", "dataset": dataset, "metric": "accuracy", "seed": seed, "lr": 1e-3,
            "phase": "final", "reported": "yes", "dev": 40.0 + seed, "test": 41.0, "selected_epoch": 3, "epoch_cap": 50,
            "epochs_run": 7, "seconds_per_epoch": 12.5, "parameters": 1000, "run": run}


def test_a_missing_csv_and_an_empty_one_are_told_apart(tmp_path):
    missing = CommittedEvidence(tmp_path / "t.csv", tmp_path / "t.items.csv.gz")
    assert not missing.found and missing.by_run == {}
    write_csv(tmp_path / "t.csv", [])
    assert (tmp_path / "t.csv").read_text().strip() == ",".join(FIELDS)
    empty = CommittedEvidence(tmp_path / "t.csv", tmp_path / "t.items.csv.gz")
    assert empty.found and empty.by_run == {}


def test_a_committed_run_stands_in_for_its_record_and_unused_runs_are_listed(tmp_path):
    write_csv(tmp_path / "t.csv", [_row("s1-aaa", 1), _row("s2-bbb", 2), _row("s2-bbb", 2, dataset="other")])
    committed = CommittedEvidence(tmp_path / "t.csv", tmp_path / "t.items.csv.gz")
    assert sorted(committed.by_run) == [("bilstm", "s1-aaa"), ("bilstm", "s2-bbb")]
    record = committed.record("bilstm", "s1-aaa", scale=100.0)
    assert record["dev"] == {"accuracy": 0.41} and record["epochs_run"] == 7 and record["committed"]
    assert committed.record("bilstm", "s9-zzz", scale=100.0) is None and committed.record("rcrn", "s1-aaa", 1.0) is None
    assert committed.unused() == ["s1-aaa", "s2-bbb"]

    rows, _ = committed.rows_of("bilstm", "s2-bbb", "BiLSTM (ours)", "", "final", False, {"SST-5"})
    assert [(r["dataset"], r["model"]) for r in rows] == [("SST-5", "BiLSTM (ours)")]  # only the table's columns
    assert committed.unused() == ["s1-aaa"]
    committed.use("bilstm", "s1-aaa")  # a run folder here holds the same run: its rows are not dropped
    assert committed.unused() == []
