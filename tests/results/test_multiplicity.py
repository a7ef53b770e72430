"""Holm and Benjamini-Hochberg against hand-computed cases, and the Holm levels the ledger prints
intervals at, which must agree with the adjusted p-values."""
from __future__ import annotations

import numpy as np
import pytest

from rnnbench.results import multiplicity


def test_holm_by_hand():
    # sorted 0.01, 0.02, 0.03, 0.2 (m = 4): 0.04, 0.06, 0.06 (0.03 x 2, made non-decreasing), 0.2
    assert multiplicity.holm([0.03, 0.01, 0.2, 0.02]) == pytest.approx([0.06, 0.04, 0.2, 0.06])
    assert multiplicity.holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert multiplicity.holm([0.03]) == [0.03] and multiplicity.holm([]) == []


def test_benjamini_hochberg_by_hand():
    # sorted 0.01, 0.02, 0.03, 0.2 (m = 4): 0.04, 0.04, 0.04, 0.2 (4/1 x 0.01; 4/2 x 0.02; 4/3 x 0.03; 4/4 x 0.2)
    assert multiplicity.benjamini_hochberg([0.03, 0.01, 0.2, 0.02]) == pytest.approx([0.04, 0.04, 0.2, 0.04])
    # made non-increasing from the largest down: 0.04 x 2/1 = 0.08 > 0.045 x 2/2
    assert multiplicity.benjamini_hochberg([0.04, 0.045]) == pytest.approx([0.045, 0.045])


def test_holm_levels_by_hand():
    # m = 4 at 5%: 0.01 < 0.0125 (step 1), 0.02 < 0.0167 no: the procedure stops at step 2; every later claim keeps 0.0167
    levels = multiplicity.holm_levels([0.03, 0.01, 0.2, 0.02], 0.05)
    assert levels == pytest.approx([0.05 / 3, 0.05 / 4, 0.05 / 3, 0.05 / 3])


def test_a_claim_is_below_its_holm_level_exactly_when_its_holm_p_is_below_alpha():
    rng = np.random.default_rng(1)
    for _ in range(300):
        m = int(rng.integers(1, 12))
        p = list(rng.uniform(0, 0.05, m) ** rng.uniform(0.5, 2))
        for raw, adjusted, level in zip(p, multiplicity.holm(p), multiplicity.holm_levels(p, 0.05)):
            assert (raw < level) == (adjusted < 0.05)
