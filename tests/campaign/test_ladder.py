"""The regime ladder's library (rnnbench.campaign.ladder, ladder_rungs, ladder_page) without
training: each rung's overrides compose, rung 2's choice of dropout reads dev only, the Markdown
renders from the CSV's rows alone, and the tables and rung 4 come from the registry and the configs."""
from __future__ import annotations

import pytest

from rnnbench.campaign import ladder, ladder_page, ladder_rungs
from rnnbench.compose import compose_config
from rnnbench.results import plain_rows
from rnnbench.results.tables import column_metrics
from tests.helpers import REPO


def _target(experiment: str, encoder: str, lr: float = 1e-3) -> ladder.Target:
    """A Target as targets_of makes it, without reading the committed evidence."""
    base = ladder.base_config(experiment, encoder, lr)
    return ladder.Target(str(base.table.name), encoder, "BiLSTM", experiment, encoder, "",
                         tuple(column_metrics(base.table, base).items()), str(base.task.select_metric), float(base.table.scale), lr)


def test_each_rung_adds_to_the_one_below_and_composes_for_a_classifier():
    target = _target("rcrn_table5", "bilstm")
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


def test_a_head_without_a_dropout_key_gets_it_added_and_rung_4_is_the_papers_data():
    ranker = ladder.runs_of(_target("rcrn_table8_trecqa", "bilstm", 0.2), 4, 0.2, ())[0]
    assert "+task.head.dropout=0.2" in ranker.overrides and ranker.overrides[-1] == "task=trecqa"
    cfg = compose_config(["experiment=rcrn_table8_trecqa", "encoder=bilstm", *ranker.overrides])
    assert cfg.task.head.dropout == 0.2 and cfg.task.reader.train_split == "train-all" and cfg.task.head.attentive_pooling is False
    sst = ladder.runs_of(_target("rcrn_table2", "bilstm"), 4, 0.2, ())[0]
    assert compose_config(["experiment=rcrn_table2", "encoder=bilstm", *sst.overrides]).task.reader.phrases is True


def test_the_reference_rows_of_a_table_of_two_settings_and_their_held_rate():
    targets = ladder.targets_of("rcrn_table8", ["rcrn_table8_wikiqa", "rcrn_table8_wikiqa_ap"], REPO / "results", say=lambda _: None)
    assert [(t.experiment, t.reference, t.lr) for t in targets] == [("rcrn_table8_wikiqa", "bilstm", 0.2),
                                                                   ("rcrn_table8_wikiqa_ap", "bilstm/ap", 2.0)]  # the grid chose 2 (2026-12-05)
    assert targets[0].columns == (("WikiQA/MAP", "map"), ("WikiQA/MRR", "mrr")) and targets[0].select_metric == "map"


def test_dropout_is_chosen_on_mean_dev_and_a_tie_goes_to_the_smaller_p():
    assert ladder_rungs.choose_dropout({0.5: [81.0, 81.0], 0.2: [80.0, 82.0]}) == 0.2
    assert ladder_rungs.choose_dropout({0.2: [80.0, 80.0], 0.5: [80.0, 80.5]}) == 0.5
    rows = [row(rung=2, dropout=p, seed=s, dev=dev, test=99.0) for p, s, dev in [(0.2, 1, 80.0), (0.2, 2, 80.0), (0.5, 1, 79.0)]]
    assert ladder_rungs.chosen_dropout(rows, ("rcrn_table5", "bilstm", "rcrn_table5")) is None  # p 0.5 lacks seed 2
    rows.append(row(rung=2, dropout=0.5, seed=2, dev=81.5, test=10.0))  # test never enters the choice
    assert ladder_rungs.chosen_dropout(rows, ("rcrn_table5", "bilstm", "rcrn_table5")) == 0.5


def row(rung: int, seed: int, dev: float, test: float, dropout: float | None = None, status: str = "trained",
        hours: str = "0.0100", run: str | None = None) -> dict:
    """A ladder CSV row of RCRN Table 5's BiLSTM (TREC), as read back: strings."""
    return {"table": "rcrn_table5", "reference": "bilstm", "model": "BiLSTM", "experiment": "rcrn_table5", "encoder": "bilstm",
            "variant": "", "column": "TREC", "metric": "accuracy", "select_metric": "accuracy", "rung": str(rung),
            "dropout": "" if dropout is None else f"{dropout:g}", "overrides": "embedding.freeze=false" if rung else "",
            "seed": str(seed), "lr": "0.001", "dev": repr(dev), "test": repr(test), "selected_epoch": "9", "epochs_run": "13",
            "status": status, "cpu_hours": hours, "gpu_hours": "", "device": "cpu", "hardware": "AMD EPYC",
            "commit": "0123456789abcdef", "date": f"2026-12-0{rung + 1}", "run": run or f"s{seed}-r{rung}p{dropout}"}


