"""scripts/make_table.py end to end: run a sweep's missing jobs, skip finished ones, write the table."""
from __future__ import annotations

import importlib.util

from rnnbench.compose import CONF_DIR

SCRIPT = CONF_DIR.parent / "scripts" / "make_table.py"


def _make_table():
    spec = importlib.util.spec_from_file_location("make_table", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


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
    assert rows[0].startswith("model,encoder,variant,dataset,metric,seed,lr,phase,reported,dev,test,")
    assert len(rows) == 1 + 2 and all(",bilstm,,E" in r or ",bilstm,,F" in r for r in rows[1:])  # one run, columns EM and F1

    assert main(["synthetic_span_copy", *overrides]) == 0  # finished runs are not run again
    assert "== synthetic_span_copy" not in capsys.readouterr().out

    # the runs are gone: the committed CSV regenerates the same table
    import shutil

    shutil.rmtree(tmp_path / "runs")
    assert main(["synthetic_span_copy", "--no-run", *overrides]) == 0
    assert (tmp_path / "results" / "synthetic_span_copy.md").read_text() == md
