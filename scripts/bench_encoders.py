"""Encoder training-step times in the setting of the RCRN paper's Table 10, as ratios.

    python scripts/bench_encoders.py [--lengths 16 32 64 128 256] [--repeats 7] [--budget 45]
                                     [--threads N] [--clock wall|cpu] [--no-write]

A training step is forward plus backward of the encoder's summed output (batch 32,
input 300, hidden 200). Every time is reported as a ratio to the 3-layer BiLSTM
timed in the same process and the same rounds (candidates run round-robin, so a
busy machine slows them alike): the median over rounds of the ratio within each
round, after one warm-up round, with more rounds at the short lengths, whose steps
are noisier. The input does not require a gradient: the RCRN paper keeps GloVe fixed
(conf/task/*: freeze_embeddings); one extra row times RCRN against the 3-layer
BiLSTM with a trained input. At length 150 the ops with a reference loop (Res-V2
LSTM, the MZU transition) are timed against it.

On CUDA the same rows are timed on the GPU too and added as columns: nn.LSTM runs
cuDNN there and the kernels run their Triton implementations.

The table is printed and written as the "## Encoders" section of
results/benchmarks.md (other sections of that file are left as they are).
``--clock cpu`` times process CPU time instead of wall time: with one thread on a
shared machine it leaves out the time other processes hold the core.
"""
from __future__ import annotations

import argparse
import datetime
import importlib.util
import os
import platform
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import torch
from omegaconf import open_dict

from rnnbench.compose import compose_config
from rnnbench.encoders.build import build_encoder
from rnnbench.kernels import mzu_transition, residual_lstm

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "results" / "benchmarks.md"
SECTION = "## Encoders"
BATCH, INPUT, HIDDEN = 32, 300, 200
OP_LENGTH = 150
BASELINE = "3l_bilstm"
TRAINED = "3l_bilstm, trained input"
DCU = "dcu (recurrent)"
DCU_LSTM = "bilstm of dcu's output size"


def encoder(name: str, device: str, hidden: int = HIDDEN, **options):
    """An encoder as training builds it: conf/encoder/<name>.yaml with hidden_size (and options) overridden."""
    cfg = compose_config([f"encoder={name}"]).encoder
    with open_dict(cfg):
        cfg.hidden_size = hidden
        cfg.update(options)
    torch.manual_seed(0)
    return build_encoder(cfg, INPUT).to(device)


class SRULayer(torch.nn.Module):
    """The PyPI ``sru`` package's SRU, one bidirectional layer of the same width, as an outside point."""

    def __init__(self, device: str):
        super().__init__()
        import sru

        self.sru = sru.SRU(INPUT, HIDDEN, num_layers=1, bidirectional=True).to(device)

    def forward(self, x, mask):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Running SRU on CPU")
            out, _ = self.sru(x.transpose(0, 1).contiguous(), mask_pad=~mask.t())
        return out.transpose(0, 1)


def encoder_step(enc) -> Callable:
    def step(x, mask):
        enc.zero_grad(set_to_none=True)
        out = enc(x, mask)
        (out if isinstance(out, torch.Tensor) else out.states).sum().backward()

    return step


