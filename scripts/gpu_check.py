"""Check rnnbench on a CUDA GPU and write results/gpu.md.   (make gpu-check)

    python scripts/gpu_check.py [--out results] [--skip-cost]

Three parts, each recorded in the report with the device it ran on:

1. The Triton kernels on real CUDA (not the CPU interpreter): every encoder whose
   recurrence has a Triton kernel runs forward and backward on a ragged batch with the
   kernels forced to ``triton`` and again with the ``reference`` loops, on the GPU; the
   outputs and the input gradients must agree (float32, tolerance below), and the kernel
   dispatcher must report that Triton actually ran.
2. A short training run of every encoder on CUDA (the picking task, ``trainer=smoke``
   with the whole dev and test splits): it must finish with a finite loss.
3. The cost table on the GPU (``scripts/bench_cost.py --device cuda``, cuDNN's BiLSTM as
   the baseline), written as results/rcrn_table10_cuda.md.

Without CUDA it stops with one line (exit 2). Exit 1 when any check fails.
"""
from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "0")  # real kernels: the interpreter is for CPU tests only

import torch  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
TOLERANCE = 2e-4  # float32 recurrences over ~40 steps: reordered sums differ by ~1e-6 per step
# Encoders (with overrides) whose recurrences have Triton kernels: RCRN (multi_lstm + gated_scan),
# the recurrent DCU (gated_scan), FHE (fhe_upper + the LSTM cell), Res-V2 (residual_lstm).
KERNEL_ENCODERS = {
    "rcrn": [], "dcu": [], "fhe": [], "bilstm (residual v2)": ["encoder=bilstm", "encoder.residual=v2"],
}


def compare_impls(encoder_overrides: list[str], device: str, fast: str, reference: str = "reference", seed: int = 0) -> dict:
    """Max |difference| of outputs and input gradients between two kernel implementations of one encoder."""
    from rnnbench.compose import compose_config
    from rnnbench.encoders.build import build_encoder
    from rnnbench.kernels import dispatch

    cfg = compose_config([*encoder_overrides, "encoder.hidden_size=32"])
    torch.manual_seed(seed)
    encoder = build_encoder(cfg.encoder, input_size=16).to(device).eval()  # eval: no dropout, no sampled FHE gates
    lengths = torch.tensor([37, 21, 5, 30])
    mask = (torch.arange(37).unsqueeze(0) < lengths.unsqueeze(1)).to(device)
    x = torch.randn(4, 37, 16, device=device)
    context = torch.randn(4, getattr(encoder, "context_size", None) or 16, device=device)

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


def kernel_checks(device: str) -> list[tuple[str, bool, str]]:
    out = []
    for name, overrides in KERNEL_ENCODERS.items():
        overrides = overrides or [f"encoder={name}"]
        try:
            r = compare_impls(overrides, device, "triton")
            ran_triton = any("triton" in v for v in r["used"].values())
            ok = ran_triton and r["states"] <= TOLERANCE and r["grad"] <= TOLERANCE
            out.append((name, ok, f"max |Δ| states {r['states']:.2e}, input grad {r['grad']:.2e}; kernels {r['used']}"))
        except Exception as exc:  # noqa: BLE001 - a failure is a result to report
            out.append((name, False, f"{type(exc).__name__}: {exc}"))
    return out


def training_checks(device: str) -> list[tuple[str, bool, str]]:
    from rnnbench.compose import compose_config
    from rnnbench.encoders.build import known_encoders
    from rnnbench.run import train

    out = []
    with tempfile.TemporaryDirectory() as runs:
        for enc in known_encoders():
            overrides = [f"encoder={enc}", "task=picking", "trainer=smoke", "trainer.max_eval_batches=null", f"trainer.device={device}",
                         f"paths.runs_dir={runs}"]
            if enc.startswith("mzu"):
                overrides.append("encoder.hidden_size=64")
            started = time.perf_counter()
            try:
                record = train(compose_config(overrides), say=lambda _: None)
                loss = record["history"][-1]["train_loss"]
                ok = record["hardware"]["device"].startswith("cuda") and loss == loss and abs(loss) < float("inf")
                out.append((enc, ok, f"test accuracy {record['test']['accuracy']:.3f}, train loss {loss:.3f}, "
                                      f"{time.perf_counter() - started:.1f} s on {record['hardware']['device']}"))
            except Exception as exc:  # noqa: BLE001
                out.append((enc, False, f"{type(exc).__name__}: {exc}"))
            print(f"{enc}: {'pass' if out[-1][1] else 'FAIL'}, {out[-1][2]}", flush=True)  # progress, and a trace if cut short
    return out


def report(device_name: str, parts: dict[str, list[tuple[str, bool, str]]], cost: str) -> str:
    from rnnbench.results.run_record import git_commit

    lines = ["# GPU check", "", f"Device: **{device_name}**; torch {torch.__version__}, CUDA {torch.version.cuda}, "
             f"Python {platform.python_version()}; code {git_commit(REPO)}; {time.strftime('%Y-%m-%d')}. "
             "Written by `make gpu-check` (scripts/gpu_check.py).", ""]
    for title, rows in parts.items():
        passed = sum(ok for _, ok, _ in rows)
        lines += [f"## {title}: {passed} of {len(rows)} passed", "", "| what | result | detail |", "|---|---|---|"]
        lines += [f"| {name} | {'pass' if ok else '**FAIL**'} | {detail} |" for name, ok, detail in rows]
        lines.append("")
    lines += ["## Cost table on the GPU", "", cost, ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(REPO / "results"))
    parser.add_argument("--skip-cost", action="store_true", help="leave out the cost table (minutes)")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("error: no CUDA device here: run `make gpu-check` on a machine with an NVIDIA GPU", file=sys.stderr)
        return 2
    name = torch.cuda.get_device_name(0)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    parts: dict[str, list[tuple[str, bool, str]]] = {}
    cost = "not run yet (the check stopped before it)"
    # The report is rewritten after each part, so a check cut short (a lease running out) keeps what it found.
    for title, check in (("Triton kernels against the reference on CUDA", kernel_checks),
                         ("A short training run of every encoder on CUDA", training_checks)):
        parts[title] = check("cuda")
        (out / "gpu.md").write_text(report(name, parts, cost))
    cost = "not run (--skip-cost)"
    if not args.skip_cost:
        done = subprocess.run([sys.executable, str(REPO / "scripts" / "bench_cost.py"), "--device", "cuda", "--out", args.out])
        cost = ("[rcrn_table10_cuda.md](rcrn_table10_cuda.md)" if done.returncode == 0 else f"**FAIL**: bench_cost.py exited {done.returncode}")
    text = report(name, parts, cost)
    (out / "gpu.md").write_text(text)
    print(text)
    failed = any(not ok for rows in parts.values() for _, ok, _ in rows) or "FAIL" in cost
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
