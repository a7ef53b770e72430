"""What a run's seconds measured (results/timing.py): process CPU time and the load average
recorded beside wall time, carried into the evidence CSV, and said under a table's cost columns."""
from __future__ import annotations

import pytest

from rnnbench.results import evidence, timing
from rnnbench.results import table_page as report

pytestmark = pytest.mark.usefixtures("one_thread")


def test_the_clocks_read_this_process_and_this_machine():
    assert timing.cpu_seconds() > 0
    load = timing.load_average()
    assert load is None or load >= 0


def test_a_record_keeps_the_means_over_the_epochs_that_recorded_them():
    history = [{"train_seconds": 2.0, timing.CPU_SECONDS: 1.0, timing.LOAD: 3.0},
               {"train_seconds": 2.0, timing.CPU_SECONDS: 2.0, timing.LOAD: 5.0},
               {"train_seconds": 2.0}]  # an epoch from before they were recorded
    assert timing.record_means(history) == {"cpu_seconds_per_epoch": 1.5, "load_average": 4.0}
    assert timing.record_means([{"train_seconds": 1.0}]) == {"cpu_seconds_per_epoch": None, "load_average": None}


@pytest.mark.slow  # two epochs of a tiny model
def test_a_run_records_cpu_time_and_load_per_epoch_and_in_its_record(tmp_path):
    from rnnbench.run import train
    from tests.helpers import smoke_config

    record = train(smoke_config(tmp_path, "trainer.epochs=2", "trainer.patience=0", "encoder.hidden_size=8"), say=lambda _: None)
    assert len(record["history"]) == 2
    for epoch in record["history"]:
        assert 0 < epoch[timing.CPU_SECONDS]
        assert epoch[timing.LOAD] is None or epoch[timing.LOAD] >= 0
    assert record["cpu_seconds_per_epoch"] == pytest.approx(sum(h[timing.CPU_SECONDS] for h in record["history"]) / 2)
    rows = evidence.evidence_rows(record, "BiLSTM", None, {"Acc": "accuracy"}, 100.0, "final", True)
    assert rows[0]["cpu_seconds_per_epoch"] == record["cpu_seconds_per_epoch"]
    assert rows[0]["load_average"] == ("" if record["load_average"] is None else record["load_average"])


def _row(run: str, seconds: float, threads: str = "1", **timed) -> dict:
    return {"model": "BiLSTM", "encoder": "bilstm", "variant": "", "dataset": "TREC", "metric": "accuracy", "seed": 1,
            "lr": 0.001, "phase": "final", "reported": "yes", "dev": 80.0, "test": 85.0, "selected_epoch": 3, "epoch_cap": 10,
            "epochs_run": 5, "seconds_per_epoch": seconds, "inference_seconds_per_example": 0.001, "parameters": 10,
            "threads": threads, "commit": "c", "versions": "{}", "device": "cpu", "hardware": "cpu", "dev_curve": "80", "run": run,
            **timed}


def test_the_timing_columns_are_written_only_where_a_row_has_them(tmp_path):
    """Evidence written before the columns existed regenerates byte for byte; new rows add them."""
    old = tmp_path / "old.csv"
    evidence.write_csv(old, [_row("s1-a", 4.0)])
    assert old.read_text().splitlines()[0] == ",".join(evidence.FIELDS)
    new = tmp_path / "new.csv"
    evidence.write_csv(new, [_row("s1-a", 4.0), _row("s2-b", 6.0, cpu_seconds_per_epoch=3.0, load_average=2.5)])
    assert new.read_text().splitlines()[0] == ",".join([*evidence.FIELDS, "cpu_seconds_per_epoch", "load_average"])
    back = evidence.read_csv(new)
    assert back[1]["load_average"] == 2.5 and back[1]["cpu_seconds_per_epoch"] == 3.0 and back[0]["load_average"] == ""
    # a file with columns of its own after the evidence's keeps them last: a superseded row is its row plus the date
    superseded = tmp_path / "superseded.csv"
    evidence.write_csv(superseded, [{**r, "superseded_on": "2026-11-28"} for r in back], evidence.SUPERSEDED_FIELDS)
    assert superseded.read_text().splitlines()[0].endswith(",cpu_seconds_per_epoch,load_average,superseded_on")
    assert [line.rsplit(",", 1)[0] for line in superseded.read_text().splitlines()[1:]] == new.read_text().splitlines()[1:]


def test_the_cost_section_says_under_what_load_its_seconds_were_measured():
    costs = report.cost_rows([_row("s1-a", 4.0)], {})
    unrecorded = report.cost_markdown(costs, [_row("s1-a", 4.0)], ["TREC"], 0.95, 1)
    assert any("load not recorded" in line for line in unrecorded)
    rows = [_row("s1-a", 4.0, cpu_seconds_per_epoch=2.0, load_average=3.0),
            _row("s2-b", 6.0, threads="2", cpu_seconds_per_epoch=6.0, load_average=1.0)]
    note = next(line for line in report.cost_markdown(report.cost_rows(rows, {}), rows, ["TREC"], 0.95, 1)
                if line.startswith("s / training epoch"))
    assert "mean 1-minute load average of 2.0 (runs' means 1.0 to 3.0)" in note
    assert "CPU time per thread was 0.50 of the wall time" in note  # 2/4 and 6/(6 x 2)
    partial = [_row("s1-a", 4.0), _row("s2-b", 6.0, load_average=1.0)]
    assert "(recorded for 1 of 2 runs)" in timing.cost_note(partial)


def test_runs_on_several_kinds_of_device_have_their_load_stated_apart():
    """A GPU machine's load (20 workers on 16 cores) is not a CPU machine's (one run on 2 cores): a table
    with runs on both says each one's, never their mean together."""
    rows = [_row("s1-a", 4.0, device="cpu", load_average=2.0), _row("s2-b", 6.0, device="cpu", load_average=4.0),
            _row("s3-c", 1.0, device="cuda", load_average=18.0)]
    note = timing.cost_note(rows)
    assert "on cpu, measured at a mean 1-minute load average of 3.0 (runs' means 2.0 to 4.0)" in note
    assert "on cuda, measured at a mean 1-minute load average of 18.0" in note and "average of 8.0" not in note
    assert timing.cost_note(rows[:2]) == timing.cost_note([{**r, "device": "cuda"} for r in rows[:2]])  # one device: no label