def synthetic() -> list[dict]:
    """Rungs 0-2 of RCRN Table 5's BiLSTM: a run that did not train at rung 1, a dev tie at rung 2."""
    return [row(0, 1, 85.0, 90.0), row(0, 2, 86.0, 89.0),
            row(1, 1, 86.0, 92.0), row(1, 2, 87.0, 93.0, status="did not train"),
            row(2, 1, 85.0, 93.0, 0.2), row(2, 2, 87.0, 94.0, 0.2), row(2, 1, 86.0, 99.0, 0.5), row(2, 2, 86.0, 99.0, 0.5)]


def test_the_csv_and_the_markdown_are_written_together_and_read_back(tmp_path):
    text = ladder.csv_text(synthetic())
    (tmp_path / "regime_ladder.runs.csv").write_text(text)
    evidence = ladder.Evidence(tmp_path)
    evidence.write()
    assert (tmp_path / "regime_ladder.runs.csv").read_text() == text  # rows read back and written again: unchanged
    assert (tmp_path / "regime_ladder.md").read_text() == ladder_page.render(plain_rows.read_rows(tmp_path / "regime_ladder.runs.csv"))
    assert ladder.climb_ladder(mode=ladder.NO_RUN, out=tmp_path) == 0  # the command's --no-run: the same files
    assert (tmp_path / "regime_ladder.runs.csv").read_text() == text


def test_a_rung_with_a_seed_not_run_yet_says_so_and_is_not_the_closest():
    rows = [row(0, 1, 85.0, 90.0), row(0, 2, 86.0, 89.0), row(1, 1, 86.0, 95.0)]
    page = ladder_page.render(rows).splitlines()
    assert "(seed 2 not run yet)" in next(line for line in page if line.startswith("| 1 |"))
    assert "(seed" not in next(line for line in page if line.startswith("| 0 |"))
    assert "Closest to the paper: rung 0 " in "\n".join(page)  # rung 1's one seed is nearer the paper, but one seed


def test_a_seed_missing_in_one_column_of_several_is_not_run_yet():
    """Amazon's domains run one by one: a rung with both seeds in one column and one in another is
    not yet a two-seed rung, whatever the other column has."""
    rows = [row(0, s, 85.0, 90.0) for s in (1, 2)] + [{**row(0, s, 85.0, 90.0), "column": "TREC-b", "run": f"b{s}"} for s in (1, 2)]
    rows += [row(1, 1, 86.0, 95.0), row(1, 2, 86.0, 95.0), {**row(1, 1, 86.0, 95.0), "column": "TREC-b", "run": "b1-r1"}]
    line = next(line for line in ladder_page.render(rows).splitlines() if line.startswith("| 1 |"))
    assert "(seed 2 not run yet)" in line


def test_a_smoke_run_is_never_averaged():
    rows = [row(0, 1, 85.0, 90.0), row(0, 2, 86.0, 89.0), row(1, 1, 20.0, 30.0, status="smoke"), row(1, 2, 20.0, 30.0, status="smoke")]
    line = next(line for line in ladder_page.render(rows).splitlines() if line.startswith("| 1 |"))
    assert "(not averaged: 2 smoke)" in line and line.endswith("|  |  |  |  | 0.02 |")


def test_a_table_or_experiment_outside_the_ladder_is_raised():
    from rnnbench.errors import RnnbenchError

    with pytest.raises(RnnbenchError, match="fhe_table2: not a table of the ladder"):
        ladder.chosen_tables(["fhe_table2"], None)
    with pytest.raises(RnnbenchError, match="--only rcrn_table6: not an experiment of rcrn_table5"):
        ladder.chosen_tables(["rcrn_table5"], ["rcrn_table6"])
    assert ladder.chosen_tables(["rcrn_table3", "rcrn_table5"], None) == ["rcrn_table5", "rcrn_table3"]  # the ladder's order


