"""scripts/fhe_small_pilots.py: the small LSTM rows' budget pilots, a page generated from committed evidence."""
from __future__ import annotations

import json
import shutil

import pytest
import torch

from tests.helpers import REPO, load_script

pilots = load_script("fhe_small_pilots")
RESULTS = REPO / "results"


def test_the_committed_page_regenerates_from_its_csv_and_the_table(tmp_path):
    (tmp_path / "diagnostics").mkdir()
    shutil.copy(RESULTS / "diagnostics" / "fhe_small_pilots.csv", tmp_path / "diagnostics")
    shutil.copy(RESULTS / "fhe_table4.csv", tmp_path)
    assert pilots.main(["--results", str(tmp_path)]) == 0
    assert (tmp_path / "diagnostics" / "fhe_small_pilots.md").read_text() == (RESULTS / "diagnostics" / "fhe_small_pilots.md").read_text()


def _finished_run(folder, done=True):
    folder.mkdir(parents=True)
    history = [{"epoch": e, "train_loss": 2.0 / e, "dev_loss": 1.5 / e, "dev_accuracy": 0.2 * e, "train_cpu_seconds": 60.0}
               for e in (1, 2, 3)]
    record = {"encoder": "lstm1", "experiment": "fhe_table4_small", "seed": 1, "git_commit": "a" * 40, "best_epoch": 3,
              "test": {"accuracy": 0.55}, "history": history,
              "hardware": {"cpu": "Some CPU", "threads": 1, "torch": "2.13.0+cpu"}}
    (folder / "record.json").write_text(json.dumps(record))
    torch.save({"config": {"encoder": {"hidden_size": 64}, "task": {"reader": {"train_size": 200000}}}}, folder / "best.pt")
    if done:
        (folder / "done").write_text("")
    return folder


def test_a_finished_run_gives_one_row_per_epoch_with_its_setting(tmp_path):
    rows = pilots.record_rows(_finished_run(tmp_path / "s1-abc"))
    assert [r["epoch"] for r in rows] == [1, 2, 3]
    assert {(r["hidden"], r["train_size"], r["run"], r["commit"]) for r in rows} == {(64, 200000, "lstm1/s1-abc", "a" * 12)}
    assert rows[-1]["dev_accuracy"] == "0.6000" and rows[0]["test_accuracy"] == "0.5500"


def test_an_unfinished_run_is_refused(tmp_path):
    with pytest.raises(SystemExit, match="not a finished run"):
        pilots.record_rows(_finished_run(tmp_path / "s1-abc", done=False))
