"""The committed evidence a campaign goes on from: lookup by run, what counts as used, how it is written."""
from pathlib import Path

import pytest

from rnnbench.results.evidence import FIELDS, CommittedEvidence, holds_run_evidence, write_csv


def _row(run: str, seed: int, dataset: str = "SST-5") -> dict:
    return {"model": "BiLSTM", "encoder": "bilstm", "variant": "", "dataset": dataset, "metric": "accuracy", "seed": seed, "lr": 1e-3,
            "phase": "final", "reported": "yes", "scale": 100.0, "dev": (40.0 + seed) / 100, "test": 0.41, "selected_epoch": 3, "epoch_cap": 50,
            "epochs_run": 7, "seconds_per_epoch": 12.5, "parameters": 1000, "run": run}


def test_a_missing_csv_and_an_empty_one_are_told_apart(tmp_path):
    missing = CommittedEvidence(tmp_path / "t.csv", tmp_path / "t.items.csv.xz")
    assert not missing.found and missing.by_run == {}
    write_csv(tmp_path / "t.csv", [])
    assert (tmp_path / "t.csv").read_text().strip() == ",".join(FIELDS)
    empty = CommittedEvidence(tmp_path / "t.csv", tmp_path / "t.items.csv.xz")
    assert empty.found and empty.by_run == {}


def test_a_committed_run_stands_in_for_its_record_and_unused_runs_are_listed(tmp_path):
    write_csv(tmp_path / "t.csv", [_row("s1-aaa", 1), _row("s2-bbb", 2), _row("s2-bbb", 2, dataset="other")])
    committed = CommittedEvidence(tmp_path / "t.csv", tmp_path / "t.items.csv.xz")
    assert sorted(committed.by_run) == [("bilstm", "s1-aaa"), ("bilstm", "s2-bbb")]
    record = committed.record("bilstm", "s1-aaa")
    assert record["dev"] == {"accuracy": 0.41} and record["epochs_run"] == 7 and record["committed"]
    assert committed.record("bilstm", "s9-zzz") is None and committed.record("rcrn", "s1-aaa") is None
    assert committed.unused() == ["s1-aaa", "s2-bbb"]

    rows, _ = committed.rows_of("bilstm", "s2-bbb", "BiLSTM (ours)", "", "final", False, {"SST-5"})
    assert [(r["dataset"], r["model"]) for r in rows] == [("SST-5", "BiLSTM (ours)")]  # only the table's columns
    assert committed.unused() == ["s1-aaa"]
    committed.use("bilstm", "s1-aaa")  # a run folder here holds the same run: its rows are not dropped
    assert committed.unused() == []


def test_the_item_scores_are_read_on_first_use_only(tmp_path):
    """Pricing reads every table's rows and none of their item scores: a table's evidence opens
    without decompressing its items file (the largest takes seconds), and reads it when asked."""
    write_csv(tmp_path / "t.csv", [_row("s1-aaa", 1)])
    (tmp_path / "t.items.csv.xz").write_bytes(b"not xz")
    committed = CommittedEvidence(tmp_path / "t.csv", tmp_path / "t.items.csv.xz")
    assert committed.record("bilstm", "s1-aaa")["epochs_run"] == 7
    with pytest.raises(OSError):  # the broken file is read now, not before
        committed.items


def test_trained_runs_evidence_is_told_from_the_cost_benchmark_floors_and_side_files(tmp_path):
    write_csv(tmp_path / "t.csv", [_row("s1-aaa", 1)])
    write_csv(tmp_path / "cost.csv", [{**_row("cost-bilstm-len128-r1", 1), "epochs_run": 0, "scale": ""}])
    (tmp_path / "floors.csv").write_text("table,dataset,split,majority,items,label\nt,SST-5,dev,25.0,100,C\n")
    write_csv(tmp_path / "t.runs.csv", [_row("s1-aaa", 1)])
    write_csv(tmp_path / "empty.csv", [])
    assert [p.name for p in sorted(tmp_path.glob("*.csv")) if holds_run_evidence(p)] == ["t.csv"]


