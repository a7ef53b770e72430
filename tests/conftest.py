"""Shared test fixtures, the environment every test runs in, and the test tiers.

Real-data tests read RNNBENCH_DATA (../shared/data in development and CI) and skip,
saying so, only when that folder is absent.

Tiers (markers declared in pyproject.toml; ``make test-fast`` runs ``-m "not slow"``):

- ``realdata``: every test that reads the real data folder. Added here to every test
  that asks for the ``real_data`` fixture; tests that reach the folder another way
  (tests/test_configs.py's smoke runs) mark themselves.
- ``slow``: tests that take more than a few seconds. Added here to every kernel test
  run by Triton's interpreter (an implementation parameter ``"triton"``); the others
  (training runs, subprocesses, sweeps, launchers) carry ``@pytest.mark.slow``.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("WANDB_MODE", "disabled")
# The sanity gate in front of a table's runs (docs/sanity.md) is off: the suite's tiny smoke models
# are not meant to pass it; tests of the gate switch it on (tests/campaign/test_sanity_gate.py).
os.environ.setdefault("RNNBENCH_SANITY_GATE", "off")
# The kernel tests run the Triton kernels on CPU tensors, in Triton's interpreter, which
# is read when a kernel is defined: set here, before any test module imports Triton (the
# one place: `pytest`, `make test` and `make test-fast` all get it; subprocesses inherit it).
os.environ["TRITON_INTERPRET"] = "1"

REPO = Path(__file__).resolve().parent.parent


def _real_data_dir() -> Path:
    return Path(os.environ.get("RNNBENCH_DATA", REPO.parent / "shared" / "data")).resolve()


def pytest_collection_modifyitems(config, items):
    """Apply the tiers by rule: ``realdata`` to users of the ``real_data`` fixture,
    ``slow`` to the Triton-interpreter kernel tests."""
    for item in items:
        if "real_data" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.realdata)
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "kernels" in item.path.parts and any(isinstance(v, str) and v == "triton" for v in params.values()):
            item.add_marker(pytest.mark.slow)


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
