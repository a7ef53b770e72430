"""The training loop: determinism, loggers, early stopping and the record's contents."""
from __future__ import annotations

import csv
import math
from pathlib import Path

from rnnbench.results import patience
from rnnbench.run import train
from tests.helpers import smoke_config

TINY = ["task.reader.train_size=300", "task.reader.dev_size=60", "task.reader.test_size=60", "encoder.hidden_size=16", "trainer.max_batches=null", "trainer.max_eval_batches=null", "trainer.batch_size=30"]


def _quiet(_):
    pass


def test_same_seed_same_metrics_different_seed_different_run(tmp_path):
    a = train(smoke_config(tmp_path / "a", *TINY, "trainer.epochs=2"), say=_quiet)
    b = train(smoke_config(tmp_path / "b", *TINY, "trainer.epochs=2"), say=_quiet)
    assert a["identity"] == b["identity"] and a["run_dir"] != b["run_dir"]
    assert a["test"] == b["test"] and a["history"][-1]["dev_loss"] == b["history"][-1]["dev_loss"]
    c = train(smoke_config(tmp_path / "a", *TINY, "trainer.epochs=2", "seed=2"), say=_quiet)
    assert c["identity"] != a["identity"] and c["history"][-1]["dev_loss"] != a["history"][-1]["dev_loss"]
    # It learns: after one epoch the dev loss is below uniform guessing over the ten digits
    # (ln 10 = 2.303; measured 2.227, and 2.316 with lr 0), and both losses fall in the second.
    first, second = a["history"]
    assert first["dev_loss"] < math.log(10) and second["dev_loss"] < first["dev_loss"] and second["train_loss"] < first["train_loss"]


def _started_at_once(monkeypatch):
    """A majority-class baseline every dev score beats: patience counts from epoch 1."""
    monkeypatch.setattr(patience, "task_baseline", lambda task, dev: -1.0)


def test_early_stopping_and_best_epoch(tmp_path, monkeypatch):
    # lr 0 never improves after epoch 1: once the run has started, patience 2 stops after epoch 3.
    _started_at_once(monkeypatch)
    rec = train(smoke_config(tmp_path, *TINY, "trainer.epochs=10", "trainer.patience=2", "trainer.lr=0.0"), say=_quiet)
    assert rec["epochs_run"] == 3 and rec["best_epoch"] == 1 and rec["status"] == "trained" and rec["majority_baseline"] == -1.0


def test_start_below_prior_holds_patience_until_the_training_loss_leaves_the_priors(tmp_path, monkeypatch):
    """lr 0: every dev score beats a baseline of -1, but the training loss never leaves the untrained
    model's (about ln 10 over ten digits). Patience 2 stops it after epoch 3 on the dev score alone; with
    trainer.start_below_prior=0.9 it has not started, so it runs to its cap; the option is in its identity."""
    _started_at_once(monkeypatch)
    args = (*TINY, "trainer.epochs=5", "trainer.patience=2", "trainer.lr=0.0")
    said = []
    plain = train(smoke_config(tmp_path / "a", *args), say=_quiet)
    held = train(smoke_config(tmp_path / "b", *args, "trainer.start_below_prior=0.9"), say=said.append)
    assert plain["epochs_run"] == 3 and held["epochs_run"] == 5 and held["identity"] != plain["identity"]
    assert any("with a training loss under" in line and "0.9 x the prior's loss" in line for line in said)
    # A model that learns starts: the default rate's loss falls under 0.9 x the prior's within the cap.
    learns = train(smoke_config(tmp_path / "c", *TINY, "trainer.epochs=5", "trainer.patience=1", "trainer.start_below_prior=0.9"),
                   say=_quiet)
    assert learns["history"][-1]["train_loss"] < 0.9 * math.log(10) and learns["status"] == "trained"


def test_a_run_that_never_beats_the_majority_class_score_runs_to_its_cap_and_did_not_train(tmp_path):
    """lr 0: the dev accuracy stays at its untrained value, never above the dev split's most common
    digit's share. Patience never starts counting (it stopped such a run after 3 epochs before), and
    the record says the run did not train."""
    rec = train(smoke_config(tmp_path, *TINY, "trainer.epochs=6", "trainer.patience=2", "trainer.lr=0.0"), say=_quiet)
    assert rec["epochs_run"] == 6 and rec["status"] == "did not train"
    assert all(h["dev_accuracy"] <= rec["majority_baseline"] for h in rec["history"])
    assert 0.1 <= rec["majority_baseline"] < 0.5  # ten digits, 60 dev examples


def test_a_run_stopped_before_it_started_goes_on_when_resumed(tmp_path, monkeypatch):
    """A checkpoint saved under the earlier rule (stopped at chance by patience) resumes under the
    rule and trains on to its cap, as a run trained under the rule from the start does."""
    from rnnbench.results.records import DONE, RECORD

    args = (*TINY, "trainer.epochs=6", "trainer.patience=2", "trainer.lr=0.0")
    with monkeypatch.context() as m:
        _started_at_once(m)  # what the earlier rule did: every epoch counted
        stopped = train(smoke_config(tmp_path / "old", *args), say=_quiet)
    assert stopped["epochs_run"] == 3
    (Path(stopped["run_dir"]) / DONE).unlink()
    (Path(stopped["run_dir"]) / RECORD).unlink()
    said = []
    resumed = train(smoke_config(tmp_path / "old", *args), say=said.append)
    fresh = train(smoke_config(tmp_path / "new", *args), say=_quiet)
    assert any("it goes on (patience counts from the first epoch that beats it)" in line for line in said)
    assert resumed["epochs_run"] == fresh["epochs_run"] == 6 and resumed["status"] == fresh["status"] == "did not train"
    assert [h["dev_loss"] for h in resumed["history"]] == [h["dev_loss"] for h in fresh["history"]]


def test_csv_logger_writes_each_epoch_and_wandb_runs_disabled(tmp_path, monkeypatch):
    rec = train(smoke_config(tmp_path, *TINY, "trainer.epochs=2", "logger=csv"), say=_quiet)
    rows = list(csv.DictReader(open(Path(rec["run_dir"]) / "metrics.csv")))
    assert [r["value"] for r in rows if r["name"] == "epoch"] == ["1", "2"]
    assert len([r for r in rows if r["name"] == "test_accuracy"]) == 1
    monkeypatch.setenv("WANDB_MODE", "disabled")
    rec = train(smoke_config(tmp_path / "w", *TINY, "logger=wandb"), say=_quiet)
    plain = train(smoke_config(tmp_path / "n", *TINY), say=_quiet)  # no logger: a logger changes no number
    untimed = [[{k: v for k, v in h.items() if "seconds" not in k and k != "load_average"} for h in r["history"]] for r in (rec, plain)]
    assert rec["test"] == plain["test"] and untimed[0] == untimed[1]


def test_fhe_table3_schedule_switches_the_penalty_on_after_the_dev_target(tmp_path):
    """penalty_from_dev_accuracy=0: the first dev score reaches it, so epoch 2 trains with the
    penalty, and the best epoch is chosen among the penalised epochs only."""
    from rnnbench.run import train
    from tests.helpers import smoke_config

    cfg = smoke_config(tmp_path, "task=picking", "encoder=fhe", "encoder.hidden_size=16", "encoder.penalty_from_dev_accuracy=0.0",
                       "trainer.epochs=2", "trainer.max_eval_batches=null")
    record = train(cfg, say=lambda *_: None)
    assert [h["penalty_active"] for h in record["history"]] == [0.0, 1.0]
    assert record["best_epoch"] == 2 and record["test_stats"]["penalty_active"] == 1.0