def test_another_experiments_columns_are_carried_over_as_committed(tmp_path):
    """Assembling one experiment of a two-experiment table (MZU Table 6's restaurants) keeps the
    other's rows: they are outside its (dataset, variant) scope, not dropped."""
    write_csv(tmp_path / "t.csv", [_row("s1-aaa", 1, dataset="Restaurant"), _row("s1-bbb", 1, dataset="Laptop")])
    committed = CommittedEvidence(tmp_path / "t.csv", tmp_path / "t.items.csv.xz")
    rows, _ = committed.outside({("Restaurant", "")})
    assert [r["run"] for r in rows] == ["s1-bbb"]
    assert committed.unused() == ["s1-aaa"]
    assert [r["run"] for r in committed.unused_rows()] == ["s1-aaa"]


def test_evidence_files_are_replaced_whole_never_written_in_place(tmp_path, monkeypatch):
    """Workers assembling one table side by side (scripts/gpu_sweep.sh) read each other's files:
    each file is written beside and renamed onto its path, so a reader sees the old file or the new
    one, never half of one (a half-written items file ended a worker with a gzip EOFError)."""
    import builtins
    import io

    from rnnbench.results.evidence import read_csv, read_items, write_items, write_parameter_counts

    csv_path, items_path, counts_path = tmp_path / "t.csv", tmp_path / "t.items.csv.xz", tmp_path / "t.parameters.csv"
    opened_for_writing = []
    real_open = builtins.open

    def recording_open(file, mode="r", *args, **kwargs):
        if any(flag in mode for flag in "wax"):
            opened_for_writing.append(Path(file).name)
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", recording_open)
    monkeypatch.setattr(io, "open", recording_open)  # what Path.write_text opens through
    for _ in range(2):  # the second time over an existing file
        write_csv(csv_path, [_row("s1-aaa", 1)])
        write_items(items_path, [{"model": "BiLSTM", "variant": "", "dataset": "SST-5", "seed": 1, "item": "7", "score": 100.0}])
        write_parameter_counts(counts_path, {"BiLSTM": (1000, "exp")}, "abc")
    monkeypatch.undo()
    assert opened_for_writing and not {csv_path.name, items_path.name, counts_path.name} & set(opened_for_writing)
    assert read_csv(csv_path)[0]["run"] == "s1-aaa" and read_items(items_path)[0]["score"] == 100.0
    assert items_path.read_bytes().startswith(b"\xfd7zXZ\x00")  # xz, which stores no file name: the same bytes from any process
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv", "t.items.csv.xz", "t.parameters.csv"]


ITEMS = [{"model": "BiLSTM", "variant": "", "dataset": "SST-5", "seed": seed, "item": str(i), "score": float((i + seed) % 2),
          "scale": 100.0} for seed in (2, 1) for i in range(40)]


def test_the_same_items_give_the_same_bytes_whatever_the_file_and_process(tmp_path, monkeypatch):
    """Regenerated evidence is compared byte for byte with the committed file: nothing of the name
    it is written under, the temporary file's (the process id) or the time may reach the bytes."""
    import os

    from rnnbench.results.evidence import write_items

    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    write_items(tmp_path / "a" / "t.items.csv.xz", ITEMS)
    monkeypatch.setattr(os, "getpid", lambda: 4242)  # another temporary file name
    write_items(tmp_path / "b" / "other.items.csv.xz", list(reversed(ITEMS)))
    assert (tmp_path / "a" / "t.items.csv.xz").read_bytes() == (tmp_path / "b" / "other.items.csv.xz").read_bytes()


def _old_gzip(path: Path, text: str) -> None:
    """An items file as earlier versions wrote it: the same CSV, gzipped with its name and time 0 in the header."""
    import gzip

    with open(path, "wb") as raw, gzip.GzipFile(path.name, "wb", fileobj=raw, mtime=0) as gz:
        gz.write(text.encode())


