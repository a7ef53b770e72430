"""The ledger reads in a minute: it opens with what was found (per paper, accuracy and cost claims
apart, cost on the CPU and the GPU side by side, counts after the correction, the decided claims
with their intervals), then every table in the papers' order (Table 2 before Table 10)."""
from __future__ import annotations

from rnnbench.results import decisions, evidence, ledger
from rnnbench.results.claims import load_claims
from rnnbench.results.tables import REGISTRY


def _accuracy_rows() -> list[dict]:
    rows = []
    for encoder, base in (("rcrn", 44.0), ("bilstm", 42.0), ("3l_bilstm", 43.0)):
        for seed in range(1, 6):
            rows.append({"model": encoder, "encoder": encoder, "variant": "", "dataset": "SST-5", "metric": "accuracy", "seed": seed,
                         "lr": 1e-3, "phase": "final", "reported": "yes", "dev": 40.0, "test": base + 0.1 * ((seed * 3) % 5),
                         "selected_epoch": 5, "epoch_cap": 50, "epochs_run": 9, "seconds_per_epoch": 10.0,
                         "inference_seconds_per_example": 0.001, "parameters": 100, "threads": 1, "commit": "c", "versions": "{}",
                         "device": "cpu", "hardware": "Test CPU", "dev_curve": "", "run": f"{encoder}-s{seed}"})
    return rows


def _timing_rows(device: str, hardware: str, seconds: dict[str, float]) -> list[dict]:
    """The cost benchmark's rows: one per encoder and round (the round as seed), epoch cap 0."""
    rows = []
    for encoder, s in seconds.items():
        for round_ in range(1, 6):
            rows.append({"model": encoder, "encoder": encoder, "variant": "", "dataset": "IMDb/train_s_per_epoch/len16", "metric": "seconds",
                         "seed": round_, "lr": 1e-3, "phase": "final", "reported": "yes", "dev": "", "test": "", "selected_epoch": 0,
                         "epoch_cap": 0, "epochs_run": 0, "seconds_per_epoch": s * (1 + 0.01 * round_),
                         "inference_seconds_per_example": s / 1000, "parameters": {"bilstm": 803_200, "3l_bilstm": 2_729_600}.get(encoder, 2_409_600),
                         "threads": 1, "commit": "c", "versions": "{}", "device": device, "hardware": hardware, "dev_curve": "",
                         "run": f"cost-{encoder}-r{round_}"})
            rows.append({**rows[-1], "dataset": "parameters", "metric": "parameters", "seconds_per_epoch": "",
                         "inference_seconds_per_example": ""})
    return rows


def test_tables_come_in_the_papers_order():
    names = sorted((p.stem for p in REGISTRY.glob("*.yaml")), key=decisions.natural_key)
    assert names.index("rcrn_table2") < names.index("rcrn_table9") < names.index("rcrn_table10")


def test_the_ledger_opens_with_what_was_found(tmp_path):
    evidence.write_csv(tmp_path / "rcrn_table2.csv", _accuracy_rows())
    evidence.write_csv(tmp_path / "rcrn_table10.csv", _timing_rows("cpu", "Test CPU", {"bilstm": 100.0, "rcrn": 180.0, "3l_bilstm": 200.0}))
    evidence.write_csv(tmp_path / "rcrn_table10_cuda.csv", _timing_rows("cuda", "Test GPU", {"bilstm": 5.0, "rcrn": 8.0, "3l_bilstm": 10.0}))
    md = ledger.build(tmp_path)
    found = md.index("## What was found")
    assert found < md.index("### Accuracy claims, per paper") < md.index("### Cost claims, per paper") < md.index("## DCU Table 1:")
    assert md.index("## RCRN Table 2:") < md.index("## RCRN Table 10:")  # not the file names' order (rcrn_table10 < rcrn_table2)

    lines = md.splitlines()
    accuracy_rcrn = next(line for line in lines if line.startswith("| RCRN |") and line.count("|") == 11)
    n_accuracy = sum(1 for p in REGISTRY.glob("rcrn_*.yaml") for c in load_claims(p.stem) if c.get("quantity", "test") == "test")
    assert accuracy_rcrn.startswith(f"| RCRN | {n_accuracy} |")  # timing claims are not among them
    cost_rcrn = next(line for line in lines if line.startswith("| RCRN |") and line.count("|") == 8)
    cells = [c.strip() for c in cost_rcrn.split("|")[1:-1]]
    assert cells[1] == str(len(load_claims("rcrn_table10"))) and cells[2] != "–" and cells[3] != "–"  # CPU and GPU side by side
    assert cells[4] == "2 / 1"  # the counted sizes: two hold (BiLSTM smaller), one fails (RCRN = 3L-BiLSTM within 10%)

    decided = md[md.index("### The decided cost claims"):md.index("## DCU Table 1:")]
    bilstm = next(line for line in decided.splitlines() if "The 1-layer BiLSTM is faster than the RCRN in training time" in line)
    assert bilstm.count("**reproduced**") == 2  # on the CPU and on the GPU, in one line
    assert "0.56× [" in bilstm  # 100 / 180: the ratio of rows timed in the same rounds

    sst = next(line for line in lines if line.startswith("| RCRN outperforms the BiLSTM on SST-5") and "(`rcrn` > `bilstm`" in line)
    assert " at " in sst.split(" | ")[3] and sst.split(" | ")[5].count(" / ") == 2  # interval at its Holm level; p raw / Holm / BH
    assert next(line for line in lines if line.startswith("**")).startswith(f"**{sum(len(load_claims(p.stem)) for p in REGISTRY.glob('*.yaml'))} claims. ")
    assert any(line.startswith("Decided again on evidence from another device (rcrn_table10_cuda)") for line in lines)
