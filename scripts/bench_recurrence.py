"""Time the gated linear scan's training step per implementation, as ratios measured in one process.

    python scripts/bench_recurrence.py [--repeats 5] [--lengths 16 32 64 128 256] [--no-write]

The setting of the RCRN paper's Table 10 for the listener: batch 32, hidden 200
per direction, so 400 channels; gates as logits with an output gate, all tokens
real. A step is the scan's forward plus the backward of its summed output.

On the CPU the "cpu" fast path is timed against two eager per-step loops: the
reference (the specification, which slices f[:, t] at every step; each slice's
backward writes a full-size gradient, so its backward grows with T squared) and
the same loop over inputs unbound once, whose backward is linear in T: the
fairest eager baseline. On a CUDA machine a second table times the reference on
the GPU against the Triton kernel.

Implementations are timed round-robin within each repeat (after a warm-up), so
load on a shared machine hits all of them alike; tables show medians, with
torch's default thread count and with one thread. Prints the tables and
replaces the "## Gated linear scan" section of results/benchmarks.md (other
sections are kept).
"""
from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import time
from pathlib import Path

import torch

from rnnbench.kernels.gated_scan import gated_scan

BATCH, CHANNELS = 32, 400
HEADING = "## Gated linear scan"
OUTPUT = Path(__file__).resolve().parent.parent / "results" / "benchmarks.md"


def unbound_loop(f, x, mask, o):
    """The listener scan as an eager loop over inputs unbound once (linear-time backward)."""
    c = x.new_zeros(x.shape[0], x.shape[2])
    keep = mask.unsqueeze(-1).unbind(1)
    outputs = []
    for f_t, x_t, o_t, keep_t in zip(f.unbind(1), x.unbind(1), o.unbind(1), keep):
        f_t = torch.sigmoid(f_t)
        c_new = f_t * c + (1 - f_t) * x_t
        c = torch.where(keep_t, c_new, c)
        outputs.append(torch.where(keep_t, torch.sigmoid(o_t) * c_new, 0.0))
    return torch.stack(outputs, dim=1)


def impl(name: str):
    return lambda f, x, mask, o: gated_scan(f, x, mask, o=o, logits=True, impl=name)[0]


# column -> (scan(f, x, mask, o) -> h, device); the first column of each table is its fast path
CPU_COLUMNS = {
    "cpu": (impl("cpu"), "cpu"),
    "reference": (impl("reference"), "cpu"),
    "eager unbound": (unbound_loop, "cpu"),
}
CUDA_COLUMNS = {"triton": (impl("triton"), "cuda"), "reference": (impl("reference"), "cuda")}


def step_fn(scan, device: str, T: int, seed: int = 0):
    """One training step of the listener scan on fixed leaves, as a closure."""
    g = torch.Generator().manual_seed(seed)
    f, x, o = (torch.randn(BATCH, T, CHANNELS, generator=g).to(device).requires_grad_() for _ in range(3))
    mask = torch.ones(BATCH, T, dtype=torch.bool, device=device)

    def step():
        scan(f, x, mask, o).sum().backward()
        for t in (f, x, o):
            t.grad = None
        if device == "cuda":
            torch.cuda.synchronize()

    return step


