"""FHE's figures: accuracy against gate openness (the paper's Figure 4 analogue), and where the
gates open on a few test sequences.

    python scripts/fhe_figures.py openness results/fhe_table2.csv [--out results/plots/fhe_accuracy_vs_openness.png]
    python scripts/fhe_figures.py gates <fhe run folder> [--examples 4] [--out results/plots/fhe_gates.png]

``openness`` reads a table's evidence CSV (FHE Table 2 or 3: each reported FHE run has an
accuracy column and a ``gate openness/...`` column) and plots one point per run.
``gates`` loads a finished FHE run (``rnnbench.load``), reads test sequences of its task,
and draws each sequence's digits with the positions whose boundary gate opened; the
question k marks the prefix the answer is about.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from rnnbench.errors import RnnbenchError  # noqa: E402
from rnnbench.results.openness import accuracy_vs_openness  # noqa: E402

PLOTS = Path("results") / "plots"


def gate_picture(run_folder: Path, out: Path, examples: int = 4) -> Path:
    """The digits of ``examples`` test sequences, the open gates marked, the question's prefix shaded."""
    import rnnbench
    from rnnbench.data.prepare import build_reader

    run = rnnbench.load(run_folder)
    if run.config.encoder.name != "fhe":
        raise SystemExit(f"error: {run_folder} is a {run.config.encoder.name} run; the gate picture needs an fhe run")
    test = build_reader(run.config.task.reader).load(run.config.paths.data_dir)["test"][:examples]
    gates = []
    hook = run.model.encoder.register_forward_hook(lambda module, inputs, output: gates.append(output.mask.detach().cpu()))
    try:
        run.predict(test, batch_size=len(test))
    finally:
        hook.remove()
    opened = gates[-1]
    fig, axes = plt.subplots(len(test), 1, figsize=(max(6, 0.12 * len(test[0]["tokens"])), 1.1 * len(test)), squeeze=False)
    for ax, record, row in zip(axes[:, 0], test, opened):
        digits = record["tokens"]
        ax.bar(range(len(digits)), row[: len(digits)].float().numpy(), color="tab:orange", width=1.0)
        ax.axvspan(-0.5, int(record["question"]) - 0.5, color="tab:blue", alpha=0.12)
        ax.set_xlim(-0.5, len(digits) - 0.5)
        ax.set_yticks([])
        ax.set_xticks(range(len(digits)))
        ax.set_xticklabels(digits, fontsize=5)
        ax.set_ylabel(f"k={record['question']}", fontsize=7)
    fig.suptitle(f"FHE gates (orange: open) on {len(test)} test sequences; shaded: the question's prefix ({Path(run_folder).name})", fontsize=8)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=90, metadata={"Software": None})
    plt.close(fig)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="figure", required=True)
    a = sub.add_parser("openness", help="accuracy against gate openness from a table's evidence CSV")
    a.add_argument("csv", type=Path)
    a.add_argument("--out", type=Path, default=PLOTS / "fhe_accuracy_vs_openness.png")
    g = sub.add_parser("gates", help="where the gates open on a few test sequences of a finished FHE run")
    g.add_argument("run", type=Path)
    g.add_argument("--examples", type=int, default=4)
    g.add_argument("--out", type=Path, default=PLOTS / "fhe_gates.png")
    args = parser.parse_args(argv)
    try:
        path = accuracy_vs_openness(args.csv, args.out) if args.figure == "openness" else gate_picture(args.run, args.out, args.examples)
    except RnnbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
