"""scripts/make_table.py end to end: run a sweep's missing jobs, skip finished ones, write the table."""
from __future__ import annotations

import pytest

from rnnbench.campaign.definitions import ExperimentPlan
from rnnbench.results import evidence, rate_choice
from rnnbench.results.rate_choice import RateChoice
from tests.helpers import load_script


def _make_table():
    return load_script("make_table").main


def test_a_table_no_paper_printed_is_run_then_reassembled_from_records(tmp_path, capsys):
    main = _make_table()
    # Tables refuse smoke runs scored on part of the test split: score all of it (500 examples).
    overrides = ["--set", "trainer=smoke", "--set", "trainer.max_eval_batches=null", "--set", "hydra.sweeper.params.encoder=bilstm",
                 "--set", f"paths.runs_dir={tmp_path / 'runs'}", "--set", f"paths.results_dir={tmp_path / 'results'}"]
    assert main(["synthetic_span_copy", *overrides]) == 0
    assert "== synthetic_span_copy: bilstm seed 1" in capsys.readouterr().out
    md = (tmp_path / "results" / "synthetic_span_copy.md").read_text()
    assert md.startswith("# Synthetic span copy (ours)")
    assert "| bilstm | `bilstm` |" in md and "(n=1)" in md
    assert "Paper:" not in md and "- Generated data (task span_copy, reader seed 1234)" in md
    assert "At most 3 batches per epoch" in md and "## Cost and trust" in md
    assert (tmp_path / "results" / "synthetic_span_copy.tex").exists()
    rows = (tmp_path / "results" / "synthetic_span_copy.csv").read_text().splitlines()
    assert rows[0].startswith("format,model,encoder,variant,dataset,metric,scale,seed,lr,phase,reported,dev,test,")
    assert len(rows) == 1 + 2 and all(",bilstm,,E" in r or ",bilstm,,F" in r for r in rows[1:])  # one run, columns EM and F1

    assert main(["synthetic_span_copy", *overrides]) == 0  # finished runs are not run again
    assert "== synthetic_span_copy" not in capsys.readouterr().out

    import shutil

    # a finished run of another setting filed under the experiment (a ladder rung, a sweep cell) is
    # named on the console, not in the table, which stays what the committed evidence gives
    (run,) = (tmp_path / "runs").glob("*/bilstm/s1-*")
    shutil.copytree(run, run.with_name("s1-000000000000"))
    assert main(["synthetic_span_copy", "--no-run", *overrides]) == 0
    assert "1 finished run(s) filed under these experiments are not this table's" in capsys.readouterr().out
    assert (tmp_path / "results" / "synthetic_span_copy.md").read_text() == md

    # the runs are gone: the committed CSV regenerates the same table
    shutil.rmtree(tmp_path / "runs")
    assert main(["synthetic_span_copy", "--no-run", *overrides]) == 0
    assert (tmp_path / "results" / "synthetic_span_copy.md").read_text() == md


def test_evaluated_columns_score_the_reported_checkpoints_without_training_again(tmp_path, capsys):
    """FHE Table 4's path: train at one length, then score the same checkpoints on longer inputs."""
    main = _make_table()
    overrides = ["--set", "trainer=smoke", "--set", "trainer.max_eval_batches=null", "--set", "hydra.sweeper.params.encoder=lstm1",
                 "--set", "encoder.hidden_size=8", "--set", "table.protocol.seeds=[1]",
                 "--set", "task.reader.train_size=64", "--set", "task.reader.dev_size=16", "--set", "task.reader.test_size=16",
                 "--set", '+table.evaluated_columns.len400=["task.reader.test_length=400"]',
                 "--set", f"paths.runs_dir={tmp_path / 'runs'}", "--set", f"paths.results_dir={tmp_path / 'results'}"]
    assert main(["fhe_table2", *overrides]) == 0
    assert capsys.readouterr().out.count("== fhe_table2:") == 1  # one training run; the longer column is an evaluation
    (run,) = (tmp_path / "runs" / "picking" / "lstm1").glob("s1-*")
    evaluations = list(run.glob("eval-test-*.json"))
    assert len(evaluations) == 1 and '"test_length": 400' in evaluations[0].read_text()
    rows = (tmp_path / "results" / "fhe_table2.csv").read_text().splitlines()
    assert any(",len400,accuracy,100.0,1," in r for r in rows) and any(",picking/accuracy/len100,accuracy,100.0,1," in r for r in rows)
    md = (tmp_path / "results" / "fhe_table2.md").read_text()
    assert "len400 ours" in md
    mtime = evaluations[0].stat().st_mtime
    assert main(["fhe_table2", "--no-run", *overrides]) == 0 and evaluations[0].stat().st_mtime == mtime  # read, not recomputed


def test_a_run_is_scored_on_the_evaluated_columns_as_soon_as_the_campaign_meets_it_finished(tmp_path, capsys):
    """A table stopped after a run finished, before the table was written, keeps the run's longer
    columns: the campaign scores them at once; --no-run, which scores nothing, says which it lacks."""
    from rnnbench.campaign import protocol, runner
    from rnnbench.compose import compose_config

    main = _make_table()
    extra = ["trainer=smoke", "trainer.max_eval_batches=null", "encoder.hidden_size=8", "table.protocol.seeds=[1]",
             "task.reader.train_size=64", "task.reader.dev_size=16", "task.reader.test_size=16",
             '+table.evaluated_columns.len400=["task.reader.test_length=400"]',
             f"paths.runs_dir={tmp_path / 'runs'}", f"paths.results_dir={tmp_path / 'results'}"]
    base = compose_config(["experiment=fhe_table2", "encoder=lstm1", *extra])
    (job,) = [*protocol.selection_jobs("lstm1", base.table.protocol, base.trainer.lr),  # the table's one run
              *protocol.final_jobs("lstm1", base.table.protocol, base.trainer.lr)]
    committed = evidence.CommittedEvidence(tmp_path / "results" / "none.csv", tmp_path / "results" / "none.items.csv.xz")
    assert runner.ensure("fhe_table2", job, extra, False, committed) is not None  # trained, then scored: no table written
    (run,) = (tmp_path / "runs" / "picking" / "lstm1").glob("s1-*")
    (evaluation,) = run.glob("eval-test-*.json")
    assert '"test_length": 400' in evaluation.read_text()

    for path in run.glob("eval-test-*"):  # a run finished before its columns were scored
        path.unlink()
    overrides = [a for o in extra + ["hydra.sweeper.params.encoder=lstm1"] for a in ("--set", o)]
    assert main(["fhe_table2", "--no-run", *overrides]) == 0
    assert f"fhe_table2: lstm1 {run.name} is not scored at len400 yet" in capsys.readouterr().out
    assert not list(run.glob("eval-test-*"))
    assert runner.ensure("fhe_table2", job, extra, False, committed) is not None and list(run.glob("eval-test-*.json"))
    assert main(["fhe_table2", "--no-run", *overrides]) == 0
    assert "is not scored" not in capsys.readouterr().out


def test_a_campaign_goes_on_from_committed_evidence_without_the_run_folders(tmp_path, capsys):
    """A later checkout has the committed CSV but not the runs: committed runs are not trained
    again, new seeds are added beside them, and evidence of another config is dropped (said so)."""
    import shutil

    main = _make_table()
    base = ["--set", "trainer=smoke", "--set", "trainer.max_eval_batches=null", "--set", "hydra.sweeper.params.encoder=bilstm",
            "--set", f"paths.runs_dir={tmp_path / 'runs'}", "--set", f"paths.results_dir={tmp_path / 'results'}"]
    assert main(["synthetic_span_copy", *base]) == 0
    assert "synthetic_span_copy.csv not found): every run" in capsys.readouterr().out  # a fresh results folder
    csv = tmp_path / "results" / "synthetic_span_copy.csv"
    first = csv.read_text().splitlines()
    assert main(["synthetic_span_copy", "--no-run", *base]) == 0  # run folders and committed rows agree
    assert csv.read_text().splitlines() == first
    assert "dropped" not in (tmp_path / "results" / "synthetic_span_copy.md").read_text()
    shutil.rmtree(tmp_path / "runs")
    capsys.readouterr()

    assert main(["synthetic_span_copy", *base, "--set", "table.protocol.seeds=[1,2]"]) == 0
    out = capsys.readouterr().out
    assert "bilstm seed 1" not in out and "== synthetic_span_copy: bilstm seed 2" in out  # seed 1 is committed
    assert f"committed evidence: 1 runs in {csv}" in out
    rows = csv.read_text().splitlines()
    assert set(first) <= set(rows) and len(rows) == 1 + 4  # seed 1's two columns kept, seed 2's added
    assert "reported seeds 1, 2." in (tmp_path / "results" / "synthetic_span_copy.md").read_text()

    shutil.rmtree(tmp_path / "runs")
    assert main(["synthetic_span_copy", "--no-run", *base, "--set", "table.protocol.seeds=[1,2]"]) == 0
    assert csv.read_text().splitlines() == rows  # regenerated from the committed rows alone

    # the plan counts the committed runs as finished and prices the rest from their cost
    assert main(["synthetic_span_copy", "--plan", *base, "--set", "table.protocol.seeds=[1,2,3]"]) == 0
    out = capsys.readouterr().out
    (line,) = [line.split() for line in out.splitlines() if line.startswith("synthetic_span_copy")]
    assert line[:4] == ["synthetic_span_copy", "bilstm", "2/3", "1"] and float(line[4]) > 0
    assert "1 run(s) to run, about" in out and not (tmp_path / "runs").exists()  # nothing was run

    # nothing matches and nothing ran (another data folder, a mistyped override): nothing is dropped
    capsys.readouterr()
    assert main(["synthetic_span_copy", "--no-run", *base, "--set", "encoder.hidden_size=8"]) == 0
    assert "no finished or committed run matches" in capsys.readouterr().out
    assert csv.read_text().splitlines() == rows and not (tmp_path / "results" / "synthetic_span_copy.superseded.csv").exists()

    # another config (a different encoder width): the committed runs are not its runs; they
    # move to the superseded-runs file, named on every regeneration, not only the first
    assert main(["synthetic_span_copy", *base, "--set", "encoder.hidden_size=8"]) == 0
    out = capsys.readouterr().out
    assert "== synthetic_span_copy: bilstm seed 1" in out and "2 committed run(s) are no longer selected" in out
    assert len(csv.read_text().splitlines()) == 1 + 2
    superseded = tmp_path / "results" / "synthetic_span_copy.superseded.csv"
    assert set(rows[1:]) == {line.rsplit(",", 1)[0] for line in superseded.read_text().splitlines()[1:]}
    for _ in range(2):
        assert main(["synthetic_span_copy", "--no-run", *base, "--set", "encoder.hidden_size=8"]) == 0
        md = (tmp_path / "results" / "synthetic_span_copy.md").read_text()
        assert "Superseded runs, not in this table" in md and "(bilstm 2)" in md


