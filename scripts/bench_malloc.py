"""A training step's time with glibc's default allocator settings and with large tensors kept on the heap.

    python scripts/bench_malloc.py [--rounds 3] [--length 256] [--steps 4] [--encoders bilstm 3l_bilstm rcrn]
                                   [--out results/diagnostics/malloc.md]

glibc's malloc serves a request above its mmap threshold (128 KiB, raised as freed blocks
show larger sizes, up to 32 MiB) with a fresh mapping and returns it to the kernel on free;
memory freed at the top of the heap beyond its trim threshold goes back too. A recurrent
model's training step allocates and frees tensors of tens of MiB (a layer's gates over the
batch and time) every step, so each step faults those pages in again: kernel time, not
arithmetic. ``MALLOC_MMAP_THRESHOLD_`` and ``MALLOC_TRIM_THRESHOLD_`` (read by glibc at
process start, so they can only be set for a new process) keep such blocks on the heap for
reuse. torch aligns every CPU tensor to 64 bytes whichever way the block was obtained, so
the same kernels run on the same addresses' alignment and the numbers cannot change; the
benchmark checks that too: each child hashes its trained parameters.

Each round runs every encoder's training step (the IMDb model of ``bench_cost.py``: batch
32, hidden size 200, all sequences of ``--length``) in two child processes, one per
setting, their order alternating between rounds, at one thread. The ratio is taken within
a round (the setting's median step over the default's), and the table gives its median
over rounds, with the minor page faults per step, which the setting should remove.
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KEEP_ON_HEAP = {"MALLOC_MMAP_THRESHOLD_": "4294967296", "MALLOC_TRIM_THRESHOLD_": "68719476736"}
SETTINGS = {"default": {}, "on the heap": KEEP_ON_HEAP}
WARM_STEPS = 2


def _script(name: str):
    """``scripts/<name>.py`` as a module (the scripts are not a package)."""
    spec = importlib.util.spec_from_file_location(f"_rnnbench_{name}", REPO / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def child(encoder: str, length: int, steps: int) -> dict:
    """Train ``steps`` steps of ``encoder`` after warming; the median step, faults per step, parameter hash."""
    import torch

    bench_cost = _script("bench_cost")
    torch.set_num_threads(1)
    model, optimizer = bench_cost.build(encoder, "cpu")
    batch = bench_cost.batch_of(length, "cpu")
    for _ in range(WARM_STEPS):
        bench_cost.train_step(model, optimizer, batch)
    seconds, faults = [], resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(steps):
        start = time.perf_counter()
        bench_cost.train_step(model, optimizer, batch)
        seconds.append(time.perf_counter() - start)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
    digest = hashlib.sha1(b"".join(p.detach().numpy().tobytes() for p in model.parameters())).hexdigest()
    return {"seconds": statistics.median(seconds), "faults": faults / steps, "hash": digest}


def run_child(encoder: str, setting: str, args) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in KEEP_ON_HEAP}
    env.update(SETTINGS[setting], OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    out = subprocess.run([sys.executable, __file__, "--child", encoder, "--length", str(args.length),
                          "--steps", str(args.steps)], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def markdown(results: dict, args, info: dict) -> str:
    lines = ["# Allocator settings and a training step's time on the CPU", "",
             f"`python scripts/bench_malloc.py --rounds {args.rounds} --length {args.length} --steps {args.steps}`, "
             f"{info['date']}, commit {info['commit']}, {info['cpu']}, one thread, torch {info['torch']}, {info['libc']}.", "",
             "Setting: `" + " ".join(f"{k}={v}" for k, v in KEEP_ON_HEAP.items()) + "` (what `make` sets for its "
             "targets). Ratio: the setting's step time over the default's in the same round, median over rounds "
             "(below 1: faster). Faults: minor page faults per training step.", "",
             "| encoder | step, default (s) | step, on the heap (s) | ratio (median) | ratios per round | faults, default | faults, on the heap | same parameters |",
             "|---|---:|---:|---:|---|---:|---:|---|"]
    for name, rounds in results.items():
        d = [r["default"] for r in rounds]
        h = [r["on the heap"] for r in rounds]
        ratio = [b["seconds"] / a["seconds"] for a, b in zip(d, h)]
        same = all(a["hash"] == b["hash"] for a, b in zip(d, h))
        lines.append(f"| {name} | {statistics.median(x['seconds'] for x in d):.3f} | {statistics.median(x['seconds'] for x in h):.3f} "
                     f"| {statistics.median(ratio):.2f} | {', '.join(f'{r:.2f}' for r in ratio)} "
                     f"| {statistics.median(x['faults'] for x in d):,.0f} | {statistics.median(x['faults'] for x in h):,.0f} "
                     f"| {'yes' if same else 'NO'} |")
    lines += ["", "The machine may be shared: read the ratios, not the seconds. The load average after the last "
              f"round: {info['load']}.", ""]
    return "\n".join(lines)


def _short(commit: str) -> str:
    return commit[:7] + ("-dirty" if commit.endswith("-dirty") else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--length", type=int, default=256)
    parser.add_argument("--steps", type=int, default=4, help="timed training steps per child, after 2 warm-up steps")
    parser.add_argument("--encoders", nargs="+", default=["bilstm", "3l_bilstm", "rcrn"])
    parser.add_argument("--out", default=str(REPO / "results" / "diagnostics" / "malloc.md"))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.length, args.steps)))
        return 0
    import platform

    import torch

    from rnnbench.results.run_record import git_commit, hardware

    results: dict[str, list[dict]] = {name: [] for name in args.encoders}
    for r in range(args.rounds):
        order = list(SETTINGS) if r % 2 == 0 else list(reversed(SETTINGS))
        for name in args.encoders:
            row = {setting: run_child(name, setting, args) for setting in order}
            results[name].append(row)
            print(f"round {r + 1}: {name}: " + ", ".join(f"{s} {row[s]['seconds']:.3f} s" for s in SETTINGS), flush=True)
    info = {"date": datetime.date.today().isoformat(), "commit": _short(git_commit()),
            "cpu": hardware(torch.device("cpu")).get("cpu") or platform.processor(), "torch": torch.__version__,
            "libc": " ".join(platform.libc_ver()), "load": f"{os.getloadavg()[0]:.2f}"}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(markdown(results, args, info))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
