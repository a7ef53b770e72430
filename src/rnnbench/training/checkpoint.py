"""Checkpoints: everything needed to resume a run exactly where it stopped.

A checkpoint is written atomically (temporary file, then rename); a failed write (a
full disk) removes the temporary file and says so in one line. A damaged ``last.pt``
(truncated, empty, not a checkpoint) is moved aside as ``last.pt.damaged-<time>`` with
a warning and the run restarts from its beginning (batch order depends only on seed
and epoch, so it ends with the same numbers). Ctrl-C (SIGINT) or SIGTERM during training
is deferred to the end of the current batch, where a checkpoint is saved
(``deferred_interrupts``): TERM is what ``kill``, ``timeout``, a container stop or a
machine shutting down send before they kill.

Schema of ``last.pt`` (a plain dict, so it loads with nothing but torch): ``model`` and
``optimizer`` (state dicts), ``state`` (``TrainState`` as a dict: where the run is),
``rng`` (the RNG state of rank 0), and where they apply ``rng_ranks`` (every rank's RNG
state, multi-GPU runs) and ``scaler`` (the fp16 gradient scaler). ``best.pt`` is
self-contained (``bundle`` below): the best dev epoch's weights (``model``), the
resolved config, the vocabulary and the label names, so ``rnnbench.load`` needs nothing else.
"""
from __future__ import annotations

import errno
import pickle
import random
import signal
import threading
import zipfile
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import torch
from omegaconf import DictConfig, OmegaConf

from rnnbench.errors import DamagedFileError
from rnnbench.results.records import set_aside, temporary_for

LAST = "last.pt"
BEST = "best.pt"
RESUME_KEYS = ("model", "optimizer", "state", "rng")