@pytest.mark.slow  # five smoke training runs
def test_finals_wait_unreported_while_a_rate_new_to_the_grid_has_no_selection_runs(tmp_path, capsys):
    """LSTM-baseline Table 1 at commit cdad262: a rate joined the grid; until its selection runs
    finish, no rate is chosen, and the finals already run must stay in the evidence (they may be
    chosen again), not move to the superseded-runs file."""
    import shutil

    main = _make_table()
    base = ["--set", "trainer=smoke", "--set", "trainer.max_eval_batches=null", "--set", "hydra.sweeper.params.encoder=bilstm",
            "--set", "table.protocol.seeds=[1,2]", "--set", "table.protocol.select_seeds=1",
            "--set", "table.protocol.max_grid_extensions=0",  # the grid changes by hand here, not past its edge
            "--set", f"paths.runs_dir={tmp_path / 'runs'}", "--set", f"paths.results_dir={tmp_path / 'results'}"]
    assert main(["synthetic_span_copy", *base, "--set", "table.protocol.lr_grid=[1e-3,3e-4]"]) == 0
    csv = tmp_path / "results" / "synthetic_span_copy.csv"
    rows = csv.read_text().splitlines()
    finals = [r for r in rows if ",final," in r]
    assert len(rows) == 1 + 3 * 2 and len(finals) == 2 and all(",final,yes," in r for r in finals)
    shutil.rmtree(tmp_path / "runs")  # a fresh checkout: the committed CSV only
    capsys.readouterr()

    wider = [*base, "--set", "table.protocol.lr_grid=[3e-3,1e-3,3e-4]"]
    assert main(["synthetic_span_copy", "--no-run", *wider]) == 0
    assert "no longer selected" not in capsys.readouterr().out
    assert not (tmp_path / "results" / "synthetic_span_copy.superseded.csv").exists()
    kept = csv.read_text().splitlines()

    def runs(lines):  # each row but whether it is reported and the stored choice, undone while no rate is chosen
        import csv as csv_module

        choice = ("reported", "chosen_lr", *rate_choice.COLUMNS)
        return sorted(tuple(v for k, v in r.items() if k not in choice) for r in csv_module.DictReader(lines))
    assert runs(kept) == runs(rows)  # every run kept, none reported until a rate is chosen
    assert all(",yes," not in r for r in kept[1:]) and len(kept) == len(rows)

    assert main(["synthetic_span_copy", *wider]) == 0  # the new rate's selection run, then the choice
    out = capsys.readouterr().out
    assert out.count("== synthetic_span_copy: bilstm") in (1, 2)  # 3e-3 on seed 1, and seed 2 only if 3e-3 is chosen
    assert sum(",yes," in r for r in csv.read_text().splitlines()) == 2 * 2  # two seeds reported, two columns each


def test_a_one_rate_table_reports_a_seed_that_finished_before_the_others(tmp_path, capsys):
    """LSTM Table 2's enhanced row (one rate, selection seeds 1-2): seed 2 finished first and the
    row read "no finished runs", as if a rate were still to be chosen from seed 1's dev score."""
    import shutil

    main = _make_table()
    overrides = ["--set", "trainer=smoke", "--set", "trainer.max_eval_batches=null", "--set", "hydra.sweeper.params.encoder=bilstm",
                 "--set", "table.protocol.seeds=[1,2]", "--set", "table.protocol.select_seeds=2", "--set", "table.protocol.lr_grid=[]",
                 "--set", f"paths.runs_dir={tmp_path / 'runs'}", "--set", f"paths.results_dir={tmp_path / 'results'}"]
    assert main(["synthetic_span_copy", *overrides]) == 0
    (seed1,) = (tmp_path / "runs").rglob("s1-*")
    shutil.rmtree(seed1)  # as if still running, and never committed
    for written in (tmp_path / "results").glob("synthetic_span_copy*"):
        written.unlink()
    assert main(["synthetic_span_copy", "--no-run", *overrides]) == 0
    assert "(n=1)" in (tmp_path / "results" / "synthetic_span_copy.md").read_text()
    rows = evidence.read_csv(tmp_path / "results" / "synthetic_span_copy.csv")
    assert {r["seed"] for r in rows if r["reported"] == "yes"} == {2}


class _Campaign:
    """The campaign library's modules as one namespace, as the tests see the engine: reading a name
    finds it in the first module holding it; setting one (monkeypatch) sets it in every module
    holding it, so a patched function is the one each caller looks up."""

    __slots__ = ("_modules",)  # no instance __dict__: monkeypatch then restores what reading gave

    def __init__(self):
        from rnnbench.campaign import definitions as experiments
        from rnnbench.campaign import assemble, definitions, jobs, pricing, rates, runner
        from rnnbench.results import identity
        from rnnbench.training import checkpoint

        script = load_script("make_table")
        modules = (runner, pricing, rates, jobs, assemble, definitions, experiments, identity, checkpoint, script)
        object.__setattr__(self, "_modules", modules)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        for module in self._modules:
            if hasattr(module, name):
                return getattr(module, name)
        raise AttributeError(name)

    def __setattr__(self, name, value):
        holders = [module for module in self._modules if hasattr(module, name)]
        assert holders, name
        for module in holders:
            setattr(module, name, value)


def _module():
    return _Campaign()


def _no_run_folders_on_cpu(monkeypatch, module) -> None:
    """Plan as a fresh CPU machine does: no run folder, no run started; only committed evidence."""
    monkeypatch.setattr(module, "finished", lambda experiment, job, extra, committed: None)
    monkeypatch.setattr(module, "started_runs", lambda experiment, jobs, extra: 0)
    monkeypatch.setattr(module.DEADLINE, "device", "cpu")


def test_until_starts_only_runs_expected_to_end_in_time():
    import time

    module = _module()
    deadline = module.Deadline(at=time.time() + 600)
    assert deadline.allows("bilstm")  # no evidence yet: start (the first run gives the estimate)
    deadline.note("bilstm", {"seconds_per_epoch": 100.0, "epochs_run": 3, "test_seconds": 10.0})
    assert deadline.longest["bilstm"] == 310.0 and deadline.allows("bilstm")  # 465 s of 600
    deadline.note("bilstm", {"seconds_per_epoch": 100.0, "epochs_run": 5})
    assert not deadline.allows("bilstm") and not deadline.allows("rcrn")  # 750 s: past; rcrn has no run: the longest
    deadline.note("rcrn", {"seconds_per_epoch": 10.0, "epochs_run": 3})
    assert deadline.allows("rcrn")
    assert module.Deadline(at=None).allows("bilstm")
    with pytest.raises(SystemExit, match="HH:MM"):
        module.parse_until("5pm")
    assert 0 < module.parse_until(time.strftime("%H:%M", time.localtime(time.time() - 120))) - time.time() <= 24 * 3600


def test_until_scales_the_tables_longest_run_by_the_encoders_cost_ratio_in_the_other_tables(monkeypatch, tmp_path):
    """RCRN Table 4 at rung 2: the first 3L-BiLSTM run, with only BiLSTM runs finished, was judged by a
    BiLSTM run's length; it takes about four times as long. The other tables' ratio scales it (their
    median); the table's own runs and an encoder no other table has run leave the longest as it is."""
    import time

    module = _module()
    module._costs_by_table.cache_clear()
    monkeypatch.setattr(module.DEADLINE, "device", "cpu")
    header = "format,model,encoder,variant,dataset,metric,scale,seed,run,dev,seconds_per_epoch,epochs_run,device,hardware\n"
    cpu = "2,{e},{e},,SST,accuracy,100.0,1,{r},0.8,{s},10,cpu,AMD EPYC\n"
    (tmp_path / "rcrn_table2.csv").write_text(header + cpu.format(e="bilstm", r="a", s=36.0) + cpu.format(e="3l_bilstm", r="b", s=144.0))
    (tmp_path / "rcrn_table4.csv").write_text(header + cpu.format(e="bilstm", r="c", s=36.0) + cpu.format(e="3l_bilstm", r="d", s=36.0))
    deadline = module.Deadline(at=time.time() + 3000, device="cpu", results_dir=tmp_path, table="rcrn_table4")
    deadline.note("bilstm 0123", {"seconds_per_epoch": 100.0, "epochs_run": 10, "device": "cpu"})  # 1000 s: 1500 with the margin
    assert deadline.allows("bilstm 0123") and deadline.allows("rcrn 4567")  # no other table has run RCRN: 1500 s
    assert not deadline.allows("3l_bilstm 89ab")  # four times the BiLSTM's: 6000 s (Table 4's own 1x not counted)
    assert deadline.expected_end("3l_bilstm 89ab") == pytest.approx(time.time() + 6000, abs=5)
    assert module.Deadline(at=time.time() + 3000, device="cpu").scaled_longest("3l_bilstm") is None  # nothing finished
    module._costs_by_table.cache_clear()


