"""The ledger's budget column counts the runs of the rows a claim compares, not every variant of
their encoders (LSTM baseline Table 2's parameter claim compares the Large rows: the Baseline
2-LSTM's hours are not its budget)."""
from __future__ import annotations

from rnnbench.results import decisions, ledger
from rnnbench.results.claims import load_claims


def _row(encoder: str, variant: str, seed: int, hours: float, parameters: int) -> dict:
    return {"model": encoder, "encoder": encoder, "variant": variant, "dataset": "IMDb", "metric": "accuracy", "seed": seed,
            "lr": 1e-4, "phase": "final", "reported": "yes", "dev": 80.0, "test": 80.0 + seed, "selected_epoch": 5,
            "epoch_cap": 50, "epochs_run": 10, "seconds_per_epoch": hours * 360.0, "inference_seconds_per_example": 0.001,
            "parameters": parameters, "threads": 1, "commit": "abc", "versions": "{}", "device": "cpu", "hardware": "Test CPU",
            "dev_curve": "", "run": f"{encoder}/{variant}/s{seed}"}


def _line(lines: list[str], claim_id: str, claims: list[dict]) -> str:
    text = next(c["text"] for c in claims if c["id"] == claim_id)
    return next(line for line in lines if text in line)


def test_each_claim_is_priced_by_its_own_rows():
    claims = load_claims("lstm_odyssey_table2")
    baseline = [_row("2l_lstm", "", s, 1.0, 198_720) for s in (1, 2)]  # 1 h per run
    large = [_row("2l_lstm", "large", s, 2.0, 2_000_000) for s in (1, 2)] + [_row("2l_bilstm", "large", s, 3.0, 2_000_000) for s in (1, 2)]
    rows = baseline + large
    lines = [ledger.claim_line(r, rows) for r in decisions.table_results("lstm_odyssey_table2", claims, rows, [], None, set())]
    params = _line(lines, "bi-2-lstm-params-equal-large-2-lstm", claims)
    assert "**reproduced**" in params and "10.00 CPU h" in params  # the Large rows' 2 x 2 h + 2 x 3 h, no Baseline hour
    accuracy = next(line for line in lines if "(`2l_bilstm` > `2l_lstm`" in line)
    assert "**not run**" in accuracy and "2.00 CPU h" in accuracy  # only the Baseline row has runs
