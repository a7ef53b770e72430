"""The claims registry: the paper's numbers a claim compares are those of the rows it names
(RCRN Table 10 prints two rows of each encoder), and a claim declares what its verdict needs
(an equality's margin) before any run is read."""
from __future__ import annotations

import pytest

from rnnbench.results import claims
from rnnbench.results.tables import REGISTRY


def _claim(table: str, claim_id: str) -> dict:
    return next(c for c in claims.load_claims(table) if c["id"] == claim_id)


def test_table_10s_paper_column_is_the_rows_the_claim_names():
    # 'the CUDA-optimized RCRN is slightly faster than the 3-layer BiLSTM (cuDNN)': 10 vs 10 s at length 16,
    # not the first rcrn and 3l_bilstm rows of the file (RCRN (CUDNN) 19 s, 3 layer BiLSTM 29 s)
    assert claims.paper_values("rcrn_table10", _claim("rcrn_table10", "rcrn-faster-than-3l-bilstm-train-len16")) == (10, 10)
    # 'the fastest model is naturally the 1 layer BiLSTM (CUDNN)': 26 s at 256 against the optimized RCRN's 78
    assert claims.paper_values("rcrn_table10", _claim("rcrn_table10", "bilstm-faster-than-rcrn-train-len256")) == (26, 78)
    assert claims.paper_values("rcrn_table10", _claim("rcrn_table10", "bilstm-faster-than-3l-bilstm-infer-len64")) == (4, 9)


def test_a_claim_on_an_encoder_with_two_printed_rows_must_name_its_row():
    registry = {"rows": [{"model": "A (slow)", "encoder": "a", "values": {"x": 2}}, {"model": "A (fast)", "encoder": "a", "values": {"x": 1}},
                         {"model": "B", "encoder": "b", "values": {"x": 3}}]}
    claim = {"id": "c", "better": "a", "worse": "b", "column": "x"}
    with pytest.raises(ValueError, match=r"claim 'c': 2 rows of a print x \(A \(slow\), A \(fast\)\): name the paper's row in paper_rows.better"):
        claims._paper_row(registry, claim, "better", "t.yaml")
    assert claims._paper_row(registry, {**claim, "paper_rows": {"better": "A (fast)"}}, "better")["values"]["x"] == 1
    with pytest.raises(ValueError, match="paper_rows.better 'A' is not a row's model"):
        claims._paper_row(registry, {**claim, "paper_rows": {"better": "A"}}, "better", "t.yaml")
    assert claims._paper_row(registry, {**claim, "column": "y"}, "better")["model"] == "A (slow)"  # prints nothing: no ambiguity


@pytest.mark.parametrize(("change", "message"), [
    ({"relation": "equal"}, "an equality claim declares its margin"),
    ({"relation": "equal", "relative_margin": 1.5}, "relative_margin is a fraction below 1"),
    ({"min_factor": -2}, "min_factor must be a positive number"),
    ({"smallest_effect": "big"}, "smallest_effect must be a positive number"),
    ({"quantity": "joules"}, "quantity must be one of"),
])
def test_a_malformed_claim_is_one_line_naming_it(change, message):
    claim = {"id": "c", "text": "t", "better": "rcrn", "worse": "bilstm", "column": "TREC", **change}
    with pytest.raises(ValueError, match=f"t.yaml: claim 'c': {message}"):
        claims.check_claim(claim, "t.yaml")


def test_every_registry_file_loads_and_every_equality_declares_a_margin():
    for path in REGISTRY.glob("*.yaml"):
        for claim in claims.load_claims(path.stem):  # raises on any malformed claim
            if claim.get("relation") == "equal":
                assert claim.get("relative_margin") or claim.get("margin"), (path.stem, claim["id"])
