"""scripts/fhe_gate_gap.py on a tiny FHE run: the thresholded score is the run's own recorded dev score."""
from __future__ import annotations

from pathlib import Path

from rnnbench.run import train
from tests.helpers import load_script, smoke_config


def _script():
    return load_script("fhe_gate_gap")


def test_thresholded_gates_reproduce_the_recorded_dev_score_and_sampled_ones_are_scored(tmp_path, capsys):
    module = _script()
    cfg = smoke_config(tmp_path, "task=picking", "encoder=fhe", "encoder.hidden_size=16", "trainer.max_eval_batches=null",
                       "task.reader.train_size=64", "task.reader.dev_size=40", "task.reader.test_size=16")
    record = train(cfg, say=lambda *_: None)
    run = module.load_weights(Path(record["run_dir"]), "best")
    data = module.prepare(run.config)
    thresholded, opened = module.accuracy(run, data, "dev", sampled=False)
    assert thresholded == record["dev"]["accuracy"] and 0.0 <= opened <= 1.0
    sampled, _ = module.accuracy(run, data, "dev", sampled=True)
    assert 0.0 <= sampled <= 1.0 and not run.model.training  # left in eval mode
    assert module.main([record["run_dir"], "--checkpoint", "last", "--samples", "1"]) == 0
    assert "last checkpoint: sampled gates (seed 0) accuracy" in capsys.readouterr().out


def test_a_run_of_another_encoder_is_refused(tmp_path, capsys):
    module = _script()
    record = train(smoke_config(tmp_path, "task=picking", "encoder=lstm1", "encoder.hidden_size=8"), say=lambda *_: None)
    assert module.main([record["run_dir"]]) == 2
    assert "is not an FHE run" in capsys.readouterr().err


def test_reader_overrides_score_longer_sequences_and_model_settings_are_refused(tmp_path, capsys):
    """Table 4's lengths: the same checkpoint scored on a longer test split; a setting that changes
    the model is refused with evaluate.py's one-line reason."""
    module = _script()
    cfg = smoke_config(tmp_path, "task=picking", "encoder=fhe", "encoder.hidden_size=16", "task.reader.length=20",
                       "task.reader.train_size=64", "task.reader.dev_size=16", "task.reader.test_size=16")
    record = train(cfg, say=lambda *_: None)
    assert module.main([record["run_dir"], "task.reader.test_length=60", "--split", "test", "--samples", "1"]) == 0
    assert "test, best checkpoint: thresholded gates accuracy" in capsys.readouterr().out
    run = module.load_weights(Path(record["run_dir"]), "best")
    longer = module.scoring_data(run, ["task.reader.test_length=60"])  # what main scores
    assert {len(r["tokens"]) for r in longer.raw["test"]} == {60} and {len(r["tokens"]) for r in longer.raw["dev"]} == {20}
    assert module.main([record["run_dir"], "encoder.hidden_size=32"]) == 2
    assert "changes the trained model" in capsys.readouterr().err
