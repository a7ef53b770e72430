"""The checkpoint schema (TrainState), old checkpoints' dict form, atomic saves, the RNG round trip,
resuming from what is on disk, and the optimiser built from config."""
from __future__ import annotations

import random
from pathlib import Path

import pytest
import torch

from rnnbench.compose import compose_config
from rnnbench.run import train
from rnnbench.training import checkpoint
from rnnbench.training.checkpoint import TrainState
from rnnbench.training.loop import build_optimizer
from tests.helpers import smoke_config

# The state dict a checkpoint held before TrainState: no best_dev, losses or stopped until set.
OLD_STATE = {"epoch": 1, "batch": 4, "best": 0.5, "best_epoch": 1, "bad_epochs": 0, "history": [{"epoch": 1, "dev_loss": 1.0}],
             "epoch_seconds": 2.0, "train_seconds": 7.5, "tokens": 1234, "step": 14}


def test_train_state_round_trips_and_reads_the_old_dict_form():
    state = TrainState.from_dict(OLD_STATE)
    assert (state.epoch, state.batch, state.step, state.tokens, state.best) == (1, 4, 14, 1234, 0.5)
    assert state.best_dev == {} and state.losses == [] and not state.stopped
    assert TrainState.from_dict(state.to_dict()) == state
    # an old early-stopped checkpoint set the epoch counter to the cap: still finished
    assert TrainState.from_dict({**OLD_STATE, "epoch": 3}).finished(3)
    assert not state.finished(3) and TrainState(stopped=True).finished(3)


def test_last_checkpoint_is_a_plain_dict_that_loads_on_the_cpu(tmp_path):
    model = torch.nn.Linear(2, 2)
    optimizer = torch.optim.Adam(model.parameters())
    state = TrainState(epoch=2, batch=3, losses=[0.5, 0.25], stopped=True)
    checkpoint.save_last(tmp_path, model, optimizer, state, rng=checkpoint.rng_state())
    saved = torch.load(tmp_path / checkpoint.LAST, map_location="cpu", weights_only=True)  # nothing but tensors and builtins
    assert set(checkpoint.RESUME_KEYS) <= set(saved) and TrainState.from_dict(saved["state"]) == state


def test_early_stopping_sets_the_stopped_flag_not_the_epoch_counter(tmp_path, monkeypatch):
    from rnnbench.results import patience

    monkeypatch.setattr(patience, "task_baseline", lambda task, dev: -1.0)  # every score beats it: patience counts at once
    rec = train(smoke_config(tmp_path, "task.reader.train_size=60", "task.reader.dev_size=30", "task.reader.test_size=30",
                             "encoder.hidden_size=8", "trainer.epochs=10", "trainer.patience=1", "trainer.lr=0.0"), say=lambda _: None)
    saved = torch.load(next((tmp_path / "runs").glob("picking/bilstm/*/last.pt")), weights_only=False)
    assert rec["epochs_run"] == 2 and saved["state"]["stopped"] and saved["state"]["epoch"] == 2


@pytest.mark.parametrize("name, cls", [("adam", torch.optim.Adam), ("adadelta", torch.optim.Adadelta), ("sgd", torch.optim.SGD)])
def test_optimizer_from_config(name, cls):
    cfg = compose_config([f"trainer.optimizer={name}", "trainer.lr=0.25", "trainer.weight_decay=0.01"])
    optimizer = build_optimizer(cfg, [torch.nn.Parameter(torch.zeros(2))])
    assert type(optimizer) is cls
    assert optimizer.defaults["lr"] == 0.25 and optimizer.defaults["weight_decay"] == 0.01


def test_a_failed_save_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    """Atomic: a save that dies mid-write (here: after half the file) leaves the last good
    checkpoint in place and no temporary file."""
    path = tmp_path / checkpoint.LAST
    checkpoint.save(path, model={"w": torch.ones(3)})
    real_save = torch.save

    def half_then_fail(obj, target, *args, **kwargs):
        real_save(obj, target, *args, **kwargs)
        Path(target).write_bytes(Path(target).read_bytes()[:100])
        raise RuntimeError("killed mid-write")

    monkeypatch.setattr(torch, "save", half_then_fail)
    with pytest.raises(RuntimeError, match="mid-write"):
        checkpoint.save(path, model={"w": torch.zeros(3)})
    monkeypatch.undo()
    assert torch.equal(checkpoint.load(path)["model"]["w"], torch.ones(3))
    assert [p.name for p in tmp_path.iterdir()] == [checkpoint.LAST]


def test_the_rng_state_round_trips_through_a_checkpoint(tmp_path):
    """Resuming restores torch's and Python's generators: the draws after the save repeat."""
    torch.manual_seed(5)
    random.seed(5)
    checkpoint.save(tmp_path / checkpoint.LAST, rng=checkpoint.rng_state())
    expected = (torch.rand(4), random.random())
    torch.manual_seed(6)
    random.seed(6)
    checkpoint.set_rng_state(checkpoint.load(tmp_path / checkpoint.LAST, map_location="cpu")["rng"])
    again = (torch.rand(4), random.random())
    assert torch.equal(again[0], expected[0]) and again[1] == expected[1]


def _resumable(run_dir: Path, best_epoch: int) -> None:
    model = torch.nn.Linear(2, 2)
    checkpoint.save_last(run_dir, model, torch.optim.SGD(model.parameters(), lr=0.1), TrainState(epoch=1, best_epoch=best_epoch),
                         rng=checkpoint.rng_state())


def test_load_for_resume(tmp_path):
    """None without a checkpoint; the checkpoint when complete; moved aside with one warning
    line (and None: restart) when it lacks a resume key or the best weights it names."""
    said = []
    assert checkpoint.load_for_resume(tmp_path, say=said.append) is None and said == []
    _resumable(tmp_path, best_epoch=-1)
    saved = checkpoint.load_for_resume(tmp_path, say=said.append)
    assert TrainState.from_dict(saved["state"]).epoch == 1 and said == []

    _resumable(tmp_path, best_epoch=1)  # best epoch 1 but no best.pt
    assert checkpoint.load_for_resume(tmp_path, say=said.append) is None
    assert len(said) == 1 and "best.pt" in said[0] and "restarting" in said[0]
    assert not (tmp_path / checkpoint.LAST).exists() and len(list(tmp_path.glob("last.pt.damaged-*"))) == 1

    checkpoint.save(tmp_path / checkpoint.LAST, model={}, state={})  # no optimizer, no rng
    assert checkpoint.load_for_resume(tmp_path, say=said.append) is None
    assert len(said) == 2 and "not a resumable checkpoint (no optimizer, rng)" in said[1]


def test_a_run_computes_its_identity_once_for_its_folder_and_its_record(tmp_path, monkeypatch):
    from rnnbench import run as run_module
    from rnnbench.results import identity, run_record

    calls = []
    counted = lambda cfg: calls.append(1) or identity.run_identity(cfg)  # noqa: E731
    monkeypatch.setattr(run_module, "run_identity", counted)
    monkeypatch.setattr(run_record, "run_identity", lambda cfg: pytest.fail("the record computed the identity again"))
    cfg = smoke_config(tmp_path, "task.reader.train_size=60", "task.reader.dev_size=30", "task.reader.test_size=30")
    rec = train(cfg)
    assert calls == [1] and rec["identity"] == identity.run_identity(cfg)
    assert rec["run_dir"].endswith(rec["identity"][:12])
