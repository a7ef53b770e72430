"""The shape of a run's record.json: written in the current format, an older record read through the
migration, a newer one refused in one line; and the committed evidence's stand-in for a record."""
from __future__ import annotations

import json

import pytest

from rnnbench.errors import RnnbenchError
from rnnbench.results import evidence, records
from rnnbench.results.record_format import RECORD_FORMAT, CommittedRun, Record

# A record as the first versions wrote it: no format, no patience-rule status, no timing of the
# test pass, no kernel or metric implementations, no smoke flag or process count.
OLD = {"identity": "abc123", "run_dir": "runs/sst5/bilstm/s1-abc123", "task": "sst5", "encoder": "bilstm", "embedding": "glove",
       "seed": 1, "experiment": "rcrn_table5", "config": {"trainer": {"lr": 1e-3, "epochs": 50, "num_threads": 1}},
       "git_commit": "c7296ba", "encoder_parameters": 10, "model_parameters": 20, "best_epoch": 2, "epochs_run": 3,
       "dev": {"accuracy": 0.43}, "test": {"accuracy": 0.41}, "test_stats": {}, "history": [{"dev_accuracy": 0.4}, {"dev_accuracy": 0.43},
                                                                                           {"dev_accuracy": 0.42}],
       "seconds_per_epoch": 3.0, "tokens_per_second": 100.0, "peak_memory_mb": 50.0, "hardware": {"device": "cpu", "cpu": "Xeon"},
       "data": {"train": 8, "dev": 2, "test": 2}}


def _finished(tmp_path, record: dict):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / records.RECORD).write_text(json.dumps(record))
    (folder / records.DONE).touch()
    return folder


def test_an_old_record_reads_in_the_current_shape(tmp_path):
    record = records.read_record(_finished(tmp_path, OLD))
    assert record["format"] == RECORD_FORMAT and {k: record[k] for k in OLD} == OLD  # what it had, unchanged
    assert (record["status"], record["majority_baseline"], record["world_size"], record["smoke"]) == ("", None, 1, False)
    assert (record["inference_seconds_per_example"], record["cpu_seconds_per_epoch"], record["kernel_implementations"]) == (None, None, {})
    assert record["peak_memory_scope"] == "process"  # before the per-run reset, the process's peak
    assert Record.from_json(record) == Record.from_json(OLD)  # read again: nothing left to migrate
    (row,) = evidence.evidence_rows(record, "BiLSTM", None, {"SST-5": "accuracy"}, 100.0, "final", True)
    assert (row["status"], row["majority"], row["inference_seconds_per_example"], row["commit"]) == ("", "", "", "c7296ba")


def test_a_record_keeps_keys_it_does_not_name():
    record = Record.from_json({**OLD, "format": RECORD_FORMAT, "rank_weights": ["a", "a"]})
    assert record.extra == {"rank_weights": ["a", "a"]} and record.as_dict()["rank_weights"] == ["a", "a"]


def test_a_record_of_a_newer_format_is_refused_in_one_line_and_left_in_place(tmp_path):
    folder = _finished(tmp_path, {**OLD, "format": RECORD_FORMAT + 1})
    with pytest.raises(RnnbenchError) as refused:
        records.read_record(folder)
    message = str(refused.value)
    assert message.startswith(f"{folder / records.RECORD}: record format {RECORD_FORMAT + 1} is newer than this rnnbench reads")
    assert "\n" not in message and (folder / records.RECORD).exists() and (folder / records.DONE).exists()  # not damaged


def test_the_committed_stand_in_reads_by_key_as_a_record_does(tmp_path):
    row = {**evidence.evidence_rows(OLD, "BiLSTM", None, {"SST-5": "accuracy"}, 100.0, "final", True)[0], "status": "trained"}
    evidence.write_csv(tmp_path / "t.csv", [row])
    run = evidence.CommittedEvidence(tmp_path / "t.csv", tmp_path / "t.items.csv.xz").record("bilstm", "s1-abc123")
    assert isinstance(run, CommittedRun) and run.dev == {"accuracy": 0.43} and run.epoch_cap == 50
    assert run["dev"] == {"accuracy": 0.43} and run.get("status") == "trained" and run.get("hardware", {}) == {}
    assert {**run, "status": "did not train"}["committed"] is True
    assert run["dev_curves"] == {"accuracy": [40.0, 43.0, 42.0]}  # in table units, as the patience rule judges a committed curve


def test_a_retired_config_key_is_dropped_so_the_config_merges_into_todays_schema():
    from omegaconf import OmegaConf

    from rnnbench.config import Config
    from rnnbench.results.record_format import migrate

    config = {"table": {"name": "t", "protocol": {"seeds": [1, 2], "bootstrap_samples": 10000}}}  # written before the key was retired
    record = {"config": config, "test": {}}
    migrated = migrate(record)
    assert "bootstrap_samples" not in migrated["config"]["table"]["protocol"]
    assert "bootstrap_samples" in record["config"]["table"]["protocol"]  # the caller's record is left as it was
    OmegaConf.merge(OmegaConf.structured(Config), migrated["config"])  # merges: no key the schema lacks
