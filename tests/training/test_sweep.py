"""Sweeps: a relaunched sweep runs nothing twice; parallel jobs never corrupt each other's records."""
from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from rnnbench.results.records import append_index
from tests.helpers import run_train_py

SMALL = ["trainer=smoke", "task.reader.train_size=200", "task.reader.dev_size=50", "task.reader.test_size=50", "encoder.hidden_size=16"]


def _index(runs: Path) -> list[dict]:
    return [json.loads(line) for line in (runs / "records.jsonl").read_text().splitlines()]


@pytest.mark.slow  # a train.py sweep
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


def _summary(result) -> str:
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("sweep summary:")]
    return line


@pytest.mark.slow  # a train.py sweep
def test_a_failing_joblib_job_does_not_stop_its_neighbour(tmp_path):
    """SearchQA is missing: its job fails, the picking job beside it finishes; exit status 1."""
    runs = tmp_path / "runs"
    result = run_train_py(["-m", "task=picking,searchqa", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", f"paths.runs_dir={runs}",
                           "trainer=smoke", "encoder.hidden_size=16"], env_extra={"RNNBENCH_DATA": str(tmp_path / "nodata")})
    assert result.returncode == 1, result.stderr
    assert "2 jobs: 1 ran, 0 skipped (0 finished earlier, 0 locked by another process), 1 failed" in _summary(result)
    assert "task=searchqa" in result.stdout and "dataset 'searchqa' not found" in result.stdout
    assert len(list(runs.glob("picking/bilstm/*/done"))) == 1 and not list(runs.glob("searchqa/*"))
    assert "Traceback" not in result.stderr


@pytest.mark.slow  # a train.py sweep
def test_a_locked_run_is_skipped_and_the_sweep_goes_on(tmp_path):
    from filelock import FileLock

    from rnnbench.compose import compose_config
    from rnnbench.results.identity import run_dir

    runs = tmp_path / "runs"
    common = [f"paths.runs_dir={runs}", *SMALL]
    locked = run_dir(compose_config([*common, "seed=1"]))
    locked.mkdir(parents=True)
    with FileLock(str(locked / ".lock")):  # another process is training seed 1
        result = run_train_py(["-m", "seed=1,2", *common])
    assert result.returncode == 0, result.stderr
    assert "2 jobs: 1 ran, 1 skipped (0 finished earlier, 1 locked by another process), 0 failed" in _summary(result)
    assert not (locked / "done").exists() and len(list(runs.glob("picking/bilstm/s2-*/done"))) == 1


@pytest.mark.slow  # a train.py sweep
def test_two_joblib_jobs_for_the_same_run_train_it_once_and_both_succeed(tmp_path):
    """The same run twice in one parallel sweep: one trains it, the other skips or finds it done."""
    runs = tmp_path / "runs"
    result = run_train_py(["-m", "seed=3,3", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", f"paths.runs_dir={runs}", *SMALL])
    assert result.returncode == 0, result.stderr
    summary = _summary(result)
    assert "2 jobs: 1 ran, 1 skipped" in summary and "0 failed" in summary
    assert len(list(runs.glob("picking/bilstm/s3-*/done"))) == 1 and len(_index(runs)) == 1
