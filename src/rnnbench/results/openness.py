"""FHE's accuracy against gate openness (the paper's Figure 4 analogue), drawn from a table's
evidence CSV: one point per reported FHE run. A table whose experiments set
``table.openness_figure`` gets it redrawn whenever the table is written."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from rnnbench.errors import RnnbenchError  # noqa: E402
from rnnbench.results import evidence, palette  # noqa: E402


def accuracy_vs_openness(csv_path: Path, out: Path) -> Path:
    """One point per reported FHE run: test gate openness (x) against test accuracy (y), by length."""
    rows = [r for r in evidence.read_csv(csv_path) if r["reported"] == "yes"]
    by_run: dict[str, dict] = {}
    for r in rows:
        entry = by_run.setdefault(r["run"], {"label": r["encoder"] + (f" ({r['variant']})" if r["variant"] else ""), "encoder": r["encoder"]})
        if r["dataset"].startswith("gate openness"):
            entry["openness"], entry["length"] = r["test"], r["dataset"].rsplit("/", 1)[-1]
        elif r["metric"] == "accuracy":
            entry["accuracy"] = r["test"]
    points = [p for p in by_run.values() if "openness" in p and "accuracy" in p]
    if not points:
        raise RnnbenchError(f"{csv_path} has no reported run with both an accuracy and a gate-openness column")
    fig, ax = plt.subplots(figsize=(5, 4))
    labels = sorted({(p["label"], p["length"]) for p in points})
    markers = dict(zip(labels, "osD^v<>P*X"))  # the encoder's colour, a marker per variant and length
    for label in labels:
        group = [p for p in points if (p["label"], p["length"]) == label]
        ax.scatter([p["openness"] for p in group], [p["accuracy"] for p in group], label=f"{label[0]}, {label[1]} (n={len(group)})",
                   color=palette.colour(group[0]["encoder"]), marker=markers[label])
    ax.set_xlabel("gates open on test (% of positions)")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title(f"FHE: accuracy against gate openness ({csv_path.stem})", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=90, metadata={"Software": None})
    plt.close(fig)
    return out
