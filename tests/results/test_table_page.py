"""A table from its evidence CSV: round trip, regeneration without runs, trust flags, claims."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from rnnbench.results import claims, evidence, rate_choice, timing
from rnnbench.results import table_page as report
from rnnbench.results.rate_choice import RateChoice
from rnnbench.results.tables import paper_table

ITEMS = [f"q{i}" for i in range(40)]
FIVE = (1, 2, 3, 4, 5)  # an accuracy claim is decided on 5 paired seeds or more (verdicts.MIN_SEEDS)


def shown(rows: list[dict]) -> list[dict]:
    """Evidence rows as the renderer reads them from the CSV: in table units (``read_csv``)."""
    return [evidence.in_table_units(dict(row)) for row in rows]


def _record(tmp_path, encoder, seed, test, dev, best_epoch=5, cap=20, version=1, correct=30):
    run = tmp_path / "runs" / encoder / f"s{seed}-abc"
    run.mkdir(parents=True)
    with open(run / "predictions.jsonl", "w") as handle:
        for i, item in enumerate(ITEMS):
            handle.write(json.dumps({"id": item, "prediction": "A" if i < correct else "B", "gold": "A"}) + "\n")
    return {
        "encoder": encoder, "seed": seed, "run_dir": str(run), "best_epoch": best_epoch, "epochs_run": best_epoch + 4,
        "config": {"trainer": {"lr": 1e-3, "epochs": cap, "num_threads": 1}}, "dev": {"accuracy": dev}, "test": {"accuracy": test},
        "history": [{"dev_accuracy": dev * (e + 1) / (best_epoch + 4)} for e in range(best_epoch + 4)],
        "seconds_per_epoch": 2.0, "inference_seconds_per_example": 0.001, "encoder_parameters": 1000,
        "git_commit": "abc123", "versions": {"encoder": f"X:{version}", "training": "1"}, "hardware": {"device": "cpu", "cpu": "Test CPU"},
    }


def _evidence(tmp_path, seeds=(1, 2, 3), **kw):
    rows, items = [], []
    for encoder, model, base in (("rcrn", "RCRN", 0.90), ("3l_bilstm", "3L BiLSTM", 0.88)):
        for seed in seeds:
            correct = 36 if encoder == "rcrn" else 30
            rec = _record(tmp_path, encoder, seed, base + seed * 0.001, base, correct=correct, **kw.get(encoder, {}))
            rows += shown(evidence.evidence_rows(rec, model, None, {"TREC": "accuracy"}, 100.0, "select" if seed <= 2 else "final", True))
            scores = evidence.item_scores(tmp_path / "runs" / encoder / f"s{seed}-abc" / "predictions.jsonl", "accuracy")
            items += [{"model": model, "variant": "", "dataset": "TREC", "seed": seed, "item": i, "score": v * 100} for i, v in scores.items()]
    return rows, items


def _render(tmp_path, rows, items, out="results"):
    return report.render("rcrn_table5", paper_table("rcrn_table5"), "T", ["TREC"], rows, items, {"rcrn", "3l_bilstm", "bilstm"},
                         ["a note"], tmp_path / out)


def test_csv_round_trip_and_a_table_regenerated_from_the_csv_alone_is_identical(tmp_path):
    rows, items = _evidence(tmp_path)
    evidence.write_csv(tmp_path / "t.csv", rows)
    evidence.write_items(tmp_path / "t.items.csv.xz", items)
    md1, _ = _render(tmp_path, evidence.read_csv(tmp_path / "t.csv"), evidence.read_items(tmp_path / "t.items.csv.xz"), "a")
    # the runs are gone: the CSV alone gives the same table, byte for byte (the plot too)
    import shutil

    shutil.rmtree(tmp_path / "runs")
    md2, _ = _render(tmp_path, evidence.read_csv(tmp_path / "t.csv"), evidence.read_items(tmp_path / "t.items.csv.xz"), "b")
    assert md1.read_text() == md2.read_text()
    assert (tmp_path / "a" / "plots" / "rcrn_table5.png").read_bytes() == (tmp_path / "b" / "plots" / "rcrn_table5.png").read_bytes()
    row = evidence.read_csv(tmp_path / "t.csv")[0]
    assert set(evidence.FIELDS) <= set(row) and isinstance(row["seed"], int) and isinstance(row["test"], float)


def test_the_table_shows_cost_trust_and_the_claims_verdict(tmp_path):
    rows, items = _evidence(tmp_path)
    md = _render(tmp_path, rows, items)[0].read_text()
    assert "## Cost and trust" in md and "| RCRN | 0.001 | 3 |" in md and "1,000 | 2.0 | 1.00 | 5, 5, 5 / 20 | yes |" in md
    # rcrn is 6 items (15 points) better on every seed: the intervals exclude 0, but 3 paired seeds are not 5
    assert "**inconclusive** (the statistics say reproduced, but 3 paired seeds, 5 needed): RCRN outperforms the 3L-BiLSTM" in md
    rows, items = _evidence(tmp_path / "five", seeds=(1, 2, 3, 4, 5))
    md = _render(tmp_path / "five", rows, items)[0].read_text()
    assert "**reproduced**: RCRN outperforms the 3L-BiLSTM" in md
    assert "plots/rcrn_table5.png" in md and "rcrn_table5.csv" in md


def test_hours_on_a_gpu_are_shown_apart_from_cpu_hours(tmp_path):
    # RCRN Table 10's device aside, FHE Table 2 has runs trained on an H100 beside CPU runs: their hours are not CPU hours
    rows, items = _evidence(tmp_path)
    for r in rows:
        if r["encoder"] == "rcrn" and r["seed"] == 3:
            r["device"] = "cuda"
    md = _render(tmp_path, rows, items)[0].read_text()
    cost = {line.split(" |")[0]: line for line in md.splitlines() if line.startswith("| RCRN |") or line.startswith("| 3L BiLSTM |")}
    # 9 epochs of 2 s per run: 0.005 h each; rcrn has two CPU runs and one GPU run
    assert cost["| RCRN"].endswith("| 0.01 + 0.01 GPU h |") and cost["| 3L BiLSTM"].endswith("| 0.01 |")
    rcrn = [r for r in rows if r["encoder"] == "rcrn"]
    assert timing.cpu_hours(rcrn) == pytest.approx(2 * 9 * 2 / 3600) and timing.gpu_hours(rcrn) == pytest.approx(9 * 2 / 3600)
    assert timing.hours_text(rcrn) == "0.01 CPU h + 0.01 GPU h"
    assert timing.hours_text([r for r in rows if r["encoder"] == "3l_bilstm"]) == "0.01 CPU h"


def test_a_row_timed_on_a_cpu_and_a_gpu_shows_each_devices_time_apart(tmp_path):
    """RCRN Table 4: 3l_bilstm seeds trained on an H100 and on a CPU; one mean of both describes neither."""
    rows, items = _evidence(tmp_path)
    for r in rows:
        if r["encoder"] == "rcrn" and r["seed"] == 3:
            r["device"], r["seconds_per_epoch"], r["inference_seconds_per_example"] = "cuda", 0.5, 0.0001
    md = _render(tmp_path, rows, items)[0].read_text()
    (rcrn,) = [line for line in md.splitlines() if line.startswith("| RCRN | 0.001")]
    assert "| 2.0 on CPU; 0.5 on GPU | 1.00 on CPU; 0.10 on GPU |" in rcrn
    (other,) = [line for line in md.splitlines() if line.startswith("| 3L BiLSTM | 0.001")]
    assert "| 2.0 | 1.00 |" in other  # one device: no label, as before


def test_a_run_stopped_at_its_cap_is_flagged_not_converged(tmp_path):
    rows, items = _evidence(tmp_path, rcrn={"best_epoch": 19, "cap": 20})
    md = _render(tmp_path, rows, items)[0].read_text()
    assert "**no** (3 of 3 runs)" in md


def test_a_row_stopped_at_its_cap_withholds_the_verdict_whichever_side_it_favours(tmp_path):
    claim = {"id": "c", "text": "t", "better": "rcrn", "worse": "3l_bilstm", "column": "TREC"}
    # the losing row (3l_bilstm) was still improving at the cap: the reproduction is not a finding
    rows, items = _evidence(tmp_path / "a", seeds=FIVE, **{"3l_bilstm": {"best_epoch": 20, "cap": 20}})
    result = claims.evaluate("rcrn_table5", claim, rows, items)
    assert result.decision.statistical == "reproduced" and result.verdict == "withheld"
    assert result.guards == ["3l_bilstm in seed(s) 1, 2, 3, 4, 5 stopped at the epoch cap (not converged): a longer cap could change it"]
    md = _render(tmp_path / "a", rows, items)[0].read_text()
    assert "**withheld** (the statistics say reproduced): RCRN outperforms the 3L-BiLSTM" in md and "a longer cap" in md
    # the winning row at the cap: withheld all the same (a guard that spoke against the loser only would favour the winner)
    rows, items = _evidence(tmp_path / "b", seeds=FIVE, rcrn={"best_epoch": 19, "cap": 20})
    result = claims.evaluate("rcrn_table5", claim, rows, items)
    assert result.verdict == "withheld" and result.guards[0].startswith("rcrn in seed(s) 1, 2, 3, 4, 5 stopped at the epoch cap")
    # a cost claim does not depend on convergence
    cost = claims.evaluate("rcrn_table5", {**claim, "quantity": "seconds_per_epoch", "relation": "equal", "relative_margin": 0.1},
                           rows, items)
    assert not any("epoch cap" in g for g in cost.guards)


def test_runs_of_two_versions_of_one_component_are_refused(tmp_path):
    rows, items = _evidence(tmp_path)
    rows[0]["versions"] = json.dumps({"encoder": "X:2", "training": "1"})
    with pytest.raises(report.MixedVersions, match="encoder of row rcrn.*X:2.*X:1"):
        _render(tmp_path, rows, items)


def test_two_rows_of_one_encoder_may_stand_at_two_versions(tmp_path):
    """A version that depends on options (Res-V2's fix moves only the Res-V2 row): each row's runs at one version."""
    rows, _ = _evidence(tmp_path)
    for r in rows:
        if r["encoder"] == "rcrn":
            r["variant"] = "resv2" if r["seed"] in (1, "1", 2, "2") else ""
            r["versions"] = json.dumps({"encoder": "X:3" if r["variant"] else "X:2"})
    report.check_versions(rows)


def test_runs_of_two_implementations_of_one_role_share_a_table(tmp_path):
    # RCRN Table 8: TrecQA's and WikiQA's readers are two components, each at its own version
    rows, items = _evidence(tmp_path)
    for r in rows:
        reader = "rnnbench.data.wikiqa.WikiQAReader:1" if r["seed"] in (1, "1") else "rnnbench.data.trecqa.TrecQAReader:1"
        r["versions"] = json.dumps({**json.loads(r["versions"] or "{}"), "reader": reader})
    report.check_versions(rows)
    first = rows[0]
    other = next(r for r in rows if r is not first and (r["encoder"], r["variant"]) == (first["encoder"], first["variant"]))
    for r, number in ((first, 2), (other, 1)):  # one row's runs at two versions of one reader
        r["versions"] = json.dumps({**json.loads(r["versions"]), "reader": f"rnnbench.data.wikiqa.WikiQAReader:{number}"})
    with pytest.raises(report.MixedVersions, match=r"reader of row .*\(rnnbench.data.wikiqa.WikiQAReader\)"):
        report.check_versions(rows)


def test_claims_pair_seeds_and_use_the_bootstrap(tmp_path):
    rows, items = _evidence(tmp_path)
    claim = {"id": "c", "text": "t", "better": "3l_bilstm", "worse": "rcrn", "column": "TREC"}  # the wrong way round
    result = claims.evaluate("rcrn_table5", claim, rows, items)
    # the statistics contradict the claim, but three paired seeds are short of the minimum evidence (5)
    assert result.seeds == [1, 2, 3] and result.verdict == "inconclusive"
    assert result.decision.statistical == "contradicted" and "3 paired seeds, 5 needed" in result.decision.missing
    # the runs' test scores differ by 2 points (the t over seeds); their per-item scores by 6 of 40 items
    assert result.t.mean == pytest.approx(-2.0) and result.estimate.mean == pytest.approx(-15.0)
    assert (result.estimate.seeds, result.estimate.clusters) == (3, 40)
    assert result.paper == (95.4, 96.2)
    missing = claims.evaluate("rcrn_table5", {**claim, "better": "bilstm"}, rows, items)
    assert missing.verdict == "not run" and "bilstm" in missing.note


def test_every_registry_claim_is_well_formed():
    from rnnbench.results.tables import REGISTRY

    for path in REGISTRY.glob("*.yaml"):
        table = paper_table(path.stem)
        for claim in claims.load_claims(path.stem):
            for side in ("better", "worse"):
                enc, variant = claims.split_row(claim[side])
                assert any(r.get("encoder") == enc and (r.get("variant") or "") == variant for r in table["rows"]), (path.stem, claim["id"], side)


def test_an_equality_claim_on_parameters_is_a_count_within_its_declared_margin(tmp_path):
    rows, items = _evidence(tmp_path)
    claim = {"id": "c", "text": "t", "better": "rcrn", "worse": "3l_bilstm", "column": "TREC", "quantity": "parameters", "relation": "equal"}
    with pytest.raises(ValueError, match="claim 'c': an equality claim declares its margin"):
        claims.evaluate("rcrn_table5", claim, rows, items)
    claim["relative_margin"] = 0.1
    result = claims.evaluate("rcrn_table5", claim, rows, items)
    assert result.verdict == "reproduced" and result.counted and result.t is None  # both 1,000 in the fixture: a count, no interval
    for size, verdict in ((1050, "reproduced"), (1200, "contradicted")):  # within 10%; 1.2 times
        for r in rows:
            if r["encoder"] == "rcrn":
                r["parameters"] = size
        assert claims.evaluate("rcrn_table5", claim, rows, items).verdict == verdict


def test_a_column_may_show_an_encoder_statistic(tmp_path):
    record = _record(tmp_path, "fhe", 1, 0.9, 0.9)
    record["test_stats"] = {"gate_openness": 0.25}
    record["history"] = [{"dev_accuracy": 0.8, "gate_openness": 0.5}, {"dev_accuracy": 0.9, "gate_openness": 0.3}]
    record["best_epoch"] = 2
    rows = shown(evidence.evidence_rows(record, "FHE", None, {"acc": "accuracy", "open": "stats:gate_openness"}, 100.0, "final", True))
    assert [(r["dataset"], r["dev"], r["test"], r["dev_curve"]) for r in rows][1] == ("open", 30.0, 25.0, "50;30")
    lstm = _record(tmp_path, "lstm1", 1, 0.9, 0.9)  # no gate statistics: no row for that column
    assert [r["dataset"] for r in shown(evidence.evidence_rows(lstm, "LSTM", None, {"acc": "accuracy", "open": "stats:gate_openness"}, 100.0, "final", True))] == ["acc"]


def test_a_macro_average_claim_pairs_seeds_over_the_datasets_run_and_adds_a_sign_test():
    rows = []
    for d, (dataset, gap) in enumerate((("Apparel", 1.0), ("Baby", 2.0), ("MR", -0.5))):
        for seed in FIVE:
            for encoder, delta in (("rcrn", gap), ("bilstm", 0.0)):
                rows.append({"encoder": encoder, "variant": "", "dataset": dataset, "reported": "yes", "seed": seed,
                             "model": encoder, "test": 80.0 + d + seed * 0.1 + delta})
    claim = {"id": "c", "text": "t", "better": "rcrn", "worse": "bilstm", "column": "Macro Avg"}
    result = claims.evaluate("rcrn_table1", claim, rows, [])
    # per seed the macro difference is (1 + 2 - 0.5) / 3 = 0.8333 exactly: the interval is that point
    assert result.t.mean == pytest.approx(2.5 / 3) and result.t.low == pytest.approx(2.5 / 3) and result.verdict == "reproduced"
    assert "over the 3 datasets run here (Apparel, Baby, MR)" in result.note and "2 wins, 1 losses, p = 1.000" in result.note
    assert result.paper[0] is not None  # the paper's Macro Avg of the RCRN row


def test_a_dataset_whose_runs_are_under_way_waits_outside_the_macro_average():
    """One seed of five in a new domain must not cut every other domain's seeds to that one."""
    rows = []
    for d, (dataset, seeds) in enumerate((("Apparel", FIVE), ("Baby", FIVE), ("MR", FIVE), ("Software", [1]))):
        for seed in seeds:
            for encoder, delta in (("rcrn", 1.0 + seed * 0.01), ("bilstm", 0.0)):
                rows.append({"encoder": encoder, "variant": "", "dataset": dataset, "reported": "yes", "seed": seed,
                             "model": encoder, "test": 80.0 + d + delta})
    claim = {"id": "c", "text": "t", "better": "rcrn", "worse": "bilstm", "column": "Macro Avg"}
    assert claims.macro_datasets(rows, claim) == {"Apparel", "Baby", "MR"}
    result = claims.evaluate("rcrn_table1", claim, rows, [])
    assert result.seeds == list(FIVE) and "over the 3 datasets run here (Apparel, Baby, MR)" in result.note
    # its seeds caught up: it enters; and where every dataset has the same seeds, all of them are read
    rows += [{**r, "dataset": "Software", "test": r["test"] + 3} for r in rows if r["dataset"] == "Apparel" and r["seed"] != 1]
    assert claims.macro_datasets(rows, claim) == {"Apparel", "Baby", "MR", "Software"}
    assert "over the 4 datasets run here" in claims.evaluate("rcrn_table1", claim, rows, []).note
    # a fifth seed in one dataset only: the block of every dataset at four seeds (16 cells) beats its 5
    four = [r for r in rows if r["seed"] != 5 or r["dataset"] == "Apparel"]
    assert claims.macro_datasets(four, claim) == {"Apparel", "Baby", "MR", "Software"}


def test_a_claim_on_the_papers_rows_is_tested_on_our_one_variant_and_cost_from_any_column(tmp_path):
    """DCU Table 1: only the CPU-sized "small" rows ran; the paper's claims name its own rows."""
    rows, items = [], []
    for encoder, model, base, seconds in (("dcu", "DCU", 0.40, 2.0), ("lstm1", "LSTM", 0.36, 5.0)):
        for seed in FIVE:
            rec = _record(tmp_path / "small", encoder, seed, base + seed * 0.001, base, correct=36 if encoder == "dcu" else 30)
            rec["seconds_per_epoch"] = seconds + seed * 0.1
            rows += shown(evidence.evidence_rows(rec, model, "small", {"RACE": "accuracy", "RACE-M": "accuracy"}, 100.0, "final", True))
            scores = evidence.item_scores(tmp_path / "small" / "runs" / encoder / f"s{seed}-abc" / "predictions.jsonl", "accuracy")
            items += [{"model": model, "variant": "small", "dataset": "RACE", "seed": seed, "item": f"test/middle/{i}.txt#0", "score": v * 100}
                      for i, v in scores.items()]  # RACE ids: DCU Table 1 clusters questions by passage
    better = claims.evaluate("dcu_table1", {"id": "c", "text": "t", "better": "dcu", "worse": "lstm1", "column": "RACE"}, rows, items)
    assert better.verdict == "reproduced" and better.seeds == [1, 2, 3, 4, 5] and better.t.mean == pytest.approx(4.0)
    assert "on our variant 'small'" in better.note
    cost = claims.evaluate("dcu_table1", {"id": "c", "text": "t", "better": "dcu", "worse": "lstm1", "column": "time_per_epoch_min",
                                          "quantity": "seconds_per_epoch", "lower_is_better": True}, rows, items)
    # judged on the ratio dcu / lstm1 per seed; timed in separate training runs: withheld
    assert cost.decision.statistical == "reproduced" and cost.verdict == "withheld"
    assert math.exp(cost.estimate.mean) == pytest.approx(math.prod((2 + s / 10) / (5 + s / 10) for s in FIVE) ** (1 / 5))
    assert cost.paper == (12, 18)  # the paper's own rows' minutes per epoch
    # a second variant with both rows: which stands in is the registry's to say, not a claim left "not run"
    twice = rows + [{**r, "variant": "small200k"} for r in rows]
    with pytest.raises(ValueError, match=r"dcu_table1: claim 'c': our variants small, small200k all have runs of dcu and lstm1 in RACE: "
                                         r"name the rows that stand in .* `stand_ins`"):
        claims.evaluate("dcu_table1", {"id": "c", "text": "t", "better": "dcu", "worse": "lstm1", "column": "RACE"}, twice, items)
    rows = [r for r in rows if r["encoder"] != "lstm1"]
    assert claims.evaluate("dcu_table1", {"id": "c", "text": "t", "better": "dcu", "worse": "lstm1", "column": "RACE"}, rows, items).verdict == "not run"


def test_a_claim_on_rows_out_of_reach_is_tested_on_the_rows_the_registry_declares_standing_in(tmp_path):
    """LSTM-baseline Table 1: the claims name hidden-800 rows; our hidden-170 rows of the same tricks stand in."""
    rows, items = [], []
    for encoder, variant, base, seconds, params in (("2l_lstm", "fb+dropout+mc+pool+resv2", 0.46, 3.0, 500),
                                                    ("2l_bilstm", "bi+fb+dropout", 0.44, 6.0, 500),
                                                    ("2l_lstm", "fb+dropout", 0.43, 2.5, 500)):
        for seed in FIVE:
            rec = _record(tmp_path / variant, encoder, seed, base + seed * 0.001, base, correct=36 if variant.endswith("resv2") else 30)
            rec["seconds_per_epoch"], rec["encoder_parameters"] = seconds + seed * 0.1, params
            rows += shown(evidence.evidence_rows(rec, encoder, variant, {"SST-5/accuracy": "accuracy"}, 100.0, "final", True))
            scores = evidence.item_scores(Path(rec["run_dir"]) / "predictions.jsonl", "accuracy")
            items += [{"model": encoder, "variant": variant, "dataset": "SST-5/accuracy", "seed": seed, "item": i, "score": v * 100}
                      for i, v in scores.items()]
    by_id = {c["id"]: c for c in claims.load_claims("lstm_odyssey_table1")}
    accuracy = claims.evaluate("lstm_odyssey_table1", by_id["enhanced-2-lstm-beats-bi-2-lstm"], rows, items)
    assert accuracy.verdict == "reproduced" and accuracy.t.mean == pytest.approx(2.0) and accuracy.paper == (51.6, 50.9)
    assert accuracy.note.startswith("on our rows standing in for the paper's (2l_lstm/fb+dropout+mc+pool+resv2 for 2l_lstm, "
                                    "2l_bilstm/bi+fb+dropout for 2l_bilstm: the paper's tricks at hidden 170, not 800)")
    time = claims.evaluate("lstm_odyssey_table1", by_id["enhanced-2-lstm-faster-than-bi-2-lstm"], rows, items)
    assert time.decision.statistical == "reproduced" and time.verdict == "withheld"  # separate training runs
    size = claims.evaluate("lstm_odyssey_table1", by_id["bi-2-lstm-params-equal-large-2-lstm"], rows, items)
    assert size.verdict == "reproduced" and "2l_lstm/fb+dropout for 2l_lstm/large" in size.note
    # the paper's own row, once run, is used as it is: no stand-in for it
    own = [{**r, "variant": ""} for r in rows if r["variant"] == "bi+fb+dropout"]
    own_items = [{**it, "variant": ""} for it in items if it["variant"] == "bi+fb+dropout"]
    result = claims.evaluate("lstm_odyssey_table1", by_id["enhanced-2-lstm-beats-bi-2-lstm"], rows + own, items + own_items)
    assert result.note.startswith("on our rows standing in for the paper's (2l_lstm/fb+dropout+mc+pool+resv2 for 2l_lstm: ")
    # a stand-in without runs leaves the claim not run
    missing = [r for r in rows if r["variant"] != "bi+fb+dropout"]
    assert claims.evaluate("lstm_odyssey_table1", by_id["enhanced-2-lstm-beats-bi-2-lstm"], missing, items).verdict == "not run"


def test_a_time_claim_between_runs_timed_differently_is_inconclusive(tmp_path):
    """Seconds per epoch compare only runs on the same device and processor with the same thread count."""
    rows = []
    for encoder, model, seconds, threads in (("dcu", "DCU", 2.0, 1), ("lstm1", "LSTM", 5.0, 2)):
        for seed in (1, 2, 3):
            rec = _record(tmp_path, encoder, seed, 0.4, 0.4)
            rec["seconds_per_epoch"], rec["config"]["trainer"]["num_threads"] = seconds + seed * 0.1, threads
            rows += shown(evidence.evidence_rows(rec, model, None, {"RACE": "accuracy"}, 100.0, "final", True))
    claim = {"id": "c", "text": "t", "better": "dcu", "worse": "lstm1", "column": "RACE", "quantity": "seconds_per_epoch", "lower_is_better": True}
    cost = claims.evaluate("dcu_table1", claim, rows, [])
    assert cost.decision.statistical == "reproduced" and cost.verdict == "withheld"
    assert "timed under different conditions (cpu Test CPU, 1 thread(s); cpu Test CPU, 2 thread(s))" in cost.guards[0]
    for r in rows:
        r["threads"] = 1
    alike = claims.evaluate("dcu_table1", claim, rows, [])
    assert alike.guards == [next(g for g in cost.guards if "separate training runs" in g)]  # still not timed together
    assert "timed on cpu Test CPU, 1 thread(s)" in alike.note
    # rows of the cost benchmark (epoch cap 0: every row timed in each round of one process) decide it
    for r in rows:
        r["epoch_cap"] = 0
    together = claims.evaluate("dcu_table1", claim, rows, [])
    assert together.guards == [] and together.verdict == "reproduced"
    rows[0]["hardware"] = "Other CPU"  # an equality claim too
    equal = claims.evaluate("dcu_table1", {**claim, "relation": "equal", "relative_margin": 0.1}, rows, [])
    assert equal.verdict == "withheld" and "different conditions" in equal.guards[0]


def test_a_claim_of_size_needs_the_factor_not_only_the_direction(tmp_path):
    """"Dramatically faster" (min_factor 2): 4% faster in every seed is the right direction and still contradicts it."""
    def rows_for(fast: float, slow: float) -> list[dict]:
        rows = []
        for encoder, model, seconds in (("sim_dcu", "Sim-DCU", fast), ("gru1", "GRU", slow)):
            for seed in (1, 2, 3):
                rec = _record(tmp_path / f"{fast}-{slow}", encoder, seed, 0.4, 0.4)
                rec["seconds_per_epoch"] = seconds * (1 + seed / 100)
                rows += shown(evidence.evidence_rows(rec, model, None, {"RACE": "accuracy"}, 100.0, "final", True))
        return rows

    claim = {"id": "c", "text": "t", "better": "sim_dcu", "worse": "gru1", "column": "RACE", "quantity": "seconds_per_epoch",
             "lower_is_better": True, "min_factor": 2}
    slightly = claims.evaluate("dcu_table1", claim, rows_for(100.0, 104.0), [])
    # faster in the claim's direction, by far less than the factor: smaller than claimed (withheld: separate runs)
    assert slightly.decision.statistical == "smaller than claimed" and slightly.verdict == "withheld"
    assert math.exp(slightly.estimate.mean) == pytest.approx(100 / 104)
    direction_only = {k: v for k, v in claim.items() if k != "min_factor"}
    assert claims.evaluate("dcu_table1", direction_only, rows_for(100.0, 104.5), []).decision.statistical == "reproduced"
    assert claims.evaluate("dcu_table1", claim, rows_for(100.0, 400.0), []).decision.statistical == "reproduced"
    assert claims.evaluate("dcu_table1", claim, rows_for(110.0, 100.0), []).decision.statistical == "contradicted"  # slower


def test_a_table_of_two_experiments_states_each_ones_learning_rate_choice():
    """MZU Table 6 chose a rate per domain: one footnote line per domain, never the two domains' dev scores mixed."""
    rows = []
    for dataset, best in (("Restaurant-DS", 1e-3), ("Laptop-DS", 5e-4)):
        for lr in (1e-3, 5e-4):
            for seed in (1, 2):
                rows.append({"model": "GRU", "encoder": "dt_gru", "variant": "", "dataset": dataset, "metric": "accuracy", "lr": lr,
                             "phase": "select", "dev": 70.0 if lr == best else 60.0, "reported": "yes" if lr == best else "no"})
    lines = report.selection_lines(rows, 1, "accuracy")
    assert lines == ["Learning rate of `dt_gru` on Restaurant-DS, mean dev accuracy over the selection seeds: 0.001: 70.0 (chosen), 0.0005: 60.0.",
                     "Learning rate of `dt_gru` on Laptop-DS, mean dev accuracy over the selection seeds: 0.001: 60.0, 0.0005: 70.0 (chosen)."]
    one = report.selection_lines([r for r in rows if r["dataset"] == "Laptop-DS"], 1, "accuracy")
    assert one == ["Learning rate of `dt_gru`, mean dev accuracy over the selection seeds: 0.001: 60.0, 0.0005: 70.0 (chosen)."]


def test_a_rate_whose_selection_runs_are_not_all_in_says_how_many_its_mean_rests_on():
    """A rate past the grid's edge with one of its two selection runs finished: its mean is one seed's."""
    rows = [{"model": "BiLSTM", "encoder": "bilstm", "variant": "", "dataset": "TrecQA/MAP", "metric": "map", "lr": lr,
             "phase": "select", "dev": dev, "reported": "yes" if lr == 1.0 else "no"}
            for lr, dev in ((0.5, 60.0), (0.5, 62.0), (1.0, 61.0), (1.0, 63.0), (2.0, 61.8))]
    assert report.selection_lines(rows, 1, "map") == [
        "Learning rate of `bilstm`, mean dev map over the selection seeds: 0.5: 61.0, 1: 62.0 (chosen), 2: 61.8 (1 of 2 seeds so far)."]


def test_the_rate_choice_is_read_from_the_evidence_with_the_grid_extensions_statement():
    """MZU Table 6: mzu_cap chose 5e-4, the smallest rate of {2e-3, 1e-3, 5e-4}. The protocol extends
    the grid past that edge; the evidence stores the chosen rate and what the table says of the grid,
    and the selection line prints both (no warning re-derived from the rates)."""
    statement = "grid extended to {0.002, 0.001, 0.0005, 0.00025}; choice interior"
    choice = RateChoice(5e-4, (2e-3, 1e-3, 5e-4, 2.5e-4), 1, 3)
    rows = [{"model": "M", "encoder": "mzu_cap", "variant": "", "dataset": "Laptop-DS", "metric": "accuracy", "lr": lr,
             "phase": "select", "dev": {2.5e-4: 60.0, 5e-4: 62.0}.get(lr, 55.0), "reported": "yes" if lr == 5e-4 else "no",
             "chosen_lr": 5e-4, **choice.columns()}
            for lr in (2e-3, 1e-3, 5e-4, 2.5e-4)]
    (line,) = report.selection_lines(rows, 1, "accuracy")
    assert line.endswith("0.0005: 62.0 (chosen), 0.00025: 60.0; " + statement + ".")
    # evidence written before the stored choice: the reported runs' rate, and no statement
    old = [{k: v for k, v in r.items() if k not in ("chosen_lr", *rate_choice.COLUMNS)} for r in rows]
    (line,) = report.selection_lines(old, 1, "accuracy")
    assert line.endswith("0.0005: 62.0 (chosen), 0.00025: 60.0.") and "grid's" not in line


def test_a_run_that_did_not_train_is_shown_and_counted_not_averaged(tmp_path):
    """RCRN Table 4: 3l_bilstm seed 3 sat at chance and its 59% was averaged in as converged. A run
    whose status is "did not train" is left out of the mean and the interval, and the cell, the cost
    table and a footnote say so; one made before the rule that it would change is marked to re-run."""
    rows, items = _evidence(tmp_path)
    for r in rows:
        r["majority"] = 50.0
        r["status"] = "trained"
        if r["encoder"] == "3l_bilstm" and r["seed"] == 3:
            r["status"], r["test"] = "did not train", 20.0
    evidence.write_csv(tmp_path / "t.csv", rows)
    rows = evidence.read_csv(tmp_path / "t.csv")
    assert [evidence.did_not_train(r) for r in rows].count(True) == 1 and not any(evidence.needs_rerun(r) for r in rows)
    md = _render(tmp_path, rows, items)[0].read_text()
    assert "| 88.2 ± 0.1 (n=2); 1 of 3 runs did not train |" in md  # seeds 1-2: 88.1, 88.2; seed 3's 20.0 not averaged
    assert "1 of 3 runs **did not train** or need a re-run" in md
    assert "Did not train (no dev score beat the dev split's majority-class score" in md
    assert "`3l_bilstm` seed 3 on TREC (the majority-class dev score it never beat: 50.0)" in md

    for r in rows:
        if r["encoder"] == "3l_bilstm":
            r["status"] = "did not train" if r["seed"] != 1 else "needs re-run"
    md = _render(tmp_path, rows, items, "all")[0].read_text()
    assert "| `3l_bilstm` | 95.4 | 2 of 3 runs did not train, 1 to re-run (patience rule) |  |" in md  # no mean, no difference
    assert "To re-run under the patience rule" in md and "`3l_bilstm` seed 1 on TREC" in md


def test_the_cost_table_names_each_datasets_rate_and_cap_where_they_differ():
    rows = []
    for dataset, lr, cap in (("Restaurant-DS", 1e-3, 20), ("Laptop-DS", 5e-4, 40)):
        for seed in (1, 2):
            for column in (dataset, dataset.replace("DS", "HDS")):
                rows.append({"model": "GRU", "encoder": "dt_gru", "variant": "", "dataset": column, "metric": "accuracy", "seed": seed,
                             "lr": lr, "phase": "final", "reported": "yes", "dev": 70.0, "test": 60.0, "selected_epoch": 5,
                             "epoch_cap": cap, "epochs_run": 10, "seconds_per_epoch": cap / 10 + seed * 0.2,
                             "inference_seconds_per_example": "", "parameters": 10, "threads": 1, "run": f"{dataset}-s{seed}"})
    (cost,) = report.cost_rows(rows, {})
    assert cost.lr == "0.001 (Restaurant-DS); 0.0005 (Laptop-DS)" and cost.cap == "20 (Restaurant-DS); 40 (Laptop-DS)"
    # RCRN Table 8: an epoch of WikiQA is not one of TrecQA; each dataset's runs are shown apart
    assert cost.seconds_per_epoch == "2.3 (Restaurant-DS); 4.3 (Laptop-DS)" and cost.ms_per_example == "–"
    assert cost.selected == "5, 5 (Restaurant-DS); 5, 5 (Laptop-DS)"
    (one,) = report.cost_rows([r for r in rows if r["dataset"].startswith("Laptop")], {})
    assert one.lr == "0.0005" and one.cap == "40" and one.selected == "5, 5" and one.seconds_per_epoch == "4.3"


def test_a_borrowed_learning_rate_names_the_column_that_chose_it():
    """RCRN Table 1: Apparel's selection chose the rate that MR's runs use (lr_from)."""
    rows = [{"model": "BiLSTM", "encoder": "bilstm", "variant": "", "dataset": "Apparel", "metric": "accuracy", "lr": lr,
             "phase": "select", "dev": dev, "reported": "yes" if lr == 1e-3 else "no"} for lr, dev in ((1e-3, 80.0), (3e-4, 75.0))]
    rows.append({**rows[0], "dataset": "MR", "phase": "final", "dev": 70.0})
    assert report.selection_lines(rows, 1, "accuracy") == [
        "Learning rate of `bilstm` on Apparel, mean dev accuracy over the selection seeds: 0.001: 80.0 (chosen), 0.0003: 75.0."]


def test_a_runs_inference_cost_is_its_own_test_pass_not_a_rescoring_at_another_length():
    """FHE Table 4: a run's rows include its checkpoint re-scored at length 10000, whose time per
    example is 50 times longer; the cost column reads the run's own test pass (length 200)."""
    base = {"model": "LSTM1", "encoder": "lstm1", "variant": "small", "metric": "accuracy", "seed": 1, "lr": 1e-3,
            "phase": "select", "reported": "yes", "dev": 70.0, "test": 70.0, "selected_epoch": 30, "epoch_cap": 60,
            "epochs_run": 40, "seconds_per_epoch": 20.0, "parameters": 10, "threads": 1, "run": "s1-abc"}
    rows = [{**base, "dataset": "picking/accuracy/len10000", "dev": "", "dev_curve": "", "inference_seconds_per_example": 0.5},
            {**base, "dataset": "picking/accuracy/len200", "dev_curve": "10;70", "inference_seconds_per_example": 0.01}]
    (cost,) = report.cost_rows(rows, {})  # the re-scored row comes first in the CSV's order
    assert cost.ms_per_example == "10.00"


def test_an_inference_time_claim_reads_the_runs_own_test_pass_not_a_rescored_column(tmp_path):
    """A column re-scored at another length (FHE Table 4's "A-len10000", no dev score) sorts
    before the run's own ("B"); its time per example is not the run's."""
    rows = []
    for encoder, model, ms in (("dcu", "DCU", 1.0), ("lstm1", "LSTM", 2.0)):
        for seed in (1, 2, 3):
            rec = _record(tmp_path, encoder, seed, 0.4, 0.4)
            rec["inference_seconds_per_example"] = (ms + seed * 0.01) / 1000
            own = shown(evidence.evidence_rows(rec, model, None, {"B": "accuracy"}, 100.0, "final", True))
            rescored = {**own[0], "dataset": "A-len10000", "dev": "", "dev_curve": "",
                        "inference_seconds_per_example": (100 - 50 * ms) / 1000}  # reversed order at the long length
            rows += [rescored, *own]
    claim = {"id": "c", "text": "t", "better": "dcu", "worse": "lstm1", "column": "ms_per_example",
             "quantity": "inference_seconds_per_example", "lower_is_better": True}
    cost = claims.evaluate("dcu_table1", claim, rows, [])
    assert cost.decision.statistical == "reproduced"
    assert cost.ours == (pytest.approx(0.00102), pytest.approx(0.00202))  # the runs' own test pass, not the re-scored column
