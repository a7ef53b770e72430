"""Classification metrics: predictions are class ids, golds the records' ``label``."""
from __future__ import annotations

from collections import Counter


def accuracy(predictions: list, records: list[dict]) -> float:
    if not records:
        return 0.0
    return sum(p == r["label"] for p, r in zip(predictions, records)) / len(records)


def majority_accuracy(records: list[dict]) -> float:
    """The accuracy of always predicting the most common gold label (the majority-class baseline)."""
    if not records:
        return 0.0
    return max(Counter(r["label"] for r in records).values()) / len(records)


METRICS = {"accuracy": accuracy}
BASELINES = {"accuracy": majority_accuracy}  # a metric's majority-class score (rnnbench.metrics.majority_baseline)