def candidates(device: str) -> dict[str, tuple[Callable, bool]]:
    """Row name -> (training step, input requires grad)."""
    dcu = encoder("dcu", device)
    rows = {
        BASELINE: (encoder_step(encoder("3l_bilstm", device)), False),
        "bilstm (1 layer)": (encoder_step(encoder("bilstm", device)), False),
        "rcrn fused (multi_lstm)": (encoder_step(encoder("rcrn", device)), False),
        "rcrn unfused (3 packed nn.LSTM)": (encoder_step(encoder("rcrn", device, fused=False)), False),
        DCU: (encoder_step(dcu), False),
        DCU_LSTM: (encoder_step(encoder("bilstm", device, hidden=dcu.output_size // 2)), False),
    }
    if importlib.util.find_spec("rnnbench.encoders.mzu") is not None:
        rows["mzu_sat"] = (encoder_step(encoder("mzu_sat", device)), False)
    rows["sru package (1 bidirectional layer)"] = (encoder_step(SRULayer(device)), False)
    rows[TRAINED] = (rows[BASELINE][0], True)
    rows["rcrn fused, trained input"] = (rows["rcrn fused (multi_lstm)"][0], True)
    return rows


def op_candidates(device: str) -> dict[str, tuple[Callable, bool]]:
    """The ops with a reference loop, each implementation, at length OP_LENGTH."""
    g = torch.Generator().manual_seed(0)
    w_ih, w_hh = (torch.randn(4 * HIDDEN, n, generator=g) * 0.05 for n in (INPUT, HIDDEN))
    params = [p.to(device).requires_grad_() for p in (w_ih, w_hh, torch.zeros(4 * HIDDEN))]
    lateral = torch.nn.Linear(INPUT, HIDDEN, bias=False).to(device)  # Res-V2's lateral term where I != H

    def res_v2(impl):
        def step(x, mask):
            residual_lstm.residual_lstm(x, lateral(x), mask, *params, impl=impl).sum().backward()

        return step

    fast = "triton" if device == "cuda" else "cpu"
    rows = {"3l_bilstm": (encoder_step(encoder("3l_bilstm", device)), False)}
    rows.update({f"res-v2 lstm, {impl}": (res_v2(impl), True) for impl in ("reference", fast)})
    if importlib.util.find_spec("rnnbench.encoders.mzu") is not None:
        transition = encoder("mzu_sat", device).forward_scan

        def mzu(impl):
            def step(x, mask):
                transition.zero_grad(set_to_none=True)
                out = mzu_transition.mzu_recurrence(x, mask, transition, impl=impl)
                (out.states.sum() + out.zone_cosine.sum()).backward()

            return step

        rows.update({f"mzu_sat transition, {impl}": (mzu(impl), False) for impl in mzu_transition.IMPLS})
    return rows


def measure(rows: dict[str, tuple[Callable, bool]], T: int, device: str, args) -> dict[str, list[float]]:
    """Seconds per step of each row in each round-robin round after a warm-up round: at least
    ``args.repeats`` rounds, more (up to 10x) until ``args.budget`` seconds have passed, so the
    short, noisier lengths get more rounds. Each round starts at the next row (no row always
    runs right after the same one)."""
    g = torch.Generator().manual_seed(T)
    x = torch.randn(BATCH, T, INPUT, generator=g).to(device)
    mask = torch.ones(BATCH, T, dtype=torch.bool, device=device)
    inputs = {grad: (x.clone().requires_grad_(grad), mask) for grad in (False, True)}
    now = time.process_time if args.clock == "cpu" and device == "cpu" else time.perf_counter
    names = list(rows)
    times: dict[str, list[float]] = {name: [] for name in names}
    started, rounds = time.perf_counter(), 0
    while rounds <= args.repeats or (time.perf_counter() - started < args.budget and rounds <= 10 * args.repeats):
        for name in names[rounds % len(names):] + names[: rounds % len(names)]:
            step, grad = rows[name]
            if device == "cuda":
                torch.cuda.synchronize()
            start = now()
            step(*inputs[grad])
            if device == "cuda":
                torch.cuda.synchronize()
            if rounds:
                times[name].append(now() - start)
        rounds += 1
    return times


def ratio(times: dict[str, list[float]], name: str, base: str) -> float:
    """Median over rounds of the row's time over the base's time in the same round."""
    return statistics.median(t / b for t, b in zip(times[name], times[base]))


def ms(times: dict[str, list[float]], name: str) -> str:
    return f"{statistics.median(times[name]) * 1e3:.0f}"


def bilstm_flops(layer_inputs: list[int], input_grad: bool) -> int:
    """Matrix-multiply FLOPs per token of a training step of BiLSTM layers (HIDDEN units) reading
    inputs of these sizes: forward, input-weight and recurrent gradients, and the input gradient
    (of the first layer only if ``input_grad``)."""
    gates = 4 * HIDDEN
    total = 0
    for k, size in enumerate(layer_inputs):
        projection = 2 * size * gates * (3 if k or input_grad else 2)
        recurrent = 2 * HIDDEN * gates * 3
        total += 2 * (projection + recurrent)
    return total


def encoder_cells(times: dict[str, list[float]]) -> dict[str, str]:
    """One column of the encoder table: the baselines' milliseconds, every other row's ratio."""
    cells = {f"{name} (ms per step)": ms(times, name) for name in (BASELINE, TRAINED)}
    for name in times:
        if name not in (BASELINE, TRAINED):
            cells[name] = f"{ratio(times, name, TRAINED if name.endswith('trained input') else BASELINE):.3f}"
    cells["dcu / bilstm of the same output size"] = f"{ratio(times, DCU, DCU_LSTM):.3f}"
    for grad, suffix in ((False, ""), (True, ", trained input")):
        rcrn, stacked = 3 * bilstm_flops([INPUT], grad), bilstm_flops([INPUT, 2 * HIDDEN, 2 * HIDDEN], grad)
        cells[f"rcrn / 3l_bilstm, matrix-multiply FLOPs{suffix}"] = f"{rcrn / stacked:.3f}"
    return cells


def op_cells(times: dict[str, list[float]]) -> dict[str, str]:
    """One column of the op table: ratios to the baseline, then each fast implementation's speedup."""
    cells = {f"{BASELINE} (ms per step)": ms(times, BASELINE)}
    cells.update({name: f"{ratio(times, name, BASELINE):.3f}" for name in times if name != BASELINE})
    for name in times:
        op, _, impl = name.partition(", ")
        if impl and impl != "reference":
            cells[f"{op}: reference / {impl} (speedup)"] = f"{ratio(times, f'{op}, reference', name):.2f}"
    return cells


def machine(threads: int, clock: str) -> str:
    cpu = platform.processor() or platform.machine()
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    parts = [
        f"{cpu}, {os.cpu_count()} logical CPUs",
        f"torch {torch.__version__}, {threads} thread(s), Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}",
        f"clock: {'process CPU time' if clock == 'cpu' else 'wall time'}",
    ]
    if torch.cuda.is_available():
        parts.append(f"GPU {torch.cuda.get_device_name()}")
    return "; ".join(parts)


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else "unknown"


def table(first: str, columns: dict[str, dict[str, str]]) -> str:
    """A markdown table: one column per key of ``columns``, rows in first-seen order."""
    names = list(dict.fromkeys(name for cells in columns.values() for name in cells))
    lines = ["| " + " | ".join([first, *columns]) + " |", "|" + "---|" * (len(columns) + 1)]
    lines += ["| " + " | ".join([name, *(cells.get(name, "–") for cells in columns.values())]) + " |" for name in names]
    return "\n".join(lines)


def run(args) -> str:
    torch.set_num_threads(args.threads)
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    started = datetime.date.today().isoformat()
    description = machine(args.threads, args.clock)
    load_before = load()
    columns, op_columns = {}, {}
    for device in devices:
        rows = candidates(device)
        for T in args.lengths:
            label = f"{device} {T}" if len(devices) > 1 else str(T)
            columns[label] = encoder_cells(measure(rows, T, device, args))
            print(f"{label}: {columns[label]}", flush=True)
        label = f"{device} {OP_LENGTH}" if len(devices) > 1 else str(OP_LENGTH)
        op_columns[label] = op_cells(measure(op_candidates(device), OP_LENGTH, device, args))
        print(f"{label}: {op_columns[label]}", flush=True)

    section = "\n\n".join([
        SECTION,
        f"`{args.command}`",
        f"{started}. {description}; load average {load_before} before the run and {load()} after.",
        f"Training step (forward + backward of the summed output) of each encoder at batch {BATCH}, "
        f"input {INPUT}, hidden {HIDDEN}, over sequence lengths (all sequences full length): time as a ratio "
        f"to `{BASELINE}` (`nn.LSTM`, 3 layers, bidirectional) in the same process: the median over rounds "
        f"of the ratio within each round (the baselines' rows: median milliseconds), at least {args.repeats} "
        f"rounds (more, up to {10 * args.repeats}, within {args.budget:.0f} s per length) after a warm-up "
        f"round. The input needs no gradient (GloVe fixed, as the RCRN paper), except in the 'trained input' "
        f"rows, whose ratio is to the 3-layer BiLSTM with a trained input. The FLOPs rows are not timed: "
        f"the matrix-multiply arithmetic of the two models' training steps, the ratio their times would "
        f"have at equal efficiency.",
        table("encoder", columns),
        f"At length {OP_LENGTH}, the ops that have a per-step reference loop, each implementation "
        f"(Res-V2 LSTM: one direction, input {INPUT}, hidden {HIDDEN}, its lateral term a linear map of the "
        f"input; input and weights need gradients), ratio to `{BASELINE}`, and the reference's time over the "
        f"fast one's.",
        table(f"op at length {OP_LENGTH}", op_columns),
    ]) + "\n"
    if len(devices) > 1:
        section += "\ncuda columns: `nn.LSTM` runs cuDNN, the kernels run their Triton implementations.\n"
    return section


def write_section(section: str, path: Path = RESULTS) -> None:
    """Replace this script's section of ``path`` (or add it), leaving the other sections alone."""
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.rstrip() == SECTION), None)
    if start is None:
        text = text.rstrip("\n") + "\n\n" + section
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        text = "".join(lines[:start]) + section + ("\n" + "".join(lines[end:]) if end < len(lines) else "")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lengths", type=int, nargs="+", default=[16, 32, 64, 128, 256])
    parser.add_argument("--repeats", type=int, default=7, help="rounds at least (after a warm-up round)")
    parser.add_argument("--budget", type=float, default=45, help="seconds per length before stopping adding rounds")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                        help="cpu: process CPU time, for --threads 1 on a shared machine")
    parser.add_argument("--no-write", action="store_true", help="print only; leave results/benchmarks.md alone")
    args = parser.parse_args(argv)
    args.command = " ".join(["python scripts/bench_encoders.py", *(sys.argv[1:] if argv is None else argv)])
    section = run(args)
    print("\n" + section)
    if not args.no_write:
        write_section(section)


if __name__ == "__main__":
    main()
