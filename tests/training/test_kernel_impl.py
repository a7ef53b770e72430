"""trainer.kernel_impl chooses the recurrence kernels' implementation, and the record says what ran."""
from __future__ import annotations

import pytest

from rnnbench.compose import compose_config
from rnnbench.config import validate
from rnnbench.errors import ConfigError
from rnnbench.kernels import dispatch
from rnnbench.run import train
from tests.helpers import smoke_config

TINY = ["encoder=rcrn", "task.reader.train_size=40", "task.reader.dev_size=16", "task.reader.test_size=16", "encoder.hidden_size=8", "trainer.max_batches=2"]


@pytest.fixture
def restore_default_impl():
    yield
    dispatch.set_default_impl("auto")


@pytest.mark.parametrize("impl", dispatch.CHOICES)
def test_every_kernel_implementation_name_is_accepted(impl, tmp_path):
    validate(compose_config([f"trainer.kernel_impl={impl}", f"paths.runs_dir={tmp_path}"]))


def test_an_unknown_kernel_implementation_is_one_line_naming_it(tmp_path):
    with pytest.raises(ConfigError, match=r"trainer.kernel_impl=tritn: .*did you mean trainer.kernel_impl=triton\?"):
        validate(compose_config(["trainer.kernel_impl=tritn", f"paths.runs_dir={tmp_path}"]))


def test_the_chosen_implementation_runs_and_is_recorded(tmp_path, restore_default_impl):
    reference = train(smoke_config(tmp_path / "r", *TINY, "trainer.kernel_impl=reference"), say=lambda _: None)
    assert reference["kernel_implementations"] == {"multi_lstm": "reference", "gated_scan": "reference"}
    assert dispatch.get_default_impl() == "auto"  # given to the run's encoder, not set for the whole process
    auto = train(smoke_config(tmp_path / "a", *TINY), say=lambda _: None)
    expected = "cpu" if dispatch.c_compiler_available() else None  # without a compiler: the fallback, with a warning
    assert set(auto["kernel_implementations"]) == {"multi_lstm", "gated_scan"}
    if expected:
        assert set(auto["kernel_implementations"].values()) == {expected}
    # another implementation may sum floats in another order: a run of its own (auto is left out of the identity)
    assert auto["identity"] != reference["identity"]
