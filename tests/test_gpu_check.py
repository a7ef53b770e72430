"""scripts/gpu_check.py: its comparison logic on the CPU, and its refusal without CUDA."""
from __future__ import annotations

import pytest
import torch

from tests.helpers import load_script


def _gpu_check():
    return load_script("gpu_check")


def test_without_cuda_it_stops_with_one_line(monkeypatch, capsys):
    module = _gpu_check()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert module.main([]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no CUDA device" in err[0]


def test_the_kernel_comparison_reports_what_ran_and_how_far_apart():
    module = _gpu_check()
    same = module.compare_impls(["encoder=rcrn"], "cpu", "cpu")
    assert set(same["used"]) == {"multi_lstm", "gated_scan"}  # "cpu", or its fallback on a machine without a C compiler
    assert same["states"] <= module.TOLERANCE and same["grad"] <= module.TOLERANCE


def test_the_report_names_the_device_and_the_code_that_ran(monkeypatch):
    module = _gpu_check()
    monkeypatch.setenv("RNNBENCH_COMMIT", "ignored-inside-a-checkout")
    text = module.report("Test GPU", {"part": [("rcrn", True, "fine")]}, "not run")
    assert "Device: **Test GPU**" in text and "| rcrn | pass | fine |" in text
    from rnnbench.results.run_record import git_commit

    assert f"code {git_commit(module.REPO)};" in text and "ignored-inside-a-checkout" not in text


def test_a_check_cut_short_keeps_the_parts_it_finished(monkeypatch, tmp_path):
    module = _gpu_check()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *_: "Test GPU")
    monkeypatch.setattr(module, "kernel_checks", lambda device: [("rcrn", True, "kernels fine")])

    def training_checks(device):  # the lease runs out during the second part
        raise KeyboardInterrupt

    monkeypatch.setattr(module, "training_checks", training_checks)
    with pytest.raises(KeyboardInterrupt):
        module.main(["--out", str(tmp_path), "--skip-cost"])
    text = (tmp_path / "gpu.md").read_text()
    assert "## Triton kernels against the reference on CUDA: 1 of 1 passed" in text and "| rcrn | pass | kernels fine |" in text
    assert "A short training run" not in text and "not run yet (the check stopped before it)" in text

    monkeypatch.setattr(module, "training_checks", lambda device: [("lstm1", False, "nan loss")])
    assert module.main(["--out", str(tmp_path), "--skip-cost"]) == 1  # a failed check fails the run
    text = (tmp_path / "gpu.md").read_text()
    assert "| lstm1 | **FAIL** | nan loss |" in text and "not run (--skip-cost)" in text
