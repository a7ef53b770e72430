"""One run from a composed config: skip it if done, resume it if interrupted, else train it.

This is what `python train.py ...` calls, once per job of a sweep.

Guarantees (docs/runs.md, "What is guaranteed"): the config is validated before
any work starts; a run is marked ``done`` and indexed only when it produced a record; a
failed run leaves no temporary file and no folder holding only its lock; a full disk is
one line; Ctrl-C saves a checkpoint at the end of the current batch and says how to resume.
"""
from __future__ import annotations

from pathlib import Path

from filelock import FileLock, Timeout
from omegaconf import DictConfig

from rnnbench.config import validate
from rnnbench.encoders.build import check_options
from rnnbench.errors import DiskFullError, OutputNotWritable, RunInProgress, RunInterrupted
from rnnbench.results.identity import run_dir as run_dir_of
from rnnbench.results.identity import run_identity
from rnnbench.results.records import (DONE, RECORD, ensure_indexed, is_disk_full, is_partial, read_record, remove_temporaries,
                                      smoke_line, write_json_atomic)
from rnnbench.training import checkpoint, distributed
from rnnbench.training.loop import fit

LOCK = ".lock"


def say_flushed(message: str) -> None:
    print(message, flush=True)


def index_of(cfg: DictConfig) -> Path:
    return Path(cfg.paths.runs_dir) / "records.jsonl"


def _remove_if_only_lock(run_dir: Path, runs_dir: Path) -> None:
    """A failed run that saved nothing leaves no folder behind (nor empty task/encoder folders)."""
    try:
        if {p.name for p in run_dir.iterdir()} - {LOCK}:
            return
        (run_dir / LOCK).unlink(missing_ok=True)
        run_dir.rmdir()
        for parent in run_dir.parents:
            if parent == runs_dir or runs_dir not in parent.parents:
                break
            parent.rmdir()  # fails (and stops) at the first folder that holds something
    except OSError:
        pass


def train_outcome(cfg: DictConfig, say=say_flushed) -> tuple[str, dict]:
    """("done", record) for a run finished earlier, ("ran", record) for one trained now.
    Raises RunInProgress when another process holds the run's lock.

    Under torchrun, rank 0 does all of this (lock, record, index) and tells the other ranks
    whether to train with it (``_follow``)."""
    dist = distributed.setup(str(cfg.trainer.device))
    if not dist.enabled:
        return _train_outcome(cfg, say)
    if not dist.main:
        return _follow(cfg, dist)
    told = []

    def tell(decision: str) -> None:
        if not told:
            told.append(distributed.broadcast(decision, dist))
            if decision == "skip":
                distributed.barrier(dist)  # see _follow

    try:
        return _train_outcome(cfg, say, before_training=lambda: tell("train"))
    finally:
        tell("skip")  # done earlier, locked or refused: the other ranks stop too


def _follow(cfg: DictConfig, dist) -> tuple[str, dict]:
    """A rank other than 0: train with rank 0 when it says so, writing nothing."""
    if distributed.broadcast(None, dist) != "train":
        # Rank 0 waits here too: exiting while this rank still received the one message
        # aborted this rank in gloo (SIGABRT).
        distributed.barrier(dist)
        return "done", {"test": {cfg.task.select_metric: None}}
    with checkpoint.deferred_interrupts():
        return "ran", fit(cfg, run_dir_of(cfg), lambda _: None)


def _train_outcome(cfg: DictConfig, say=say_flushed, before_training=lambda: None) -> tuple[str, dict]:
    validate(cfg)
    check_options(cfg.encoder)  # a refused encoder option fails now, before the data is prepared
    identity = run_identity(cfg)  # computed once: the folder's name and the record's identity
    run_dir = run_dir_of(cfg, identity)
    record = read_record(run_dir, index=index_of(cfg), allow_smoke=True, say=say)
    if record is not None:
        say(f"already done: {run_dir} (test {record['test']})")
        _say_not_logged(cfg, record, run_dir, say)
        if is_partial(record):
            say(smoke_line(record))
        return "done", record
    runs_dir = Path(cfg.paths.runs_dir)
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(run_dir / LOCK), timeout=0)
        lock.acquire()
    except Timeout:
        raise RunInProgress(f"run {run_dir} is in progress in another process (lock {run_dir / LOCK}); skipped") from None
    except OSError as exc:
        _remove_if_only_lock(run_dir, runs_dir)
        if is_disk_full(exc):
            raise DiskFullError(f"disk full while creating {run_dir}: free space and run the same command again") from None
        raise OutputNotWritable(f"cannot create {run_dir} ({exc.strerror or exc}); set paths.runs_dir to a writable folder") from None
    try:
        try:
            before_training()
            with checkpoint.deferred_interrupts():
                record = fit(cfg, run_dir, say, identity=identity)
            write_json_atomic(run_dir / RECORD, record)
            (run_dir / DONE).touch()  # written last: a record without it is not trusted
        except BaseException as exc:
            remove_temporaries(run_dir)
            _remove_if_only_lock(run_dir, runs_dir)
            if isinstance(exc, KeyboardInterrupt):
                where = "from its last checkpoint" if (run_dir / checkpoint.LAST).exists() else "from the beginning (no checkpoint yet)"
                raise RunInterrupted(f"interrupted; run the same command to resume {where} ({run_dir})") from None
            if is_disk_full(exc):
                raise DiskFullError(f"disk full while writing in {run_dir}: free space and run the same command "
                                    "to resume from the last checkpoint") from None
            raise
    finally:
        lock.release()
    # After `done`: a crash here loses nothing (read_record appends a finished run missing from the index).
    ensure_indexed(index_of(cfg), record)  # never twice: a redone damaged record keeps one line
    if is_partial(record):
        say(smoke_line(record))  # the last line: a smoke run's score is no result
    return "ran", record


def _say_not_logged(cfg: DictConfig, record: dict, run_dir: Path, say) -> None:
    """A finished run relaunched with another logger trains nothing, so that logger gets nothing: say so."""
    wanted = str(cfg.logger.kind)
    used = str(((record.get("config") or {}).get("logger") or {}).get("kind", "none"))
    if wanted not in ("none", used):
        say(f"nothing was logged to logger={wanted}: the run finished earlier with logger={used}; its metrics are in "
            f"{run_dir / RECORD} (remove the run folder to train it again with logger={wanted})")


def train(cfg: DictConfig, say=say_flushed) -> dict:
    """The run's record: read if it finished earlier, else trained now."""
    return train_outcome(cfg, say)[1]