def measure(columns: dict, T: int, repeats: int) -> dict[str, list[float]]:
    """Seconds per step for each column, timed round-robin."""
    steps = {name: step_fn(scan, device, T) for name, (scan, device) in columns.items()}
    for step in steps.values():
        step()  # warm-up: library load, Triton compile and autotune, allocator
    times = {name: [] for name in steps}
    for _ in range(repeats):
        for name, step in steps.items():
            start = time.perf_counter()
            step()
            times[name].append(time.perf_counter() - start)
    return times


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_lines(load_before: float, load_after: float) -> list[str]:
    cores = os.cpu_count()
    lines = [
        f"- CPU: {cpu_model()}, {cores} logical cores; torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads by default",
        f"- Python {platform.python_version()}, {platform.system()} {platform.release()}",
    ]
    if torch.cuda.is_available():
        import triton

        lines.append(f"- GPU: {torch.cuda.get_device_name()}, CUDA {torch.version.cuda}, Triton {triton.__version__}")
    else:
        lines.append("- No GPU: the Triton kernel is tested (interpreter) but not timed here")
    load = max(load_before, load_after)
    if load > 0.5 * cores:
        lines.append(
            f"- Shared, noisy machine: load average {load_before:.1f} before and {load_after:.1f} after the run on "
            f"{cores} cores. Absolute times are inflated and vary between repeats (min-max below); the ratios, "
            "timed round-robin in one process, are the numbers to compare. Contention hurts the eager loops' "
            "many small multi-threaded ops most, so the ratios with one thread are the conservative ones."
        )
    else:
        lines.append(f"- Quiet machine: load average {load:.1f} on {cores} cores")
    return lines


def table(key_names: list[str], columns: list[str], results: dict) -> list[str]:
    """Median (min-max) milliseconds per column, and each baseline's time over the fast path's (the first column)."""
    fast, *baselines = columns
    header = [*key_names, *(f"{name} ms" for name in columns), *(f"{name} / {fast}" for name in baselines)]
    rows = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for key, times in results.items():
        med = {name: statistics.median(times[name]) for name in columns}
        spread = [f"{1e3 * med[n]:.1f} ({1e3 * min(times[n]):.1f}-{1e3 * max(times[n]):.1f})" for n in columns]
        ratios = [f"{med[name] / med[fast]:.1f}x" for name in baselines]
        rows.append("| " + " | ".join([*map(str, key), *spread, *ratios]) + " |")
    return rows


def write_section(path: Path, section: str) -> None:
    """Replace this script's section of the shared benchmarks file, or add it."""
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    pattern = re.compile(rf"^{re.escape(HEADING)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.rstrip("\n") + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--lengths", type=int, nargs="+", default=[16, 32, 64, 128, 256])
    parser.add_argument("--no-write", action="store_true", help="print only, leave results/benchmarks.md alone")
    args = parser.parse_args()

    default_threads = torch.get_num_threads()
    load_before = os.getloadavg()[0]
    cpu_results, cuda_results = {}, {}
    for T in args.lengths:
        for threads in sorted({default_threads, 1}, reverse=True):
            torch.set_num_threads(threads)
            cpu_results[T, threads] = measure(CPU_COLUMNS, T, args.repeats)
        torch.set_num_threads(default_threads)
        if torch.cuda.is_available():
            cuda_results[T,] = measure(CUDA_COLUMNS, T, args.repeats)
        print(f"T={T} done", flush=True)
    load_after = os.getloadavg()[0]

    rows = table(["T", "torch threads"], list(CPU_COLUMNS), cpu_results)
    if cuda_results:
        rows += ["", "On the GPU (CUDA tensors):", "", *table(["T"], list(CUDA_COLUMNS), cuda_results)]
    setting = (
        f"Training step (forward + backward of the summed output) of the RCRN listener scan: batch {BATCH}, "
        f"{CHANNELS} channels (hidden 200 per direction), logits with an output gate, all tokens real. "
        "`reference` is the specification's per-step loop (its f[:, t] slices make its backward grow with T "
        "squared); `eager unbound` is the same loop over inputs unbound once (backward linear in T), the fairest "
        "eager baseline. The cpu path is bound by memory traffic: one pass over every [B, T, D] tensor forward and "
        "one backward, first-touch page faults of its fresh outputs, and the copy that materialises the broadcast "
        f"gradient of the sum. Median (min-max) of {args.repeats} repeats after a warm-up, implementations timed "
        "round-robin in one process, with torch's default thread count and with one thread "
        f"(`python scripts/bench_recurrence.py`, {time.strftime('%Y-%m-%d')})."
    )
    section = "\n".join([HEADING, "", setting, "", *machine_lines(load_before, load_after), "", *rows, ""])
    print("\n" + section)
    if not args.no_write:
        write_section(OUTPUT, section)
        print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
