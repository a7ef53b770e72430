"""scripts/gpu_check.py: its comparison logic on the CPU, its refusal without CUDA, the report, the
time estimate, the cost targets, and (--quick) the whole path end to end on the CPU."""
from __future__ import annotations

import pytest
import torch

from rnnbench.results import evidence
from tests.helpers import load_script


def _gpu_check():
    return load_script("gpu_check")


def test_without_cuda_it_stops_with_one_line(monkeypatch, capsys):
    module = _gpu_check()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert module.main([]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no CUDA device" in err[0] and "--quick" in err[0]


def test_the_kernel_comparison_reports_what_ran_and_how_far_apart():
    module = _gpu_check()
    same = module.compare_impls(["encoder=rcrn"], "cpu", "cpu")
    assert set(same["used"]) == {"multi_lstm", "gated_scan"}  # "cpu", or its fallback on a machine without a C compiler
    assert same["states"] <= module.TOLERANCE and same["grad"] <= module.TOLERANCE


def test_the_report_names_the_device_and_the_code_that_ran(monkeypatch):
    module = _gpu_check()
    monkeypatch.setenv("RNNBENCH_COMMIT", "ignored-inside-a-checkout")
    text = module.report("Device: **Test GPU**", {"part": [("rcrn", True, "fine")]}, {"Cost table": ["not run"]},
                         {"cost table": 120.0, "training runs": 60.0})
    assert "Device: **Test GPU**" in text and "| rcrn | pass | fine |" in text and "## Cost table\n\nnot run" in text
    assert "Estimated beforehand: 3.0 minutes (cost table 120 s, training runs 60 s)" in text and "Dry run" not in text
    from rnnbench.results.run_record import git_commit

    assert f"code {git_commit(module.REPO)};" in text and "ignored-inside-a-checkout" not in text
    assert module.report("CPU", {}, {}, quick=True).count("Dry run (`--quick`)") == 1


def test_the_device_line_names_driver_cuda_cudnn_torch_and_triton(monkeypatch):
    module = _gpu_check()
    bench_cost = load_script("bench_cost")
    info = {"cpu": "Test CPU", "gpu": "Test GPU", "driver": "580.1", "cuda": "13.0", "cudnn": 91900, "torch": "2.11", "triton": "3.6"}
    monkeypatch.setattr(module, "_script", lambda name: bench_cost)
    monkeypatch.setattr(bench_cost, "machine", lambda threads, device: info)
    line = module.device_line("cuda")
    assert line.startswith("Device: **Test GPU**; driver 580.1, CUDA 13.0, cuDNN 91900; torch 2.11, Triton 3.6, Python ")


def test_the_whole_check_is_estimated_under_eight_minutes_from_the_committed_cuda_timings():
    module = _gpu_check()
    estimate = module.estimate_seconds()
    assert set(estimate) == {*module.ALLOWANCE_S, "cost table"}
    # the committed table (NVIDIA H200): 11 rows x 5 lengths x 2 phases, at least 3 warm-up calls and 5 timed rounds
    # each, and profiles, in 3.7 minutes; the check as a whole took 6.6
    assert 120 < estimate["cost table"] < 300
    assert sum(estimate.values()) < 8 * 60


def test_the_cost_targets_are_medians_of_ratios_to_the_fast_baseline_in_the_same_round(tmp_path):
    module = _gpu_check()
    bench = load_script("bench_cost")
    base = bench.FAST_BASELINE
    rounds = [0.010, 0.020, 0.012]
    times = {bench.TRAIN: {bench.BASELINE: rounds, base: rounds, "rcrn": [t * 0.5 for t in rounds], "fhe": [t * 1.3 for t in rounds]},
             bench.INFER: {bench.BASELINE: rounds, base: rounds, "rcrn": [t * 0.7 for t in rounds], "fhe": [t * 1.1 for t in rounds]}}
    names = list(times[bench.TRAIN])
    rows = bench.evidence_rows({16: times, 32: times}, dict.fromkeys(names, 1), dict.fromkeys(names, "{}"),
                               {"cpu": "cpu", "threads": 1, "device": "cuda", "gpu": "Test GPU"}, "c")
    evidence.write_csv(tmp_path / "cost.csv", rows)
    got = {what: (met, detail) for what, met, detail in module.cost_targets(tmp_path / "cost.csv")}
    assert got[f"`rcrn` train ≤ 0.6× `{base}`"] == (True, "len 16: 0.50×, len 32: 0.50×")
    assert got[f"`rcrn` infer ≤ 0.6× `{base}`"] == (False, "len 16: 0.70×, len 32: 0.70×")
    assert got[f"`fhe` train ≤ 1.2× `{base}`"][0] is False and got[f"`fhe` infer ≤ 1.2× `{base}`"][0] is True
    assert not any("mzu_cap" in what for what in got)  # not measured: no line


def test_a_check_cut_short_keeps_the_parts_it_finished(monkeypatch, tmp_path):
    module = _gpu_check()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(module, "device_line", lambda device: "Device: **Test GPU**")
    monkeypatch.setattr(module, "estimate_seconds", lambda: {"all": 60.0})
    monkeypatch.setattr(module, "kernel_checks", lambda device, quick: [("rcrn", True, "kernels fine")])

    def scan_bandwidth(device, quick):  # the lease runs out during the second part
        raise KeyboardInterrupt

    monkeypatch.setattr(module, "scan_bandwidth", scan_bandwidth)
    with pytest.raises(KeyboardInterrupt):
        module.main(["--out", str(tmp_path), "--skip-cost"])
    text = (tmp_path / "gpu.md").read_text()
    assert "## Triton kernels against the reference on CUDA: 1 of 1 passed" in text and "| rcrn | pass | kernels fine |" in text
    assert "Gated-scan bandwidth" not in text and "A short training run" not in text

    monkeypatch.setattr(module, "scan_bandwidth", lambda device, quick: ([("gated scan bandwidth", True, "timed")], ["| table |"],
                                                                           [("scan target", False, "40%")]))
    monkeypatch.setattr(module, "training_checks", lambda device, quick: [("lstm1", False, "nan loss")])
    assert module.main(["--out", str(tmp_path), "--skip-cost"]) == 1  # a failed check fails the run
    text = (tmp_path / "gpu.md").read_text()
    assert "| lstm1 | **FAIL** | nan loss |" in text and "not run (--skip-cost)" in text
    assert "| scan target | **no** | 40% |" in text  # a target not met is reported, and fails nothing by itself


@pytest.mark.slow  # the whole path on the CPU: kernels in the interpreter, the scan, the cost benchmark, one training run (~2 min)
def test_quick_runs_the_whole_check_on_the_cpu_and_writes_every_part(tmp_path, monkeypatch):
    module = _gpu_check()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert module.main(["--quick", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "gpu.md").read_text()
    assert "Dry run (`--quick`)" in text and "(CPU)**" in text
    assert "## Triton kernels against the reference (Triton's interpreter, CPU): 5 of 5 passed" in text
    assert "## Gated-scan bandwidth: 1 of 1 passed" in text and "| inference |" in text
    assert "## Cost table: 1 of 1 passed" in text and "## A short training run of one encoder on CPU: 1 of 1 passed" in text
    assert "| `rcrn` train ≤ 0.6× `3l_bilstm_padded` |" in text and "scan backward, length 4" in text
    table = (tmp_path / "rcrn_table10.md").read_text()
    assert "## How it was timed: warm-up, kernels, profiles" in table and "| `3l_bilstm_packed` | train |" in table
    assert {r["encoder"] for r in evidence.read_csv(tmp_path / "rcrn_table10.csv")} == \
        {"3l_bilstm", "3l_bilstm_padded", "3l_bilstm_packed", "rcrn", "fhe"}
