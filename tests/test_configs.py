"""Every config composes, and every task trains a few batches with every encoder (trainer=smoke).

Each task's data is prepared once and shared by its encoders. Tasks reading
real files use RNNBENCH_DATA and skip, saying so, only when it is absent.
Datasets that are not in the development data folder at all (SearchQA, text8,
NarrativeQA's questions, MS MARCO's passages: see ../shared/data/MANIFEST.md)
run on tiny files in their original format under tests/fixtures/data.
A task whose head needs a causal encoder (language models) must refuse every
bidirectional encoder with a ConfigError.
"""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from rnnbench.compose import CONF_DIR, compose_config
from rnnbench.data.prepare import build_reader, prepare
from rnnbench.encoders.build import known_encoders
from rnnbench.errors import ConfigError
from rnnbench.run import train
from rnnbench.results.tables import paper_table
from rnnbench.training.loop import fit

TASKS = sorted(p.stem for p in (CONF_DIR / "task").glob("*.yaml"))
ENCODERS = known_encoders()
FIXTURE_DATA = Path(__file__).resolve().parent / "fixtures" / "data"
# Tasks smoke-run on their fixture even though the real files are here: tokenising the whole
# corpus would take minutes of every CI run; their reader tests check every real file.
FIXTURE_TASKS = {"race": "tests/data/test_race.py parses and checks all 27,933 real RACE files"}
EXPERIMENTS = sorted(p.stem for p in (CONF_DIR / "experiment").glob("*.yaml"))


@pytest.mark.parametrize("task", TASKS)
def test_every_task_composes(task):
    """(Every encoder config composes in tests/encoders/test_contract.py; every pair in the smoke runs.)"""
    cfg = compose_config([f"task={task}"])
    assert cfg.task.name and cfg.task.select_metric in cfg.task.metrics


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_experiments_compose(experiment):
    cfg = compose_config([f"experiment={experiment}"], return_hydra_config=True)
    assert experiment.startswith(cfg.table.name)  # rcrn_table8_wikiqa fills part of rcrn_table8
    assert str(cfg.hydra.sweeper.params.seed)
    if not cfg.table.caption:  # a paper's table: its numbers are in the registry
        assert paper_table(cfg.table.name)["rows"]


_prepared: dict = {}


@pytest.mark.parametrize("task", TASKS)
def test_smoke_run_every_encoder(task, tmp_path, request, monkeypatch):
    reader = build_reader(compose_config([f"task={task}"]).task.reader)
    if reader.files:
        root = request.getfixturevalue("real_data")
        if task in FIXTURE_TASKS or any(not p.exists() for p in reader.input_paths(root)):
            root = FIXTURE_DATA  # a dataset absent from the development data: its fixture in the original format
            assert all(p.exists() for p in reader.input_paths(root)), f"{task}: neither real nor fixture files"
        monkeypatch.setenv("RNNBENCH_DATA", str(root))
    ran = 0
    for encoder in ENCODERS:
        # embedding.min_coverage=0: the fixtures' stand-in GloVe file (36 words) covers 9-25% of their vocabularies
        cfg = compose_config([f"task={task}", f"encoder={encoder}", "trainer=smoke", f"paths.runs_dir={tmp_path}", "embedding.min_coverage=0"])
        if "hidden_size" in cfg.encoder:  # small encoders: this checks wiring, not learning
            cfg.encoder.hidden_size = 16
        if task not in _prepared:
            _prepared[task] = prepare(cfg)
        run_dir = Path(tmp_path) / encoder
        run_dir.mkdir()
        if _needs_causal(cfg) and not _is_causal(cfg):
            with pytest.raises(ConfigError, match="causal"):
                fit(cfg, run_dir, say=lambda _: None, data=_prepared[task])
            continue
        record = fit(cfg, run_dir, say=lambda _: None, data=_prepared[task])
        metric = cfg.task.select_metric
        assert math.isfinite(record["test"][metric]), (task, encoder)
        if cfg.task.get("select_mode", "max") == "max":
            assert 0.0 <= record["test"][metric] <= 1.0, (task, encoder)
        assert (run_dir / "predictions.jsonl").read_text().count("\n") > 0
        ran += 1
    assert ran > 0, f"{task}: no encoder could run it"


def _needs_causal(cfg) -> bool:
    from hydra.utils import get_class

    return get_class(cfg.task.head._target_).requires_causal_encoder


def _is_causal(cfg) -> bool:
    from rnnbench.encoders.build import build_encoder

    return build_encoder(cfg.encoder, 8).causal


def test_default_job_runs_end_to_end(tmp_path):
    """`python train.py` defaults (picking task, BiLSTM), shortened: a record and a done marker."""
    cfg = compose_config(["trainer=smoke", f"paths.runs_dir={tmp_path}"])
    assert cfg.task.name == "picking" and cfg.encoder.name == "bilstm"
    record = train(cfg, say=lambda _: None)
    run_dir = Path(record["run_dir"])
    assert (run_dir / "done").exists() and (run_dir / "record.json").exists()
    for key in ("identity", "git_commit", "seed", "encoder_parameters", "dev", "test", "seconds_per_epoch", "tokens_per_second", "peak_memory_mb", "hardware", "config"):
        assert key in record
