"""The table writer records a scored subset's per-item scores (MZU Table 6's HDS, RACE's levels):
derived from the full column's items of the same run, the test split read only where a row lacks them."""
from __future__ import annotations

from omegaconf import OmegaConf

from rnnbench.campaign import assemble

TASK = OmegaConf.create({"metrics": ["accuracy"], "metric_subsets": {"hds": {"hds": True}}})
CFG = OmegaConf.create({"table": {}, "task": TASK})
RECORDS = [{"id": f"test-{i}", "hds": i % 3 == 0} for i in range(9)]  # items 0, 3, 6 are hard
SCORES = [1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0]


def _rows() -> list[dict]:
    return [{"dataset": c, "model": "GRU", "variant": "", "seed": 1, "reported": "yes", "test": t}
            for c, t in (("R-DS", sum(SCORES) / 9), ("R-HDS", 2 / 3))]


def _items() -> list[dict]:
    return [{"dataset": "R-DS", "model": "GRU", "variant": "", "seed": 1, "item": f"test-{i}", "score": s, "scale": 100.0}
            for i, s in enumerate(SCORES)]


def _patched(monkeypatch) -> list[int]:
    loads: list[int] = []

    def loader():
        def load(cfg):
            loads.append(1)
            return {"test": RECORDS}, []
        return load

    monkeypatch.setattr(assemble, "split_loader", loader)
    monkeypatch.setattr(assemble, "column_metrics", lambda table, cfg: {"R-DS": "accuracy", "R-HDS": "accuracy_hds"})
    return loads


def test_a_subset_row_without_items_gets_its_parents_restricted(monkeypatch):
    loads = _patched(monkeypatch)
    added = assemble.scored_subset_items([CFG], _rows(), _items(), "t.csv")
    assert sorted((a["dataset"], a["item"], a["score"]) for a in added) == [
        ("R-HDS", "test-0", 1.0), ("R-HDS", "test-3", 0.0), ("R-HDS", "test-6", 1.0)]
    assert loads == [1]


def test_rows_that_have_their_items_read_no_split(monkeypatch):
    loads = _patched(monkeypatch)
    items = _items()
    items += assemble.scored_subset_items([CFG], _rows(), items, "t.csv")
    loads.clear()
    assert assemble.scored_subset_items([CFG], _rows(), items, "t.csv") == [] and loads == []
