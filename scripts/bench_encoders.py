"""Encoder training-step times in the setting of the RCRN paper's Table 10, as ratios.

    python scripts/bench_encoders.py [--lengths 16 32 64 128 256] [--repeats 7] [--budget 45]
                                     [--threads N] [--clock wall|cpu] [--no-write]

A training step is forward plus backward of the encoder's summed output (batch 32,
input 300, hidden 200). Parts of a step (RCRN's listener scan, DCU's gates and scan)
are also timed alone, as shares of their encoder's step. Every time is reported as a ratio to the 3-layer BiLSTM
timed in the same process and the same rounds (candidates run round-robin, so a
busy machine slows them alike): the median over rounds of the ratio within each
round, after one warm-up round, with more rounds at the short lengths, whose steps
are noisier. The input does not require a gradient: the RCRN paper keeps GloVe fixed
(conf/task/*: freeze_embeddings); one extra row times RCRN against the 3-layer
BiLSTM with a trained input. At length 150 the ops with a reference loop (Res-V2
LSTM, the MZU transition, the FHE upper layer at two fractions of open gates) are
timed against it.

On CUDA the same rows are timed on the GPU too and added as columns: nn.LSTM runs
cuDNN there and the kernels run their Triton implementations.

The table is printed and written as the "## Encoders" section of
results/benchmarks.md (other sections of that file are left as they are).
``--clock cpu`` times process CPU time instead of wall time: with one thread on a
shared machine it leaves out the time other processes hold the core.

The RCRN Table 10 cost table itself (the whole IMDb model around every encoder, training
and inference, the paper's numbers beside ours, the ledger's evidence) is
scripts/bench_cost.py (``make table-rcrn-10``); this script times the encoders alone and
their parts.
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
from rnnbench.encoders import mzu as mzu_transition  # the MZU op on the encoder's modules: mzu_recurrence, IMPLS
from rnnbench.kernels import fhe_upper, gated_scan, residual_lstm
from rnnbench.results.run_record import hardware

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "results" / "benchmarks.md"
SECTION = "## Encoders"
BATCH, INPUT, HIDDEN = 32, 300, 200
OP_LENGTH = 150
BASELINE = "3l_bilstm"
TRAINED = "3l_bilstm, trained input"
DCU = "dcu (recurrent)"
DCU_LSTM = "bilstm of dcu's output size"
RCRN = "rcrn fused (multi_lstm)"
LISTENER = "rcrn's listener scan alone (gated_scan, forward + backward)"
DCU_GATES = "dcu's multi-granular gates alone (fold, ReLU layers, unfold)"
DCU_SCAN = "dcu's gated scan alone"
# rows timed as a share of another row (in the same rounds), not of the 3-layer BiLSTM
SHARE_OF = {LISTENER: RCRN, DCU_GATES: DCU, DCU_SCAN: DCU}
FHE_OPEN = (0.25, 1.0)  # fraction of open boundary gates in the FHE upper layer's op rows


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


def scan_step(channels: int, with_o: bool, device: str) -> Callable:
    """The gated scan's training step alone on gate logits, inputs (and output gate logits)
    [BATCH, T, channels] that need gradients: the listener of RCRN (an output gate) or the
    DCU cell (none unless output_gate_sigmoid; DCU multiplies by its linear gate outside)."""
    cache = {}

    def step(x, mask):
        B, T = mask.shape
        if T not in cache:
            g = torch.Generator().manual_seed(T)
            cache.clear()
            cache[T] = [torch.randn(B, T, channels, generator=g).to(device).requires_grad_() for _ in range(3)]
        f, z, o = cache[T]
        for t in (f, z, o):
            t.grad = None
        h, _ = gated_scan.gated_scan(f, z, mask, o=o if with_o else None, logits=True)
        h.sum().backward()

    return step


def gates_step(dcu) -> Callable:
    """DCU's multi-granular gates (fold, the range layers, F1, F2, unfold) alone: forward and backward."""

    def step(x, mask):
        dcu.zero_grad(set_to_none=True)
        dcu.gates(x, mask).sum().backward()

    return step


