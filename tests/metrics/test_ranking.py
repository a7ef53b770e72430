"""MAP and MRR (trec_eval through pytrec_eval) against values computed by hand."""
from __future__ import annotations

import pytest

from rnnbench.metrics import score
from rnnbench.metrics.ranking import mean_average_precision, mean_reciprocal_rank, per_question


def recs(qid, labels, scores, ids=None):
    ids = ids or [f"{qid}:{i}" for i in range(len(labels))]
    return [{"id": i, "qid": qid, "label": label} for i, label in zip(ids, labels)], list(scores)


def combine(*parts):
    records, predictions = [], []
    for r, p in parts:
        records += r
        predictions += p
    return predictions, records


def test_map_and_mrr_by_hand_without_ties():
    # q1 ranked: rel, non, rel -> AP = (1/1 + 2/3) / 2 = 5/6, RR = 1
    # q2 ranked: non, rel, non -> AP = 1/2, RR = 1/2
    # q3 has no correct candidate: left out (it would pull MAP to 4/9 as a 0)
    preds, records = combine(
        recs("q1", [1, 0, 1], [0.9, 0.8, 0.3]),
        recs("q2", [0, 1, 0], [0.9, 0.5, 0.1]),
        recs("q3", [0, 0], [0.7, 0.2]),
    )
    assert mean_average_precision(preds, records) == pytest.approx((5 / 6 + 1 / 2) / 2)
    assert mean_reciprocal_rank(preds, records) == pytest.approx((1 + 1 / 2) / 2)
    assert set(per_question(preds, records, "map")) == {"q1", "q2"}


def test_order_of_records_does_not_matter():
    preds, records = combine(recs("q1", [1, 0, 1], [0.9, 0.8, 0.3]), recs("q2", [0, 1, 0], [0.9, 0.5, 0.1]))
    order = [4, 0, 5, 2, 1, 3]
    assert mean_average_precision([preds[i] for i in order], [records[i] for i in order]) == pytest.approx(2 / 3)


def test_ties_are_broken_by_docno_descending():
    """trec_eval: equal scores rank the larger docno (string order) first."""
    # "t:2" > "t:1": the incorrect candidate goes first -> the correct one at rank 2.
    preds, records = combine(recs("t", [1, 0, 0], [0.5, 0.5, 0.2], ids=["t:1", "t:2", "t:3"]))
    assert mean_average_precision(preds, records) == pytest.approx(1 / 2)
    assert mean_reciprocal_rank(preds, records) == pytest.approx(1 / 2)
    # "u:9" > "u:10" as strings: the correct "u:9" goes first.
    preds, records = combine(recs("u", [0, 1], [0.5, 0.5], ids=["u:10", "u:9"]))
    assert mean_reciprocal_rank(preds, records) == pytest.approx(1.0)
    # All tied, two correct of four (ranked v:4, v:3, v:2, v:1): correct at ranks 2 and 4 -> AP = (1/2 + 2/4) / 2.
    preds, records = combine(recs("v", [1, 0, 1, 0], [0.0] * 4, ids=["v:1", "v:2", "v:3", "v:4"]))
    assert mean_average_precision(preds, records) == pytest.approx(1 / 2)
    assert mean_reciprocal_rank(preds, records) == pytest.approx(1 / 2)


def test_all_correct_question_counts_one_and_nothing_to_rank_gives_zero():
    preds, records = combine(recs("a", [1, 1], [0.1, 0.9]), recs("b", [0, 1, 0, 0], [0.4, 0.3, 0.2, 0.1]))
    # a: AP 1, RR 1; b: rel at rank 2 -> AP 1/2, RR 1/2
    assert mean_average_precision(preds, records) == pytest.approx(3 / 4)
    assert mean_reciprocal_rank(preds, records) == pytest.approx(3 / 4)
    preds, records = combine(recs("c", [0, 0], [0.1, 0.2]))
    assert mean_average_precision(preds, records) == 0.0 and mean_reciprocal_rank([], []) == 0.0


def test_registered_names_and_subsets():
    preds, records = combine(recs("q1", [1, 0, 1], [0.9, 0.8, 0.3]), recs("q2", [0, 1, 0], [0.9, 0.5, 0.1]))
    for r in records:
        r["source"] = r["qid"]
    scores = score(["map", "mrr"], preds, records, {"second": {"source": "q2"}})
    assert scores["map"] == pytest.approx(2 / 3) and scores["mrr"] == pytest.approx(3 / 4)
    assert scores["map_second"] == pytest.approx(1 / 2) and scores["mrr_second"] == pytest.approx(1 / 2)


def test_duplicate_candidate_ids_are_refused():
    preds, records = combine(recs("q", [1, 0], [0.1, 0.2], ids=["q:0", "q:0"]))
    with pytest.raises(ValueError, match="occurs twice"):
        mean_average_precision(preds, records)
