"""Training time per TREC epoch of every encoder, relative to `bilstm`, measured in one process.

    python scripts/bench_epoch.py [--batches 40] [--threads 1] [encoder ...]

Each encoder trains `--batches` batches of the real TREC task (the task's own
settings, one thread by default) after one warm-up batch; the epoch time is
extrapolated from the mean batch time to the full epoch (99 batches of 50).
The machine may be shared: read the ratios, not the seconds.
"""
from __future__ import annotations

import argparse
import tempfile

import torch

from rnnbench.compose import compose_config
from rnnbench.data.batching import batch_indices
from rnnbench.data.prepare import prepare
from rnnbench.encoders.build import known_encoders
from rnnbench.training.batch_timing import seconds_per_batch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", type=int, default=40)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("encoders", nargs="*")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    names = args.encoders or known_encoders()
    names = ["bilstm"] + [n for n in names if n != "bilstm"]
    with tempfile.TemporaryDirectory() as tmp:
        base = compose_config(["task=trec", f"paths.runs_dir={tmp}"])
        data = prepare(base)
        epoch_batches = len(batch_indices(data.splits["train"], data.fields, base.trainer.batch_size, shuffle=False))
        print(f"| encoder | s/batch | s/epoch (est., {epoch_batches} batches) | relative to bilstm |")
        print("|---|---:|---:|---:|")
        reference = None
        for name in names:
            cfg = compose_config(["task=trec", f"encoder={name}", f"paths.runs_dir={tmp}"])
            s = seconds_per_batch(cfg, data, args.batches)
            reference = reference or s
            print(f"| `{name}` | {s:.3f} | {s * epoch_batches:.1f} | {s / reference:.2f} |", flush=True)


if __name__ == "__main__":
    main()
