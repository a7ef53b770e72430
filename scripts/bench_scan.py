"""The gated scan's memory bandwidth on CUDA: how near its Triton kernels come to what memory allows.

    python scripts/bench_scan.py [--quick]        (make gpu-check runs it and puts the tables in results/gpu.md)

The gated scan (``kernels.gated_scan``: RCRN's listener, the DCU cell) reads each input once and
writes each output once, so the least time it can take is its memory traffic over the device's
bandwidth. Timed with ``triton.testing.do_bench`` (the L2 cache flushed before each repetition; the
median of the repetitions), the Triton kernels called directly (the autograd glue is not timed), each
shape called once before timing (Triton's autotuning happens there):

- a large problem, batch 64, 2,048 channels, length 4,096 (2 GiB per float32 tensor): the scan's
  bandwidth (its bytes over its time) against a device-to-device copy of the same bytes (torch
  ``copy_``, timed the same way): the share of the copy's bandwidth the scan reaches (target: 70%);
- RCRN's listener at the cost table's sizes, batch 32, 400 channels (RCRN's listener: two directions
  of hidden 200), lengths 16 to 256: its time against the bandwidth floor (its bytes over the
  fastest copy bandwidth measured on the large problem; target: at most 1.5x) and against a copy of
  the same bytes at that size (which also pays a launch); and its time per step of the sequence
  (about constant across lengths when each step waits on memory latency instead of streaming).

Each in three phases, with the traffic counted as each float32 [B, T, D] tensor read or written once,
the mask read once and the [B, D] states: ``inference`` (reads f, x, o; writes h), ``training forward``
(also writes the state before each step, for the backward) and ``backward`` (reads f, x, o, the saved
states and dh; writes df, dx, do). Gates as logits, an output gate, one direction: RCRN's call.

Without CUDA it stops with one line (exit 2). ``--quick`` runs the same path at tiny sizes on the CPU
(Triton's interpreter, a wall-clock timer): a check of the script, not a measurement.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import torch

LARGE = (64, 4096, 2048)  # batch, length, channels
OURS = (32, (16, 32, 64, 128, 256), 400)  # batch, lengths, channels: RCRN's listener in the cost table
QUICK_LARGE, QUICK_OURS = (1, 8, 16), (1, (4,), 16)  # the interpreter takes ~0.1 s a step
PHASES = ("inference", "training forward", "backward")
COPY_SHARE_TARGET, FLOOR_TARGET = 0.70, 1.5


def traffic(B: int, T: int, D: int, phase: str) -> int:
    """Bytes ``phase`` must move at least: each float32 [B, T, D] tensor read or written once, the
    bool mask read once, the [B, D] float32 states (last state out; backward: its gradient in, dc0 out)."""
    full, mask, state = 4 * B * T * D, B * T, 4 * B * D
    if phase == "inference":
        return 4 * full + mask + state  # f, x, o in; h out
    if phase == "training forward":
        return 5 * full + mask + state  # ... and the state before each step out
    if phase == "backward":
        return 8 * full + mask + 2 * state  # f, x, o, states, dh in; df, dx, do out
    raise ValueError(f"unknown phase {phase!r} (known: {', '.join(PHASES)})")


def scan_call(B: int, T: int, D: int, phase: str, device: str):
    """A call of the Triton scan's ``phase`` on random inputs of shape [B, T, D] (every step real)."""
    from rnnbench.kernels.gated_scan import triton as backend

    gen = torch.Generator(device=device).manual_seed(0)
    f, x, o = (torch.randn(B, T, D, device=device, generator=gen) for _ in range(3))
    mask = torch.ones(B, T, dtype=torch.bool, device=device)
    if phase == "backward":
        _, _, c_prev = backend.forward(f, x, o, None, mask, False, True, True)
        dh, dc_last = torch.randn(B, T, D, device=device, generator=gen), torch.zeros(B, D, device=device)
        return lambda: backend.backward(f, x, o, mask, c_prev, dh, dc_last, False, True)
    save = phase == "training forward"
    return lambda: backend.forward(f, x, o, None, mask, False, True, save)