def test_the_ladders_tables_and_data_settings_come_from_the_registry_and_the_configs():
    """No table is named in the code: the tables and their order are the registry files'
    ``regime_ladder``, rung 4 an experiment config's ``table.paper_data`` (inherited by its twins)."""
    assert ladder_rungs.TABLES == ("rcrn_table5", "rcrn_table8", "rcrn_table3", "rcrn_table2", "mzu_table6", "rcrn_table4", "rcrn_table1")
    phrases = ladder_rungs.paper_data_of("rcrn_table2")
    assert phrases.overrides == ("task.reader.phrases=true",) and phrases.cost == pytest.approx(1136024 / 163563)
    assert ladder_rungs.paper_data_of("rcrn_table2_rung3") == phrases  # the rung's experiment inherits its parent's
    train_all = ladder_rungs.paper_data_of("rcrn_table8_trecqa_ap")
    assert train_all.overrides == ("task=trecqa",) and train_all.needs == "trecqa/castorini_format/train-all/b.toks"
    assert ladder_rungs.paper_data_of("rcrn_table5") is None and ladder_rungs.paper_data_of("no_such_experiment") is None


def test_a_rung_with_finished_runs_prices_the_rest_from_them(tmp_path, monkeypatch, capsys):
    """RCRN Table 3's BiLSTM at rung 4 was priced at 0.11 CPU h a run (rung 0's price times the work
    per epoch) and took 0.65 (14 epochs, where rung 3's runs took 6): once a rung has finished runs,
    they price the rest of it."""
    target = _target("rcrn_table5", "bilstm")
    evidence = ladder.Evidence(tmp_path)
    evidence.add([row(0, 1, 85.0, 90.0, hours="0.0100"), row(0, 2, 86.0, 89.0, hours="0.0100"),
                  row(1, 1, 86.0, 92.0, hours="0.0500", run="r1-seed1")])
    monkeypatch.setattr(ladder, "is_finished", lambda run, extra, ladder: run.rung == 1 and run.seed == 1)
    assert ladder.plan([target], [1, 2], (), evidence, "cpu", tmp_path) == 0
    lines = {line.split()[2]: line for line in capsys.readouterr().out.splitlines() if line.startswith("rcrn_table5")}
    assert lines["1"].split()[3:7] == ["2", "1", "1", "0.05"] and "priced from its 1 finished run(s)" in lines["1"]
    assert lines["2"].split()[6] == "0.01" and "priced from" not in lines["2"]  # no run of its own: rung 0's price


def test_rung_4_not_run_names_the_file_it_needs():
    """TrecQA's TRAIN-ALL is absent from the shipped datasets: the page says which file the rung
    reads, so that `--rungs 4` is not read as merely not started; a rung 4 without such a file
    names none."""
    trecqa = ladder_page.rung4_plan(["rcrn_table8_trecqa", "rcrn_table8_wikiqa"])
    assert "needs `trecqa/castorini_format/train-all/b.toks` in the data folder" in trecqa
    assert "needs" not in ladder_page.rung4_plan(["rcrn_table2"])
    assert ladder_page.rung4_plan(["rcrn_table5"]).startswith("not built")


def test_runs_of_another_rate_or_another_p_leave_the_ladder_and_no_rung_averages_them(tmp_path):
    """Rung 0's rate moved (0.001 -> 0.002) and rung 2's choice with it (0.2 -> 0.5): the rung-3 runs at
    the old rate and p have no twin at the new ones to replace them by key; they must go, not be averaged."""
    target = _target("rcrn_table5", "bilstm", lr=0.002)

    def at(r: dict, lr: str) -> dict:
        return {**r, "lr": lr, "run": r["run"] + "-" + lr}

    old = [at(row(3, s, 80.0, 10.0, 0.2), "0.001") for s in (1, 2)]
    new = [at(row(r, s, d, t, p), "0.002") for r, s, d, t, p in
           [(1, 1, 86.0, 92.0, None), (1, 2, 87.0, 93.0, None), (2, 1, 85.0, 93.0, 0.2), (2, 2, 85.0, 94.0, 0.2),
            (2, 1, 86.0, 95.0, 0.5), (2, 2, 86.0, 95.0, 0.5), (3, 1, 88.0, 96.0, 0.5), (3, 2, 88.0, 97.0, 0.5)]]
    (tmp_path / "regime_ladder.runs.csv").write_text(ladder.csv_text([row(0, 1, 85.0, 90.0), row(0, 2, 86.0, 89.0), *old, *new]))
    evidence = ladder.Evidence(tmp_path)
    assert evidence.choice(target) == 0.5
    assert evidence.drop_stale(target) == 2
    rung3 = [r for r in evidence.rows.values() if r["rung"] == "3"]
    assert sorted((r["dropout"], r["lr"]) for r in rung3) == [("0.5", "0.002")] * 2
    assert evidence.drop_stale(target) == 0  # nothing else is stale: rung 0's rows and both p's at rung 2 stay
    assert len(evidence.rows) == 10
    other = _target("rcrn_table3", "bilstm", lr=0.002)
    assert ladder.Evidence(tmp_path).drop_stale(other) == 0  # another experiment's rows are not this target's
