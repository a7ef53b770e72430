"""scripts/bench_scan.py: the gated scan's traffic, its targets and tables, and its refusal without CUDA.
Its whole path at tiny sizes on the CPU runs in tests/test_gpu_check.py (--quick)."""
from __future__ import annotations

import pytest
import torch

from tests.helpers import load_script


@pytest.fixture(scope="module")
def scan():
    return load_script("bench_scan")


def test_the_traffic_counts_each_tensor_once(scan):
    full = 4 * 32 * 256 * 400  # one float32 [32, 256, 400] tensor: RCRN's listener at length 256
    assert 3 * full == 39_321_600  # its three inputs: the 39 MB the scan reads at length 256
    assert scan.traffic(32, 256, 400, "inference") == 4 * full + 32 * 256 + 4 * 32 * 400
    assert scan.traffic(32, 256, 400, "training forward") == 5 * full + 32 * 256 + 4 * 32 * 400
    assert scan.traffic(32, 256, 400, "backward") == 8 * full + 32 * 256 + 2 * 4 * 32 * 400
    with pytest.raises(ValueError, match="unknown phase"):
        scan.traffic(1, 1, 1, "sideways")


def test_without_cuda_it_refuses_in_one_line(scan, monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert scan.main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: the gated-scan bandwidth needs a CUDA GPU") and err.count("\n") == 1


def _result(scan):
    big = [{"B": 64, "T": 4096, "D": 2048, "phase": phase, "bytes": 8_000_000_000, "scan_ms": ms, "copy_ms": 2.5}
           for phase, ms in (("inference", 3.0), ("training forward", 5.0), ("backward", 2.5))]
    ours = [{"B": 32, "T": 256, "D": 400, "phase": "inference", "bytes": 48_000_000, "scan_ms": 0.020, "copy_ms": 0.019},
            {"B": 32, "T": 256, "D": 400, "phase": "backward", "bytes": 96_000_000, "scan_ms": 0.200, "copy_ms": 0.035}]
    return {"large": big, "ours": ours, "copy_gbps": 3200.0, "configs": {"gated_scan._forward_kernel": {"400, True": "BLOCK_D=64"}}}


def test_the_targets_are_the_copy_share_on_the_large_problem_and_the_floor_at_our_sizes(scan):
    got = {what: (met, detail) for what, met, detail in scan.targets(_result(scan))}
    assert got["scan inference, large problem: ≥ 70% of copy bandwidth"] == (True, "83%")
    assert got["scan training forward, large problem: ≥ 70% of copy bandwidth"] == (False, "50%")
    # floor: 48 MB at 3,200 GB/s = 15 µs; 20 µs is 1.3x of it
    assert got["scan inference, length 256: ≤ 1.5× the bandwidth floor"] == (True, "1.3× (20 µs against 15.0 µs)")
    assert got["scan backward, length 256: ≤ 1.5× the bandwidth floor"][0] is False


def test_the_tables_give_bandwidth_floor_and_time_per_step(scan):
    text = "\n".join(scan.markdown(_result(scan), "on a test device"))
    assert text.startswith("Timed on a test device.")
    assert "| inference | 8,000 | 3.000 | 2,667 | 2.500 | 3,200 | 83% |" in text
    assert "| 256 | inference | 48.0 | 20.0 | 0.08 | 15.0 | 1.3× | 19.0 |" in text
    assert "- `gated_scan._forward_kernel`: 400, True → BLOCK_D=64" in text
