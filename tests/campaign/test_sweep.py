"""Mechanism sweeps (rnnbench.campaign.sweep, sweep_rule, sweep_page): the declaration's cells compose,
the rule passes and fails cells for the reasons it gives, the confirm seeds follow a passing screen,
the choice reads dev only, the page renders from the CSV alone, and one tiny sweep trains end to end."""
from __future__ import annotations

import csv
import io
import os
import subprocess
import sys

import pytest

from rnnbench.campaign import sweep, sweep_page, sweep_rule
from rnnbench.errors import RnnbenchError
from tests.helpers import REPO

SPEC = sweep_rule.load("fhe_table4_sparsity")


def test_the_declared_cells_are_the_grid_and_each_composes_with_the_experiments_rate():
    assert len(SPEC.cells) == 6 and SPEC.cells[0] == ("encoder.sparsity_penalty=reward", "encoder.sparsity_weight=0.2",
                                                     "encoder.sparsity_target=0.05")
    assert SPEC.cell_name(SPEC.cells[-1]) == "sparsity_weight=0.5 sparsity_target=0.1"  # the fixed key is left out
    lr = sweep.experiment_lr(SPEC)
    cfg = sweep.run_config(SPEC, SPEC.cells[3], 2, lr, ())
    assert (cfg.encoder.sparsity_penalty, cfg.encoder.sparsity_weight, cfg.encoder.sparsity_target) == ("reward", 0.3, 0.1)
    assert cfg.trainer.lr == lr == 1e-3 and cfg.seed == 2 and cfg.encoder.hidden_size == 64  # the small FHE row


def test_an_unknown_sweep_or_a_declaration_without_its_rule_is_one_line(tmp_path):
    with pytest.raises(RnnbenchError, match="nope: no such sweep; declared sweeps: fhe_table4_sparsity"):
        sweep_rule.load("nope")
    (tmp_path / "bad.yaml").write_text("title: t\ndeclared: d\ntable: t\nexperiment: e\nencoder: fhe\ncolumn: c\n"
                                       "grid: {encoder.x: [1]}\nscreen_seeds: [1]\nconfirm_seeds: [2]\n")
    with pytest.raises(RnnbenchError, match=r"bad.yaml: the declaration lacks 'mechanism'"):
        sweep_rule.load("bad", tmp_path)


def row(cell: int, seed: int, dev: float, shut: float, sampled: float, reference: float = 72.0, status: str = "trained") -> dict:
    return {"sweep": SPEC.name, "cell": SPEC.cell_name(SPEC.cells[cell]), "overrides": " ".join(SPEC.cells[cell]),
            "stage": "screen" if seed == 1 else "confirm", "seed": str(seed), "lr": "0.001", "dev": repr(dev), "test": "99.0",
            "thresholded": repr(shut), "gate_prob": repr(sampled - 1.0), "epsilon": "0.01", "sampled": repr(sampled),
            "reference_dev": repr(reference), "selected_epoch": "30", "epochs_run": "40", "status": status,
            "cpu_hours": "0.5000", "device": "cpu", "hardware": "AMD EPYC", "commit": "abc", "date": "2026-12-02", "run": f"s{seed}-{cell}"}


def test_the_rule_checks_the_range_the_sampled_share_and_the_accuracy():
    assert sweep_rule.judge(SPEC, [row(0, 1, 71.0, 20.0, 30.0)]).passes  # in range, within 2x, 1 point below
    open_all = sweep_rule.judge(SPEC, [row(0, 1, 71.0, 99.7, 99.0)])
    assert not open_all.in_range and "thresholded openness 99.7% outside (0%, 50%]" in open_all.why
    shut = sweep_rule.judge(SPEC, [row(0, 1, 71.0, 0.0, 13.0)])
    assert not shut.in_range and "0.0% outside" in shut.why  # no gate opens as the paper evaluates
    by_sampling = sweep_rule.judge(SPEC, [row(0, 1, 71.0, 2.5, 47.4)])
    assert not by_sampling.in_range and "sampled 47.4% not within 2x of thresholded 2.5%" in by_sampling.why
    worse = sweep_rule.judge(SPEC, [row(0, 1, 69.9, 20.0, 30.0)])
    assert worse.in_range and not worse.holds and "dev 69.9 more than 2 below the reference's 72.0" in worse.why


