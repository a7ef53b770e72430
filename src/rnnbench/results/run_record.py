"""A finished run's record (``record.json``): what ran, on what, and what it scored.

The training loop passes plain values in (counts, the training state's numbers, the test
scores); this module adds what describes the run itself: its identity, component versions
and data fingerprint, the git commit of the code, the hardware and peak memory. It never
imports ``rnnbench.training``.
"""
from __future__ import annotations

import os
import platform
import resource
import subprocess
from pathlib import Path

import torch
from omegaconf import DictConfig, OmegaConf

from rnnbench.results import timing
from rnnbench.results.identity import component_versions, data_fingerprint, run_identity
from rnnbench.results.record_format import Record

PACKAGE = Path(__file__).resolve().parents[1]  # the installed rnnbench package (src/rnnbench in a checkout)


def git_commit(where: Path = PACKAGE) -> str:
    """The commit of the code that ran (``-dirty`` when tracked files outside ``results/`` differ:
    a table assembled mid-campaign changes results, not code), or "unknown":
    an installed package that is not inside a git checkout has none. A checkout copied
    without its ``.git`` (to a GPU machine or a cluster node) is named by ``RNNBENCH_COMMIT``,
    which whoever copied it sets; it is used only where git finds no repository."""
    named = os.environ.get("RNNBENCH_COMMIT", "").strip() or "unknown"
    if "site-packages" in where.parts:  # a wheel install: a repository around the venv is not this code
        return named
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=5).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ":/", ":(top,exclude)results"], cwd=where, capture_output=True, text=True, timeout=5).stdout.strip()
        return head + ("-dirty" if dirty else "") if head else named
    except (OSError, subprocess.SubprocessError):
        return named


ALLOCATOR_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")


def hardware(device: torch.device) -> dict:
    """Device, torch and Python versions, threads, CPU model and count, GPU name, and the allocator
    settings in the environment (timings only)."""
    info = {"device": str(device), "torch": torch.__version__, "threads": torch.get_num_threads(), "machine": platform.machine(), "python": platform.python_version()}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    info["cpu_count"] = os.cpu_count()
    # glibc's allocator thresholds change a CPU step's time, never its numbers (scripts/bench_malloc.py)
    allocator = {k: os.environ[k] for k in ALLOCATOR_SETTINGS if k in os.environ}
    if allocator:
        info["allocator"] = allocator
    if device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(device)
    return info


# Linux resets a process's peak resident size (VmHWM) when "5" is written here (proc(5), since 4.0).
CLEAR_REFS = Path("/proc/self/clear_refs")
STATUS = Path("/proc/self/status")
RUN, PROCESS = "run", "process"  # what peak_memory_mb covers: this run alone, or the whole process so far


def reset_peak_memory(device: torch.device) -> str:
    """Start counting peak memory for a run; returns its scope. A table process trains many runs:
    without a reset each run's peak would be the largest of every run before it. ``RUN``: reset (CUDA,
    or Linux's VmHWM); ``PROCESS``: the platform cannot reset it, so the peak is the process's."""
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
        return RUN
    try:
        CLEAR_REFS.write_text("5")
        _resident_peak_kb()
    except (OSError, ValueError):
        return PROCESS
    return RUN


def peak_memory_mb(device: torch.device) -> float:
    """Peak GPU memory allocated by torch on CUDA, else the peak resident size, since
    ``reset_peak_memory`` where it could reset it (else since the process started)."""
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**20
    try:
        return _resident_peak_kb() / 1024
    except (OSError, ValueError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _resident_peak_kb() -> int:
    for line in STATUS.read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise ValueError(f"{STATUS} has no VmHWM line")


def build_record(
    cfg: DictConfig,
    run_dir: Path,
    *,
    identity: str | None = None,
    device: torch.device,
    encoder_parameters: int,
    model_parameters: int,
    best_epoch: int,
    best_dev: dict,
    history: list[dict],
    tokens: int,
    status: str,
    majority_baseline: float | None,
    train_seconds: float,
    test_scores: dict,
    test_stats: dict,
    test_seconds: float,
    test_predicted: int,
    test_examples: int,
    data: dict,
    metric_implementations: dict,
    kernel_implementations: dict,
    world_size: int = 1,
    peak_memory_scope: str = PROCESS,
    extra: dict | None = None,
) -> dict:
    """The record of a finished run, from plain values (see the module docstring), as its JSON holds
    it: ``Record`` (results/record_format.py) gives its shape and format."""
    return Record(
        identity=identity or run_identity(cfg),  # the caller's, computed once for the run folder
        versions=component_versions(cfg),
        data_fingerprint=data_fingerprint(cfg),
        run_dir=str(run_dir),
        task=cfg.task.name,
        encoder=cfg.encoder.name,
        embedding=cfg.embedding.name,
        seed=cfg.seed,
        experiment=cfg.get("experiment"),
        config=OmegaConf.to_container(cfg, resolve=True),
        git_commit=git_commit(),
        encoder_parameters=encoder_parameters,
        model_parameters=model_parameters,
        best_epoch=best_epoch,
        epochs_run=len(history),
        dev=best_dev,
        test=test_scores,
        test_stats=test_stats,
        metric_implementations=metric_implementations,
        kernel_implementations=kernel_implementations,  # {kernel op: implementation that ran}
        history=history,
        # The patience rule (results/patience.py): "trained", or "did not train" (never beat the
        # dev split's majority-class score, the baseline; None where the task's metric has none).
        status=status,
        majority_baseline=majority_baseline,
        seconds_per_epoch=sum(h["train_seconds"] for h in history) / max(len(history), 1),
        tokens_per_second=tokens / max(train_seconds, 1e-9),
        **timing.record_means(history),  # what the seconds were measured under: CPU time, the machine's load
        # Inference cost: the test pass (scoring excluded) over the examples it predicted.
        test_seconds=test_seconds,
        inference_seconds_per_example=test_seconds / max(test_predicted, 1),
        peak_memory_mb=peak_memory_mb(device),
        peak_memory_scope=peak_memory_scope,  # RUN: since the run started or resumed; PROCESS: since the process started
        # max_eval_batches scores part of the test split: a smoke run, which tables refuse
        test_examples_scored=test_predicted, smoke=test_predicted < test_examples,
        world_size=world_size,  # processes that trained the run together (torchrun); 1 = one process
        hardware=hardware(device),
        data=data,
        extra=dict(extra or {}),
    ).as_dict()
