"""Language-model metrics over the predictions of ``heads.lm.LanguageModelHead``.

Each prediction is one record's {"bits": sum of -log2 p over its scored characters,
"chars": how many}. Bits per character is the split's total bits over its total
characters, i.e. the mean negative log2-likelihood per character over the whole
split (the MZU paper: "the negative log-likelihood divided by natural logarithm
of 2"), not a mean of per-record means (the last record of a split is shorter).
There is no reference package for this one-line formula; tests check it by hand.
"""
from __future__ import annotations

import math


def bpc(predictions: list, records: list[dict]) -> float:
    """Total bits / total scored characters; NaN when no character was scored."""
    bits = math.fsum(p["bits"] for p in predictions)
    chars = sum(p["chars"] for p in predictions)
    return bits / chars if chars else float("nan")


METRICS = {"bpc": bpc}
