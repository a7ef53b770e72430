"""The sanity gate on the default task: every encoder, built as `python train.py encoder=<name>`
builds it, passes the five checks (rnnbench.sanity). An encoder change that stops a model from
learning fails here before any campaign row meets it. results/sanity.md ("default task") holds
the same rows' committed verdicts; the two capsule/attention MZUs take about a minute each and
are in the full suite only."""
from __future__ import annotations

import pytest

from rnnbench import sanity
from rnnbench.results import sanity_gate as gate

ROWS = gate.table_rows(gate.DEFAULT_TABLE, [])
SLOW = {"mzu_cap", "mzu_sat"}  # 60-70 CPU s each: 125-200 memorisation steps of a five-matrix M-function


@pytest.fixture(scope="module")
def overrides(tmp_path_factory):
    return [f"paths.cache_dir={tmp_path_factory.mktemp('cache')}"]


@pytest.fixture(scope="module")
def data(overrides):
    return gate.DataCache().get(gate.row_config(ROWS[0], overrides))


def test_the_default_task_has_a_row_for_every_encoder():
    assert len(ROWS) >= 19 and {"bilstm", "rcrn", "mzu_cap", "dcu", "fhe", "none"} <= {r.encoder for r in ROWS}


@pytest.mark.parametrize("row", [pytest.param(r, id=r.encoder, marks=[pytest.mark.slow] if r.encoder in SLOW else [])
                                 for r in ROWS])
def test_every_encoder_passes_the_sanity_checks_on_the_default_task(row, overrides, data):
    cfg = gate.row_config(row, overrides)
    assert gate.data_identity(cfg) == gate.data_identity(gate.row_config(ROWS[0], overrides))  # one dataset for all
    verdict = sanity.check_model(cfg, data)
    assert [c.name for c in verdict.checks] == list(sanity.CHECKS)
    assert verdict.passed, f"{row.name}: {'; '.join(verdict.failures())}"
