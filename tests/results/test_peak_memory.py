"""A run's peak memory is its own: a table process trains many runs one after another, and a
run that follows a larger one must not record the larger one's peak."""
from __future__ import annotations

import resource
import sys

import pytest
import torch

from rnnbench.results import run_record
from rnnbench.results.run_record import PROCESS, RUN, peak_memory_mb, reset_peak_memory

CPU = torch.device("cpu")
MB = 2**20


def _touch(megabytes: int) -> torch.Tensor:
    return torch.ones(megabytes * MB // 4)  # written, so resident


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="only Linux lets a process reset its peak resident size")
def test_after_a_reset_the_peak_forgets_an_earlier_larger_allocation_and_sees_a_later_one():
    big = _touch(400)
    del big  # a large block goes back to the system at once (glibc maps it on its own)
    peak_before = peak_memory_mb(CPU)
    assert reset_peak_memory(CPU) == RUN
    after_reset = peak_memory_mb(CPU)
    assert after_reset < peak_before - 300  # the 400 MB before the reset do not count
    later = _touch(200)
    assert peak_memory_mb(CPU) > after_reset + 150  # what the run allocates after it does
    del later


def test_where_the_platform_cannot_reset_it_the_record_says_the_peak_is_the_process(monkeypatch, tmp_path):
    monkeypatch.setattr(run_record, "CLEAR_REFS", tmp_path / "missing" / "clear_refs")
    monkeypatch.setattr(run_record, "STATUS", tmp_path / "missing" / "status")
    assert reset_peak_memory(CPU) == PROCESS
    assert peak_memory_mb(CPU) == pytest.approx(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
