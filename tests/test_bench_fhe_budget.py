"""scripts/bench_fhe_budget.py: the price table of wider small FHE Table 4 rows, from a tiny measurement."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers import REPO


@pytest.mark.slow
def test_every_row_is_priced_at_every_width_and_the_first_width_is_the_unit(tmp_path):
    out = tmp_path / "budget.md"
    done = subprocess.run([sys.executable, "scripts/bench_fhe_budget.py", "--widths", "64", "16", "--batches", "1", "--rounds", "1",
                           "--out", str(out)], capture_output=True, text=True, cwd=REPO, timeout=600,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [line.split(" | ") for line in out.read_text().splitlines() if line.startswith(("| lstm", "| fhe"))]
    assert [(r[0], r[1]) for r in rows] == [("| lstm1", "64"), ("| lstm1", "16"), ("| lstm2", "64"), ("| lstm2", "16"),
                                            ("| fhe", "64"), ("| fhe", "16")]
    assert all(r[2] == "1.00" for r in rows if r[1] == "64") and all(float(r[2]) > 0 for r in rows)
