"""Dropout chosen on dev like the learning rate (``table.protocol.dropout_grid``): staged after the
rate, on the selection seeds at the chosen rate, the config's own dropout among the candidates; the
final seeds wait for the choice and run at it; the evidence stores each run's p and the choice."""
from __future__ import annotations

import shutil

import pytest

from rnnbench.compose import compose_config
from rnnbench.errors import ConfigError
from rnnbench.campaign import protocol
from rnnbench.results import evidence
from rnnbench.results.dropout_choice import DropoutChoice
from tests.helpers import load_script


def test_the_dropout_grid_is_checked():
    assert protocol.dropout_grid({"dropout_grid": [0.2, 0.5]}) == [0.2, 0.5]
    assert protocol.dropout_grid({}) == []
    with pytest.raises(ConfigError, match="below 1"):
        protocol.dropout_grid({"dropout_grid": [1.0]})
    with pytest.raises(ConfigError, match="listed twice"):
        protocol.dropout_grid({"dropout_grid": [0.2, 0.2]})


def test_a_tie_goes_to_the_configs_own_dropout_then_to_the_smaller_p():
    assert protocol.choose_dropout({0.5: [0.8, 0.8], None: [0.8, 0.8], 0.2: [0.8, 0.8]}) is None
    assert protocol.choose_dropout({0.5: [0.9, 0.9], 0.2: [0.9, 0.9], None: [0.7, 0.8]}) == 0.2
    assert protocol.choose_dropout({0.5: [0.9, 0.9], 0.2: [0.7, 0.9], None: [0.7, 0.8]}) == 0.5
    assert protocol.choose_dropout({0.5: [2.0], None: [3.0]}, lower_is_better=True) == 0.5


def _dev_best_at(lr_best: float, p_best: float | None):
    def record(job):
        dev = 0.9 - abs(job.lr - lr_best) - (0.0 if job.dropout == p_best else 0.05)
        return {"dev": {"accuracy": dev}, "seconds_per_epoch": 60.0, "epochs_run": 10, "hardware": {"device": "cpu"}}
    return record


def test_the_sweep_chooses_the_rate_then_dropout_at_it_then_runs_the_finals_at_both(monkeypatch):
    from rnnbench.campaign import runner

    ran = []  # a finished run is asked for again by the choice: the fake keeps no run folders
    score = _dev_best_at(1e-3, 0.5)

    def ensure(experiment, job, extra, wait, committed):
        ran.append(job)
        return score(job)

    monkeypatch.setattr(runner, "ensure", ensure)
    base = compose_config(["experiment=mzu_table6_laptop", "table.protocol.dropout_grid=[0.2,0.5]"])
    assert runner.run_missing("mzu_table6_laptop", base, ["dt_gru"], [], None) == 0
    rate_runs = [j for j in ran if j.phase == "select" and j.dropout is None]
    dropout_runs = [j for j in ran if j.phase == "select" and j.dropout is not None]
    assert {j.lr for j in rate_runs} == {2e-3, 1e-3, 5e-4}
    assert sorted({(j.dropout, j.seed) for j in dropout_runs}) == [(0.2, 1), (0.2, 2), (0.5, 1), (0.5, 2)]
    assert {j.lr for j in dropout_runs} == {1e-3}  # at the chosen rate only
    assert [(j.seed, j.lr, j.dropout) for j in ran if j.phase == "final"] == [(3, 1e-3, 0.5), (4, 1e-3, 0.5), (5, 1e-3, 0.5)]
    assert ran.index(dropout_runs[-1]) < ran.index(next(j for j in ran if j.phase == "final"))  # finals wait for the choice


