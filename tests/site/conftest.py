"""The report built once for the tests of this folder: from the committed evidence (results/)
and two small runs written here, into a temporary folder."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def write_run(runs: Path, task: str, encoder: str, seed: int, identity: str, lr: float, curve: list[float], test: float) -> Path:
    """A finished run folder as train.py leaves it (record.json and the done marker), with what the report reads."""
    folder = runs / task / encoder / f"s{seed}-{identity[:12]}"
    folder.mkdir(parents=True)
    record = {
        "identity": identity, "task": task, "encoder": encoder, "seed": seed, "experiment": None, "run_dir": str(folder),
        "config": {"task": {"name": task, "select_metric": "accuracy"}, "encoder": {"name": encoder, "hidden_size": 64},
                   "trainer": {"lr": lr, "epochs": len(curve)}, "seed": seed, "paths": {"runs_dir": str(runs)}},
        "dev": {"accuracy": max(curve)}, "test": {"accuracy": test}, "best_epoch": curve.index(max(curve)) + 1,
        "epochs_run": len(curve), "history": [{"epoch": i + 1, "dev_accuracy": v, "train_seconds": 1.0} for i, v in enumerate(curve)],
        "seconds_per_epoch": 1.0, "encoder_parameters": 1234,
    }
    (folder / "record.json").write_text(json.dumps(record))
    (folder / "done").write_text("")
    with open(runs / "records.jsonl", "a") as index:
        index.write(json.dumps({k: record[k] for k in ("identity", "run_dir", "task", "encoder", "seed", "test", "dev")}) + "\n")
    return folder


COMPARISON = "text_classification_questions"


def write_comparison(root: Path) -> Path:
    """A comparison's folder under ``root`` as rnnbench compare leaves it: its evidence (bilstm and rcrn,
    five seeds, per-item scores: rcrn right on more items in every seed) and the table the table writer
    renders from it, with its comparison against bilstm. Returns ``root``."""
    import statistics

    from rnnbench.results import comparison, evidence
    from rnnbench.results import table_page as report
    from rnnbench.results.tables import define_table, paper_table, table_title

    folder, column = root / COMPARISON, "questions"
    define_table(COMPARISON, comparison.definition("bilstm, rcrn on questions.csv, task text_classification", ["bilstm", "rcrn"],
                                                   "bilstm", column, lower_is_better=False))
    rows, items = [], []
    for encoder, right in (("bilstm", 70), ("rcrn", 80)):
        for seed in range(1, 6):
            scores = [1.0 if (i * 7 + seed * 13) % 100 < right + seed % 3 else 0.0 for i in range(100)]
            rows.append({"model": encoder, "encoder": encoder, "variant": "", "dataset": column, "metric": "accuracy", "scale": 100.0,
                         "seed": seed, "lr": 1e-3, "phase": "select" if seed <= 2 else "final", "reported": "yes", "dev": 0.7,
                         "test": statistics.fmean(scores), "selected_epoch": 3, "epoch_cap": 50, "epochs_run": 7, "seconds_per_epoch": 2.0,
                         "inference_seconds_per_example": 0.001, "parameters": 1000, "threads": 1, "commit": "c", "versions": "{}",
                         "device": "cpu", "hardware": "Test CPU", "dev_curve": "0.5;0.6;0.7;0.69", "run": f"{encoder}-s{seed}",
                         "status": "trained", "majority": 0.3})
            items += [{"model": encoder, "variant": "", "dataset": column, "seed": seed, "item": f"questions.csv:{i + 2}", "score": score,
                       "scale": 100.0} for i, score in enumerate(scores)]
    evidence.write_csv(folder / f"{COMPARISON}.csv", rows)
    evidence.write_items(folder / f"{COMPARISON}.items.csv.xz", items)
    table = paper_table(COMPARISON)
    report.render(COMPARISON, table, table_title(table, ["accuracy"], ", %"), [column], evidence.read_csv(folder / f"{COMPARISON}.csv"),
                  evidence.read_items(folder / f"{COMPARISON}.items.csv.xz"), {"bilstm", "rcrn"}, [], folder, 1, False, None, "accuracy")
    return root


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """site/ of the committed evidence, two runs (bilstm and rcrn on the picking task) and one comparison."""
    from rnnbench.site.build import build

    root = tmp_path_factory.mktemp("report")
    runs = root / "runs"
    write_run(runs, "picking", "bilstm", 1, "a" * 40, 1e-3, [0.40, 0.55, 0.61, 0.60], 0.59)
    write_run(runs, "picking", "rcrn", 1, "b" * 40, 2e-3, [0.35, 0.50, 0.66, 0.70], 0.68)
    out = root / "site"
    build(REPO / "results", runs, out, say=lambda *_: None, comparisons=write_comparison(root / "comparisons"))
    return out
