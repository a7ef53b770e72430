"""Classification metrics."""
from __future__ import annotations


def accuracy(predictions: list, golds: list) -> float:
    if not golds:
        return 0.0
    return sum(p == g for p, g in zip(predictions, golds)) / len(golds)


METRICS = {"accuracy": accuracy}
