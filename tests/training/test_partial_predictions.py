"""A Monte Carlo dropout test pass stopped (Ctrl-C/SIGTERM) or killed part-way resumes at the batch
where it stopped and ends with exactly the predictions, scores and loss of an uninterrupted pass."""
from __future__ import annotations

import pytest
import torch

from rnnbench.errors import RunInterrupted
from rnnbench.results.records import PREDICTIONS
from rnnbench.training import loop, partial_predictions
from rnnbench.training.loop import fit
from rnnbench.training.partial_predictions import PARTIAL_TEST, PredictionProgress
from tests.helpers import smoke_config

pytestmark = pytest.mark.usefixtures("one_thread")

# A tiny picking run with dropout, tested with 1 MC sample (dropout 0.9: the draws decide the predictions) over 5 test batches of 16.
MC = ["task=picking", "encoder=2l_lstm", "encoder.hidden_size=64", "encoder.dropout=0.9", "trainer.epochs=1",
      "trainer.max_batches=20", "trainer.lr=3e-3",
      "trainer.max_eval_batches=null", "task.reader.train_size=64", "task.reader.dev_size=32", "task.reader.test_size=70",
      "trainer.eval_batch_size=16", "trainer.mc_dropout_samples=1"]


def _fit(tmp_path, name):
    cfg = smoke_config(tmp_path / name, *MC)
    run_dir = tmp_path / name / "run"
    run_dir.mkdir(parents=True)
    return cfg, run_dir


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("clean")
    cfg, run_dir = _fit(tmp, "clean")
    record = fit(cfg, run_dir, say=lambda _: None)
    return record, (run_dir / PREDICTIONS).read_text()


def _same_as(record, run_dir, uninterrupted):
    clean, clean_predictions = uninterrupted
    assert record["test"] == clean["test"] and record["test_stats"] == clean["test_stats"]
    assert (run_dir / PREDICTIONS).read_text() == clean_predictions
    assert not (run_dir / PARTIAL_TEST).exists()  # deleted once the pass completed


def _wrap_progress(monkeypatch, change):
    real = loop._test_progress

    def patched(run):
        progress = real(run)
        change(progress)
        return progress
    monkeypatch.setattr(loop, "_test_progress", patched)


def test_ctrl_c_in_the_test_pass_saves_and_the_next_run_resumes_it_exactly(tmp_path, monkeypatch, uninterrupted):
    cfg, run_dir = _fit(tmp_path, "stopped")
    polls = []

    def stop_at_second_batch(progress):
        progress.stop_requested = lambda: polls.append(1) or len(polls) == 2
    _wrap_progress(monkeypatch, stop_at_second_batch)
    with pytest.raises(RunInterrupted, match=r"interrupted in the test pass at batch 2 of 5; progress saved"):
        fit(cfg, run_dir, say=lambda _: None)
    saved = torch.load(run_dir / PARTIAL_TEST, weights_only=False)
    assert saved["done"] == 2 and len(saved["predictions"]) == 32 and not (run_dir / PREDICTIONS).exists()

    monkeypatch.undo()
    said = []
    record = fit(cfg, run_dir, say=said.append)
    assert "resuming the test pass at batch 3 of 5" in said
    _same_as(record, run_dir, uninterrupted)


def test_a_kill_without_warning_resumes_from_the_last_periodic_save(tmp_path, monkeypatch, uninterrupted):
    cfg, run_dir = _fit(tmp_path, "killed")
    monkeypatch.setattr(partial_predictions, "SAVE_EVERY_S", 0.0)  # save after every batch

    def crash_after_third(progress):
        real = progress.after_batch

        def after_batch(done, *args, **kwargs):
            real(done, *args, **kwargs)
            if done == 3:
                raise KeyboardInterrupt  # stands for SIGKILL: nothing runs after the last save
        progress.after_batch = after_batch
    _wrap_progress(monkeypatch, crash_after_third)
    with pytest.raises(KeyboardInterrupt):
        fit(cfg, run_dir, say=lambda _: None)
    assert torch.load(run_dir / PARTIAL_TEST, weights_only=False)["done"] == 3

    monkeypatch.undo()
    said = []
    record = fit(cfg, run_dir, say=said.append)
    assert "resuming the test pass at batch 4 of 5" in said
    _same_as(record, run_dir, uninterrupted)


def test_a_progress_file_of_another_pass_or_a_damaged_one_is_ignored_with_a_warning(tmp_path):
    path = tmp_path / PARTIAL_TEST
    PredictionProgress(path, "weights A", save_every_s=0.0, stop_requested=lambda: False).after_batch(
        1, 5, {0: 1}, 0.5, 1, {})
    assert path.exists()
    said = []
    assert PredictionProgress(path, "weights B", say=said.append).resume() is None
    assert len(said) == 1 and "from another pass" in said[0] and "predicting from the first batch" in said[0]
    assert PredictionProgress(path, "weights A", say=said.append).resume()["done"] == 1

    path.write_bytes(b"not a checkpoint")
    said.clear()
    assert PredictionProgress(path, "weights A", say=said.append).resume() is None
    assert len(said) == 1 and str(path) in said[0] and "predicting from the first batch" in said[0]


def test_the_last_batch_is_never_saved_and_a_stop_there_lets_the_pass_finish(tmp_path):
    path = tmp_path / PARTIAL_TEST
    progress = PredictionProgress(path, "k", save_every_s=0.0, stop_requested=lambda: True)
    progress.after_batch(5, 5, {0: 1}, 0.5, 1, {})  # no RunInterrupted: the pass is complete
    assert not path.exists()


def test_runs_without_mc_dropout_keep_no_progress_file(tmp_path, monkeypatch):
    """Their test pass is one forward pass over the split: nothing worth saving."""
    made = []
    _wrap_progress(monkeypatch, made.append)
    cfg = smoke_config(tmp_path, *MC[:-1], "trainer.mc_dropout_samples=0")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    fit(cfg, run_dir, say=lambda _: None)
    assert made == [None]


def test_the_test_pass_shows_its_progress_and_the_bar_changes_nothing(tmp_path, capsys, uninterrupted):
    """Hours of MC test pass on a CPU: a bar (a line per 5% in a log) says how far it is and when it ends."""
    cfg = smoke_config(tmp_path / "bar", *MC, "trainer.progress=true")
    run_dir = tmp_path / "bar" / "run"
    run_dir.mkdir(parents=True)
    record = fit(cfg, run_dir, say=lambda _: None)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("test (MC dropout)")]
    assert lines and "5/5" in lines[-1], lines
    _same_as(record, run_dir, uninterrupted)
