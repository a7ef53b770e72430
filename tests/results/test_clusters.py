"""Test items grouped by their dataset's natural unit, read off the ids their readers write;
every committed items file parses under its table's declared unit."""
from __future__ import annotations

from pathlib import Path

import pytest

from rnnbench.results import clusters, evidence
from rnnbench.results.tables import REGISTRY, paper_table

RESULTS = Path(__file__).resolve().parents[2] / "results"


@pytest.mark.parametrize(("unit", "ids", "labels"), [
    ("sentence", ["test-1002:1-0", "test-1002:1-3", "test-36244784#0#3-2"], ["test-1002:1", "test-1002:1", "test-36244784#0#3"]),
    ("passage", ["test/high/10001.txt#0", "test/high/10001.txt#4", "test/middle/9.txt#1"],
     ["test/high/10001.txt", "test/high/10001.txt", "test/middle/9.txt"]),
    ("premise", ["1007205537.jpg#1r1c", "1007205537.jpg#1r1e", "10160966.jpg#3r2n"], ["1007205537.jpg#1", "1007205537.jpg#1", "10160966.jpg#3"]),
    ("question", ["Q900", "32.1"], ["Q900", "32.1"]),
    ("item", ["test-0", "test-1"], ["test-0", "test-1"]),
])
def test_each_unit_reads_its_cluster_off_the_id(unit, ids, labels):
    assert clusters.cluster_labels(unit, ids) == labels


def test_an_id_the_unit_does_not_fit_or_an_unknown_unit_is_one_line_error():
    with pytest.raises(ValueError, match=r"item id 'test-0' does not name its passage: expected <split>/<level>/<file>#<k>"):
        clusters.cluster_labels("passage", ["test/high/1.txt#0", "test-0"])
    with pytest.raises(ValueError, match="item_unit 'review' is not one of item, question, sentence, passage, premise"):
        clusters.cluster_labels("review", ["a"])


@pytest.mark.parametrize("table", sorted(p.stem for p in REGISTRY.glob("*.yaml") if (RESULTS / f"{p.stem}.items.csv.xz").exists()))
def test_every_committed_item_parses_under_its_tables_unit(table):
    unit = paper_table(table).get("item_unit", clusters.ITEM)
    ids = sorted({i["item"] for i in evidence.read_items(RESULTS / f"{table}.items.csv.xz")})
    labels = clusters.cluster_labels(unit, ids)
    if unit not in (clusters.ITEM, clusters.QUESTION):
        assert len(set(labels)) < len(ids)  # a declared unit that groups nothing is a wrong declaration
