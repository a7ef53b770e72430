"""Classification metrics: predictions are class ids, golds the records' ``label``."""
from __future__ import annotations


def accuracy(predictions: list, records: list[dict]) -> float:
    if not records:
        return 0.0
    return sum(p == r["label"] for p, r in zip(predictions, records)) / len(records)


METRICS = {"accuracy": accuracy}