def copy_call(nbytes: int, device: str):
    """A device-to-device copy that moves ``nbytes`` (half read, half written)."""
    n = max(1, nbytes // 8)
    src, dst = torch.randn(n, device=device), torch.empty(n, device=device)
    return lambda: dst.copy_(src)


def cuda_bench(fn) -> float:
    """Milliseconds of ``fn`` on CUDA: triton.testing.do_bench (L2 flushed before each repetition), median."""
    from triton.testing import do_bench

    fn()  # the first call of a shape autotunes: outside the timing
    torch.cuda.synchronize()
    return float(do_bench(fn, warmup=25, rep=100, return_mode="median"))


def wall_bench(fn, repeats: int = 1) -> float:
    """Milliseconds of ``fn`` by the wall clock, median of ``repeats`` after one call: the CPU dry run's timer."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def measure(device: str, bench, large=LARGE, ours=OURS) -> dict:
    """{"large": [row per phase], "ours": [row per length and phase], "copy_gbps": the fastest copy
    bandwidth of the large problem, "configs": the autotuned configs of the scan's kernels}; a row has
    the shape, phase, bytes, the scan's ms (the pass's default ``variant`` of the kernels), the same bytes'
    copy ms and ``variants_ms``: every variant's ms on the same inputs (chunked and step)."""
    from rnnbench.kernels import dispatch
    from rnnbench.kernels.gated_scan import triton as backend

    def timed(variant, call):
        before = dict(backend.VARIANT)
        backend.VARIANT.update(forward=variant, backward=variant)
        try:
            return bench(call)
        finally:
            backend.VARIANT.update(before)

    def row(B, T, D, phase):
        nbytes = traffic(B, T, D, phase)
        call = scan_call(B, T, D, phase, device)
        default = backend.VARIANT["backward" if phase == "backward" else "forward"]
        variants = {variant: timed(variant, call) for variant in backend.VARIANTS}
        del call
        _free(device)
        copy_ms = bench(copy_call(nbytes, device))
        _free(device)
        return {"B": B, "T": T, "D": D, "phase": phase, "bytes": nbytes, "scan_ms": variants[default], "copy_ms": copy_ms,
                "variant": default, "variants_ms": variants}

    B, T, D = large
    big = [row(B, T, D, phase) for phase in PHASES]
    B, lengths, D = ours
    small = [row(B, T, D, phase) for T in lengths for phase in PHASES]
    copy_gbps = max(r["bytes"] / r["copy_ms"] / 1e6 for r in big)
    configs = {k: v for k, v in dispatch.autotuned_configs().items() if k.startswith("gated_scan.")}
    return {"large": big, "ours": small, "copy_gbps": copy_gbps, "configs": configs}


def _free(device: str) -> None:
    if device == "cuda":
        torch.cuda.empty_cache()


def targets(result: dict) -> list[tuple[str, bool, str]]:
    """(what, met, detail) of the scan's two targets: on the large problem, each phase at least
    COPY_SHARE_TARGET of the copy's bandwidth; at the cost table's sizes, each length and phase at
    most FLOOR_TARGET times the bandwidth floor."""
    out = []
    for r in result["large"]:
        share = r["copy_ms"] / r["scan_ms"]
        out.append((f"scan {r['phase']}, large problem: ≥ {COPY_SHARE_TARGET:.0%} of copy bandwidth", share >= COPY_SHARE_TARGET,
                    f"{share:.0%}"))
    for r in result["ours"]:
        floor_ms = r["bytes"] / result["copy_gbps"] / 1e6
        ratio = r["scan_ms"] / floor_ms
        out.append((f"scan {r['phase']}, length {r['T']}: ≤ {FLOOR_TARGET}× the bandwidth floor", ratio <= FLOOR_TARGET,
                    f"{ratio:.1f}× ({r['scan_ms'] * 1e3:.0f} µs against {floor_ms * 1e3:.1f} µs)"))
    return out


def markdown(result: dict, how: str) -> list[str]:
    """The tables of ``measure``'s result; ``how`` says how it was timed."""
    B, T, D = (result["large"][0][k] for k in ("B", "T", "D"))
    lines = [f"Timed {how}. Traffic: each float32 [B, T, D] tensor read or written once (scripts/bench_scan.py).", "",
             f"Large problem: batch {B}, {D} channels, length {T}; a copy of the same bytes beside each phase.", "",
             "| phase | MB moved | scan ms | scan GB/s | copy ms | copy GB/s | scan / copy bandwidth |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for r in result["large"]:
        lines.append(f"| {r['phase']} | {r['bytes'] / 1e6:,.0f} | {r['scan_ms']:.3f} | {r['bytes'] / r['scan_ms'] / 1e6:,.0f} | "
                     f"{r['copy_ms']:.3f} | {r['bytes'] / r['copy_ms'] / 1e6:,.0f} | {r['copy_ms'] / r['scan_ms']:.0%} |")
    B, D = result["ours"][0]["B"], result["ours"][0]["D"]
    lines += ["", f"The cost table's sizes (RCRN's listener): batch {B}, {D} channels. Floor: the bytes over the large "
              f"problem's fastest copy bandwidth ({result['copy_gbps']:,.0f} GB/s).", "",
              "| length | phase | MB moved | scan µs | µs per step | floor µs | scan / floor | copy of the same bytes µs |",
              "|---:|---|---:|---:|---:|---:|---:|---:|"]
    for r in result["ours"]:
        floor_us = r["bytes"] / result["copy_gbps"] / 1e3
        lines.append(f"| {r['T']} | {r['phase']} | {r['bytes'] / 1e6:.1f} | {r['scan_ms'] * 1e3:.1f} | "
                     f"{r['scan_ms'] * 1e3 / r['T']:.2f} | {floor_us:.1f} | {r['scan_ms'] * 1e3 / floor_us:.1f}× | "
                     f"{r['copy_ms'] * 1e3:.1f} |")
    variants = sorted({v for r in result["large"] + result["ours"] for v in r.get("variants_ms", {})})
    if variants:
        lines += ["", "Each variant of the kernels on the same inputs (gated_scan's Triton module: `chunked` reads a tile of "
                  "steps at once and scans it, `step` one step at a time); the tables above time the pass's default.", "",
                  "| shape | phase | " + " | ".join(f"{v} ms" for v in variants) + " | default |",
                  "|---|---|" + "---:|" * len(variants) + "---|"]
        for r in result["large"] + result["ours"]:
            ms = r.get("variants_ms", {})
            lines.append(f"| {r['B']}×{r['T']}×{r['D']} | {r['phase']} | "
                         + " | ".join(f"{ms[v]:.4f}" if v in ms else "–" for v in variants) + f" | {r.get('variant', '–')} |")
    lines += ["", "Autotuned configs of the scan's kernels (key: D, HAS_O, LOGITS[, SAVE], then the tensors' dtypes):", ""]
    lines += [f"- `{kernel}`: " + "; ".join(f"{key} → {config}" for key, config in keys.items())
              for kernel, keys in sorted(result["configs"].items())] or ["- none recorded"]
    return lines


def run(quick: bool) -> tuple[dict, str]:
    """(measure's result, how it was timed) on CUDA, or with ``quick`` on the CPU at tiny sizes."""
    if quick and not torch.cuda.is_available():
        return measure("cpu", wall_bench, QUICK_LARGE, QUICK_OURS), "on the CPU at tiny sizes (a dry run of the script, not a measurement)"
    large, ours = (QUICK_LARGE, QUICK_OURS) if quick else (LARGE, OURS)
    return measure("cuda", cuda_bench, large, ours), "on CUDA with triton.testing.do_bench (L2 flushed, median)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="tiny sizes; on a machine without CUDA, the CPU and Triton's interpreter")
    parser.add_argument("--out", default=None, help="also write the tables and targets to this markdown file")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        if not args.quick:
            print("error: the gated-scan bandwidth needs a CUDA GPU (none here); --quick runs the script's path on the CPU",
                  file=sys.stderr)
            return 2
        os.environ["TRITON_INTERPRET"] = "1"  # read when the kernels are defined, which is after this
    result, how = run(args.quick)
    text = "\n".join(markdown(result, how))
    verdicts = [f"- {'met' if met else 'NOT MET'}: {what}: {detail}" for what, met, detail in targets(result)]
    print(text + "\n\n" + "\n".join(verdicts))
    if args.out:
        from pathlib import Path

        from rnnbench.results.run_record import git_commit

        device = torch.cuda.get_device_name() if torch.cuda.is_available() else "the CPU (a dry run)"
        head = [f"# The gated scan's kernels on {device}", "",
                f"torch {torch.__version__}; code {git_commit()}; {time.strftime('%Y-%m-%d')}. "
                "Written by `python scripts/bench_scan.py --out` (make gpu-check writes the same tables into gpu.md).", ""]
        Path(args.out).write_text("\n".join(head) + "\n" + text + "\n\n## Targets\n\n" + "\n".join(verdicts) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
