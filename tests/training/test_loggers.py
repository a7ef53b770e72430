"""Loggers: csv and TensorBoard rows per step and per epoch; wandb gets the same calls."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from rnnbench.errors import ConfigError
from rnnbench.run import train
from rnnbench.training import loggers
from tests.helpers import smoke_config

SMALL = ["task.reader.train_size=200", "task.reader.dev_size=40", "task.reader.test_size=40", "encoder.hidden_size=16"]


def _quiet(_):
    pass


def test_csv_logger_writes_a_row_every_n_steps_and_each_epoch(tmp_path):
    # Smoke runs train 3 batches an epoch: every 2 steps over 2 epochs logs steps 2, 4 and 6.
    rec = train(smoke_config(tmp_path, *SMALL, "trainer.epochs=2", "logger=csv", "logger.log_every_n_steps=2"), say=_quiet)
    rows = list(csv.DictReader(open(Path(rec["run_dir"]) / "metrics.csv")))
    steps = [int(r["step"]) for r in rows if r["name"] == "train_loss_step"]
    assert steps == [2, 4, 6]
    assert [(r["step"], r["value"]) for r in rows if r["name"] == "epoch"] == [("3", "1"), ("6", "2")]
    assert all(float(r["value"]) > 0 for r in rows if r["name"] == "train_loss_step")


def test_csv_logger_every_step_averages_to_the_epoch_loss_and_zero_logs_per_epoch_only(tmp_path):
    rec = train(smoke_config(tmp_path, *SMALL, "logger=csv", "logger.log_every_n_steps=1"), say=_quiet)
    rows = list(csv.DictReader(open(Path(rec["run_dir"]) / "metrics.csv")))
    per_step = [float(r["value"]) for r in rows if r["name"] == "train_loss_step"]
    assert len(per_step) == 3
    assert sum(per_step) / 3 == pytest.approx(rec["history"][0]["train_loss"], rel=1e-6)

    rec = train(smoke_config(tmp_path / "epochs", *SMALL, "logger=csv", "logger.log_every_n_steps=0"), say=_quiet)
    rows = list(csv.DictReader(open(Path(rec["run_dir"]) / "metrics.csv")))
    assert not [r for r in rows if r["name"] == "train_loss_step"] and [r for r in rows if r["name"] == "epoch"]


def test_tensorboard_logger_writes_events_per_step_and_per_epoch(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    rec = train(smoke_config(tmp_path, *SMALL, "trainer.epochs=2", "logger=tensorboard", "logger.log_every_n_steps=1"), say=_quiet)
    run_dir = Path(rec["run_dir"])
    assert list(run_dir.glob("events.out.tfevents.*"))
    events = EventAccumulator(str(run_dir))
    events.Reload()
    tags = events.Tags()["scalars"]
    assert {"train_loss_step", "train_loss", "dev_loss", "dev_accuracy", "test_accuracy"} <= set(tags)
    per_step = events.Scalars("train_loss_step")
    assert [e.step for e in per_step] == [1, 2, 3, 4, 5, 6]
    assert sum(e.value for e in per_step[:3]) / 3 == pytest.approx(rec["history"][0]["train_loss"], rel=1e-5)
    dev = events.Scalars("dev_accuracy")
    assert [e.step for e in dev] == [3, 6]
    assert [e.value for e in dev] == pytest.approx([h["dev_accuracy"] for h in rec["history"]], rel=1e-6)
    assert events.Scalars("test_accuracy")[0].value == pytest.approx(rec["test"]["accuracy"], rel=1e-6)


class _FakeRun:
    def __init__(self):
        self.calls = []

    def log(self, metrics, step):
        self.calls.append((step, dict(metrics)))

    def finish(self):
        self.calls.append(("finish", {}))


def test_wandb_logger_gets_each_logging_step_and_each_epoch(tmp_path, monkeypatch):
    wandb = pytest.importorskip("wandb")
    run = _FakeRun()
    monkeypatch.setattr(wandb, "init", lambda **kwargs: run)
    rec = train(smoke_config(tmp_path, *SMALL, "trainer.epochs=2", "logger=wandb", "logger.log_every_n_steps=2"), say=_quiet)
    per_step = [step for step, metrics in run.calls if "train_loss_step" in metrics]
    epochs = [(step, metrics["epoch"]) for step, metrics in run.calls if "epoch" in metrics]
    assert per_step == [2, 4, 6] and epochs == [(3, 1), (6, 2)]
    assert run.calls[-2][1] == {f"test_{k}": v for k, v in rec["test"].items()} and run.calls[-1][0] == "finish"


def test_unknown_logger_kind_is_refused(tmp_path):
    with pytest.raises(Exception, match="tensorbord"):  # the schema refuses it when composing
        smoke_config(tmp_path, "logger.kind=tensorbord")
    with pytest.raises(ConfigError, match="tensorbord"):  # and make_logger without the schema
        loggers.make_logger(OmegaConf.create({"logger": {"kind": "tensorbord"}}), tmp_path, "x")


def test_scalars_keep_numbers_only():
    assert loggers._scalars({"a": 1, "b": 2.5, "c": True, "d": "x", "e": None}) == {"a": 1.0, "b": 2.5}


def test_tensorboard_gets_the_hyperparameters_and_the_final_metrics(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.plugins.hparams import plugin_data_pb2

    cfg = smoke_config(tmp_path, *SMALL, "logger=tensorboard", "trainer.lr=0.004")
    rec = train(cfg, say=_quiet)
    events = EventAccumulator(str(rec["run_dir"]))
    events.Reload()
    content = events.PluginTagToContent("hparams")

    def plugin_data(tag):
        data = plugin_data_pb2.HParamsPluginData()
        data.ParseFromString(content[tag])
        return data

    hparams = plugin_data("_hparams_/session_start_info").session_start_info.hparams
    assert hparams["trainer.lr"].number_value == pytest.approx(0.004)
    assert hparams["encoder.name"].string_value == "bilstm" and hparams["task.name"].string_value == "picking"
    assert hparams["encoder.hidden_size"].number_value == 16 and not any(k.startswith("paths.") for k in hparams)
    metrics = [m.name.tag for m in plugin_data("_hparams_/experiment").experiment.metric_infos]
    assert metrics == ["test_accuracy"]  # read by the HParams view from the scalar of the same tag
    assert events.Scalars("test_accuracy")[0].value == pytest.approx(rec["test"]["accuracy"], rel=1e-6)


def test_hyperparameters_are_flat_plain_values():
    cfg = OmegaConf.create({"encoder": {"name": "rcrn", "layers": [1, 2], "dropout": None}, "trainer": {"lr": 0.1, "progress": True},
                            "paths": {"runs_dir": "runs"}, "seed": 3})
    assert loggers.hyperparameters(cfg) == {"encoder.name": "rcrn", "encoder.layers": "[1, 2]", "encoder.dropout": "None",
                                            "trainer.lr": 0.1, "trainer.progress": True, "seed": 3}