def test_a_passing_screen_asks_for_its_confirm_seed_and_the_best_dev_is_chosen_never_test():
    screened = [row(c, 1, 71.0, 99.0, 99.0) for c in range(6)]
    wanted, chosen, where = sweep_rule.stages(SPEC, screened[:5])
    assert [(SPEC.cells.index(c), s, st) for c, s, st in wanted] == [(5, 1, "screen")] and chosen is None
    assert where.startswith("screening: 5 of 6 cells")
    _, chosen, where = sweep_rule.stages(SPEC, screened)
    assert chosen is None and where.startswith("no cell passes the rule on the screen seeds")
    screened[2], screened[4] = row(2, 1, 71.0, 20.0, 25.0), row(4, 1, 72.5, 10.0, 12.0)
    wanted, chosen, _ = sweep_rule.stages(SPEC, screened)
    assert [(SPEC.cells.index(c), s, st) for c, s, st in wanted] == [(2, 2, "confirm"), (4, 2, "confirm")] and chosen is None
    confirmed = [*screened, row(2, 2, 73.0, 22.0, 24.0), row(4, 2, 71.0, 9.0, 11.0)]
    confirmed[-1]["test"] = "100.0"  # test never decides
    _, chosen, where = sweep_rule.stages(SPEC, confirmed)
    assert chosen == SPEC.cells[2] and where.startswith("chosen: sparsity_weight=0.3 sparsity_target=0.05")
    confirmed[-2] = row(2, 2, 73.0, 60.0, 64.0)  # cell 2 leaves the range on seed 2: its mean 40% still in range
    assert sweep_rule.stages(SPEC, confirmed)[1] == SPEC.cells[2]
    confirmed[-2] = row(2, 2, 60.0, 22.0, 24.0)  # cell 2's mean dev falls below the margin: cell 4 is chosen
    assert sweep_rule.stages(SPEC, confirmed)[1] == SPEC.cells[4]


def test_a_smoke_run_does_not_count():
    rows = [row(c, 1, 71.0, 99.0, 99.0) for c in range(5)] + [row(5, 1, 71.0, 20.0, 25.0, status="smoke")]
    wanted, _, _ = sweep_rule.stages(SPEC, rows)
    assert [(SPEC.cells.index(c), s) for c, s, _ in wanted] == [(5, 1)]


def test_the_page_renders_from_the_csv_alone_and_marks_the_choice():
    rows = [row(c, 1, 71.0, 99.0, 99.0) for c in range(6)]
    rows[2] = row(2, 1, 71.0, 20.0, 25.0)
    rows.append(row(2, 2, 72.0, 22.0, 24.0))
    text = sweep.csv_text(rows)
    page = sweep_page.render(SPEC, list(csv.DictReader(io.StringIO(text))))
    assert page == sweep_page.render(SPEC, list(csv.DictReader(io.StringIO(text))))
    assert "| sparsity_weight=0.3 sparsity_target=0.05 **(chosen)** | 1, 2 | 71.5 | 99.0 | 21.0 | 24.5 | 72.0 | yes | yes |" in page
    assert "| sparsity_weight=0.2 sparsity_target=0.05 | 1 | 71.0 | 99.0 | 99.0 | 99.0 | 72.0 | no | yes |" in page
    assert "**Where it stands**: chosen: sparsity_weight=0.3 sparsity_target=0.05" in page and "3.50 CPU h in all" in page
    assert "Runs dated 2026-12-02, code at abc;" in page  # one day: one date, not "2026-12-02 to 2026-12-02"
    rows[-1]["date"] = "2026-12-03"
    assert "Runs dated 2026-12-02 to 2026-12-03, code at" in sweep_page.render(SPEC, rows)


