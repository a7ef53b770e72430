"""scripts/patience_check.py: a finished run trained on under a longer patience is the longer run."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from rnnbench.results import patience
from rnnbench.run import train
from tests.helpers import REPO, smoke_config

spec = importlib.util.spec_from_file_location("patience_check", REPO / "scripts" / "patience_check.py")
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)

TINY = ["task.reader.train_size=300", "task.reader.dev_size=60", "task.reader.test_size=60", "encoder.hidden_size=16",
        "trainer.max_batches=null", "trainer.max_eval_batches=null", "trainer.batch_size=30", "trainer.epochs=8"]


def _untimed(record: dict) -> list[dict]:
    return [{k: v for k, v in h.items() if "seconds" not in k and k != "load_average"} for h in record["history"]]


@pytest.fixture
def started_at_once(monkeypatch):
    """Every dev score beats the baseline: patience counts from epoch 1 (a tiny run may not beat the majority)."""
    monkeypatch.setattr(patience, "task_baseline", lambda task, dev: -1.0)


def test_a_stopped_run_trained_on_is_the_longer_patience_run_from_the_start(tmp_path, started_at_once):
    # lr 1e-4 on the tiny task: the dev accuracy improves slowly, so patience 1 stops it early and 3 trains on.
    args = (*TINY, "trainer.lr=0.0001")
    short = train(smoke_config(tmp_path / "short", *args, "trainer.patience=1"), say=lambda _: None)
    assert short["epochs_run"] < 8, "the short run must stop before its cap for this test to say anything"
    row = check.train_on(Path(short["run_dir"]), 3, tmp_path / "carried")
    fresh = train(smoke_config(tmp_path / "fresh", *args, "trainer.patience=3"), say=lambda _: None)
    carried = json.loads((tmp_path / "carried" / Path(fresh["run_dir"]).relative_to(tmp_path / "fresh" / "runs") / "record.json").read_text())
    assert carried["identity"] == fresh["identity"] and carried["epochs_run"] == fresh["epochs_run"] > short["epochs_run"]
    assert _untimed(carried) == _untimed(fresh) and carried["test"] == fresh["test"]
    assert int(row["table_epochs"]) == short["epochs_run"] and int(row["epochs"]) == fresh["epochs_run"]
    assert row["test"] == f"{fresh['test']['accuracy']:.4f}" and row["patience"] == 3 and row["table_patience"] == 1
    # The finished run's folder is read, never changed; asking again reads the carried run.
    assert json.loads((Path(short["run_dir"]) / "record.json").read_text())["epochs_run"] == short["epochs_run"]
    assert check.train_on(Path(short["run_dir"]), 3, tmp_path / "carried") == row


def test_what_cannot_be_carried_is_refused_in_one_line(tmp_path, started_at_once):
    short = train(smoke_config(tmp_path / "a", *TINY, "trainer.lr=0.0001", "trainer.patience=1"), say=lambda _: None)
    source = Path(short["run_dir"])
    with pytest.raises(SystemExit, match="not longer than the run's"):
        check.train_on(source, 1, tmp_path / "b")
    record = json.loads((source / "record.json").read_text())
    (source / "record.json").write_text(json.dumps({**record, "hardware": {**record["hardware"], "cpu": "Another CPU"}}))
    with pytest.raises(SystemExit, match="made on Another CPU"):
        check.train_on(source, 3, tmp_path / "b")
    (source / "record.json").write_text(json.dumps({**record, "identity": "0" * 64}))
    with pytest.raises(SystemExit, match="no longer reproduces the run's identity"):
        check.train_on(source, 3, tmp_path / "b")
    (source / "done").unlink()
    with pytest.raises(SystemExit, match="not a finished run"):
        check.train_on(source, 3, tmp_path / "b")
    capped = train(smoke_config(tmp_path / "c", *TINY[:-1], "trainer.epochs=2", "trainer.patience=5"), say=lambda _: None)
    with pytest.raises(SystemExit, match="ran to its epoch cap"):
        check.train_on(Path(capped["run_dir"]), 10, tmp_path / "b")


def _row(task, encoder, seed, table_test, test, best=(3, 3), epochs=(7, 13)):
    return {"task": task, "encoder": encoder, "seed": str(seed), "lr": "0.001", "table_run": f"{encoder}/s{seed}-x",
            "table_patience": "4", "table_epochs": str(epochs[0]), "table_best_epoch": str(best[0]), "table_dev": "0.8",
            "table_test": str(table_test), "run": f"s{seed}-y", "patience": "10", "epochs": str(epochs[1]),
            "best_epoch": str(best[1]), "dev": "0.8", "test": str(test), "extra_cpu_seconds": "360.0",
            "dev_curve": ";".join(["0.7"] * epochs[1]), "dev_loss_curve": ";".join(f"{1 - e / 20:.4f}" for e in range(epochs[1])),
            "commit": "abc", "hardware": "Some CPU, 1 thread(s), torch 2.13.0+cpu"}


def test_the_page_compares_each_encoder_with_the_bilstm_at_both_patiences(tmp_path):
    rows = [_row("amazon_music", "bilstm", 1, 0.80, 0.80), _row("amazon_music", "bilstm", 2, 0.70, 0.72, best=(3, 9)),
            _row("amazon_music", "rcrn", 1, 0.75, 0.79, best=(3, 10)), _row("amazon_music", "rcrn", 2, 0.70, 0.70),
            _row("amazon_dvd", "bilstm", 1, 0.80, 0.80), _row("amazon_dvd", "rcrn", 1, 0.70, 0.76, best=(3, 12))]
    (tmp_path / "diagnostics").mkdir()
    check.write_rows(tmp_path / "diagnostics" / check.CSV_NAME, rows)
    assert check.main(["--results", str(tmp_path)]) == 0
    page = (tmp_path / "diagnostics" / "patience_check.md").read_text()
    # BiLSTM 75.0 -> 76.0; RCRN 72.5 -> 74.5: the gap -2.50 -> -1.50, a change of +1.00.
    assert "| amazon_music | bilstm | 2 | 4 → 10 | 75.00 | 76.00 | 1 | 2 | 0.20 |" in page
    assert "| amazon_music | 10 | rcrn | 2 | -2.50 | -1.50 | +1.00 |" in page
    # DVD: -10.00 -> -4.00; each task weighs the same in the mean, as in the macro average.
    assert "| amazon_dvd | 10 | rcrn | 1 | -10.00 | -4.00 | +6.00 |" in page
    assert "| mean over the 2 tasks | 10 | rcrn | | -6.25 | -2.75 | +3.50 |" in page
    assert "| amazon_dvd | rcrn | 1 | rcrn/s1-x | 3 / 7 | 70.00 | s1-y (patience 10) | 12 / 13 | 76.00 |" in page


def test_the_committed_page_regenerates_from_its_csv(tmp_path):
    committed = REPO / "results" / "diagnostics" / check.CSV_NAME
    (tmp_path / "diagnostics").mkdir()
    (tmp_path / "diagnostics" / check.CSV_NAME).write_text(committed.read_text())
    assert check.main(["--results", str(tmp_path)]) == 0
    assert (tmp_path / "diagnostics" / "patience_check.md").read_text() == committed.with_suffix(".md").read_text()


def test_an_interrupted_check_says_so_in_one_line_and_keeps_the_finished_rows(tmp_path, started_at_once, monkeypatch, capsys):
    from rnnbench.errors import RunInterrupted

    short = train(smoke_config(tmp_path / "a", *TINY, "trainer.lr=0.0001", "trainer.patience=1"), say=lambda _: None)
    monkeypatch.setattr(check, "train_on", lambda *a: (_ for _ in ()).throw(RunInterrupted("interrupted after epoch 3")))
    code = check.main(["--continue", short["run_dir"], "--patience", "3", "--results", str(tmp_path / "results")])
    assert code == RunInterrupted.exit_code
    assert capsys.readouterr().err.strip().startswith("interrupted after epoch 3; the rows of the runs that finished are in")