def test_without_a_dropout_grid_the_jobs_are_as_before():
    from rnnbench.campaign.jobs import jobs_of

    base = compose_config(["experiment=mzu_table6_laptop"])
    total, jobs = jobs_of(base, "dt_gru", 1e-3, None)
    assert total == 3 * 2 + 3 and all(j.dropout is None for j in jobs)
    with_grid = compose_config(["experiment=mzu_table6_laptop", "table.protocol.dropout_grid=[0.2,0.5]"])
    total, jobs = jobs_of(with_grid, "dt_gru", 1e-3, None)
    assert total == 3 * 2 + 2 * 2 + 3  # the plan prices the dropout runs
    assert not [j for j in jobs if j.phase == "final"]  # the finals wait for the dropout choice
    total, jobs = jobs_of(with_grid, "dt_gru", 1e-3, None, protocol.DropoutChoice(0.2, (0.2, 0.5)))
    assert {j.dropout for j in jobs if j.phase == "final"} == {0.2}


def test_a_p_goes_where_the_rule_puts_it_for_one_layer_and_for_a_stack():
    from rnnbench.campaign.jobs import job_config

    one = job_config("rcrn_table5", protocol.Job("bilstm", 1, 1e-3, "select", 0.3), [])
    assert one.embedding.dropout == 0.3 and one.task.head.dropout == 0.3
    stack = job_config("rcrn_table5", protocol.Job("3l_bilstm", 1, 1e-3, "select", 0.3), [])
    assert stack.encoder.dropout == 0.3 and stack.task.head.dropout == 0.3 and not stack.embedding.get("dropout")
    own = job_config("rcrn_table5", protocol.Job("bilstm", 1, 1e-3, "select"), [])
    assert not own.embedding.get("dropout") and not own.task.head.get("dropout")


@pytest.mark.slow  # three smoke training runs
def test_the_table_stores_each_runs_p_and_the_choice_and_regenerates_without_the_runs(tmp_path, capsys):
    main = load_script("make_table").main
    args = ["--set", "trainer=smoke", "--set", "trainer.max_eval_batches=null", "--set", "hydra.sweeper.params.encoder=bilstm",
            "--set", "table.protocol.seeds=[1,2]", "--set", "table.protocol.select_seeds=1", "--set", "table.protocol.lr_grid=[1e-3]",
            "--set", "table.protocol.dropout_grid=[0.3]",
            "--set", f"paths.runs_dir={tmp_path / 'runs'}", "--set", f"paths.results_dir={tmp_path / 'results'}"]
    assert main(["synthetic_span_copy", *args]) == 0
    started = [line for line in capsys.readouterr().out.splitlines() if line.startswith("== ")]
    assert len(started) == 3 and "dropout 0.3 (select)" in started[1] and "(final)" in started[2]
    rows = evidence.read_csv(tmp_path / "results" / "synthetic_span_copy.csv")
    (choice,) = {DropoutChoice.from_columns(r) for r in rows}
    statement = choice.statement()
    assert {(r["dropout_grid"], r["dropout_chosen"]) for r in rows} == {("0.3", "" if choice.p is None else 0.3)}
    assert statement.startswith("dropout ") and "chosen on dev among the config's own and {0.3}" in statement
    chosen = None if statement.startswith("dropout the config's own") else 0.3
    assert {r["dropout"] for r in rows if r["seed"] == 1} == {"", 0.3}
    finals = [r for r in rows if r["phase"] == "final"]
    assert finals and {r["dropout"] for r in finals} == {"" if chosen is None else chosen}
    reported = {(r["seed"], r["dropout"]) for r in rows if r["reported"] == "yes"}
    assert reported == {(1, "" if chosen is None else chosen), (2, "" if chosen is None else chosen)}
    md = (tmp_path / "results" / "synthetic_span_copy.md").read_text()
    assert "Dropout of `bilstm` at its chosen rate" in md and statement in md
    assert "dropout chosen after the rate, at the chosen rate, among the config's own and {0.3}" in md

    shutil.rmtree(tmp_path / "runs")  # the committed evidence alone regenerates the table
    assert main(["synthetic_span_copy", "--no-run", *args]) == 0
    assert (tmp_path / "results" / "synthetic_span_copy.md").read_text() == md
