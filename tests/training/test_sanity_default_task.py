"""The sanity gate on the default task: every encoder, built as `python train.py encoder=<name>`
builds it, passes the five checks (rnnbench.training.sanity). An encoder change that stops a model from
learning fails here before any campaign row meets it. results/sanity.md ("default task") holds
the same rows' committed verdicts. The three MZUs are left to `make sanity`: their checks take
15-70 CPU s each (125-200 memorisation steps of a five-matrix M-function), more than the rest of
this file together; tests/encoders/test_mzu*.py and tests/kernels/test_mzu_transition.py hold
their input-dependence and gradients."""
from __future__ import annotations

import pytest

from rnnbench.training import sanity
from rnnbench.campaign import sanity_gate as gate

ALL_ROWS = gate.table_rows(gate.DEFAULT_TABLE, [])
LEFT_TO_MAKE_SANITY = {"mzu_cap", "mzu_sat", "mzu_gcn"}
ROWS = [row for row in ALL_ROWS if row.encoder not in LEFT_TO_MAKE_SANITY]


@pytest.fixture(scope="module")
def overrides(tmp_path_factory):
    return [f"paths.cache_dir={tmp_path_factory.mktemp('cache')}"]


@pytest.fixture(scope="module")
def data():
    return gate.DataCache()


def test_the_default_task_has_a_row_for_every_encoder_and_only_the_mzus_are_left_out():
    assert len(ALL_ROWS) >= 19 and {"bilstm", "rcrn", "dcu", "fhe", "none"} <= {r.encoder for r in ROWS}
    assert {r.encoder for r in ALL_ROWS} - {r.encoder for r in ROWS} == LEFT_TO_MAKE_SANITY


@pytest.mark.parametrize("row", ROWS, ids=[r.encoder for r in ROWS])
def test_every_encoder_passes_the_sanity_checks_on_the_default_task(row, overrides, data):
    cfg = gate.row_config(row, overrides)
    verdict = sanity.check_model(cfg, data.get(cfg))  # prepared once: the rows share one dataset
    assert [c.name for c in verdict.checks] == list(sanity.CHECKS)
    assert verdict.passed, f"{row.name}: {'; '.join(verdict.failures())}"
