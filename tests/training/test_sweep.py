"""Sweeps: a relaunched sweep runs nothing twice; parallel jobs never corrupt each other's records."""
from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

from rnnbench.results.records import append_index
from tests.helpers import run_train_py

SMALL = ["trainer=smoke", "task.reader.train_size=200", "task.reader.dev_size=50", "task.reader.test_size=50", "encoder.hidden_size=16"]


def _index(runs: Path) -> list[dict]:
    return [json.loads(line) for line in (runs / "records.jsonl").read_text().splitlines()]


def test_sweep_twice_runs_each_job_once_and_parallel_jobs_keep_both_records(tmp_path):
    runs = tmp_path / "runs"
    args = ["-m", "encoder=bilstm,lstm1", "seed=1,2", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", f"paths.runs_dir={runs}", *SMALL]
    first = run_train_py(args)
    assert first.returncode == 0, first.stderr
    index = _index(runs)
    assert len(index) == 4 and len({r["identity"] for r in index}) == 4  # two jobs at a time, four intact lines
    for row in index:
        record = json.loads((Path(row["run_dir"]) / "record.json").read_text())
        assert record["identity"] == row["identity"]

    second = run_train_py(args)
    assert second.returncode == 0, second.stderr
    assert len(_index(runs)) == 4  # nothing ran again
    assert (second.stdout + second.stderr).count("already done") == 4


def _append_many(index: str, worker: int) -> None:
    for i in range(200):
        append_index(Path(index), {"identity": f"{worker}-{i}", "run_dir": "x" * 500, "task": "t", "encoder": "e", "seed": i, "test": {}, "dev": {}})


def test_concurrent_index_writers_never_interleave(tmp_path):
    index = tmp_path / "records.jsonl"
    procs = [multiprocessing.Process(target=_append_many, args=(str(index), w)) for w in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    rows = [json.loads(line) for line in index.read_text().splitlines()]
    assert len(rows) == 400 and len({r["identity"] for r in rows}) == 400