def test_until_prices_runs_only_from_runs_on_the_same_kind_of_device():
    """RCRN Table 4: its 3l_bilstm runs on a GPU took 4 minutes; one here takes an hour."""
    import time

    module = _module()
    deadline = module.Deadline(at=time.time() + 600, device="cpu")
    gpu_run = {"seconds_per_epoch": 15.0, "epochs_run": 13, "hardware": {"device": "cuda:0"}}
    cpu_run = {"seconds_per_epoch": 160.0, "epochs_run": 20, "hardware": {"device": "cpu"}}
    deadline.note("3l_bilstm", gpu_run)
    assert "3l_bilstm" not in deadline.longest and deadline.allows("3l_bilstm")  # no CPU evidence: the first run starts
    deadline.note("rcrn", {"seconds_per_epoch": 160.0, "epochs_run": 20, "device": "cpu", "committed": True})
    assert not deadline.allows("3l_bilstm")  # priced from the table's longest CPU run, not the GPU's 3 minutes
    on_gpu = module.Deadline(at=time.time() + 600, device="cuda")
    on_gpu.note("3l_bilstm", cpu_run)
    on_gpu.note("3l_bilstm", gpu_run)
    assert on_gpu.longest["3l_bilstm"] == 15.0 * 13 and on_gpu.allows("3l_bilstm")
    anywhere = module.Deadline(at=time.time() + 600)  # no device named: every run counts
    anywhere.note("3l_bilstm", gpu_run)
    anywhere.note("3l_bilstm", cpu_run)
    assert anywhere.longest["3l_bilstm"] == 3200.0
    assert module.device_kind("cpu") == "cpu"


def test_a_run_past_until_is_not_started_and_the_table_shows_what_finished(tmp_path, capsys, monkeypatch):
    import time

    module = _module()
    base = ["--set", "trainer=smoke", "--set", "trainer.max_eval_batches=null", "--set", "hydra.sweeper.params.encoder=bilstm",
            "--set", f"paths.runs_dir={tmp_path / 'runs'}", "--set", f"paths.results_dir={tmp_path / 'results'}"]
    assert module.main(["synthetic_span_copy", *base]) == 0
    monkeypatch.setattr(module.Deadline, "MARGIN", 1e9)  # any finished run now looks too long to start
    until = time.strftime("%H:%M", time.localtime(time.time() + 3600))
    capsys.readouterr()
    assert module.main(["synthetic_span_copy", "--until", until, *base, "--set", "table.protocol.seeds=[1,2]"]) == 0
    out = capsys.readouterr().out
    assert "not started: synthetic_span_copy: bilstm seed 2" in out and "== synthetic_span_copy" not in out
    rows = (tmp_path / "results" / "synthetic_span_copy.csv").read_text().splitlines()
    assert len(rows) == 1 + 2 and all(",bilstm,,E" in r or ",bilstm,,F" in r for r in rows[1:])  # seed 1 only, kept


def test_until_knows_the_runs_of_every_experiment_of_the_table_before_starting_any(tmp_path, capsys, monkeypatch):
    """RCRN Table 8: an encoder's finished runs in an experiment listed later hold back its first run
    in one listed earlier (before, that run started on another encoder's estimate)."""
    import time

    module = _module()
    base = ["--set", "trainer=smoke", "--set", "trainer.max_eval_batches=null", "--set", "hydra.sweeper.params.encoder=bilstm",
            "--set", "table.protocol.seeds=[1]", "--set", f"paths.runs_dir={tmp_path / 'runs'}",
            "--set", f"paths.results_dir={tmp_path / 'results'}"]
    assert module.main(["synthetic_pointer_copy", *base]) == 0
    monkeypatch.setattr(module.Deadline, "MARGIN", 1e9)  # the finished bilstm run now looks too long to start
    monkeypatch.setattr(module, "DEADLINE", module.Deadline())
    until = time.strftime("%H:%M", time.localtime(time.time() + 3600))
    capsys.readouterr()
    assert module.main(["synthetic_pointer_copy_no_pointer", "synthetic_pointer_copy", "--until", until, *base]) == 0
    out = capsys.readouterr().out
    assert "not started: synthetic_pointer_copy_no_pointer: bilstm seed 1" in out and "== synthetic_pointer_copy_no_pointer" not in out


def test_the_papers_rows_run_before_our_extra_baselines():
    from rnnbench.compose import compose_config

    module = _module()
    cfg = compose_config(["experiment=dcu_table1_small"])
    assert module.sweep_of("dcu_table1_small", []) == ["lstm1", "gru1", "none", "bilstm", "sim_dcu", "dcu"]
    assert module.paper_then_ours(cfg, module.sweep_of("dcu_table1_small", [])) == [["lstm1", "gru1", "none", "sim_dcu", "dcu"], ["bilstm"]]


def test_a_held_back_run_is_reported_once(capsys):
    import time

    module = _module()
    deadline = module.Deadline(at=time.time() + 60)
    deadline.note("bilstm", {"seconds_per_epoch": 100.0, "epochs_run": 3})
    job = module.protocol.Job("bilstm", 2, 1e-3, "select")
    assert not deadline.allows("bilstm")
    deadline.hold_back("trec", job, "bilstm")
    deadline.hold_back("trec", job, "bilstm")  # asked again when the final runs look up the learning rate
    assert capsys.readouterr().out.count("not started: trec: bilstm seed 2 lr 0.001") == 1


def test_footnotes_describe_the_first_experiment_that_has_runs():
    from rnnbench.compose import compose_config

    module = _module()
    plans = [ExperimentPlan(name, compose_config([f"experiment={name}"]), []) for name in ("dcu_table1", "dcu_table1_small")]
    row = {"variant": "small", "seed": "1", "reported": "yes", "commit": "0" * 40, "hardware": "cpu", "device": "cpu"}
    notes = module.footnotes(plans, [row])
    assert "At most 700 batches per epoch." in notes[1]  # the small variant's trainer, not dcu_table1's
    assert "seeds 1" in notes[0]
    assert module.footnotes(plans, []) == ["No finished runs yet."]


def test_footnotes_say_which_variants_train_the_word_vectors():
    """RCRN Table 1 at rung 1 trains the vectors its rung-0 rows keep frozen; the footnote said
    "frozen" for both (it read the first experiment only). A record's plain dict reads the same."""
    from rnnbench.compose import compose_config
    from rnnbench.config import embeddings_frozen

    module = _module()
    names = ("rcrn_table1_mr", "rcrn_table1_mr_rung1")
    plans = [ExperimentPlan(name, compose_config([f"experiment={name}"]), []) for name in names]
    rows = [{"variant": v, "seed": "1", "reported": "yes", "commit": "0" * 40, "hardware": "cpu", "device": "cpu"} for v in ("", "rung1")]
    assert "embeddings glove_6b_50d (frozen); glove_6b_50d (trained) in variant rung1;" in module.footnotes(plans, rows)[0]
    assert "embeddings glove_6b_50d (frozen); reported" in module.footnotes(plans[:1], rows[:1])[0]  # one setting: as before
    assert embeddings_frozen({"embedding": {"freeze": None}, "task": {"freeze_embeddings": True}})
    assert not embeddings_frozen({"embedding": {"freeze": False}, "task": {"freeze_embeddings": True}})
    assert not embeddings_frozen({"embedding": {}, "task": {}})


def test_the_papers_rows_finish_before_our_baselines_start(monkeypatch):
    from rnnbench.compose import compose_config

    module = _module()
    cfg = compose_config(["experiment=dcu_table1_small"])
    order = []

    def ensure(experiment, job, extra, wait, committed):
        order.append((job.encoder, job.seed))
        return {"dev": {cfg.task.select_metric: 0.5}}

    monkeypatch.setattr(module, "ensure", ensure)
    assert module.run_missing("dcu_table1_small", cfg, ["lstm1", "bilstm", "dcu"], [], None) == 0
    first_ours = next(i for i, (enc, _) in enumerate(order) if enc == "bilstm")
    assert {(enc, seed) for enc, seed in order[:first_ours]} == {(enc, s) for enc in ("lstm1", "dcu") for s in (1, 2, 3)}
    assert {seed for enc, seed in order[first_ours:]} == {1, 2, 3}


def test_footnotes_name_each_experiments_protocol_when_they_differ():
    from rnnbench.compose import compose_config

    module = _module()
    names = ("mzu_table6_restaurant", "mzu_table6_laptop")
    row = {"variant": "", "seed": "1", "reported": "yes", "commit": "0" * 40, "hardware": "cpu", "device": "cpu"}
    same = [ExperimentPlan(name, compose_config([f"experiment={name}", "trainer.epochs=20"]), []) for name in names]
    notes = module.footnotes(same, [row])
    assert sum("Protocol, the same for every encoder" in n for n in notes) == 1 and "at most 20 epochs" in notes[1]
    longer = [ExperimentPlan(name, compose_config([f"experiment={name}"]), []) for name in names]  # laptops: a 40-epoch cap
    notes = module.footnotes(longer, [row])
    assert notes[1].startswith("mzu_table6_restaurant: Protocol") and "at most 20 epochs" in notes[1]
    assert notes[2].startswith("mzu_table6_laptop: Protocol") and "at most 40 epochs" in notes[2]


