"""Check rnnbench on a CUDA GPU, measure its cost there, and write results/gpu.md.   (make gpu-check)

    python scripts/gpu_check.py [--out results] [--skip-cost] [--skip-training] [--quick]

Four parts, in this order (the report is rewritten after each, so a check cut short keeps what
it found), then the cost targets:

1. The Triton kernels on real CUDA (not the CPU interpreter): every encoder whose recurrence has
   a Triton kernel runs forward and backward on a ragged batch with the kernels forced to
   ``triton`` and again with the ``reference`` loops; the outputs and the input gradients must
   agree (float32, tolerance below), and the kernel dispatcher must report that Triton ran.
2. The gated scan's memory bandwidth (scripts/bench_scan.py): a large problem against a copy of
   the same bytes, and RCRN's listener at the cost table's sizes against the bandwidth floor.
3. The cost table on the GPU (``scripts/bench_cost.py --device cuda``, in its own process: every
   encoder and the baseline's fast paths, warmed, with the kernels and autotuned configs each ran
   and a profile at the longest length), written as results/rcrn_table10_cuda.{md,csv}.
4. A short training run of every encoder on CUDA (the picking task, ``trainer=smoke`` with the
   whole dev and test splits): it must finish with a finite loss.

The targets (the cost of ``rcrn``, ``mzu_cap`` and ``fhe`` against the 3-layer BiLSTM on its
fastest path, the scan's bandwidth) are read from parts 2 and 3 and listed met or not met; they
do not change the exit status. The report names the device, its driver and the CUDA, cuDNN,
torch and Triton versions.

On an H100 or H200 the whole check should take about 7 minutes (``estimate_seconds``, printed first and
written in the report: the committed CUDA cost table's timings times the calls the benchmark now
makes, and allowances for the other parts from their last run).

Without CUDA it stops with one line (exit 2), unless ``--quick``: a dry run of the same path at
tiny sizes (on a machine without CUDA: the CPU, the Triton kernels in Triton's interpreter, one
encoder's training run, the cost benchmark at one length), written to a temporary folder unless
``--out`` names one. It proves the script works end to end, not the device. Exit 1 when a check
fails.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "0")  # real kernels: the interpreter is for CPU tests and --quick only

import torch  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
TOLERANCE = 2e-4  # float32 recurrences over ~40 steps: reordered sums differ by ~1e-6 per step
# Encoders (with overrides) whose recurrences have Triton kernels: RCRN (multi_lstm + gated_scan),
# the recurrent DCU (gated_scan), FHE (fhe_upper + the LSTM cell), Res-V2 (residual_lstm); and RCRN again
# with multi_lstm's persistent kernels (off by default) switched on.
KERNEL_ENCODERS = {
    "rcrn": [], "dcu": [], "fhe": [], "bilstm (residual v2)": ["encoder=bilstm", "encoder.residual=v2"],
    "rcrn (persistent)": ["encoder=rcrn"],
}
# The kernel comparison's sizes: (hidden, input, sequence lengths of the ragged batch).
FULL_SIZES, QUICK_SIZES = (32, 16, (37, 21, 5, 30)), (8, 8, (9, 5, 2, 7))
QUICK_TRAINING = ("rcrn",)
QUICK_COST = ["--lengths", "16", "--repeats", "2", "--profile", "--encoders", "3l_bilstm_padded", "3l_bilstm_packed", "rcrn", "fhe"]
# Cost targets: encoder -> the most its time may be, as a ratio to the 3-layer BiLSTM on its fastest path.
COST_TARGETS = {"rcrn": 0.6, "rcrn_persistent": 0.6, "mzu_cap": 4.0, "fhe": 1.2}

# Device seconds of the parts the committed cost table does not time. The check of 2026-12-04 on an
# NVIDIA H200 took 395 s: the cost table 233, the 19 training runs 98 (compiles included, plus building
# each), start, imports, kernel checks and the scan benchmark together about 64. The kernel checks compile
# about 15 autotuning keys x up to 8 configs on a machine with an empty Triton cache; the scan benchmark
# times 18 shapes at do_bench's 125 ms with a copy beside each, now twice (the chunked and the step kernels),
# and allocates 16 GiB for the large backward.
ALLOWANCE_S = {"start and imports": 15, "kernel checks": 30, "scan bandwidth": 60, "training runs": 110}
PROFILE_OVERHEAD = 3  # a profiled call against an unprofiled one (torch.profiler records every launch)


def _script(name: str):
    spec = importlib.util.spec_from_file_location(f"_rnnbench_{name}", REPO / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- 1. kernels against the reference ----------------------------------------------------

def compare_impls(encoder_overrides: list[str], device: str, fast: str, reference: str = "reference", seed: int = 0,
                  sizes=FULL_SIZES) -> dict:
    """Max |difference| of outputs and input gradients between two kernel implementations of one encoder."""
    from rnnbench.compose import compose_config
    from rnnbench.encoders.build import build_encoder
    from rnnbench.kernels import dispatch

    hidden, inputs, lengths = sizes
    cfg = compose_config([*encoder_overrides, f"encoder.hidden_size={hidden}"])
    torch.manual_seed(seed)
    encoder = build_encoder(cfg.encoder, input_size=inputs).to(device).eval()  # eval: no dropout, no sampled FHE gates
    lengths = torch.tensor(lengths)
    T = int(lengths.max())
    mask = (torch.arange(T).unsqueeze(0) < lengths.unsqueeze(1)).to(device)
    x = torch.randn(len(lengths), T, inputs, device=device)
    context = torch.randn(len(lengths), getattr(encoder, "context_size", None) or inputs, device=device)

    def run(impl: str):
        dispatch.set_default_impl(impl)
        dispatch.reset_used()
        xi = x.clone().requires_grad_(True)
        out = encoder(xi, mask, context)
        (out.states * torch.linspace(-1, 1, out.states.shape[-1], device=device)).sum().backward()
        return out.states.detach(), xi.grad.detach(), dispatch.implementations_used()

    # cuDNN refuses a backward pass in eval mode (FHE's lower LSTM is an nn.LSTM); the check is about our
    # kernels, so nn.LSTM runs its native CUDA path here.
    try:
        with torch.backends.cudnn.flags(enabled=False):
            a, ga, used = run(fast)
            b, gb, _ = run(reference)
    finally:
        dispatch.set_default_impl("auto")
    return {"states": float((a - b).abs().max()), "grad": float((ga - gb).abs().max()), "used": used}


def kernel_checks(device: str, quick: bool = False) -> list[tuple[str, bool, str]]:
    out = []
    for name, overrides in KERNEL_ENCODERS.items():
        overrides = overrides or [f"encoder={name}"]
        try:
            from rnnbench.kernels.multi_lstm import persistent

            with persistent.enabled("(persistent)" in name):
                r = compare_impls(overrides, device, "triton", sizes=QUICK_SIZES if quick else FULL_SIZES)
            ran_triton = any("triton" in v for v in r["used"].values())
            ok = ran_triton and r["states"] <= TOLERANCE and r["grad"] <= TOLERANCE
            out.append((name, ok, f"max |Δ| states {r['states']:.2e}, input grad {r['grad']:.2e}; kernels {r['used']}"))
        except Exception as exc:  # noqa: BLE001 - a failure is a result to report
            out.append((name, False, f"{type(exc).__name__}: {exc}"))
        print(f"kernels, {name}: {'pass' if out[-1][1] else 'FAIL'}", flush=True)
    return out


# --- 2. the gated scan's bandwidth -------------------------------------------------------

def scan_bandwidth(device: str, quick: bool = False) -> tuple[list[tuple[str, bool, str]], list[str], list]:
    """(check rows, the tables, the scan's targets) of scripts/bench_scan.py."""
    bench_scan = _script("bench_scan")
    try:
        result, how = bench_scan.run(quick)
    except Exception as exc:  # noqa: BLE001
        return [("gated scan bandwidth", False, f"{type(exc).__name__}: {exc}")], [], []
    finally:
        if device == "cuda":
            torch.cuda.empty_cache()
    rows = len(result["large"]) + len(result["ours"])
    return [("gated scan bandwidth", True, f"{rows} shapes timed {how}")], bench_scan.markdown(result, how), bench_scan.targets(result)


# --- 3. the cost table -------------------------------------------------------------------

def cost_table(device: str, out: Path, quick: bool = False) -> tuple[list[tuple[str, bool, str]], Path | None]:
    """Runs scripts/bench_cost.py in its own process (its warm-up then autotunes and compiles, and records it).
    (check rows, the evidence CSV it wrote or None)."""
    argv = [sys.executable, str(REPO / "scripts" / "bench_cost.py"), "--device", device, "--out", str(out),
            *(QUICK_COST if quick else [])]
    started = time.perf_counter()
    done = subprocess.run(argv)
    name = f"rcrn_table10{'_cuda' if device == 'cuda' else ''}"
    if done.returncode != 0:
        return [("cost table", False, f"scripts/bench_cost.py exited {done.returncode}")], None
    return [("cost table", True, f"[{name}.md]({name}.md), {time.perf_counter() - started:.0f} s")], out / f"{name}.csv"


def cost_targets(csv_path: Path) -> list[tuple[str, bool, str]]:
    """(what, met, detail) of each COST_TARGETS encoder and phase in the evidence CSV: the median over rounds
    of its time over the fast baseline's in the same round, at every length (met where every length is)."""
    from rnnbench.results import evidence

    bench_cost = _script("bench_cost")
    base = bench_cost.FAST_BASELINE
    times: dict[tuple[str, str, int], dict[int, float]] = {}
    for row in evidence.read_csv(csv_path):
        column = row["dataset"]
        if column == "parameters":
            continue
        phase = "train" if "/train_" in column else "infer"
        length = int(column.rsplit("len", 1)[1])
        value = row["seconds_per_epoch"] if phase == "train" else row["inference_seconds_per_example"]
        times.setdefault((row["encoder"], phase, length), {})[int(row["seed"])] = float(value)
    out = []
    for encoder, most in COST_TARGETS.items():
        for phase in ("train", "infer"):
            lengths = sorted(n for (e, p, n) in times if e == encoder and p == phase and (base, phase, n) in times)
            if not lengths:
                continue
            ratios = {n: statistics.median(t / times[base, phase, n][r] for r, t in times[encoder, phase, n].items())
                      for n in lengths}
            out.append((f"`{encoder}` {phase} ≤ {most}× `{base}`", all(v <= most for v in ratios.values()),
                        ", ".join(f"len {n}: {v:.2f}×" for n, v in ratios.items())))
    return out


# --- 4. training runs --------------------------------------------------------------------

def training_checks(device: str, quick: bool = False) -> list[tuple[str, bool, str]]:
    from rnnbench.compose import compose_config
    from rnnbench.encoders.build import known_encoders
    from rnnbench.run import train

    out = []
    with tempfile.TemporaryDirectory() as runs:
        for enc in QUICK_TRAINING if quick else known_encoders():
            overrides = [f"encoder={enc}", "task=picking", "trainer=smoke", f"trainer.device={device}", f"paths.runs_dir={runs}",
                         *([] if quick else ["trainer.max_eval_batches=null"])]
            if enc.startswith("mzu"):
                overrides.append("encoder.hidden_size=64")
            started = time.perf_counter()
            try:
                record = train(compose_config(overrides), say=lambda _: None)
                loss = record["history"][-1]["train_loss"]
                ok = record["hardware"]["device"].startswith(device) and loss == loss and abs(loss) < float("inf")
                out.append((enc, ok, f"test accuracy {record['test']['accuracy']:.3f}, train loss {loss:.3f}, "
                                      f"{time.perf_counter() - started:.1f} s on {record['hardware']['device']}"))
            except Exception as exc:  # noqa: BLE001
                out.append((enc, False, f"{type(exc).__name__}: {exc}"))
            print(f"{enc}: {'pass' if out[-1][1] else 'FAIL'}, {out[-1][2]}", flush=True)  # progress, and a trace if cut short
    return out


# --- the estimate and the report -----------------------------------------------------------

def estimate_seconds(table: Path = REPO / "results" / "rcrn_table10_cuda.md") -> dict[str, float]:
    """Device seconds of each part of ``make gpu-check`` on the GPU the committed CUDA cost table names.

    The cost benchmark: each (encoder, length, phase) median of that table's evidence CSV times the calls
    made now (the warm-up's least, the timed rounds, and at the longest length one profiled call at
    PROFILE_OVERHEAD), the fast-path rows at the time of the encoder they stand beside (one cuDNN call is
    not slower than the encoder's several) and a kernel variant's row (``rcrn_persistent``) at its base
    encoder's time, plus that run's time outside its timed calls (its minutes
    less its calls: process start, model builds, first-call autotuning). The other parts: ALLOWANCE_S."""
    from rnnbench.results import evidence

    bench_cost = _script("bench_cost")
    text = table.read_text()
    minutes = float(re.search(r"\(\d{4}-\d\d-\d\d, ([\d.]+) minutes\)", text).group(1))
    rounds = int(re.search(r"(\d+) rounds at each length", text).group(1))
    # calls per (encoder, length, phase) in that table's run: its timed rounds, and its warm-up: at least N calls
    # each (the warmed benchmark), or one warm-up round (tables written before it)
    warmed = re.search(r"at least (\d+) calls each", text)
    calls_then = rounds + (int(warmed.group(1)) if warmed else "a warm-up round" in text)
    medians: dict[tuple[str, str, int], float] = {}
    samples: dict[tuple[str, str, int], list[float]] = {}
    for row in evidence.read_csv(table.with_suffix(".csv")):
        if row["dataset"] == "parameters" or "/train_" not in row["dataset"]:
            continue  # a train column's row carries both of the round's times
        length = int(row["dataset"].rsplit("len", 1)[1])
        samples.setdefault((row["encoder"], "train", length), []).append(row["seconds_per_epoch"] / bench_cost.STEPS_PER_EPOCH)
        samples.setdefault((row["encoder"], "infer", length), []).append(row["inference_seconds_per_example"] * bench_cost.BATCH)
    medians = {k: statistics.median(v) for k, v in samples.items()}
    stand_in = {name: base for name, (base, _, _) in bench_cost.WHOLE_STACK.items()}
    stand_in.update(bench_cost.KERNEL_VARIANTS)  # a row the table lacks, priced at its base encoder's time
    longest = max(n for _, _, n in medians)
    per_call = 0.0
    profiled = 0.0
    for name in bench_cost.ENCODERS:
        for (encoder, _, length), seconds in medians.items():
            if encoder == stand_in.get(name, name):
                per_call += seconds
                profiled += seconds if length == longest else 0.0
    measured_then = sum(v for (e, _, _), v in medians.items() if e in bench_cost.ENCODERS) * calls_then
    cost = per_call * (bench_cost.WARM_MIN + 5) + profiled * PROFILE_OVERHEAD + max(0.0, minutes * 60 - measured_then)
    return {**ALLOWANCE_S, "cost table": cost}


def device_line(device: str) -> str:
    bench_cost = _script("bench_cost")
    info = bench_cost.machine(1, device)
    parts = [f"Device: **{info.get('gpu', info['cpu'] + ' (CPU)')}**"]
    if device == "cuda":
        parts.append(f"driver {info['driver']}, CUDA {info['cuda']}, cuDNN {info['cudnn']}")
    parts.append(f"torch {info['torch']}, Triton {info.get('triton', 'not installed')}, Python {platform.python_version()}")
    return "; ".join(parts)


def report(device_name: str, parts: dict[str, list[tuple[str, bool, str]]], sections: dict[str, list[str]],
           estimate: dict[str, float] | None = None, quick: bool = False) -> str:
    from rnnbench.results.run_record import git_commit

    lines = ["# GPU check", ""]
    if quick:
        lines += ["**Dry run (`--quick`): tiny sizes, a check of the script's path, not a measurement.**", ""]
    lines += [f"{device_name}; code {git_commit(REPO)}; {time.strftime('%Y-%m-%d')}. "
              "Written by `make gpu-check` (scripts/gpu_check.py).", ""]
    if estimate:
        lines += [f"Estimated beforehand: {sum(estimate.values()) / 60:.1f} minutes ("
                  + ", ".join(f"{k} {v:.0f} s" for k, v in estimate.items()) + ").", ""]
    for title, rows in parts.items():
        passed = sum(ok for _, ok, _ in rows)
        lines += [f"## {title}: {passed} of {len(rows)} passed", "", "| what | result | detail |", "|---|---|---|"]
        lines += [f"| {name} | {'pass' if ok else '**FAIL**'} | {detail} |" for name, ok, detail in rows]
        lines.append("")
    for title, body in sections.items():
        lines += [f"## {title}", "", *body, ""]
    return "\n".join(lines)


def _target_lines(rows: list[tuple[str, bool, str]]) -> list[str]:
    return ["| target | met | measured |", "|---|---|---|"] + [f"| {what} | {'yes' if met else '**no**'} | {detail} |"
                                                              for what, met, detail in rows]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=None, help="folder of gpu.md and the cost table (default: results/; "
                                                    "with --quick a new temporary folder)")
    parser.add_argument("--skip-cost", action="store_true", help="leave out the cost table (minutes)")
    parser.add_argument("--skip-training", action="store_true", help="leave out the training runs")
    parser.add_argument("--quick", action="store_true", help="a dry run at tiny sizes; without CUDA on the CPU, "
                                                             "the Triton kernels in Triton's interpreter")
    args = parser.parse_args(argv)
    cuda = torch.cuda.is_available()
    if not cuda and not args.quick:
        print("error: no CUDA device here: run `make gpu-check` on a machine with an NVIDIA GPU "
              "(--quick: a dry run of the script on the CPU)", file=sys.stderr)
        return 2
    device = "cuda" if cuda else "cpu"
    if not cuda:
        os.environ["TRITON_INTERPRET"] = "1"  # read when a kernel is defined: after this, on the first Triton call
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="gpu-check-")) if args.quick else REPO / "results"
    out.mkdir(parents=True, exist_ok=True)
    estimate = None if args.quick else estimate_seconds()
    if estimate:
        print(f"estimated {sum(estimate.values()) / 60:.1f} minutes: {estimate}", flush=True)
    name = device_line(device)
    parts: dict[str, list[tuple[str, bool, str]]] = {}
    sections: dict[str, list[str]] = {}
    targets: list[tuple[str, bool, str]] = []

    def save() -> str:  # after each part: a check cut short (a lease running out) keeps what it found
        text = report(name, parts, sections, estimate, args.quick)
        (out / "gpu.md").write_text(text)
        return text

    parts["Triton kernels against the reference" + (" on CUDA" if cuda else " (Triton's interpreter, CPU)")] = \
        kernel_checks(device, args.quick)
    save()
    rows, tables, scan_targets = scan_bandwidth(device, args.quick)
    parts["Gated-scan bandwidth"], sections["Gated-scan bandwidth"] = rows, tables
    targets += scan_targets
    save()
    if args.skip_cost:
        sections["Cost table"] = ["not run (--skip-cost)"]
    else:
        parts["Cost table"], evidence_csv = cost_table(device, out, args.quick)
        if evidence_csv is not None:
            targets = cost_targets(evidence_csv) + targets
    save()
    if not args.skip_training:
        parts[f"A short training run of {'one encoder' if args.quick else 'every encoder'} on {device.upper()}"] = \
            training_checks(device, args.quick)
    sections["Targets"] = (["Read from the parts above; they do not change the check's result.", "", *_target_lines(targets)]
                           if targets else ["none measured"])
    text = save()
    print(text)
    print(f"wrote {out / 'gpu.md'}")
    failed = any(not ok for rows in parts.values() for _, ok, _ in rows)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
