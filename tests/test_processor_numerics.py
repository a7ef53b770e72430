"""scripts/processor_numerics.py: where a run's dev curve parts from the committed row's, and the
table it writes (the settings' runs themselves are minutes each: results/diagnostics/)."""
from __future__ import annotations

from tests.helpers import load_script

numerics = load_script("processor_numerics")


def test_the_first_differing_epoch_is_found_at_the_csvs_precision():
    committed = [0.605505, 0.708257, 0.726606]
    assert numerics.first_difference([0.6055051, 0.708257, 0.726606], committed) == "none"
    assert numerics.first_difference([0.605505, 0.71, 0.726606], committed) == "2"
    assert numerics.first_difference([0.605505, 0.708257], committed).startswith("none in 2")


def test_the_committed_row_is_rcrn_table5s_seed_1_bilstm():
    row = numerics.committed_row()
    assert row["run"] == "s1-9b3fb52fd25e" and row["lr"] == "0.001"  # the one-run command's rate, a selection run


def test_the_table_names_each_setting_with_its_ratio_to_the_default():
    row = {"dev_curve": "0.6;0.7", "hardware": "Intel Xeon", "commit": "eb6522bb1dff00", "run": "s1-x",
           "selected_epoch": "2", "dev": "0.7", "test": "0.9"}

    def record(dev2, cpu):
        return {"history": [{"dev_accuracy": 0.6}, {"dev_accuracy": dev2}], "best_epoch": 2, "dev": {"accuracy": dev2},
                "test": {"accuracy": 0.88}, "cpu_seconds_per_epoch": cpu, "hardware": {"cpu": "AMD EPYC"}}

    text = numerics.render({"default": record(0.7, 2.0), "pinned": record(0.71, 5.0)}, row, "2026-12-01", "abc123")
    assert "| default | (none) | 2 | 0.7000 | 88.0 | none | 1.00 |" in text
    assert "| pinned |" in text and "| 2 | 2.50 |" in text and "AMD EPYC" in text
