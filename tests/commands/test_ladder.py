"""rnnbench ladder (scripts/regime_ladder.py wraps it), the regime ladder's command line: --no-run
renders the Markdown from the CSV alone (deterministic, the paper gap's arithmetic), --plan runs
nothing, help loads no torch, and a bad table name is one line."""
from __future__ import annotations

import subprocess
import sys

import pytest

from rnnbench.campaign import ladder as campaign_ladder
from rnnbench.commands import ladder, main as rnnbench
from tests.campaign.test_ladder import synthetic
from tests.helpers import REPO


def test_the_markdown_renders_from_the_csv_alone_with_the_gap_to_the_paper(tmp_path):
    text = campaign_ladder.csv_text(synthetic())
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


def test_merge_adds_a_second_processs_rows_keeps_its_own_and_writes_the_page(tmp_path, capsys):
    """Two ladder processes side by side, the second with its own --out: --merge adds the second's rows
    the first lacks (a row both have keeps the first's), writes the CSV and the page, and runs nothing."""
    rows = synthetic()
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir(), second.mkdir()
    half = len(rows) // 2
    (first / "regime_ladder.runs.csv").write_text(campaign_ladder.csv_text(rows[:half]))
    changed = [{**r, "test": "1.0"} for r in rows[:1]]  # a row the first also has, with other numbers
    (second / "regime_ladder.runs.csv").write_text(campaign_ladder.csv_text(changed + rows[half:]))
    assert ladder.main(["--merge", str(second / "regime_ladder.runs.csv"), "--out", str(first)]) == 0
    assert (f"{second / 'regime_ladder.runs.csv'}: {len(rows) - half} row(s) added; 1 row(s) of it differ from this CSV's, "
            "whose are kept") in capsys.readouterr().out
    assert (first / "regime_ladder.runs.csv").read_text() == campaign_ladder.csv_text(rows)
    (tmp_path / "whole").mkdir()
    (tmp_path / "whole" / "regime_ladder.runs.csv").write_text(campaign_ladder.csv_text(rows))
    assert ladder.main(["--no-run", "--out", str(tmp_path / "whole")]) == 0
    assert (first / "regime_ladder.md").read_text() == (tmp_path / "whole" / "regime_ladder.md").read_text()
    # a file that is not there, or not a ladder's evidence, is one line; so is --merge with a run
    assert ladder.main(["--merge", str(tmp_path / "absent.csv"), "--out", str(first)]) == 2
    assert "--merge" in capsys.readouterr().err
    (tmp_path / "other.csv").write_text("table,run\nx,y\n")
    assert ladder.main(["--merge", str(tmp_path / "other.csv"), "--out", str(first)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a ladder's evidence file" in err
    assert ladder.main(["rcrn_table5", "--merge", str(second / "regime_ladder.runs.csv"), "--out", str(first)]) == 2
    assert "runs nothing" in capsys.readouterr().err


def test_plan_runs_and_writes_nothing(tmp_path, monkeypatch, capsys):
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


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="on a CUDA machine the BiLSTM's GPU runs price it")
def test_a_row_whose_rung_0_ran_on_another_device_is_priced_at_most_as_its_cheapest_neighbour(tmp_path, capsys):
    """RCRN Table 4's BiLSTM ran on a GPU: on a CPU its rungs are priced as the experiment's cheapest
    other row on a CPU (the committed 3L-BiLSTM and RCRN runs), said to be an upper bound."""
    code = ladder.main(["rcrn_table4", "--plan", "--rungs", "1", "--out", str(tmp_path / "out"),
                        "--set", f"paths.runs_dir={tmp_path / 'runs'}"])
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("rcrn_table4"))
    assert code == 0 and "at most: rung 0 has no cpu run of the row, priced as the experiment's cheapest other row" in line
    assert float(line.split()[6]) > 0


def test_a_table_outside_the_ladder_is_refused(capsys):
    assert ladder.main(["fhe_table2", "--plan"]) == 2
    assert "not a table of the ladder" in capsys.readouterr().err


def test_the_verb_has_its_help_and_a_bad_table_name_is_one_line(capsys):
    with pytest.raises(SystemExit) as stop:
        rnnbench(["ladder", "--help"])
    out = capsys.readouterr().out
    assert stop.value.code == 0 and "usage: rnnbench ladder" in out
    assert all(option in out for option in ("--plan", "--no-run", "--rungs", "--only", "--until", "--set", "--results", "--out", "TABLE"))
    assert "rcrn_table5 rcrn_table8 rcrn_table3" in " ".join(out.split())  # the tables, in the ladder's order
    assert rnnbench(["ladder", "rcrn_table99", "--plan"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: rcrn_table99: not a table of the ladder; its tables: rcrn_table5")
    assert rnnbench(["ladder", "rcrn_table5", "--only", "rcrn_table6", "--plan"]) == 2
    err = capsys.readouterr().err
    assert err == "error: --only rcrn_table6: not an experiment of rcrn_table5\n"
    assert rnnbench(["ladder", "rcrn_table5", "--only", "rcrn_table5,rcrn_table6", "--plan"]) == 2  # commas split names too
    assert capsys.readouterr().err == "error: --only rcrn_table6: not an experiment of rcrn_table5\n"


@pytest.mark.slow  # two processes
def test_the_script_is_the_verb():
    """scripts/regime_ladder.py runs the verb's main: its help and one-line errors."""
    script = [sys.executable, str(REPO / "scripts" / "regime_ladder.py")]
    shown = subprocess.run([*script, "--help"], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert shown.returncode == 0 and "usage: rnnbench ladder" in shown.stdout and "--no-run" in shown.stdout
    refused = subprocess.run([*script, "rcrn_table99", "--plan"], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "not a table of the ladder" in refused.stderr


def test_the_committed_ladder_page_is_what_its_committed_evidence_gives(real_data, tmp_path, monkeypatch):
    """Nothing stale: results/regime_ladder.md is what `rnnbench ladder --no-run` writes from the committed
    results/regime_ladder.runs.csv, byte for byte (the data folder decides which rung-4 data are present)."""
    monkeypatch.setenv("RNNBENCH_DATA", str(real_data))
    committed = REPO / "results"
    (tmp_path / "regime_ladder.runs.csv").write_bytes((committed / "regime_ladder.runs.csv").read_bytes())
    assert ladder.main(["--no-run", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "regime_ladder.runs.csv").read_bytes() == (committed / "regime_ladder.runs.csv").read_bytes()
    assert (tmp_path / "regime_ladder.md").read_text() == (committed / "regime_ladder.md").read_text(), \
        "results/regime_ladder.md is stale: `rnnbench ladder --no-run` regenerates it from its CSV; commit both"
