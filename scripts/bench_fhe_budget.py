"""The price of a larger budget for FHE Table 4's small rows: training time per batch at wider
hidden sizes, as a ratio to the committed width, measured in one process, then priced in CPU hours.

    python scripts/bench_fhe_budget.py [--widths 64 128 256] [--batches 8] [--rounds 3] [--threads 1]
                                       [--out results/diagnostics/fhe_small_budget.md]

The small rows (conf/variant/fhe_small.yaml: 64 hidden units, Adam 1e-3, at most 60 epochs) reach
72-76% at the training length (200), where the paper's 256-unit models reach 97-99%. Their dev
curves flatten well before the cap (patience stops them), so a longer cap alone buys nothing; width
and rate are the options. This script prices width: each row (LSTM1, LSTM2, FHE) is built at every
width on the real task (length 200, batch 50) and trains ``--batches`` batches per round after a
warm-up batch; the rounds go round-robin over rows and widths, starting at the next one each round,
so a busy machine slows them alike. The price of a run at width w is the committed runs' seconds per
epoch at the small width times the median ratio (w over the small width, same row, same round), times
the epochs. A rate changes the epochs a run takes, not their price: it has no row of its own.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import torch

from rnnbench.compose import compose_config
from rnnbench.data.batching import batch_indices, collate
from rnnbench.data.prepare import prepare
from rnnbench.results import evidence
from rnnbench.training.loop import build_optimizer
from rnnbench.training.model import build_model

ROWS = {"lstm1": "fhe_table4_small", "lstm2": "fhe_table4_small", "fhe": "fhe_table4_small_fhe"}
COLUMN = "picking/accuracy/len200"
SEEDS = 5


def trainer(cfg, data, batches: int):
    """A function that trains ``batches`` batches of ``cfg``'s model and returns seconds per batch."""
    torch.manual_seed(0)
    model = build_model(cfg, data)
    optimizer = build_optimizer(cfg, [p for p in model.parameters() if p.requires_grad])
    train = data.splits["train"]
    order = batch_indices(train, data.fields, cfg.trainer.batch_size, shuffle=True, seed=1, epoch=0)

    def run(round_: int) -> float:
        picked = order[round_ * (batches + 1):(round_ + 1) * (batches + 1)]
        times = []
        for idx in picked:
            batch = collate([train[i] for i in idx], data.fields)
            start = time.perf_counter()
            _, loss = model(batch)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            times.append(time.perf_counter() - start)
        return statistics.fmean(times[1:])  # the first batch of a round warms it

    return run


def committed_seconds(results: Path) -> dict[str, tuple[float, int]]:
    """Per row: the committed small runs' mean seconds per epoch and mean epochs run."""
    rows = [r for r in evidence.read_csv(results / "fhe_table4.csv") if r["variant"] == "small" and r["dataset"] == COLUMN]
    out = {}
    for encoder in ROWS:
        mine = [r for r in rows if r["encoder"] == encoder]
        out[encoder] = (statistics.fmean(float(r["seconds_per_epoch"]) for r in mine), round(statistics.fmean(int(r["epochs_run"]) for r in mine)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--widths", type=int, nargs="+", default=[64, 128, 256])
    parser.add_argument("--batches", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--out", type=Path, default=Path("results/diagnostics/fhe_small_budget.md"))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    small = args.widths[0]
    with tempfile.TemporaryDirectory() as tmp:
        base = compose_config([f"experiment={ROWS['lstm1']}", "encoder=lstm1", f"paths.runs_dir={tmp}"])
        data = prepare(base)
        runs = {}
        for encoder, experiment in ROWS.items():
            for width in args.widths:
                cfg = compose_config([f"experiment={experiment}", f"encoder={encoder}", f"encoder.hidden_size={width}",
                                      f"paths.runs_dir={tmp}"])
                runs[(encoder, width)] = trainer(cfg, data, args.batches)
        keys = list(runs)
        times: dict[tuple, list[float]] = {k: [] for k in keys}
        for r in range(args.rounds):
            for k in keys[r % len(keys):] + keys[:r % len(keys)]:
                times[k].append(runs[k](r))
                print(f"round {r + 1}: {k[0]} width {k[1]}: {times[k][-1]:.3f} s/batch", flush=True)
    seconds = committed_seconds(args.results)
    lines = [
        "# FHE Table 4's small rows: the price of a wider model (benchmark)",
        "",
        f"Generated by `python scripts/bench_fhe_budget.py --widths {' '.join(map(str, args.widths))} --batches {args.batches} "
        f"--rounds {args.rounds} --threads {args.threads}` on {torch.__version__}, {args.threads} thread(s). Training time per "
        f"batch (length 200, batch {base.trainer.batch_size}) as a ratio to the same row at {small} units in the same round "
        f"(median of {args.rounds} rounds); a run's price is the committed small runs' seconds per epoch "
        f"([fhe_table4.csv](../fhe_table4.csv)) times the ratio, times its epochs.",
        "",
        f"| row | width | ratio to {small} | CPU h per epoch | CPU h per run at the small runs' epochs | CPU h per run at 60 epochs | {SEEDS} seeds at 60 epochs |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for encoder in ROWS:
        per_epoch, epochs = seconds[encoder]
        for width in args.widths:
            ratio = statistics.median(a / b for a, b in zip(times[(encoder, width)], times[(encoder, small)]))
            hour = per_epoch * ratio / 3600
            lines.append(f"| {encoder} | {width} | {ratio:.2f} | {hour:.3f} | {hour * epochs:.2f} ({epochs} epochs) | {hour * 60:.2f} "
                         f"| {hour * 60 * SEEDS:.1f} |")
    lines += ["", "The ratios are of this process's rounds; the seconds behind the prices are the committed runs', "
                  "made one thread each beside a second run."]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