@pytest.mark.slow
def test_a_domain_takes_its_rate_from_another_experiments_selection(real_data, tmp_path, capsys):
    """RCRN Table 1: Apparel's selection runs choose each encoder's rate; MR runs only its seeds,
    at that rate, and says so under the table. An experiment naming itself is a one-line error."""
    main = _make_table()
    base = ["--set", "trainer=smoke", "--set", "trainer.max_eval_batches=null", "--set", "hydra.sweeper.params.encoder=bilstm",
            "--set", "table.protocol.seeds=[1]", "--set", "table.protocol.select_seeds=1", "--set", f"paths.data_dir={real_data}",
            "--set", f"paths.runs_dir={tmp_path / 'runs'}", "--set", f"paths.results_dir={tmp_path / 'results'}"]
    # the grid only in Apparel (MR has none): one selection run per rate there (not extended past
    # its edge here), then MR's seed
    assert main(["rcrn_table1_mr", "rcrn_table1_apparel", *base, "--set", "table.protocol.lr_grid=[1e-3,3e-4]",
                 "--set", "table.protocol.max_grid_extensions=0"]) == 0
    out = capsys.readouterr().out
    started = [line for line in out.splitlines() if line.startswith("== ")]
    assert started[:2] == ["== rcrn_table1_apparel: bilstm seed 1 lr 0.001 (select)", "== rcrn_table1_apparel: bilstm seed 1 lr 0.0003 (select)"]
    (mr,) = [line for line in started if line.startswith("== rcrn_table1_mr")]
    assert mr.endswith("(final)") and len(started) == 3
    rows = evidence.read_csv(tmp_path / "results" / "rcrn_table1.csv")
    chosen = {r["lr"] for r in rows if r["dataset"] == "Apparel" and r["reported"] == "yes"}
    assert {r["lr"] for r in rows if r["dataset"] == "MR"} == chosen and len(chosen) == 1
    md = (tmp_path / "results" / "rcrn_table1.md").read_text()
    assert "learning rate as chosen on rcrn_table1_apparel" in md

    # An override reaches every experiment of the table: one that does not compose is one error line too
    assert main(["rcrn_table1_apparel", *base, "--set", "+table.protocol.lr_from=rcrn_table1_apparel", "--no-run"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "an override does not compose" in err and "lr_from" in err
    # Apparel made to borrow its own rate: the table's first experiment (MR) borrows from one that selects nothing
    assert main(["rcrn_table1_apparel", *base, "--set", "++table.protocol.lr_from=rcrn_table1_apparel", "--no-run"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "lr_from=rcrn_table1_apparel must name an experiment of the same table" in err


def test_the_plan_total_says_which_runs_it_prices(capsys):
    """Rows no finished run can price are not counted as free: the total names what it covers."""
    print_plan = _module().print_plan

    def line(encoder, per_run, to_run):
        return {"experiment": "t", "encoder": encoder, "finished": 0, "total": to_run, "per_run": per_run, "to_run": to_run}

    print_plan([line("bilstm", 0.5, 2), line("rcrn", 1.0, 1)])
    assert "3 run(s) to run, about 2.0 CPU h of training (" in capsys.readouterr().out
    print_plan([line("bilstm", 0.5, 2), line("fhe", None, 3)])
    out = capsys.readouterr().out
    assert "5 run(s) to run, about 1.0 CPU h of training for the 2 priced (" in out and "estimate fhe from" in out
    print_plan([line("fhe", None, 3)])
    assert "3 run(s) to run, no CPU estimate yet (" in capsys.readouterr().out
    # a row left out of the campaign (table.not_run) is listed, but neither counted nor priced
    print_plan([line("bilstm", 0.5, 2), {**line("large", 4.0, 5), "left_out": "not run on this budget"}])
    out = capsys.readouterr().out
    assert "2 run(s) to run, about 1.0 CPU h of training (" in out and "left out of the campaign" in out
    # a price read off the same model on other data (another Amazon domain) is marked as such
    print_plan([line("bilstm", 0.5, 2)])
    assert "*: priced from" not in capsys.readouterr().out
    print_plan([{**line("bilstm", 0.5, 2), "other_data": True}])
    out = capsys.readouterr().out
    assert "0.5*" in out and "*: priced from the same model's runs on other data" in out


def test_the_plan_counts_finished_final_seeds_of_a_one_rate_table_and_prices_from_this_device(monkeypatch, capsys):
    """RCRN Table 4 (one rate): 3l_bilstm seeds 3-4 had finished on a GPU before seeds 1-2 (its
    selection seeds) ran; the plan counted 0 of 5 and, once priced, would have priced CPU runs at GPU speed."""
    from rnnbench.compose import compose_config

    module = _module()
    gpu = {"seconds_per_epoch": 15.0, "epochs_run": 12, "hardware": {"device": "cuda"}, "dev": {"accuracy": 0.85}}
    monkeypatch.setattr(module, "finished", lambda experiment, job, extra, committed: gpu if job.seed in (3, 4) else None)
    plans = [ExperimentPlan("rcrn_table4", compose_config(["experiment=rcrn_table4"]), ["3l_bilstm"])]
    monkeypatch.setattr(module.DEADLINE, "device", "cpu")
    (line,) = module.plan(plans, [], None)
    assert (line["finished"], line["total"], line["per_run"]) == (2, 5, None)
    module.print_plan([line])
    assert "no finished run on cpu to estimate 3l_bilstm from" in capsys.readouterr().out
    monkeypatch.setattr(module.DEADLINE, "device", "cuda")
    (line,) = module.plan(plans, [], None)
    assert line["per_run"] == pytest.approx(15.0 * 12 / 3600)


def test_the_plan_says_which_runs_were_started_and_resume(monkeypatch, tmp_path, capsys):
    """LSTM Table 2's enhanced row: two runs stopped mid test pass read '0/5 finished' as if never begun."""
    from rnnbench.compose import compose_config

    module = _module()
    monkeypatch.setattr(module, "finished", lambda experiment, job, extra, committed: None)
    extra = [f"paths.runs_dir={tmp_path}"]
    experiment = "lstm_odyssey_table2_large_bi_resv2"
    plans = [ExperimentPlan(experiment, compose_config([f"experiment={experiment}", *extra]), ["2l_bilstm"])]
    (line,) = module.plan(plans, extra, None)
    assert line["started"] == 0
    _, jobs = module.protocol_jobs(experiment, plans[0][1], "2l_bilstm", extra, None)
    folder = module.run_dir(module.job_config(experiment, jobs[1], extra))
    folder.mkdir(parents=True)
    (folder / module.LAST).write_bytes(b"")
    (line,) = module.plan(plans, extra, None)
    assert line["started"] == 1
    module.print_plan([line])
    assert "1 of them started (they resume)" in capsys.readouterr().out


def test_runs_are_priced_only_from_runs_of_the_same_settings(monkeypatch):
    """LSTM Table 2: the Large 2-LSTM (hidden 360) was priced from the Baseline 2-LSTM's runs (hidden
    120: 0.31 CPU h, a quarter of its cost) because both are `2l_lstm`; the cost key tells them apart,
    and runs that differ only in seed and learning rate share it."""
    from rnnbench.compose import compose_config

    module = _module()
    protocol = module.protocol
    base = compose_config(["experiment=lstm_odyssey_table2_baseline"])
    seed1, seed2 = (module.job_config("lstm_odyssey_table2_baseline", protocol.Job("2l_lstm", s, lr, "final"), [])
                    for s, lr in ((1, 1e-4), (2, 3e-4)))
    assert module.cost_keys(seed1) == module.cost_keys(seed2) == module.cost_keys_of("lstm_odyssey_table2_baseline", base, "2l_lstm", [])
    large = compose_config(["experiment=lstm_odyssey_table2_large"])
    assert not set(module.cost_keys_of("lstm_odyssey_table2_large", large, "2l_lstm", [])) & set(module.cost_keys(seed1))
    # RCRN Table 1: two Amazon domains share the model key (priced from each other), not the data key
    mr, apparel = (module.cost_keys_of(e, compose_config([f"experiment={e}"]), "rcrn", []) for e in ("rcrn_table1_mr", "rcrn_table1_apparel"))
    assert mr[0] == apparel[0] and mr[1] != apparel[1]
    # --until: the same model and data, else the same model, else the table's longest run
    import time

    deadline = module.Deadline(at=time.time() + 600)
    deadline.note(mr, {"seconds_per_epoch": 100.0, "epochs_run": 3})  # 300 s
    deadline.note(("other model", "other model, other data"), {"seconds_per_epoch": 100.0, "epochs_run": 20})  # 2000 s
    assert deadline.allows(apparel) and not deadline.allows(("a third model", "its data"))
    deadline.note(apparel, {"seconds_per_epoch": 100.0, "epochs_run": 5})  # 500 s: too long for what is left
    assert not deadline.allows(apparel) and deadline.allows(mr)  # mr is priced from its own data first (300 s)

    baseline_run = {"seconds_per_epoch": 36.0, "epochs_run": 30, "dev": {"accuracy": 0.84}}
    monkeypatch.setattr(module, "finished", lambda experiment, job, extra, committed: baseline_run if experiment.endswith("baseline") else None)
    monkeypatch.setattr(module.DEADLINE, "device", "cpu")
    plans = [ExperimentPlan("lstm_odyssey_table2_baseline", base, ["2l_lstm"]), ExperimentPlan("lstm_odyssey_table2_large", large, ["2l_lstm"])]
    baseline_line, large_line = module.plan(plans, [], None)
    assert baseline_line["per_run"] == pytest.approx(36.0 * 30 / 3600) and large_line["per_run"] is None


@pytest.mark.parametrize("experiment, waits", [("fhe_table4_small", False), ("rcrn_table5", True)])
def test_final_seeds_wait_for_the_selection_runs_only_when_a_rate_is_chosen(monkeypatch, tmp_path, experiment, waits):
    """Another worker holds the selection runs: with one rate the final seeds start at once (their
    rate cannot change); with a grid they wait for the dev scores that choose it."""
    from rnnbench.compose import compose_config
    from rnnbench.errors import RunInProgress

    module = _module()
    started = []

    def train(cfg):
        started.append(int(cfg.seed))
        raise RunInProgress("held by another worker")  # every run is locked elsewhere: nothing trains here

    def sleep(_):
        raise AssertionError("waited for a selection run")

    monkeypatch.setattr(module, "train", train)
    monkeypatch.setattr(module, "finished", lambda *args: None)
    monkeypatch.setattr(module.time, "sleep", sleep)
    base = compose_config([f"experiment={experiment}"])
    encoder = "lstm1" if experiment.startswith("fhe") else "bilstm"
    if waits:
        with pytest.raises(AssertionError, match="waited"):
            module.run_missing(experiment, base, [encoder], [], evidence.CommittedEvidence(tmp_path / "none.csv", tmp_path / "none.items.csv.xz"))
    else:
        assert module.run_missing(experiment, base, [encoder], [], evidence.CommittedEvidence(tmp_path / "none.csv", tmp_path / "none.items.csv.xz")) == 0
        assert started == [1, 2, 3]  # both selection seeds tried (locked: skipped), then the final seed


def test_a_worker_waiting_for_a_selection_run_first_starts_the_free_ones_at_its_rate(monkeypatch, tmp_path, capsys):
    """Two workers extending a grid past its edge: one holds seed 1 at the new rate. The other
    used to wait on seed 1 (saying so at every poll) and leave seed 2 for later; it now trains
    seed 2 first, then waits, saying each once."""
    from rnnbench.campaign import protocol
    from rnnbench.errors import RunInProgress

    module = _module()
    done, events = {}, []
    record = {"seconds_per_epoch": 1.0, "epochs_run": 1, "dev": {"map": 0.7}}

    def train(cfg):
        if int(cfg.seed) == 1:
            events.append("held 1")
            raise RunInProgress("held by another worker")
        events.append(f"trained {int(cfg.seed)}")
        done[int(cfg.seed)] = record
        return record

    def sleep(_):
        events.append("slept")
        if events.count("slept") == 2:
            done[1] = record  # the other worker finishes seed 1 while this one polls

    monkeypatch.setattr(module, "train", train)
    monkeypatch.setattr(module, "finished", lambda experiment, job, extra, committed: done.get(job.seed))
    monkeypatch.setattr(module.time, "sleep", sleep)
    committed = evidence.CommittedEvidence(tmp_path / "none.csv", tmp_path / "none.items.csv.xz")
    job = protocol.Job("rcrn", 1, 1.0, "select")
    assert module.fetch_selection("rcrn_table8_wikiqa", job, [], committed) is record
    assert events == ["held 1", "trained 2", "held 1", "slept", "held 1", "slept"]
    out = capsys.readouterr().out
    assert out.count("== rcrn_table8_wikiqa: rcrn seed 1 lr 1 (select)") == 2  # the free pass, then the wait: not at every poll
    assert out.count("waiting for it: held by another worker") == 1


def test_a_worker_runs_the_other_encoders_before_waiting_for_a_held_selection_run(monkeypatch, tmp_path, capsys):
    """Another worker holds the BiLSTM's last selection run: this one used to wait for it while
    RCRN's final seeds, whose rate was known, stayed untouched; it now trains them first."""
    from rnnbench.compose import compose_config
    from rnnbench.errors import RunInProgress

    module = _module()
    dev = {0.1: 0.6, 0.2: 0.7, 0.5: 0.65}  # an interior choice, 0.2, for both encoders
    done = {(enc, seed, lr): {"seconds_per_epoch": 1.0, "epochs_run": 1, "dev": {"map": dev[lr]}}
            for enc in ("bilstm", "rcrn") for seed in (1, 2) for lr in dev if (enc, seed, lr) != ("bilstm", 1, 0.5)}
    events = []

    def train(cfg):
        key = (str(cfg.encoder.name), int(cfg.seed), float(cfg.trainer.lr))
        if key == ("bilstm", 1, 0.5):
            raise RunInProgress("held by another worker")
        events.append(f"trained {key[0]} {key[1]}")
        done[key] = {"seconds_per_epoch": 1.0, "epochs_run": 1, "dev": {"map": 0.7}}
        return done[key]

    def sleep(_):
        events.append("slept")
        done[("bilstm", 1, 0.5)] = {"seconds_per_epoch": 1.0, "epochs_run": 1, "dev": {"map": dev[0.5]}}

    monkeypatch.setattr(module, "train", train)
    monkeypatch.setattr(module, "finished", lambda experiment, job, extra, committed: done.get((job.encoder, job.seed, job.lr)))
    monkeypatch.setattr(module.time, "sleep", sleep)
    base = compose_config(["experiment=rcrn_table8_wikiqa"])
    assert list(base.table.protocol.lr_grid) == [0.1, 0.2, 0.5]
    committed = evidence.CommittedEvidence(tmp_path / "none.csv", tmp_path / "none.items.csv.xz")
    assert module.run_missing("rcrn_table8_wikiqa", base, ["bilstm", "rcrn"], [], committed) == 0
    assert events == ["trained rcrn 3", "trained rcrn 4", "trained rcrn 5", "slept",
                      "trained bilstm 3", "trained bilstm 4", "trained bilstm 5"]
    assert capsys.readouterr().out.count("waiting for it: held by another worker") == 1


def test_lstm_table2s_large_rows_are_left_out_and_its_enhanced_row_is_not():
    """The enhanced row's experiment inherits from the Large rows' experiments: it must not inherit their table.not_run."""
    from rnnbench.compose import compose_config

    module = _module()
    names = ["lstm_odyssey_table2_baseline", "lstm_odyssey_table2_large", "lstm_odyssey_table2_large_bi", "lstm_odyssey_table2_large_bi_resv2"]
    plans = [ExperimentPlan(n, compose_config([f"experiment={n}"]), module.sweep_of(n)) for n in names]
    assert set(module.left_out_rows(plans)) == {("2l_lstm", "large"), ("2l_bilstm", "large")}


def test_the_plan_marks_prices_read_off_other_data(monkeypatch):
    """RCRN Table 1: the ten domains not yet run were priced at the mean of the six done ones,
    though their training data is 1.0x to 2.5x Sports'; the plan now says the price is borrowed."""
    from rnnbench.compose import compose_config

    module = _module()
    record = {"seconds_per_epoch": 60.0, "epochs_run": 10, "hardware": {"device": "cpu"}, "dev": {"accuracy": 0.8}}
    monkeypatch.setattr(module, "finished", lambda experiment, job, extra, committed: record if experiment != "rcrn_table1_baby" else None)
    monkeypatch.setattr(module.DEADLINE, "device", "cpu")
    plans = [ExperimentPlan(e, compose_config([f"experiment={e}"]), ["bilstm"]) for e in ("rcrn_table1_mr", "rcrn_table1_baby")]
    mr, baby = module.plan(plans, [], None)
    assert mr["per_run"] == baby["per_run"] == pytest.approx(60.0 * 10 / 3600)
    assert (mr["other_data"], baby["other_data"]) == (False, True)


def test_the_plan_prices_from_the_tables_committed_runs_on_a_fresh_machine(monkeypatch, tmp_path, capsys):
    """A fresh machine (no run folders) planning only the Amazon domains not yet run
    priced nothing, though the table's committed CSV held 87 runs of the same encoders."""
    from rnnbench.compose import compose_config

    module = _module()
    header = "model,encoder,variant,dataset,metric,scale,seed,run,dev,seconds_per_epoch,epochs_run,device,hardware\n"
    rows = ["BiLSTM,bilstm,,Baby,accuracy,100.0,1,s1-aaa,0.8,36.0,10,cpu,Intel Xeon",  # hardware: the processor's name
            "BiLSTM,bilstm,,Baby,accuracy,100.0,2,s2-bbb,0.8,36.0,20,cpu,Intel Xeon",
            "BiLSTM,bilstm,,Baby,accuracy,100.0,3,s3-ccc,0.8,6.0,10,cuda,NVIDIA H100",  # another kind of device: not a CPU price
            "RCRN,rcrn,,Baby,accuracy,100.0,1,s1-ddd,0.8,360.0,10,cpu,Intel Xeon"]  # another encoder
    (tmp_path / "t.csv").write_text(header + "\n".join(rows) + "\n")
    committed = evidence.CommittedEvidence(tmp_path / "t.csv", tmp_path / "t.items.csv.xz")
    _no_run_folders_on_cpu(monkeypatch, module)
    plans = [ExperimentPlan("rcrn_table1_electronics", compose_config(["experiment=rcrn_table1_electronics"]), ["bilstm", "3l_bilstm"])]
    bilstm, deep = module.plan(plans, [], committed)
    assert bilstm["per_run"] == pytest.approx((36.0 * 10 + 36.0 * 20) / 2 / 3600)
    assert bilstm["other_data"] is True
    assert deep["per_run"] is None  # no committed run of 3l_bilstm: still unknown, and said so
    module.print_plan([bilstm, deep])
    out = capsys.readouterr().out
    assert "0.15*" in out and "no finished run on cpu to estimate 3l_bilstm from" in out
    assert (None, None) == tuple(line["per_run"] for line in module.plan(plans, [], None))


def test_a_row_run_on_its_data_at_another_variant_is_priced_from_those_runs_by_the_variants_ratio(monkeypatch, tmp_path, capsys):
    """RCRN Table 1 at rung 1: the eight domains not yet run there were priced from MR's and Apparel's
    rung-1 runs (MR a tenth of Electronics' data), half of what the rung cost. Each domain's rung-0
    runs times the encoder's rung-1 over rung-0 cost on the domains run at both price it now."""
    from rnnbench.compose import compose_config

    module = _module()
    header = "model,encoder,variant,dataset,metric,scale,seed,run,dev,seconds_per_epoch,epochs_run,device,hardware\n"
    rows = ["BiLSTM,bilstm,,Apparel,accuracy,100.0,1,s1-aaa,0.8,36.0,10,cpu,AMD EPYC",  # Apparel at rung 0: 0.1 CPU h
            "BiLSTM,bilstm,rung1,Apparel,accuracy,100.0,1,s1-bbb,0.8,36.0,5,cpu,AMD EPYC",  # at rung 1: 0.05, half
            "BiLSTM,bilstm,,Electronics,accuracy,100.0,1,s1-ccc,0.8,360.0,10,cpu,AMD EPYC",  # Electronics at rung 0: 1.0
            "RCRN,rcrn,,Electronics,accuracy,100.0,1,s1-ddd,0.8,720.0,10,cpu,AMD EPYC"]  # RCRN: no rung-1 run anywhere
    (tmp_path / "rcrn_table1.csv").write_text(header + "\n".join(rows) + "\n")
    committed = evidence.CommittedEvidence(tmp_path / "rcrn_table1.csv", tmp_path / "rcrn_table1.items.csv.xz")
    _no_run_folders_on_cpu(monkeypatch, module)
    plans = [ExperimentPlan(e, compose_config([f"experiment={e}"]), ["bilstm", "rcrn"])
             for e in ("rcrn_table1_electronics_rung1", "rcrn_table1_camera_photo_rung1")]
    bilstm, rcrn, camera, _ = module.plan(plans, [], committed)
    assert bilstm["per_run"] == pytest.approx(1.0 * 0.05 / 0.1) and bilstm["from_same_data"] and not bilstm["other_data"]
    assert not rcrn["from_same_data"]  # no ratio: no rung-1 run of RCRN on any data (a later rule prices it)
    assert camera["per_run"] == pytest.approx(0.05) and camera["other_data"] and not camera["from_same_data"]  # no Camera run
    module.print_plan([bilstm])
    assert "0.5^" in capsys.readouterr().out


def test_a_row_with_no_run_at_its_variant_is_priced_from_another_variant_by_another_encoders_ratio(monkeypatch, tmp_path, capsys):
    """FHE Table 4 at 200,000 training sequences: the FHE row (no run yet) read "?" though its 20,000-sequence
    runs and the LSTM2's runs at both budgets were committed. FHE's 20k cost times the LSTM2's 200k/20k ratio
    prices it; of several such estimates the largest; none where no other encoder has runs at both variants."""
    from rnnbench.compose import compose_config

    module = _module()
    header = "model,encoder,variant,dataset,metric,scale,seed,run,dev,seconds_per_epoch,epochs_run,device,hardware\n"
    rows = ["FHE,fhe,small,len200,accuracy,100.0,1,s1-aaa,0.8,36.0,50,cpu,AMD EPYC",  # FHE at 20k: 0.5 CPU h
            "LSTM2,lstm2,small,len200,accuracy,100.0,1,s1-bbb,0.8,36.0,40,cpu,AMD EPYC",  # LSTM2 at 20k: 0.4
            "LSTM2,lstm2,small200k,len200,accuracy,100.0,1,s1-ccc,0.8,288.0,25,cpu,AMD EPYC",  # LSTM2 at 200k: 2.0 (5x)
            "LSTM1,lstm1,small,len200,accuracy,100.0,1,s1-ddd,0.8,36.0,20,cpu,AMD EPYC",  # LSTM1 at 20k: 0.2
            "LSTM1,lstm1,small200k,len200,accuracy,100.0,1,s1-eee,0.8,72.0,20,cpu,AMD EPYC",  # LSTM1 at 200k: 0.4 (2x)
            "FHE,fhe,small_lambda1,len200,accuracy,100.0,1,s1-fff,0.8,3600.0,50,cpu,AMD EPYC"]  # no other encoder here: no ratio
    (tmp_path / "fhe_table4.csv").write_text(header + "\n".join(rows) + "\n")
    committed = evidence.CommittedEvidence(tmp_path / "fhe_table4.csv", tmp_path / "fhe_table4.items.csv.xz")
    _no_run_folders_on_cpu(monkeypatch, module)
    base = compose_config(["experiment=fhe_table4_small200k_fhe", f"paths.results_dir={tmp_path}"])
    (fhe,) = module.plan([ExperimentPlan("fhe_table4_small200k_fhe", base, ["fhe"])], [], committed)
    assert fhe["per_run"] == pytest.approx(0.5 * 2.0 / 0.4) and fhe["from_variant"] and not fhe["from_ladder"]
    module.print_plan([fhe])
    assert "2.5~" in capsys.readouterr().out
    assert module.priced_from_another_variant("fhe", "", 1, committed) is None  # the paper's size: no encoder has run it
    assert module.priced_from_another_variant("fhe", "small200k", 1, None) is None


def test_a_table_at_a_rung_of_the_ladder_is_priced_from_the_ladders_runs_at_that_rung(monkeypatch, tmp_path, capsys):
    """RCRN Table 3 at rung 2 (every encoder, no run yet) was "no CPU estimate yet"; rung 0's price
    would mislead (a rung-4 BiLSTM run cost 33 times a rung-0 one). The ladder's BiLSTM runs at the
    rung price it, times each encoder's cost over the BiLSTM's in the committed rung-0 runs."""
    from rnnbench.compose import compose_config
    from rnnbench.campaign import pricing

    module = _module()
    header = "model,encoder,variant,dataset,metric,scale,seed,run,dev,seconds_per_epoch,epochs_run,device,hardware\n"
    rows = ["BiLSTM,bilstm,,SST-2,accuracy,100.0,1,s1-aaa,0.8,36.0,10,cpu,AMD EPYC",  # rung 0: 0.1 CPU h
            "RCRN,rcrn,,SST-2,accuracy,100.0,1,s1-bbb,0.8,108.0,10,cpu,AMD EPYC"]  # rung 0: 3 times the BiLSTM
    (tmp_path / "rcrn_table3.csv").write_text(header + "\n".join(rows) + "\n")
    ladder = ["table,reference,experiment,encoder,variant,rung,status,cpu_hours,run",
              "rcrn_table3,bilstm,rcrn_table3,bilstm,,2,trained,0.2,r2-a",
              "rcrn_table3,bilstm,rcrn_table3,bilstm,,2,trained,0.4,r2-b",
              "rcrn_table3,bilstm,rcrn_table3,bilstm,,3,trained,5.0,r3-a"]  # another rung: not this price
    (tmp_path / "regime_ladder.runs.csv").write_text("\n".join(ladder) + "\n")
    committed = evidence.CommittedEvidence(tmp_path / "rcrn_table3.csv", tmp_path / "rcrn_table3.items.csv.xz")
    _no_run_folders_on_cpu(monkeypatch, module)
    base = compose_config(["experiment=rcrn_table3_rung2", f"paths.results_dir={tmp_path}"])
    bilstm, rcrn, deep = module.plan([ExperimentPlan("rcrn_table3_rung2", base, ["bilstm", "rcrn", "3l_bilstm"])], [], committed)
    assert bilstm["per_run"] == pytest.approx(0.3) and rcrn["per_run"] == pytest.approx(0.9)
    assert deep["per_run"] is None  # no committed rung-0 run of the 3L-BiLSTM to scale by: unknown, as before
    module.print_plan([bilstm, rcrn])
    assert "0.9+" in capsys.readouterr().out
    (tmp_path / "rcrn_table3.csv").write_text(header)  # no CPU run at rung 0 (RCRN Table 4's were on a GPU)
    committed = evidence.CommittedEvidence(tmp_path / "rcrn_table3.csv", tmp_path / "rcrn_table3.items.csv.xz")
    bilstm, rcrn = module.plan([ExperimentPlan("rcrn_table3_rung2", base, ["bilstm", "rcrn"])], [], committed)
    assert bilstm["per_run"] == pytest.approx(0.3) and rcrn["per_run"] is None  # the reference row needs no ratio
    assert pricing.rung_of("ap_rung3") == ("ap", 3) and pricing.rung_of("rung2") == ("", 2) and pricing.rung_of("ap") == ("ap", 0) and pricing.rung_of("rcrn_table3_rung2") == ("rcrn_table3", 2)


def test_a_rung_with_no_cpu_run_at_rung_0_takes_the_encoders_ratio_from_the_other_tables(monkeypatch, tmp_path, capsys):
    """RCRN Table 4 at rung 2: its rung-0 runs were all on a GPU, so the 3L-BiLSTM and RCRN read "?".
    The ratio of each encoder's cost to the BiLSTM's in the other tables (each variant apart) prices
    them, at the median, and the plan says the spread; the table's own GPU runs, benchmark rows and
    superseded files give no ratio. Once the table has BiLSTM runs at the rung, they, not the
    ladder's, are what the ratio multiplies."""
    from rnnbench.compose import compose_config

    module = _module()
    module._costs_by_table.cache_clear()
    header = "format,model,encoder,variant,dataset,metric,scale,seed,run,dev,seconds_per_epoch,epochs_run,device,hardware\n"
    (tmp_path / "rcrn_table4.csv").write_text(header + "2,RCRN,rcrn,,IMDb,accuracy,100.0,1,s1-g,0.8,36.0,10,cuda,NVIDIA H100\n"
                                              "2,BiLSTM,bilstm,,IMDb,accuracy,100.0,1,s1-h,0.8,36.0,10,cuda,NVIDIA H100\n")
    cpu = "2,{m},{e},{v},SST,accuracy,100.0,1,{r},0.8,{s},10,cpu,AMD EPYC"
    (tmp_path / "rcrn_table2.csv").write_text(header + "\n".join([
        cpu.format(m="BiLSTM", e="bilstm", v="", r="a", s=36.0), cpu.format(m="RCRN", e="rcrn", v="", r="b", s=72.0),  # 2x
        cpu.format(m="BiLSTM", e="bilstm", v="rung3", r="c", s=36.0), cpu.format(m="RCRN", e="rcrn", v="rung3", r="d", s=144.0),  # 4x
        cpu.format(m="RCRN", e="rcrn", v="other", r="e", s=36.0)]) + "\n")  # no BiLSTM at this variant: no ratio
    (tmp_path / "rcrn_table5.csv").write_text(header + cpu.format(m="BiLSTM", e="bilstm", v="", r="f", s=36.0) + "\n"
                                              + cpu.format(m="RCRN", e="rcrn", v="", r="g", s=108.0) + "\n")  # 3x
    (tmp_path / "rcrn_table5.superseded.csv").write_text(header + cpu.format(m="RCRN", e="rcrn", v="", r="x", s=9e4) + "\n")
    (tmp_path / "rcrn_table10.csv").write_text("model,encoder,variant,dataset,metric,seed,run,seconds_per_epoch,epochs_run\n"
                                               "RCRN,rcrn,,IMDb/len128,seconds,1,cost-rcrn,26.0,0\n")
    ladder = ["table,reference,experiment,encoder,variant,rung,status,cpu_hours,run",
              "rcrn_table4,bilstm,rcrn_table4,bilstm,,2,trained,0.5,r2-a"]
    (tmp_path / "regime_ladder.runs.csv").write_text("\n".join(ladder) + "\n")
    committed = evidence.CommittedEvidence(tmp_path / "rcrn_table4.csv", tmp_path / "rcrn_table4.items.csv.xz")
    _no_run_folders_on_cpu(monkeypatch, module)
    base = compose_config(["experiment=rcrn_table4_rung2", f"paths.results_dir={tmp_path}"])
    bilstm, rcrn, deep = module.plan([ExperimentPlan("rcrn_table4_rung2", base, ["bilstm", "rcrn", "3l_bilstm"])], [], committed)
    assert bilstm["per_run"] == pytest.approx(0.5) and not bilstm["ratio_elsewhere"]
    assert rcrn["per_run"] == pytest.approx(0.5 * 3.0) and rcrn["ratio_elsewhere"] == pytest.approx((2.0, 3.0, 4.0, 3))
    assert deep["per_run"] is None  # no table has run the 3L-BiLSTM: still unknown
    module.print_plan([bilstm, rcrn])
    out = capsys.readouterr().out
    assert "1.5=" in out and "rcrn: 3 ratios from 2 to 4, so 9-18 CPU h" in out
    # The table's own BiLSTM runs at the rung (another machine than the ladder's: a quarter of its
    # price) price RCRN from then on, at the same ratio.
    bilstm_run = {"dev": {"accuracy": 0.8}, "seconds_per_epoch": 45.0, "epochs_run": 10, "device": "cpu"}  # 0.125 CPU h
    monkeypatch.setattr(module, "finished", lambda experiment, job, extra, committed: bilstm_run if job.encoder == "bilstm" else None)
    bilstm, rcrn = module.plan([ExperimentPlan("rcrn_table4_rung2", base, ["bilstm", "rcrn"])], [], committed)
    assert bilstm["per_run"] == pytest.approx(0.125) and rcrn["per_run"] == pytest.approx(0.125 * 3.0)
    assert rcrn["ratio_elsewhere"] == pytest.approx((2.0, 3.0, 4.0, 3))
    module._costs_by_table.cache_clear()


def _dev_rising_as_the_rate_falls(job):
    """A selection run's record whose dev accuracy keeps improving as the rate falls."""
    return {"dev": {"accuracy": 0.5 - job.lr}, "seconds_per_epoch": 60.0, "epochs_run": 10, "hardware": {"device": "cpu"}}


def test_the_sweep_extends_the_grid_past_the_edge_until_the_limit_then_runs_the_final_seeds(monkeypatch):
    """MZU Table 6: mzu_cap chose 5e-4, the smallest rate of {2e-3, 1e-3, 5e-4}, with dev still rising.
    The sweep runs the selection seeds one step past the edge (x0.5) and chooses again, here up to
    the limit of 2 extensions, then runs the final seeds at the rate chosen last."""
    from rnnbench.compose import compose_config

    module = _module()
    ran = []

    def ensure(experiment, job, extra, wait, committed):
        ran.append((job.seed, job.lr, job.phase))
        return _dev_rising_as_the_rate_falls(job)

    monkeypatch.setattr(module, "ensure", ensure)
    base = compose_config(["experiment=mzu_table6_laptop", "table.protocol.max_grid_extensions=2"])
    assert module.run_missing("mzu_table6_laptop", base, ["mzu_cap"], [], None) == 0
    assert [lr for _, lr, phase in ran if phase == "select"][-4:] == [2.5e-4, 2.5e-4, 1.25e-4, 1.25e-4]
    assert [(seed, lr) for seed, lr, phase in ran if phase == "final"] == [(3, 1.25e-4), (4, 1.25e-4), (5, 1.25e-4)]
    lr, choice = module.chosen_lr("mzu_table6_laptop", base, "mzu_cap", [], None, run=lambda experiment, job: ensure(experiment, job, [], False, None))
    assert lr == 1.25e-4 and choice.statement().endswith("limit of 2 extension(s) hit at 0.000125: still at the edge")


def test_the_plan_prices_the_selection_runs_past_the_grids_edge(monkeypatch, capsys):
    """Before the extension runs exist, the choice is the grid's edge (provisional) and the plan counts
    and prices the two selection runs one step past it."""
    from rnnbench.compose import compose_config

    module = _module()
    grid = {2e-3, 1e-3, 5e-4}
    monkeypatch.setattr(module, "finished", lambda experiment, job, extra, committed:
                        _dev_rising_as_the_rate_falls(job) if job.lr in grid else None)
    monkeypatch.setattr(module, "started_runs", lambda experiment, jobs, extra: 0)
    monkeypatch.setattr(module.DEADLINE, "device", "cpu")
    plans = [ExperimentPlan("mzu_table6_laptop", compose_config(["experiment=mzu_table6_laptop"]), ["mzu_cap"])]
    (line,) = module.plan(plans, [], None)
    assert line["extension"] == 2.5e-4
    assert (line["total"], line["finished"], line["to_run"]) == (6 + 2 + 3, 6 + 3, 2)  # the finals ran at 5e-4
    assert line["per_run"] == pytest.approx(60.0 * 10 / 3600)
    module.print_plan([line])
    assert "grid extended past its edge to 0.00025: its selection runs are counted" in capsys.readouterr().out
    assert module.known_lr("mzu_table6_laptop", plans[0][1], "mzu_cap", [], None) == 5e-4  # reported, provisionally


def _committed_run(module, tmp_path, experiment, job, curve, epochs_run, cap, status=""):
    """A committed CSV holding one run of ``job`` (its real folder name) with a dev accuracy curve."""
    cfg = module.job_config(experiment, job, [])
    row = {"model": "BiLSTM", "encoder": job.encoder, "variant": "", "dataset": "TREC", "metric": "accuracy", "scale": 100.0,
           "seed": job.seed, "lr": job.lr, "phase": job.phase, "reported": "yes", "dev": max(curve) / 100, "test": 0.5,
           "selected_epoch": 1, "epoch_cap": cap, "epochs_run": epochs_run, "seconds_per_epoch": 10.0, "threads": 1,
           "device": "cpu", "dev_curve": ";".join(repr(v / 100) for v in curve), "run": module.run_dir(cfg).name, "status": status}
    evidence.write_csv(tmp_path / "t.csv", [row])
    return evidence.CommittedEvidence(tmp_path / "t.csv", tmp_path / "t.items.csv.xz")


def test_a_committed_run_the_patience_rule_would_change_is_marked_and_run_again(monkeypatch, tmp_path, capsys):
    """A run made before the rule whose dev score never beat the majority-class score (21.3% on TREC's
    dev split: the share of its most common class) and that early stopping ended before its cap:
    the rule would have trained it on. It needs a re-run: --plan counts it, the sweep trains it."""
    module = _module()
    monkeypatch.setattr(module, "majority_of", lambda cfg: 0.2128)
    job = module.protocol.Job("bilstm", 3, 1e-3, "final")
    at_chance = _committed_run(module, tmp_path, "rcrn_table5", job, [21.28, 20.0, 21.28, 19.0, 21.0], 5, 50)
    record = module.finished("rcrn_table5", job, [], at_chance)
    assert record["status"] == "needs re-run" and not module.is_done(record)
    trained = []
    monkeypatch.setattr(module, "train", lambda cfg: trained.append(int(cfg.seed)) or {"dev": {"accuracy": 0.8}})
    assert module.ensure("rcrn_table5", job, [], False, at_chance) == {"dev": {"accuracy": 0.8}} and trained == [3]
    # the same curve run to its cap: the rule changes nothing, the run did not train
    assert module.finished("rcrn_table5", job, [], _committed_run(module, tmp_path, "rcrn_table5", job, [21.28, 20.0], 2, 2))["status"] == "did not train"
    # one epoch above the baseline: trained, under either rule
    assert module.finished("rcrn_table5", job, [], _committed_run(module, tmp_path, "rcrn_table5", job, [21.28, 30.0, 25.0], 3, 50))["status"] == "trained"
    # rows written under the rule carry their status: no data is read to judge them
    monkeypatch.setattr(module, "majority_of", lambda cfg: pytest.fail("read the dev split"))
    assert module.finished("rcrn_table5", job, [], _committed_run(module, tmp_path, "rcrn_table5", job, [21.0], 1, 50, "trained"))["status"] == "trained"


def test_a_run_folder_made_before_the_rule_is_reopened_to_train_on(monkeypatch, tmp_path, capsys):
    """A finished run folder whose record the rule would change: the record is set aside and the run
    resumes from its last checkpoint (where the loop goes on: tests/training/test_loop.py)."""
    import json

    module = _module()
    monkeypatch.setattr(module, "majority_of", lambda cfg: 0.5)
    extra = [f"paths.runs_dir={tmp_path / 'runs'}"]
    job = module.protocol.Job("bilstm", 1, 1e-3, "select")
    folder = module.run_dir(module.job_config("rcrn_table5", job, extra))
    folder.mkdir(parents=True)
    old = {"identity": "x", "test": {"accuracy": 0.5}, "dev": {"accuracy": 0.5}, "epochs_run": 5, "config": {"trainer": {"epochs": 50}},
           "history": [{"dev_accuracy": 0.5}] * 5}
    (folder / "record.json").write_text(json.dumps(old))
    (folder / "done").touch()
    committed = evidence.CommittedEvidence(tmp_path / "none.csv", tmp_path / "none.items.csv.xz")
    assert module.finished("rcrn_table5", job, extra, committed)["status"] == "needs re-run"
    monkeypatch.setattr(module, "train", lambda cfg: {"dev": {"accuracy": 0.7}})
    assert module.ensure("rcrn_table5", job, extra, False, committed)["dev"]["accuracy"] == 0.7
    assert not (folder / "done").exists() and not (folder / "record.json").exists()
    assert len(list(folder.glob("record.json.damaged-*"))) == 1
    assert f"re-running {folder}: early stopping ended it before its dev score beat the majority-class baseline" in capsys.readouterr().out


@pytest.mark.slow  # three smoke training runs
def test_the_table_stores_the_chosen_rate_and_says_how_the_grid_was_extended(tmp_path, capsys):
    """End to end: a two-rate grid always chooses an edge; with one extension allowed the sweep runs
    the selection seed at the rate past it, and the CSV stores the choice and its statement, which
    the table prints (the synthetic task's metric has no majority-class baseline: every run trained)."""
    main = _make_table()
    base = ["--set", "trainer=smoke", "--set", "trainer.max_eval_batches=null", "--set", "hydra.sweeper.params.encoder=bilstm",
            "--set", "table.protocol.seeds=[1]", "--set", "table.protocol.select_seeds=1", "--set", "table.protocol.lr_grid=[1e-3,3e-4]",
            "--set", "table.protocol.max_grid_extensions=1",
            "--set", f"paths.runs_dir={tmp_path / 'runs'}", "--set", f"paths.results_dir={tmp_path / 'results'}"]
    assert main(["synthetic_span_copy", *base]) == 0
    started = [line for line in capsys.readouterr().out.splitlines() if line.startswith("== ")]
    assert len(started) == 3 and started[2].split(" lr ")[1] in ("0.002 (select)", "0.00015 (select)")
    rows = evidence.read_csv(tmp_path / "results" / "synthetic_span_copy.csv")
    chosen = {r["chosen_lr"] for r in rows}
    (statement,) = {RateChoice.from_columns(r).statement() for r in rows}
    assert {(r["lr_extensions"], r["lr_extension_limit"], len(r["lr_grid"].split(";"))) for r in rows} == {(1, 1, 3)}
    assert len(chosen) == 1 and {r["lr"] for r in rows if r["reported"] == "yes"} == chosen
    assert statement.startswith("grid extended to {") and ("choice interior" in statement or "still at the edge" in statement)
    assert {r["status"] for r in rows} == {"trained"} and {r["majority"] for r in rows} == {""}
    md = (tmp_path / "results" / "synthetic_span_copy.md").read_text()
    assert statement in md and "the grid extended one step past the edge the choice sits at" in md


def test_the_plan_marks_a_row_the_sanity_gate_refuses_and_leaves_it_out_of_the_total(monkeypatch, capsys):
    module = _module()
    monkeypatch.setattr(module, "finished", lambda experiment, job, extra, committed: None)
    monkeypatch.setattr(module, "started_runs", lambda experiment, jobs, extra: 0)

    class Gate:
        def off(self):
            return False

        def known_failures(self, experiment, encoder, extra, base=None):
            return ["memorisation: 78% after 300 steps"] if encoder == "mzu_cap" else []

    from rnnbench.compose import compose_config

    plans = [ExperimentPlan("mzu_table6_laptop", compose_config(["experiment=mzu_table6_laptop"]), ["bilstm", "mzu_cap"])]
    lines = module.plan(plans, [], None, Gate())
    assert [line["refused"] for line in lines] == [[], ["memorisation: 78% after 300 steps"]]
    module.print_plan(lines)
    out = capsys.readouterr().out
    assert "refused by the sanity gate (memorisation: 78% after 300 steps): not in the total" in out
    assert out.splitlines()[-1].startswith(f"{lines[0]['to_run']} run(s) to run")  # the refused row's runs are not counted


def test_an_experiment_borrowing_its_own_learning_rate_is_a_config_error():
    from rnnbench.campaign.rates import chosen_lr
    from rnnbench.compose import compose_config
    from rnnbench.errors import ConfigError

    base = compose_config(["experiment=rcrn_table1_apparel", "++table.protocol.lr_from=rcrn_table1_apparel"])
    with pytest.raises(ConfigError, match="lr_from names the experiment itself"):
        chosen_lr("rcrn_table1_apparel", base, "bilstm", [], None)


def test_evidence_in_table_units_is_refused_with_the_command_that_rewrites_it(tmp_path, capsys):
    """Evidence written before the scale column holds table units (43.2) where the campaign reads a
    record's (0.432): refused in one line naming the file and the rewrite, never read 100 times off."""
    header = "model,encoder,variant,dataset,metric,seed,lr,phase,reported,dev,test,run\n"
    results = tmp_path / "results"
    results.mkdir()
    (results / "rcrn_table5.csv").write_text(header + "BiLSTM,bilstm,,TREC,accuracy,1,0.001,select,no,90.2,91.0,s1-aaa\n")
    assert _make_table()(["rcrn_table5", "--no-run", "--set", f"paths.results_dir={results}"]) == 2
    err = capsys.readouterr().err
    assert "rcrn_table5.csv holds evidence in table units" in err and "scripts/migrate_evidence_units.py rcrn_table5" in err


def test_the_migration_rewrites_table_units_as_the_records_and_reads_back_as_written(tmp_path):
    """scripts/migrate_evidence_units.py: each value stored as the float whose product with the scale is
    the number written (a curve point: its six digits), so the table reads back what it read before."""
    from rnnbench.results import evidence

    migrate = load_script("migrate_evidence_units").main
    results = tmp_path / "results"
    results.mkdir()
    header = "model,encoder,variant,dataset,metric,seed,lr,phase,reported,dev,test,dev_curve,run,majority\n"
    row = "BiLSTM,bilstm,,TREC,accuracy,1,0.001,select,no,90.2,91.00000000000001,40.1235;90.2,s1-aaa,21.28\n"
    (results / "rcrn_table5.csv").write_text(header + row)
    evidence.write_items(results / "rcrn_table5.items.csv.xz",
                         [{"model": "BiLSTM", "variant": "", "dataset": "TREC", "seed": 1, "item": "4", "score": 100.0}])
    before = evidence.read_csv(results / "rcrn_table5.csv")[0]
    assert migrate(["rcrn_table5", "--results", str(results)]) == 0
    stored = evidence.read_csv(results / "rcrn_table5.csv", scaled=False)[0]
    assert stored["scale"] == 100.0 and abs(stored["dev"] - 0.902) < 1e-15 and abs(stored["majority"] - 0.2128) < 1e-15
    after = evidence.read_csv(results / "rcrn_table5.csv")[0]
    assert {k: after[k] for k in before} == before  # the same numbers, the same curve text
    assert evidence.read_items(results / "rcrn_table5.items.csv.xz")[0]["score"] == 100.0
    assert evidence.read_items(results / "rcrn_table5.items.csv.xz", scaled=False)[0]["score"] == 1.0
    assert migrate(["rcrn_table5", "--results", str(results)]) == 0  # a second time: nothing to do


def test_a_table_with_a_figure_and_no_run_yet_is_written_without_them(tmp_path, capsys):
    """FHE Table 3 names an openness figure; with no run (no CSV) `--no-run` writes the page, says
    there is no CSV and no figure yet, and does not fail reading the CSV it never wrote."""
    results = tmp_path / "results"
    code = _make_table()(["fhe_table3", "--no-run", "--set", f"paths.results_dir={results}", "--set", f"paths.runs_dir={tmp_path / 'runs'}"])
    out = capsys.readouterr().out
    assert code == 0 and (results / "fhe_table3.md").exists() and not (results / "fhe_table3.csv").exists()
    assert "(no run yet: no fhe_table3.csv)" in out and "no figure: no run of fhe_table3 yet" in out
