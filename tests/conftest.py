"""Shared test fixtures.

Real-data tests read RNNBENCH_DATA (../shared/data in development and CI) and skip,
saying so, only when that folder is absent.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("WANDB_MODE", "disabled")

REPO = Path(__file__).resolve().parent.parent


def _real_data_dir() -> Path:
    return Path(os.environ.get("RNNBENCH_DATA", REPO.parent / "shared" / "data")).resolve()


@pytest.fixture(scope="session")
def real_data() -> Path:
    """The real data directory; the test is skipped (with the reason) if it is absent."""
    root = _real_data_dir()
    if not root.is_dir():
        pytest.skip(f"real data folder {root} is absent (set RNNBENCH_DATA to run this test)")
    return root


@pytest.fixture
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="module")
def one_thread():
    """Tiny models and tensors run fastest on one thread: more intra-op threads only add
    hand-offs, and crawl on a shared machine. Use with ``pytestmark`` or as an argument."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
