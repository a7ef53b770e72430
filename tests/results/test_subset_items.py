"""Per-item scores of scored subsets: derived from the full column's items of the same run, checked
against the subset's own score; and every committed item file agrees with its table's scores."""
from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from rnnbench.campaign.definitions import experiments_of
from rnnbench.compose import compose_config
from rnnbench.results import evidence, subset_items
from rnnbench.results.tables import column_metrics

RESULTS = Path(__file__).resolve().parents[2] / "results"
TASK = OmegaConf.create({"metrics": ["accuracy"], "metric_subsets": {"hds": {"hds": True}}})
COLUMNS = {"R-DS": "accuracy", "R-HDS": "accuracy_hds"}
RECORDS = [{"id": f"test-{i}", "hds": i % 3 == 0} for i in range(9)]  # items 0, 3, 6 are hard


def _row(column: str, test: float, seed: int = 1) -> dict:
    return {"dataset": column, "model": "GRU", "variant": "", "seed": seed, "reported": "yes", "test": test}


def _items(scores: list[float], seed: int = 1) -> list[dict]:
    return [{"dataset": "R-DS", "model": "GRU", "variant": "", "seed": seed, "item": f"test-{i}", "score": s, "scale": 100.0}
            for i, s in enumerate(scores)]


def test_a_subsets_items_are_its_parents_restricted_to_the_subset():
    scores = [1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0]  # hard items 0, 3, 6: 1, 0, 1
    rows = [_row("R-DS", sum(scores) / 9), _row("R-HDS", 2 / 3)]
    derived = subset_items.derived_rows(rows, _items(scores), COLUMNS, TASK, RECORDS, "t.csv")
    assert sorted((d["item"], d["score"], d["dataset"]) for d in derived) == [
        ("test-0", 1.0, "R-HDS"), ("test-3", 0.0, "R-HDS"), ("test-6", 1.0, "R-HDS")]
    assert subset_items.derived_rows(rows, _items(scores) + derived, COLUMNS, TASK, RECORDS, "t.csv") == []  # nothing twice


def test_a_derived_mean_that_is_not_the_subsets_score_is_an_error():
    scores = [1.0] * 9
    with pytest.raises(ValueError, match="not the same run or items"):
        subset_items.derived_rows([_row("R-HDS", 0.5)], _items(scores), COLUMNS, TASK, RECORDS, "t.csv")


def test_from_predictions_restricts_a_subset_metric(tmp_path):
    path = tmp_path / "predictions.jsonl"
    path.write_text("".join(json.dumps({"id": f"test-{i}", "prediction": 1, "gold": i % 2}) + "\n" for i in range(9)))
    assert set(subset_items.from_predictions(path, "accuracy_hds", TASK, RECORDS)) == {"test-0", "test-3", "test-6"}
    assert len(subset_items.from_predictions(path, "accuracy", TASK, RECORDS)) == 9


@pytest.mark.parametrize("table", sorted(p.name.split(".")[0] for p in RESULTS.glob("*.items.csv.xz")))
def test_committed_item_scores_average_to_their_runs_scores(table):
    """Every (column, row, seed) of a committed item file averages to its run's test score, so a
    claim decided on items reads the runs the table reports (ranking columns: the mean of per-question
    scores is MAP or MRR). A scored subset's items included."""
    rows = {(r["dataset"], r["model"], r["variant"], int(r["seed"])): float(r["test"])
            for r in evidence.read_csv(RESULTS / f"{table}.csv", scaled=False) if r.get("reported") == "yes"}
    sums: dict[tuple, list[float]] = defaultdict(list)
    for item in evidence.read_items(RESULTS / f"{table}.items.csv.xz", scaled=False):
        sums[(item["dataset"], item["model"], item["variant"], int(item["seed"]))].append(float(item["score"]))
    assert sums
    for key, scores in sums.items():
        assert key in rows, f"{table}: items of {key} but no reported run"
        assert math.fsum(scores) / len(scores) == pytest.approx(rows[key], abs=1e-6), f"{table}: {key}"


@pytest.mark.parametrize("table", ["mzu_table6", "dcu_table1"])
def test_every_reported_subset_row_has_its_items(table):
    """A claim on a subset column is decided on seeds and items, as every other claim: a reported
    row of a subset column (HDS, RACE's levels) whose run has full-column items has subset items too
    (the table writer derives them: ``campaign.assemble.scored_subset_items``). The subset columns
    and their parents come from the table's experiments, as the writer finds them."""
    rows = evidence.read_csv(RESULTS / f"{table}.csv", scaled=False)
    items = evidence.read_items(RESULTS / f"{table}.items.csv.xz", scaled=False)
    have = {subset_items.row_key(i) for i in items}
    missing, subsets = [], 0
    for experiment in experiments_of(table):
        cfg = compose_config([f"experiment={experiment}"])
        columns = {c: str(m) for c, m in column_metrics(cfg.table, cfg).items()}
        for row in subset_items.lacking(rows, items, columns, cfg.task):
            parent = subset_items.parent_column(columns, row["dataset"], cfg.task)
            if (parent, *subset_items.row_key(row)[1:]) in have:
                missing.append(subset_items.row_key(row))
        subsets += sum(subset_items.parent_column(columns, c, cfg.task) is not None for c in columns)
    assert subsets, f"{table}: no subset column found; the test reads nothing"
    assert not missing, f"{table}: subset rows without items: {missing[:5]}"
