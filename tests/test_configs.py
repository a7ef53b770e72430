"""Every config composes, and every task trains a few batches with every encoder (trainer=smoke).

Each task's data is prepared once and shared by its encoders. Tasks reading
real files use RNNBENCH_DATA and skip, saying so, only when it is absent.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from rnnbench.compose import CONF_DIR, compose_config
from rnnbench.data.prepare import build_reader, prepare
from rnnbench.encoders.build import known_encoders
from rnnbench.run import train
from rnnbench.training.loop import fit

TASKS = sorted(p.stem for p in (CONF_DIR / "task").glob("*.yaml"))
ENCODERS = known_encoders()
EXPERIMENTS = sorted(p.stem for p in (CONF_DIR / "experiment").glob("*.yaml"))


@pytest.mark.parametrize("task", TASKS)
def test_every_task_composes(task):
    """(Every encoder config composes in tests/encoders/test_contract.py; every pair in the smoke runs.)"""
    cfg = compose_config([f"task={task}"])
    assert cfg.task.name and cfg.task.select_metric in cfg.task.metrics


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_experiments_compose(experiment):
    cfg = compose_config([f"experiment={experiment}"], return_hydra_config=True)
    assert cfg.table.name == experiment
    assert str(cfg.hydra.sweeper.params.seed)


_prepared: dict = {}


@pytest.mark.parametrize("task", TASKS)
def test_smoke_run_every_encoder(task, tmp_path, request, monkeypatch):
    if build_reader(compose_config([f"task={task}"]).task.reader).files:
        monkeypatch.setenv("RNNBENCH_DATA", str(request.getfixturevalue("real_data")))
    for encoder in ENCODERS:
        cfg = compose_config([f"task={task}", f"encoder={encoder}", "trainer=smoke", f"paths.runs_dir={tmp_path}"])
        if "hidden_size" in cfg.encoder:  # small encoders: this checks wiring, not learning
            cfg.encoder.hidden_size = 16
        if task not in _prepared:
            _prepared[task] = prepare(cfg)
        run_dir = Path(tmp_path) / encoder
        run_dir.mkdir()
        record = fit(cfg, run_dir, say=lambda _: None, data=_prepared[task])
        metric = cfg.task.select_metric
        assert 0.0 <= record["test"][metric] <= 1.0, (task, encoder)
        assert (run_dir / "predictions.jsonl").read_text().count("\n") > 0


def test_default_job_runs_end_to_end(tmp_path):
    """`python train.py` defaults (picking task, BiLSTM), shortened: a record and a done marker."""
    cfg = compose_config(["trainer=smoke", f"paths.runs_dir={tmp_path}"])
    assert cfg.task.name == "picking" and cfg.encoder.name == "bilstm"
    record = train(cfg, say=lambda _: None)
    run_dir = Path(record["run_dir"])
    assert (run_dir / "done").exists() and (run_dir / "record.json").exists()
    for key in ("identity", "git_commit", "seed", "encoder_parameters", "dev", "test", "seconds_per_epoch", "tokens_per_second", "peak_memory_mb", "hardware", "config"):
        assert key in record
