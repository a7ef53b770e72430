"""A campaign's jobs: the dev split's majority-class score that the patience rule judges committed
runs against (``jobs.majority_of``)."""
from __future__ import annotations

from pathlib import Path

from rnnbench.campaign import jobs
from rnnbench.compose import compose_config
from rnnbench.data.prepare import build_reader, load_splits
from rnnbench.results import patience

FIXTURE_DATA = Path(__file__).resolve().parents[1] / "fixtures" / "data"


def test_the_majority_of_a_large_corpus_is_read_from_its_labels_without_tokenising(tmp_path, monkeypatch):
    monkeypatch.setenv("RNNBENCH_DATA", str(FIXTURE_DATA))
    monkeypatch.setattr(jobs, "_MAJORITY", {})
    cfg = compose_config(["task=imdb", "task.reader.dev_size=5", f"paths.cache_dir={tmp_path / 'cache'}"])
    majority = jobs.majority_of(cfg)
    assert not (tmp_path / "cache").exists()  # no records were tokenised and cached
    reader = build_reader(cfg.task.reader)
    dev = load_splits(reader, cfg.paths.data_dir, tmp_path / "other")["dev"]
    assert majority == patience.task_baseline(cfg.task, dev) and 0.5 <= majority < 1.0
