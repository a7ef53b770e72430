"""Checkpoints: everything needed to resume a run exactly where it stopped."""
from __future__ import annotations

import os
import random
from pathlib import Path

import torch

LAST = "last.pt"
BEST = "best.pt"


def save(path: Path, **state) -> None:
    """Atomic save: a run killed mid-write keeps its previous checkpoint."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)


def rng_state() -> dict:
    state = {"torch": torch.get_rng_state(), "python": random.getstate()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict) -> None:
    torch.set_rng_state(state["torch"])
    random.setstate(state["python"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def load(path: Path) -> dict | None:
    if not path.exists():
        return None
    return torch.load(path, weights_only=False)
