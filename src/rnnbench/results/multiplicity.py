"""Adjusting the p-values of a family of claims tested together.

A paper draws many claims from its tables; tested one by one at 5%, some would be "decided" by
chance alone. The ledger's rule (``rnnbench.results.verdicts``):

- ``holm``: Holm's step-down adjustment, within a family (a paper's claims of one kind). It
  keeps the chance of deciding any true null claim of the family wrongly at or below alpha, with
  no assumption on how the claims depend on each other (they share rows and runs). The verdict
  follows it.
- ``benjamini_hochberg``: the false discovery rate adjustment across the whole ledger, shown
  beside: the expected share of wrongly decided claims among those it would decide.
- ``holm_levels``: each claim's level in Holm's procedure (alpha / (m - k + 1) at its step, or
  the level of the step where the procedure stopped); the ledger prints intervals at that level,
  so an interval and its verdict never disagree.
"""
from __future__ import annotations


def holm(p_values: list[float]) -> list[float]:
    """Holm-adjusted p-values, in the order given: the k-th smallest is multiplied by (m - k + 1),
    then made non-decreasing in that order, and capped at 1."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def benjamini_hochberg(p_values: list[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (q-values), in the order given: the k-th smallest is
    multiplied by m / k, then made non-increasing from the largest down, and capped at 1."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    adjusted = [0.0] * m
    running = 1.0
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        running = min(running, m * p_values[i] / (rank + 1))
        adjusted[i] = min(1.0, running)
    return adjusted


def holm_levels(p_values: list[float], alpha: float) -> list[float]:
    """Each claim's level under Holm's procedure at ``alpha``: the k-th smallest p-value faces
    alpha / (m - k + 1) while every smaller one was below its own; the procedure stops at the
    first that is not, and that step's level serves every claim from there on. A claim's
    interval at its level excludes its null exactly when its Holm-adjusted p-value is below
    alpha (ties in p aside)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    levels = [0.0] * m
    stopped = None
    for rank, i in enumerate(order):
        level = alpha / (m - rank) if stopped is None else stopped
        if stopped is None and p_values[i] >= level:
            stopped = level
        levels[i] = level
    return levels