def test_an_items_file_of_an_earlier_version_gzipped_is_read_with_the_same_numbers(tmp_path):
    """Comparison folders written before the items files were xz hold ``<name>.items.csv.gz``: asked
    for the .xz, both readers read that one, number for number; writing the .xz replaces it."""
    import lzma

    from rnnbench.results.evidence import items_path, read_item_scores, read_items, write_items

    new, old = tmp_path / "new" / "t.items.csv.xz", tmp_path / "old" / "t.items.csv.xz"
    new.parent.mkdir(), old.parent.mkdir()
    write_items(new, ITEMS)
    _old_gzip(old.with_name("t.items.csv.gz"), lzma.decompress(new.read_bytes()).decode())
    assert items_path(old.with_name("t.csv")) == old and not old.exists()
    for scaled in (True, False):
        assert read_items(old, scaled) == read_items(new, scaled) and len(read_items(old, scaled)) == len(ITEMS)
    assert read_item_scores(old)._rows == read_item_scores(new)._rows and read_item_scores(old).of("SST-5", "BiLSTM", "")[2]["3"] == 100.0
    write_items(old, ITEMS)
    assert sorted(p.name for p in old.parent.iterdir()) == ["t.items.csv.xz"] and old.read_bytes() == new.read_bytes()


def test_rows_keep_the_records_values_and_read_back_in_table_units(tmp_path):
    """A row holds its record's numbers (accuracy 0.4321, not 43.21) beside the table's scale; the
    renderer reads them in table units, the campaign as stored; a curve reads back at six digits."""
    from rnnbench.results.evidence import evidence_rows, read_csv, read_items, write_items

    record = {"config": {"trainer": {"lr": 1e-3, "epochs": 50, "num_threads": 1}}, "encoder": "bilstm", "seed": 1,
              "dev": {"accuracy": 0.43214}, "test": {"accuracy": 0.41234567}, "best_epoch": 2, "epochs_run": 6,
              "seconds_per_epoch": 3.0, "encoder_parameters": 10, "run_dir": "runs/x/s1-abc", "majority_baseline": 0.2128,
              "history": [{"dev_accuracy": 0.40123456}, {"dev_accuracy": 0.43214}]}
    row = evidence_rows(record, "BiLSTM", "", {"SST-5": "accuracy"}, 100, "final", True)[0]
    assert (row["dev"], row["test"], row["majority"], row["scale"]) == (0.43214, 0.41234567, 0.2128, 100.0)
    write_csv(tmp_path / "t.csv", [row])
    stored = read_csv(tmp_path / "t.csv", scaled=False)[0]
    assert (stored["dev"], stored["test"]) == (0.43214, 0.41234567)
    shown = read_csv(tmp_path / "t.csv")[0]
    assert (shown["dev"], shown["test"], shown["majority"]) == (0.43214 * 100, 0.41234567 * 100, 0.2128 * 100)
    assert shown["dev_curve"] == "40.1235;43.214"
    write_items(tmp_path / "t.items.csv.xz", [{"model": "BiLSTM", "variant": "", "dataset": "SST-5", "seed": 1, "item": "3",
                                              "score": 1.0, "scale": 100.0}])
    assert read_items(tmp_path / "t.items.csv.xz")[0]["score"] == 100.0
    assert read_items(tmp_path / "t.items.csv.xz", scaled=False)[0]["score"] == 1.0


def test_a_selection_run_that_becomes_reported_takes_no_other_runs_item_scores(tmp_path):
    """Item scores are stored per (model, seed), not per run: when the rate choice moves, the seed's
    newly reported run (committed as an unreported selection run) must not inherit the item scores
    of the run reported before (MZU Table 6 carried a 5e-4 run's items under its 2.5e-4 run)."""
    from rnnbench.results.evidence import write_items

    before = _row("s1-old", 1)
    selection = {**_row("s1-new", 1), "reported": "no", "phase": "selection", "lr": 5e-4, "test": 0.60}
    write_csv(tmp_path / "t.csv", [before, selection])
    write_items(tmp_path / "t.items.csv.xz", [{"model": "BiLSTM", "variant": "", "dataset": "SST-5", "seed": 1, "item": str(i),
                                               "score": 0.41, "scale": 100.0} for i in range(3)])
    committed = CommittedEvidence(tmp_path / "t.csv", tmp_path / "t.items.csv.xz")
    rows, items = committed.rows_of("bilstm", "s1-new", "BiLSTM", "", "selection", True, {"SST-5"})
    assert [r["run"] for r in rows] == ["s1-new"] and items == []
    _, items = committed.rows_of("bilstm", "s1-old", "BiLSTM", "", "final", True, {"SST-5"})
    assert len(items) == 3  # the run they were reported with keeps them
