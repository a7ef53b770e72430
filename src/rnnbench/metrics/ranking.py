"""Answer-ranking metrics (MAP, MRR) computed by trec_eval's own code through pytrec_eval.

Predictions are the ranking head's scores, one per (question, candidate)
record; records carry ``qid``, ``id`` (the candidate's docno) and ``label``
(relevance 0/1). Each question's candidates are ranked by score, and trec_eval's
``map`` (average precision) and ``recip_rank`` are averaged over the questions,
as trec_eval's summary line does.

- Questions without a correct candidate are left out: their average precision
  and reciprocal rank are undefined (trec_eval would count them as 0). This is
  the WikiQA protocol. TrecQA "clean" has no such question; in TrecQA "raw"
  they are left out the same way (its all-correct questions stay, at 1.0).
- Ties: trec_eval sorts by score, then by docno in descending string order, so
  of two candidates with the same score the one whose record id sorts later is
  ranked first. Scores are passed as Python floats (the head's float32 cosine).
- No question with a correct candidate (an empty subset): 0.0.
"""
from __future__ import annotations

import pytrec_eval

TREC_MEASURES = {"map": "map", "mrr": "recip_rank"}


def per_question(predictions: list, records: list[dict], measure: str) -> dict[str, float]:
    """trec_eval's ``measure`` of every question that has a correct candidate."""
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for score, r in zip(predictions, records, strict=True):
        qid, docno = str(r["qid"]), str(r["id"])
        if docno in qrels.get(qid, {}):
            raise ValueError(f"ranking metrics: candidate id {docno!r} occurs twice in question {qid!r}")
        qrels.setdefault(qid, {})[docno] = int(r["label"])
        run.setdefault(qid, {})[docno] = float(score)
    answered = {q for q, docs in qrels.items() if any(rel > 0 for rel in docs.values())}
    if not answered:
        return {}
    evaluator = pytrec_eval.RelevanceEvaluator({q: qrels[q] for q in answered}, {measure})
    return {q: values[measure] for q, values in evaluator.evaluate({q: run[q] for q in answered}).items()}


def _mean(values: dict[str, float]) -> float:
    return sum(values.values()) / len(values) if values else 0.0


def mean_average_precision(predictions: list, records: list[dict]) -> float:
    return _mean(per_question(predictions, records, TREC_MEASURES["map"]))


def mean_reciprocal_rank(predictions: list, records: list[dict]) -> float:
    return _mean(per_question(predictions, records, TREC_MEASURES["mrr"]))


METRICS = {"map": mean_average_precision, "mrr": mean_reciprocal_rank}
