"""One run from a composed config: skip it if done, resume it if interrupted, else train it.

This is what `python train.py ...` calls, once per job of a sweep.
"""
from __future__ import annotations

from pathlib import Path

from filelock import FileLock, Timeout
from omegaconf import DictConfig

from rnnbench.errors import RunInProgress
from rnnbench.results.identity import run_dir as run_dir_of
from rnnbench.results.records import DONE, RECORD, append_index, read_record, write_json_atomic
from rnnbench.training.loop import fit


def say_flushed(message: str) -> None:
    print(message, flush=True)


def train(cfg: DictConfig, say=say_flushed) -> dict:
    run_dir = run_dir_of(cfg)
    record = read_record(run_dir)
    if record is not None:
        say(f"already done: {run_dir} (test {record['test']})")
        return record
    run_dir.mkdir(parents=True, exist_ok=True)
    try:
        with FileLock(str(run_dir / ".lock"), timeout=0):
            record = fit(cfg, run_dir, say)
            write_json_atomic(run_dir / RECORD, record)
            (run_dir / DONE).touch()  # written last: a record without it is not trusted
            append_index(Path(cfg.paths.runs_dir) / "records.jsonl", record)
    except Timeout:
        raise RunInProgress(f"run {run_dir} is in progress in another process (lock {run_dir / '.lock'})") from None
    return record
