"""scripts/regime_ladder.py without training: each rung's overrides compose, rung 2's choice of
dropout reads dev only, the Markdown renders from the CSV alone (deterministic, the paper gap's
arithmetic), and --plan runs nothing."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from rnnbench.compose import compose_config

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def ladder():
    """The script as a module, registered under its name: its dataclasses resolve their annotations there."""
    spec = importlib.util.spec_from_file_location("regime_ladder", REPO / "scripts" / "regime_ladder.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["regime_ladder"] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop("regime_ladder", None)


def _target(ladder, experiment: str, encoder: str, lr: float = 1e-3):
    """A Target as targets_of makes it, without reading the committed evidence."""
    base = ladder.base_config(experiment, encoder, lr)
    from rnnbench.results.tables import column_metrics

    return ladder.Target(str(base.table.name), encoder, "BiLSTM", experiment, encoder, "",
                         tuple(column_metrics(base.table, base).items()), str(base.task.select_metric), float(base.table.scale), lr)


def test_each_rung_adds_to_the_one_below_and_composes_for_a_classifier(ladder):
    target = _target(ladder, "rcrn_table5", "bilstm")
    runs = {rung: ladder.runs_of(target, rung, 0.5, ()) for rung in (0, 1, 2, 3, 4)}
    assert runs[0] == [] and runs[4] == []  # rung 0 is read from the evidence; TREC has no data option
    assert [(r.dropout, r.seed) for r in runs[2]] == [(0.2, 1), (0.2, 2), (0.5, 1), (0.5, 2)]
    assert runs[1][0].overrides == ("embedding.freeze=false",)
    assert runs[3][0].overrides == ("embedding.freeze=false", "embedding.dropout=0.5", "task.head.dropout=0.5",
                                    "embedding.char.kind=bigru")
    cfg = compose_config(["experiment=rcrn_table5", "encoder=bilstm", *runs[3][0].overrides])
    assert cfg.embedding.freeze is False and cfg.embedding.dropout == 0.5 and cfg.task.head.dropout == 0.5
    assert cfg.embedding.char.kind == "bigru" and cfg.encoder.dropout == 0.0  # one layer: no dropout between layers
    assert ladder.run_config(runs[3][0], ()).trainer.lr == 1e-3  # rung 0's rate, held


def test_a_head_without_a_dropout_key_gets_it_added_and_rung_4_is_the_papers_data(ladder):
    ranker = ladder.runs_of(_target(ladder, "rcrn_table8_trecqa", "bilstm", 0.2), 4, 0.2, ())[0]
    assert "+task.head.dropout=0.2" in ranker.overrides and ranker.overrides[-1] == "task=trecqa"
    cfg = compose_config(["experiment=rcrn_table8_trecqa", "encoder=bilstm", *ranker.overrides])
    assert cfg.task.head.dropout == 0.2 and cfg.task.reader.train_split == "train-all" and cfg.task.head.attentive_pooling is False
    sst = ladder.runs_of(_target(ladder, "rcrn_table2", "bilstm"), 4, 0.2, ())[0]
    assert compose_config(["experiment=rcrn_table2", "encoder=bilstm", *sst.overrides]).task.reader.phrases is True


def test_the_reference_rows_of_a_table_of_two_settings_and_their_held_rate(ladder):
    targets = ladder.targets_of("rcrn_table8", ["rcrn_table8_wikiqa", "rcrn_table8_wikiqa_ap"], REPO / "results", say=lambda _: None)
    assert [(t.experiment, t.reference, t.lr) for t in targets] == [("rcrn_table8_wikiqa", "bilstm", 0.2),
                                                                   ("rcrn_table8_wikiqa_ap", "bilstm/ap", 0.2)]
    assert targets[0].columns == (("WikiQA/MAP", "map"), ("WikiQA/MRR", "mrr")) and targets[0].select_metric == "map"


def test_dropout_is_chosen_on_mean_dev_and_a_tie_goes_to_the_smaller_p(ladder):
    assert ladder.choose_dropout({0.5: [81.0, 81.0], 0.2: [80.0, 82.0]}) == 0.2
    assert ladder.choose_dropout({0.2: [80.0, 80.0], 0.5: [80.0, 80.5]}) == 0.5
    rows = [_row(rung=2, dropout=p, seed=s, dev=dev, test=99.0) for p, s, dev in [(0.2, 1, 80.0), (0.2, 2, 80.0), (0.5, 1, 79.0)]]
    assert ladder.chosen_dropout(rows, ("rcrn_table5", "bilstm", "rcrn_table5")) is None  # p 0.5 lacks seed 2
    rows.append(_row(rung=2, dropout=0.5, seed=2, dev=81.5, test=10.0))  # test never enters the choice
    assert ladder.chosen_dropout(rows, ("rcrn_table5", "bilstm", "rcrn_table5")) == 0.5


def _row(rung: int, seed: int, dev: float, test: float, dropout: float | None = None, status: str = "trained",
         hours: str = "0.0100", run: str | None = None) -> dict:
    return {"table": "rcrn_table5", "reference": "bilstm", "model": "BiLSTM", "experiment": "rcrn_table5", "encoder": "bilstm",
            "variant": "", "column": "TREC", "metric": "accuracy", "select_metric": "accuracy", "rung": str(rung),
            "dropout": "" if dropout is None else f"{dropout:g}", "overrides": "embedding.freeze=false" if rung else "",
            "seed": str(seed), "lr": "0.001", "dev": repr(dev), "test": repr(test), "selected_epoch": "9", "epochs_run": "13",
            "status": status, "cpu_hours": hours, "gpu_hours": "", "device": "cpu", "hardware": "AMD EPYC",
            "commit": "0123456789abcdef", "date": f"2026-12-0{rung + 1}", "run": run or f"s{seed}-r{rung}p{dropout}"}


def _synthetic() -> list[dict]:
    return [_row(0, 1, 85.0, 90.0), _row(0, 2, 86.0, 89.0),
            _row(1, 1, 86.0, 92.0), _row(1, 2, 87.0, 93.0, status="did not train"),
            _row(2, 1, 85.0, 93.0, 0.2), _row(2, 2, 87.0, 94.0, 0.2), _row(2, 1, 86.0, 99.0, 0.5), _row(2, 2, 86.0, 99.0, 0.5)]


def test_the_markdown_renders_from_the_csv_alone_with_the_gap_to_the_paper(ladder, tmp_path):
    text = ladder.csv_text(_synthetic())
    (tmp_path / "regime_ladder.runs.csv").write_text(text)
    assert ladder.main(["--no-run", "--out", str(tmp_path)]) == 0
    md = (tmp_path / "regime_ladder.md").read_text()
    assert ladder.main(["--no-run", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "regime_ladder.md").read_text() == md  # deterministic
    assert (tmp_path / "regime_ladder.runs.csv").read_text() == text  # rendering rewrites the CSV unchanged
    lines = md.splitlines()
    assert "Runs dated 2026-12-01 to 2026-12-03 (rung 0: its code's commit date), code at 0123456789ab; hardware: AMD EPYC." in lines
    # RCRN Table 5's BiLSTM: 95.8. Rung 0: (90 + 89) / 2 = 89.5, -6.3; rung 1 averages its trained run only.
    assert "| 0 | today's setting (the table's committed runs) | 85.5 | 89.5 | 95.8 | -6.3 | 0.02 |" in lines
    assert any(line.startswith("| 1 | + trained word vectors") and "(not averaged: 1 did not train)" in line
               and line.endswith("| 86.0 | 92.0 | 95.8 | -3.8 | 0.02 |") for line in lines)
    # Rung 2: dev ties at 86.0, so p 0.2 (test 93.5), though p 0.5 tests at 99; its CPU hours count all four runs.
    assert any(line.startswith("| 2 | + dropout 0.2, chosen on dev of {0.2, 0.5}") and line.endswith("| 86.0 | 93.5 | 95.8 | -2.3 | 0.04 |")
               for line in lines)
    assert "| 3 | + the character BiGRU (not run yet) |  |  |  |  |  |" in lines
    assert "Closest to the paper: rung 2 (-2.3), outside the parity gate's margin of ±2 (docs/verdicts.md)." in lines
    assert "- Rung 2 in rcrn_table5, dev accuracy (mean of seeds): p 0.2: 86.0, p 0.5: 86.0; chosen 0.2." in lines
    assert "- Hours: 0.08 CPU h in all (training time; rung 2 counts both p's runs)." in lines


def test_a_smoke_run_is_never_averaged(ladder):
    rows = [_row(0, 1, 85.0, 90.0), _row(0, 2, 86.0, 89.0), _row(1, 1, 20.0, 30.0, status="smoke"), _row(1, 2, 20.0, 30.0, status="smoke")]
    line = next(line for line in ladder.render(rows).splitlines() if line.startswith("| 1 |"))
    assert "(not averaged: 2 smoke)" in line and line.endswith("|  |  |  |  | 0.02 |")


def test_plan_runs_and_writes_nothing(ladder, tmp_path, monkeypatch, capsys):
    import rnnbench.run

    monkeypatch.setattr(rnnbench.run, "train", lambda *a, **k: pytest.fail("--plan trained a run"))
    out = tmp_path / "out"
    code = ladder.main(["rcrn_table5", "--plan", "--rungs", "1", "2", "3", "4", "--out", str(out),
                        "--set", f"paths.runs_dir={tmp_path / 'runs'}"])
    printed = capsys.readouterr().out
    assert code == 0 and not out.exists() and not (tmp_path / "runs").exists()
    lines = {tuple(line.split()[:6]) for line in printed.splitlines()}
    assert ("rcrn_table5", "bilstm", "1", "2", "0", "2") in lines and ("rcrn_table5", "bilstm", "2", "4", "0", "4") in lines
    assert any(line.startswith("rcrn_table5") and "p from rung 2 (not chosen yet)" in line for line in printed.splitlines())
    assert "rcrn_table5                  bilstm        4  not built" in printed and "total to run:" in printed


def test_a_table_outside_the_ladder_is_refused(ladder, capsys):
    assert ladder.main(["fhe_table2", "--plan"]) == 2
    assert "not a table of the ladder" in capsys.readouterr().err


def test_the_ladders_tables_and_data_settings_come_from_the_registry_and_the_configs(ladder):
    """No table is named in the script: the tables and their order are the registry files'
    ``regime_ladder``, rung 4 an experiment config's ``table.paper_data`` (inherited by its twins)."""
    assert ladder.TABLES == ("rcrn_table5", "rcrn_table8", "rcrn_table3", "rcrn_table2", "mzu_table6", "rcrn_table4", "rcrn_table1")
    phrases = ladder.paper_data_of("rcrn_table2")
    assert phrases.overrides == ("task.reader.phrases=true",) and phrases.cost == pytest.approx(1136024 / 163563)
    assert ladder.paper_data_of("rcrn_table2_rung3") == phrases  # the rung's experiment inherits its parent's
    train_all = ladder.paper_data_of("rcrn_table8_trecqa_ap")
    assert train_all.overrides == ("task=trecqa",) and train_all.needs == "trecqa/castorini_format/train-all/b.toks"
    assert ladder.paper_data_of("rcrn_table5") is None and ladder.paper_data_of("no_such_experiment") is None
