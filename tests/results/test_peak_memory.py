"""A run's peak memory is its own: a table process trains many runs one after another, and a
run that follows a larger one must not record the larger one's peak."""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys

import pytest
import torch

from rnnbench.results import run_record
from rnnbench.results.run_record import PROCESS, RUN, peak_memory_mb, reset_peak_memory

CPU = torch.device("cpu")


# Run in a fresh process: one that has run other tests holds their memory, which would hide both
# the block before the reset (below the process's earlier peak) and the one after it.
PROBE = """
import json, torch
from rnnbench.results.run_record import peak_memory_mb, reset_peak_memory
cpu = torch.device("cpu")
touch = lambda mb: torch.ones(mb * 2**20 // 4)  # written, so resident
big = touch(400)
del big  # a large block goes back to the system at once (glibc maps it on its own)
before = peak_memory_mb(cpu)
scope = reset_peak_memory(cpu)
after_reset = peak_memory_mb(cpu)
later = touch(200)
print(json.dumps({"before": before, "scope": scope, "after_reset": after_reset, "later": peak_memory_mb(cpu)}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="only Linux lets a process reset its peak resident size")
def test_after_a_reset_the_peak_forgets_an_earlier_larger_allocation_and_sees_a_later_one():
    # glibc's default thresholds: a raised MALLOC_MMAP_THRESHOLD_ would keep the freed block resident
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, env=env).stdout
    peaks = json.loads(out.splitlines()[-1])
    assert peaks["scope"] == RUN
    assert peaks["after_reset"] < peaks["before"] - 300  # the 400 MB before the reset do not count
    assert peaks["later"] > peaks["after_reset"] + 150  # what the run allocates after it does


def test_where_the_platform_cannot_reset_it_the_record_says_the_peak_is_the_process(monkeypatch, tmp_path):
    monkeypatch.setattr(run_record, "CLEAR_REFS", tmp_path / "missing" / "clear_refs")
    monkeypatch.setattr(run_record, "STATUS", tmp_path / "missing" / "status")
    assert reset_peak_memory(CPU) == PROCESS
    assert peak_memory_mb(CPU) == pytest.approx(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
