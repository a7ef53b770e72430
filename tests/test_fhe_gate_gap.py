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
