"""scripts/fhe_figures.py on a tiny FHE run: the gate picture and accuracy against gate openness."""
from __future__ import annotations

from rnnbench.run import train
from tests.helpers import load_script, smoke_config


def _script():
    return load_script("fhe_figures")


def test_both_figures_from_a_tiny_fhe_run(tmp_path):
    module = _script()
    cfg = smoke_config(tmp_path, "task=picking", "encoder=fhe", "encoder.hidden_size=16", "trainer.max_eval_batches=null",
                       "task.reader.train_size=64", "task.reader.dev_size=16", "task.reader.test_size=16")
    record = train(cfg, say=lambda *_: None)
    picture = module.gate_picture(record["run_dir"], tmp_path / "gates.png", examples=3)
    assert picture.stat().st_size > 1000
    from rnnbench.results import evidence

    rows = evidence.evidence_rows(record, "FHE", None, {"picking/accuracy/len20": "accuracy", "gate openness/len20": "stats:gate_openness"},
                                  100.0, "final", True)
    evidence.write_csv(tmp_path / "t.csv", rows)
    plot = module.accuracy_vs_openness(tmp_path / "t.csv", tmp_path / "openness.png")
    assert plot.stat().st_size > 1000
