"""Bits per character: total bits over total characters of the split, checked by hand."""
from __future__ import annotations

import math

import pytest

from rnnbench.metrics import registry, score
from rnnbench.metrics.language_model import bpc


def test_bpc_is_total_bits_over_total_characters():
    # 150 characters at 2 bits and a short last record of 2 characters at 5 bits:
    # (300 + 10) / 152, not the mean of the per-record means (2 + 5) / 2 = 3.5.
    predictions = [{"bits": 300.0, "chars": 150}, {"bits": 10.0, "chars": 2}]
    assert bpc(predictions, [{}, {}]) == pytest.approx(310 / 152)
    assert bpc(predictions, [{}, {}]) != pytest.approx(3.5)


def test_bpc_of_natural_log_likelihoods():
    """The paper: BPC is the negative log-likelihood (nats) divided by ln 2."""
    probs = [0.5, 0.25, 0.125, 0.9]  # one record, four characters: 1 + 2 + 3 + 0.152 bits
    bits = -sum(math.log(p) for p in probs) / math.log(2)
    assert bpc([{"bits": bits, "chars": 4}], [{}]) == pytest.approx((1 + 2 + 3 - math.log2(0.9)) / 4)


def test_bpc_without_characters_is_nan():
    assert math.isnan(bpc([], []))
    assert math.isnan(bpc([{"bits": 0.0, "chars": 0}], [{}]))


def test_bpc_is_registered():
    assert registry()["bpc"] is bpc
    assert score(["bpc"], [{"bits": 8.0, "chars": 4}], [{}]) == {"bpc": 2.0}
