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


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """site/ of the committed evidence and two runs (bilstm and rcrn on the picking task)."""
    from rnnbench.site.build import build

    root = tmp_path_factory.mktemp("report")
    runs = root / "runs"
    write_run(runs, "picking", "bilstm", 1, "a" * 40, 1e-3, [0.40, 0.55, 0.61, 0.60], 0.59)
    write_run(runs, "picking", "rcrn", 1, "b" * 40, 2e-3, [0.35, 0.50, 0.66, 0.70], 0.68)
    out = root / "site"
    build(REPO / "results", runs, out, say=lambda *_: None)
    return out