@dataclass
class TrainState:
    """Where a run is: what resuming needs besides the model, optimiser and RNG states."""

    epoch: int = 0  # epochs finished
    batch: int = 0  # batches finished in the current epoch
    step: int = 0  # optimiser steps over the whole run (the loggers' x axis)
    best: float | None = None  # the best dev score of task.select_metric so far
    best_epoch: int = -1  # its epoch (1-based); -1 before the first evaluation
    best_dev: dict = field(default_factory=dict)  # every dev metric of that epoch
    bad_epochs: int = 0  # epochs since the last improvement
    stopped: bool = False  # early stopping decided: a resumed run trains no further
    history: list = field(default_factory=list)  # one entry per finished epoch
    losses: list = field(default_factory=list)  # this epoch's task loss per batch, up to ``batch``
    epoch_seconds: float = 0.0  # this epoch's training time up to the last checkpoint
    epoch_cpu_seconds: float = 0.0  # the process's CPU time over the same span (results/timing.py)
    train_seconds: float = 0.0  # training time of the finished epochs
    tokens: int = 0  # training tokens seen (real positions of every text field)

    def finished(self, epochs: int) -> bool:
        return self.stopped or self.epoch >= epochs

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, saved: dict) -> "TrainState":
        """Also reads checkpoints written before this class, whose state was a dict with the
        same keys (``best_dev`` and ``losses`` absent until set; early stopping then set
        ``epoch`` to the epoch cap instead of ``stopped``)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in saved.items() if k in known})


def save(path: Path, **state) -> None:
    """Atomic save: a run killed mid-write keeps its previous checkpoint."""
    with temporary_for(path) as tmp:
        torch.save(state, tmp)


def save_last(run_dir: Path, model, optimizer, state: TrainState, rng: dict, **extra) -> None:
    """``last.pt``: everything ``load_for_resume`` needs (``extra``: ``rng_ranks``, ``scaler``)."""
    save(run_dir / LAST, model=model.state_dict(), optimizer=optimizer.state_dict(), state=state.to_dict(), rng=rng, **extra)


def rng_state() -> dict:
    state = {"torch": torch.get_rng_state(), "python": random.getstate()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict) -> None:
    # RNG states are CPU byte tensors whatever map_location moved them to.
    torch.set_rng_state(state["torch"].cpu())
    random.setstate(state["python"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all([s.cpu() for s in state["cuda"]])


def load(path: Path, map_location=None) -> dict | None:
    """The checkpoint at ``path`` (None if there is none), its tensors moved to
    ``map_location`` (e.g. the run's device: a checkpoint written on a GPU resumes on a
    CPU). A file that cannot be read raises DamagedFileError naming it."""
    path = Path(path)
    if not path.exists():
        return None
    try:
        data = torch.load(path, map_location=map_location, weights_only=False)
    except (RuntimeError, EOFError, OSError, ValueError, pickle.UnpicklingError, zipfile.BadZipFile, AttributeError) as exc:
        if isinstance(exc, OSError) and exc.errno in (errno.EACCES, errno.EIO, errno.EPERM):
            raise  # the disk or permissions, not the file's content
        raise DamagedFileError(path, f"cannot be read as a checkpoint ({type(exc).__name__}: {str(exc).split('. ')[0][:100] or 'empty'})") from None
    if not isinstance(data, dict):
        raise DamagedFileError(path, "is not a checkpoint (not a dict)")
    return data


def load_for_resume(run_dir: Path, map_location=None, say=print) -> dict | None:
    """``last.pt`` to resume from, or None to start from the beginning.

    A damaged ``last.pt`` (or a ``best.pt`` it depends on) is moved aside with one
    warning line naming it; the run then restarts (it loses the time trained, never a
    result: nothing of a damaged run was marked done)."""
    last, best = run_dir / LAST, run_dir / BEST
    try:
        saved = load(last, map_location)
        if saved is None:
            return None
        missing = [k for k in RESUME_KEYS if k not in saved]
        if missing:
            raise DamagedFileError(last, f"is not a resumable checkpoint (no {', '.join(missing)})")
        if saved["state"].get("best_epoch", -1) > 0 and load(best, "cpu") is None:
            raise DamagedFileError(best, "is missing but the checkpoint's best epoch needs it")
        return saved
    except DamagedFileError as exc:
        moved = [p for p in (set_aside(last), set_aside(best)) if p is not None]
        say(f"warning: {exc}; moved aside as {', '.join(p.name for p in moved) or 'nothing'}; restarting this run from the beginning")
        return None


class _Interrupts:
    requested = False  # Ctrl-C pressed while armed
    armed = False  # the training loop is polling: before that (data preparation) Ctrl-C stops at once


_interrupts = _Interrupts()
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)  # each: save at the batch's end, then stop


def stop_requested() -> bool:
    """Polled by the training loop at each batch boundary: True once Ctrl-C was pressed (or
    SIGTERM received) inside ``deferred_interrupts``; the loop then saves a checkpoint and stops."""
    _interrupts.armed = True
    return _interrupts.requested


@contextmanager
def deferred_interrupts():
    """The first Ctrl-C or SIGTERM only sets a flag (the training loop saves a checkpoint at
    the end of the batch, then raises RunInterrupted); a second one interrupts at once. Outside
    the main thread (joblib workers' threads) signals cannot be caught: nothing changes.
    (SLURM's USR2 is submitit's: it requeues the job, whose run resumes from ``last.pt``.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        if _interrupts.requested or not _interrupts.armed:
            raise KeyboardInterrupt
        _interrupts.requested = True

    _interrupts.requested = _interrupts.armed = False
    previous = {sig: signal.signal(sig, handler) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, before in previous.items():
            signal.signal(sig, before)
        _interrupts.requested = _interrupts.armed = False


# --- the bundle ``best.pt`` holds, read by rnnbench.inference ------------------------------

FORMAT = 1  # of the bundle; bump when its keys change meaning


def bundle(model: torch.nn.Module, cfg, data) -> dict:
    """What ``best.pt`` holds: ``{"model", "config", "vocab", "label_names", "format"}``.

    ``data`` is the run's ``TaskData`` (vocabulary, text fields, label names). Everything
    but the weights is plain Python (lists, dicts, strings), so the file also loads with
    ``torch.load(..., weights_only=True)``."""
    config = OmegaConf.to_container(cfg, resolve=True, enum_to_str=True) if isinstance(cfg, DictConfig) else dict(cfg)
    config.pop("hydra", None)
    vocab = {"itos": list(data.vocab.itos), "lowercase": bool(data.vocab.lowercase), "fields": list(data.fields)}
    chars = getattr(data.vocab, "chars", None)
    if chars is not None:  # the character vocabulary of a run with a character encoder (embedding.char)
        vocab["chars"] = {"itos": list(chars.itos), "max_word_length": int(chars.max_word_length)}
    return {
        "model": model.state_dict(),
        "config": config,
        "vocab": vocab,
        "label_names": list(data.label_names),
        "format": FORMAT,
    }


def is_bundle(saved: dict) -> bool:
    return isinstance(saved, dict) and {"model", "config", "vocab", "label_names"} <= set(saved)