def candidates(device: str) -> dict[str, tuple[Callable, bool]]:
    """Row name -> (training step, input requires grad)."""
    dcu = encoder("dcu", device)
    rows = {
        BASELINE: (encoder_step(encoder("3l_bilstm", device)), False),
        "bilstm (1 layer)": (encoder_step(encoder("bilstm", device)), False),
        RCRN: (encoder_step(encoder("rcrn", device)), False),
        "rcrn unfused (3 packed nn.LSTM)": (encoder_step(encoder("rcrn", device, fused=False)), False),
        LISTENER: (scan_step(2 * HIDDEN, True, device), False),
        DCU: (encoder_step(dcu), False),
        DCU_LSTM: (encoder_step(encoder("bilstm", device, hidden=dcu.output_size // 2)), False),
        DCU_GATES: (gates_step(dcu), False),
        DCU_SCAN: (scan_step(dcu.output_size, dcu.output_gate_sigmoid, device), False),
    }
    if importlib.util.find_spec("rnnbench.encoders.mzu") is not None:
        rows["mzu_sat"] = (encoder_step(encoder("mzu_sat", device)), False)
    rows["sru package (1 bidirectional layer)"] = (encoder_step(SRULayer(device)), False)
    rows[TRAINED] = (rows[BASELINE][0], True)
    rows["rcrn fused, trained input"] = (rows[RCRN][0], True)
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

    # FHE's upper layer (it reads the lower LSTM's states: input = hidden = HIDDEN, trained) with
    # a fixed fraction of open gates; "torch" runs nn.LSTM over the open positions only.
    upper = [p.to(device).requires_grad_() for p in (
        torch.randn(4 * HIDDEN, HIDDEN, generator=g) * 0.05, torch.randn(4 * HIDDEN, HIDDEN, generator=g) * 0.05,
        torch.zeros(4 * HIDDEN), torch.zeros(4 * HIDDEN))]
    gate_draws = {}

    def fhe(impl, fraction):
        def step(x, mask):
            key = (fraction, tuple(mask.shape))
            if key not in gate_draws:
                draw = torch.rand(mask.shape, generator=torch.Generator().manual_seed(1))
                gate_draws[key] = (draw < fraction).to(device)
            for p in upper:
                p.grad = None
            lower = x[..., :HIDDEN]  # a slice of the trained input stands in for the lower LSTM's states
            fhe_upper.fhe_upper(lower, gate_draws[key], mask, *upper, impl=impl).sum().backward()

        return step

    fhe_impls = ("reference", "torch", "triton") if device == "cuda" else ("reference", "torch", "cpu")
    for fraction in FHE_OPEN:
        rows.update({f"fhe upper (open {fraction:g}), {impl}": (fhe(impl, fraction), True) for impl in fhe_impls})
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


def bilstm_flops(layer_inputs: list[int], input_grad: bool, hidden: int = HIDDEN) -> int:
    """Matrix-multiply FLOPs per token of a training step of BiLSTM layers (``hidden`` units) reading
    inputs of these sizes: forward, input-weight and recurrent gradients, and the input gradient
    (of the first layer only if ``input_grad``)."""
    gates = 4 * hidden
    total = 0
    for k, size in enumerate(layer_inputs):
        projection = 2 * size * gates * (3 if k or input_grad else 2)
        recurrent = 2 * hidden * gates * 3
        total += 2 * (projection + recurrent)
    return total


def dcu_flops(ranges, input_size: int, units: int, width: int) -> float:
    """Matrix-multiply FLOPs per token of a training step of the recurrent DCU (the input
    needs no gradient): each range's fold layer on T/r block rows, F1 as each range's share
    on its T/r block rows (as MultiGranularGates computes it), F2, the candidate and the
    output gate; forward and weight gradients for all, input gradients of F1 and F2."""
    per_block = sum(1 / r for r in ranges)
    fold = 2 * input_size * units * per_block
    f1 = 2 * units * units * per_block
    f2 = 2 * units * width
    linear = 2 * 2 * input_size * width  # candidate and output gate
    forward = fold + f1 + f2 + linear
    return 2 * forward + f1 + f2


def encoder_cells(times: dict[str, list[float]], dcu=None) -> dict[str, str]:
    """One column of the encoder table: the baselines' milliseconds, every other row's ratio
    (to the 3-layer BiLSTM, or to the row it is a share of)."""
    cells = {f"{name} (ms per step)": ms(times, name) for name in (BASELINE, TRAINED)}
    for name in times:
        if name in SHARE_OF:
            cells[f"{name} / {SHARE_OF[name]}"] = f"{ratio(times, name, SHARE_OF[name]):.3f}"
        elif name not in (BASELINE, TRAINED):
            cells[name] = f"{ratio(times, name, TRAINED if name.endswith('trained input') else BASELINE):.3f}"
    cells["dcu / bilstm of the same output size"] = f"{ratio(times, DCU, DCU_LSTM):.3f}"
    for grad, suffix in ((False, ""), (True, ", trained input")):
        rcrn, stacked = 3 * bilstm_flops([INPUT], grad), bilstm_flops([INPUT, 2 * HIDDEN, 2 * HIDDEN], grad)
        cells[f"rcrn / 3l_bilstm, matrix-multiply FLOPs{suffix}"] = f"{rcrn / stacked:.3f}"
    if dcu is not None:
        lstm = bilstm_flops([INPUT], False, hidden=dcu.output_size // 2)
        units = dcu.gates.fold_layers[0].out_features
        cells["dcu / bilstm of the same output size, matrix-multiply FLOPs"] = (
            f"{dcu_flops(dcu.gates.ranges, INPUT, units, dcu.output_size) / lstm:.3f}"
        )
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
    cpu = hardware(torch.device("cpu")).get("cpu") or platform.processor() or platform.machine()
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
        dcu = encoder("dcu", device)
        for T in args.lengths:
            label = f"{device} {T}" if len(devices) > 1 else str(T)
            columns[label] = encoder_cells(measure(rows, T, device, args), dcu)
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
        f"have at equal efficiency. Rows named 'X / Y' are X's time over Y's in the same rounds (parts of "
        f"a step timed alone: the gated scan on inputs of the listener's or the DCU cell's shapes, DCU's "
        f"gates module).",
        table("encoder", columns),
        f"At length {OP_LENGTH}, the ops that have a per-step reference loop, each implementation "
        f"(Res-V2 LSTM: one direction, input {INPUT}, hidden {HIDDEN}, its lateral term a linear map of the "
        f"input; input and weights need gradients. MZU: one direction of mzu_sat, 4 zones, transition depth 1, "
        f"states and zone cosines summed. FHE upper layer: input = hidden = {HIDDEN}, input and weights need "
        f"gradients, a fixed random {', '.join(f'{f:g}' for f in FHE_OPEN)} of the boundary gates open), ratio "
        f"to `{BASELINE}`, and the reference's time over each fast one's.",
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
