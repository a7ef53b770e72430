"""scripts/bench_malloc.py: a training step timed in a child per allocator setting, the table it
writes, and the run record naming the setting it ran under (the full benchmark takes minutes:
results/diagnostics/malloc.md)."""
from __future__ import annotations

import torch

from rnnbench.results.run_record import ALLOCATOR_SETTINGS, hardware
from tests.helpers import REPO, load_script

bench = load_script("bench_malloc")


def test_a_child_times_steps_counts_faults_and_hashes_the_trained_parameters():
    first = bench.child("bilstm", 8, 1)
    assert first["seconds"] > 0 and first["faults"] >= 0 and len(first["hash"]) == 40
    assert bench.child("bilstm", 8, 1)["hash"] == first["hash"]  # seeded: the same steps give the same weights


def test_the_table_gives_the_ratio_within_each_round_and_flags_differing_parameters():
    def cell(seconds, digest="a"):
        return {"seconds": seconds, "faults": 10.0, "hash": digest}

    results = {"bilstm": [{"default": cell(1.0), "on the heap": cell(0.8)}, {"default": cell(2.0), "on the heap": cell(1.0)}],
               "rcrn": [{"default": cell(1.0), "on the heap": cell(1.0, "b")}]}
    args = type("Args", (), {"rounds": 2, "length": 8, "steps": 1})
    info = {"date": "2026-12-06", "commit": "abc1234", "cpu": "AMD EPYC", "torch": "2.13.0", "libc": "glibc 2.36", "load": "1.00"}
    text = bench.markdown(results, args, info)
    assert "| bilstm | 1.500 | 0.900 | 0.65 | 0.80, 0.50 | 10 | 10 | yes |" in text
    assert "| rcrn |" in text and text.rstrip().splitlines()[-3].endswith("| NO |")
    assert "MALLOC_MMAP_THRESHOLD_=4294967296" in text


def test_a_run_record_names_the_allocator_settings_it_ran_under(monkeypatch):
    for name in bench.KEEP_ON_HEAP:
        monkeypatch.delenv(name, raising=False)
    assert "allocator" not in hardware(torch.device("cpu"))
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "4294967296")
    assert hardware(torch.device("cpu"))["allocator"] == {"MALLOC_MMAP_THRESHOLD_": "4294967296"}
    assert set(bench.KEEP_ON_HEAP) == set(ALLOCATOR_SETTINGS)  # the benchmark measures what records name


def test_make_sets_the_values_the_benchmark_measures():
    makefile = (REPO / "Makefile").read_text()
    for name, value in bench.KEEP_ON_HEAP.items():
        assert f"export {name} ?= {value}" in makefile
