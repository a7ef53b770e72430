"""What a run's seconds measured: wall time beside process CPU time and the machine's load.

Wall-clock seconds on a shared machine say as much about the other processes as about the
run (identical configs took 3-4x longer per epoch when the cores were oversubscribed). So
each epoch's training also records

- ``train_cpu_seconds``: the process's CPU time over the same span (``time.process_time``:
  user + system time of every thread of the process). A run that waited for a core shows
  CPU seconds well below its wall seconds x threads;
- ``load_average``: the machine's 1-minute load average at the end of the epoch's training
  (``os.getloadavg``: processes running or waiting for a CPU; above the CPU count, runs wait).

The record keeps their means over epochs (``cpu_seconds_per_epoch``, ``load_average``), the
evidence CSV carries them per run, and a table's cost section says under what load its
seconds per epoch were measured ("load not recorded" for runs made before 2026-11-28).
None of this is part of the run identity: it describes the machine, not the computation.
"""
from __future__ import annotations

import os
import statistics
import time

CPU_SECONDS = "train_cpu_seconds"  # per epoch, in the history
LOAD = "load_average"  # per epoch in the history; the mean over epochs in the record and the evidence
RECORD_CPU = "cpu_seconds_per_epoch"  # the record's and the evidence's mean over epochs


def cpu_seconds() -> float:
    """The process's CPU time so far (all threads, user + system)."""
    return time.process_time()


def load_average() -> float | None:
    """The machine's 1-minute load average, or None where the system has none (Windows)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def record_means(history: list[dict]) -> dict:
    """The record's ``cpu_seconds_per_epoch`` and ``load_average``: means over the epochs that
    recorded them (None where none did: a run resumed from a checkpoint written before them
    records only its later epochs)."""
    def mean(key: str) -> float | None:
        values = [h[key] for h in history if h.get(key) is not None]
        return statistics.fmean(values) if values else None

    return {RECORD_CPU: mean(CPU_SECONDS), LOAD: mean(LOAD)}


def _number(value) -> float | None:
    return None if value in (None, "") else float(value)


def cost_note(runs: list[dict]) -> str:
    """The line under a table's cost columns: what "s / training epoch" measured and under what load,
    from evidence rows (one per run); per kind of device where runs ran on several (a GPU machine's
    load counts its own cores and workers, not comparable with a CPU machine's)."""
    what = ("s / training epoch: wall-clock seconds of training per epoch (dev evaluation excluded), "
            "the mean over each row's reported runs")
    loads = [v for v in (_number(r.get(LOAD)) for r in runs) if v is not None]
    if not loads:
        return (f"{what}; load not recorded (runs made before the load average was recorded): on a shared "
                "machine these seconds vary several-fold with the other processes, so compare rows' "
                "costs on a benchmark timed in one process (RCRN Table 10), not on this column.")
    by_device: dict[str, list[dict]] = {}
    for r in runs:
        by_device.setdefault(r.get("device") or "", []).append(r)
    if len(by_device) == 1:
        return f"{what}; {_measured_under(runs)}."
    return f"{what}; " + "; ".join(f"on {device or 'an unrecorded device'}, {_measured_under(group)}"
                                   for device, group in sorted(by_device.items())) + "."


def _measured_under(runs: list[dict]) -> str:
    """The load and the CPU share of ``runs``' seconds (``cost_note``)."""
    loads = [v for v in (_number(r.get(LOAD)) for r in runs) if v is not None]
    if not loads:
        return f"load not recorded ({len(runs)} runs)"
    share = "" if len(loads) == len(runs) else f" (recorded for {len(loads)} of {len(runs)} runs)"
    text = (f"measured at a mean 1-minute load average of {statistics.fmean(loads):.1f} "
            f"(runs' means {min(loads):.1f} to {max(loads):.1f}){share}")
    busy = [c / (w * int(r.get("threads") or 1)) for r in runs
            for c, w in [(_number(r.get(RECORD_CPU)), _number(r.get("seconds_per_epoch")))] if c is not None and w]
    if busy:
        text += (f"; CPU time per thread was {statistics.fmean(busy):.2f} of the wall time "
                 "(below 1: the run waited for a core, or its threads idled)")
    return text


# ---------------------------------------------------------------------------------------------
# Hours of training, from evidence rows


def run_cpu_hours(seconds_per_epoch, epochs_run, threads) -> float:
    """One run's training time in CPU-thread hours (seconds per epoch x epochs x threads)."""
    return float(seconds_per_epoch) * int(epochs_run) * int(threads or 1) / 3600


def on_gpu(row: dict) -> bool:
    return str(row.get("device", "")).startswith("cuda")


def first_per_run(rows: list[dict]) -> list[dict]:
    first = {}
    for r in rows:
        first.setdefault(r["run"], r)
    return list(first.values())


def cpu_hours(rows: list[dict]) -> float:
    """Training time of every run of the protocol (selection runs included) that ran on a CPU, in CPU-thread hours."""
    return sum(run_cpu_hours(r["seconds_per_epoch"], r["epochs_run"], r["threads"]) for r in first_per_run(rows) if not on_gpu(r))


def gpu_hours(rows: list[dict]) -> float:
    """Training time of the runs that ran on a GPU, in device hours (their thread count is not a cost)."""
    return sum(run_cpu_hours(r["seconds_per_epoch"], r["epochs_run"], 1) for r in first_per_run(rows) if on_gpu(r))


def hours_cell(cpu: float, gpu: float, cpu_unit: str = "") -> str:
    """``1.23`` CPU-thread hours, with `` + 0.06 GPU h`` where some runs trained on a GPU."""
    return f"{cpu:.2f}{cpu_unit}" + (f" + {gpu:.2f} GPU h" if gpu else "")


def hours_text(rows: list[dict]) -> str:
    """``1.23 CPU h``, with `` + 0.06 GPU h`` where some runs trained on a GPU."""
    return hours_cell(cpu_hours(rows), gpu_hours(rows), " CPU h")


def date_span(dates) -> str | None:
    """When a page's runs were made: "2026-12-06" for one day, "2026-12-01 to 2026-12-03" for
    several, None for no date."""
    dates = sorted(d for d in dates if d)
    if not dates:
        return None
    return dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}"