@pytest.mark.slow
def test_a_tiny_sweep_trains_every_screen_cell_and_writes_its_page(tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    tiny = ["--set", f"paths.runs_dir={tmp_path / 'runs'}", "--set", "trainer.epochs=1", "--set", "task.reader.train_size=100",
            "--set", "task.reader.dev_size=50", "--set", "task.reader.test_size=50"]
    command = [sys.executable, "-m", "rnnbench", "sweep", "fhe_table4_sparsity", "--out", str(tmp_path / "out"), *tiny]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = list(csv.DictReader(open(tmp_path / "out" / "fhe_table4_sparsity.runs.csv")))
    assert len(rows) == 6 and {r["stage"] for r in rows} == {"screen"} and all(r["thresholded"] != "" and r["sampled"] != "" for r in rows)
    page = (tmp_path / "out" / "fhe_table4_sparsity.md").read_text()
    again = subprocess.run([*command[:5], "--no-run", "--out", str(tmp_path / "out")], capture_output=True, text=True, env=env, cwd=REPO)
    assert again.returncode == 0 and (tmp_path / "out" / "fhe_table4_sparsity.md").read_text() == page
    planned = subprocess.run([*command, "--plan"], capture_output=True, text=True, env=env, cwd=REPO)
    assert planned.returncode == 0 and "0 run(s) now" in planned.stdout  # the screen is done; 1-epoch runs pass no cell


def test_a_sweep_at_a_variant_with_no_run_of_its_encoder_is_priced_from_another_variant(tmp_path):
    """FHE Table 4's sweep at 200,000 sequences planned "?" per run before its first: its encoder's
    20,000-sequence runs times the LSTM2's cost ratio between the budgets price it, and the plan says so."""
    spec = sweep_rule.load("fhe_table4_sparsity_200k")
    header = "model,encoder,variant,dataset,metric,scale,seed,run,dev,seconds_per_epoch,epochs_run,device,hardware\n"
    rows = ["FHE,fhe,small,len200,accuracy,100.0,1,s1-aaa,0.8,36.0,50,cpu,AMD EPYC",
            "LSTM2,lstm2,small,len200,accuracy,100.0,1,s1-bbb,0.8,36.0,40,cpu,AMD EPYC",
            "LSTM2,lstm2,small200k,len200,accuracy,100.0,1,s1-ccc,0.8,288.0,25,cpu,AMD EPYC"]
    (tmp_path / "fhe_table4.csv").write_text(header + "\n".join(rows) + "\n")
    price, scaled = sweep.price_per_run(spec, tmp_path)
    assert price == pytest.approx(0.5 * 2.0 / 0.4) and scaled
    assert sweep.price_per_run(spec, tmp_path / "none") == (None, False)


def test_the_committed_sweep_page_is_what_its_committed_evidence_gives(tmp_path):
    """Nothing stale: results/sweeps/fhe_table4_sparsity.md is what `rnnbench sweep --no-run` writes from
    the committed runs CSV (and the committed evidence its reference row is read from), byte for byte."""
    committed = REPO / "results" / "sweeps"
    (tmp_path / "fhe_table4_sparsity.runs.csv").write_bytes((committed / "fhe_table4_sparsity.runs.csv").read_bytes())
    command = [sys.executable, "-m", "rnnbench", "sweep", "fhe_table4_sparsity", "--no-run", "--out", str(tmp_path)]
    subprocess.run(command, check=True, cwd=REPO, capture_output=True)
    assert (tmp_path / "fhe_table4_sparsity.md").read_text() == (committed / "fhe_table4_sparsity.md").read_text(), \
        "results/sweeps/fhe_table4_sparsity.md is stale: `rnnbench sweep fhe_table4_sparsity --no-run` regenerates it"
