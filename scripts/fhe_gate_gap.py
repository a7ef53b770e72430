"""A trained FHE run scored two ways: with its gates thresholded at 0.5 (the paper's evaluation
rule, what the run's dev and test scores use) and with its gates sampled as in training.

    python scripts/fhe_gate_gap.py <fhe run folder> [overrides] [--split dev] [--checkpoint best|last] [--samples 2]

A large gap means the policy's probabilities sit near 0.5: the thresholded score then lags what
the model has learned, and early stopping on it can stop a run that is still improving
(results/diagnostics/fhe_gate_threshold.md). ``--checkpoint last`` scores the last epoch's
weights (``last.pt``) instead of the best dev epoch's. Overrides are evaluate.py's (reader
settings only), e.g. ``task.reader.test_length=1600 --split test`` for a Table 4 length.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

import rnnbench
from rnnbench.errors import RnnbenchError
from rnnbench.inference import apply_overrides, parse_overrides
from rnnbench.data.batching import batch_indices, collate
from rnnbench.data.prepare import prepare


def load_weights(run_dir: Path, checkpoint: str):
    run = rnnbench.load(run_dir)
    if checkpoint == "last":
        run.model.load_state_dict(torch.load(run_dir / "last.pt", map_location="cpu", weights_only=False)["model"])
    return run


def scoring_data(run, overrides: list[str]):
    """The run's splits read with evaluate.py's reader ``overrides`` (a longer test length)."""
    return prepare(apply_overrides(run.config, parse_overrides(overrides, run.config)))


def accuracy(run, data, split: str, sampled: bool, seed: int = 0) -> tuple[float, float]:
    """(accuracy, mean share of open gates) on ``split``; ``sampled``: gates drawn as in training."""
    torch.manual_seed(seed)
    records, raw, model = data.splits[split], data.raw[split], run.model
    right, openness = 0, 0.0
    with torch.no_grad():
        for idx in batch_indices(records, data.fields, 100, shuffle=False):
            batch = collate([records[i] for i in idx], data.fields)
            model.eval()
            if sampled:
                model.encoder.train()  # the encoder samples its gates; the rest stays in eval mode
            out, _ = model(batch)
            right += sum(int(p == raw[i]["label"]) for p, i in zip(model.head.decode(out, batch), idx))
            openness += float(out.encoder_output.stats.get("gate_openness", 0.0)) * len(idx)
    model.eval()
    return right / len(records), openness / len(records)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path)
    parser.add_argument("overrides", nargs="*", help="reader settings, as evaluate.py takes them (task.reader.test_length=400)")
    parser.add_argument("--split", default="dev")
    parser.add_argument("--checkpoint", choices=["best", "last"], default="best")
    parser.add_argument("--samples", type=int, default=2, help="seeds of the sampled scoring")
    args = parser.parse_args(argv)
    run = load_weights(args.run, args.checkpoint)
    if run.config.encoder.get("_target_", "").rsplit(".", 1)[-1] != "FHE":
        print(f"error: {args.run} is not an FHE run (encoder {run.config.encoder.get('_target_')})", file=sys.stderr)
        return 2
    try:
        data = scoring_data(run, args.overrides)
    except RnnbenchError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    acc, opened = accuracy(run, data, args.split, sampled=False)
    print(f"{args.split}, {args.checkpoint} checkpoint: thresholded gates accuracy {acc:.4f} (open {opened:.3f})")
    for seed in range(args.samples):
        acc, opened = accuracy(run, data, args.split, sampled=True, seed=seed)
        print(f"{args.split}, {args.checkpoint} checkpoint: sampled gates (seed {seed}) accuracy {acc:.4f} (open {opened:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
