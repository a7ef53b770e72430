"""A row of a table's evidence CSV: written in the current format, read back the same; rows of the
older format migrate as they are read; a newer format is refused with one line."""
from __future__ import annotations

import csv

import pytest

from rnnbench.errors import RnnbenchError
from rnnbench.results import evidence
from rnnbench.results.evidence_row import EVIDENCE_FORMAT, FIELDS, EvidenceRow, migrate
from rnnbench.results.rate_choice import RateChoice


def _row(**changes) -> dict:
    choice = RateChoice(5e-4, (2e-3, 1e-3, 5e-4, 2.5e-4), 1, 3)
    return {"model": "BiLSTM", "encoder": "bilstm", "variant": "", "dataset": "SST-5", "metric": "accuracy", "scale": 100.0,
            "seed": 1, "lr": 5e-4, "phase": "select", "reported": "yes", "dev": 0.43214, "test": 0.41234567, "selected_epoch": 3,
            "epoch_cap": 50, "epochs_run": 7, "seconds_per_epoch": 12.5, "inference_seconds_per_example": 0.001,
            "parameters": 1000, "threads": 1, "commit": "abc", "versions": "{}", "device": "cpu", "hardware": "Xeon",
            "dev_curve": "0.4;0.43214", "run": "s1-aaa", "status": "trained", "majority": 0.2128, "chosen_lr": 5e-4,
            **choice.columns(), **changes}


def _format_1(path, rows: list[dict]) -> None:
    """A CSV as written before the ``format`` column: the rate choice as one sentence."""
    fields = [f for f in FIELDS if f != "format" and not f.startswith("lr_")] + ["lr_choice"]
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fields, lineterminator="\n", extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def test_a_row_written_and_read_back_is_the_same_row(tmp_path):
    path = tmp_path / "t.csv"
    evidence.write_csv(path, [_row(), _row(seed=2, run="s2-bbb", lr_pending="", cpu_seconds_per_epoch=11.0)])
    header, first = path.read_text().splitlines()[:2]
    assert header.split(",")[0] == "format" and first.startswith(f"{EVIDENCE_FORMAT},BiLSTM,")
    assert header.endswith("lr_grid,lr_extensions,lr_extension_limit,lr_pending,lr_position,cpu_seconds_per_epoch")
    stored = evidence.read_csv(path, scaled=False)
    assert stored[0] == {**EvidenceRow.of(_row()).as_dict(), "cpu_seconds_per_epoch": "", "format": EVIDENCE_FORMAT}
    assert (stored[0]["dev"], stored[0]["lr_extensions"], stored[0]["threads"]) == (0.43214, 1, "1")
    assert RateChoice.from_columns(stored[0]).statement() == "grid extended to {0.002, 0.001, 0.0005, 0.00025}; choice interior"
    evidence.write_csv(tmp_path / "again.csv", stored)
    assert (tmp_path / "again.csv").read_bytes() == path.read_bytes()  # read and written again: the same bytes


SENTENCES = [
    "",
    "grid extended to {0.002, 0.001, 0.0005, 0.00025}; choice interior",
    "the choice is the grid's largest rate and provisional: the selection runs at 0.004, one step past that edge, have not run yet",
    "grid extended to {0.004, 0.002, 0.001, 0.0005}; the choice is the grid's largest rate and provisional: the selection runs at "
    "0.008, one step past that edge, have not run yet",
    "grid extended to {0.001, 0.0005, 0.00025, 0.000125}; limit of 2 extension(s) hit at 0.000125: still at the edge",
    "the choice is the grid's smallest rate, still at the edge: grid extension is off (table.protocol.max_grid_extensions=0)",
]


def test_a_format_1_row_migrates_its_sentence_to_the_choice_columns(tmp_path):
    path = tmp_path / "t.csv"
    _format_1(path, [{**_row(seed=i), "lr_choice": sentence} for i, sentence in enumerate(SENTENCES)])
    rows = evidence.read_csv(path, scaled=False)
    assert all(r["format"] == EVIDENCE_FORMAT and "lr_choice" not in r for r in rows)
    assert (rows[0]["dev"], rows[0]["test"], rows[0]["selected_epoch"]) == (0.43214, 0.41234567, 3)  # the numbers as written
    columns = [{k: r[k] for k in ("lr_grid", "lr_extensions", "lr_extension_limit", "lr_pending", "lr_position")} for r in rows]
    assert columns == [
        {"lr_grid": "", "lr_extensions": "", "lr_extension_limit": "", "lr_pending": "", "lr_position": ""},
        # the grid as the sentence lists it; its extension count and limit are not in the sentence
        {"lr_grid": "0.002;0.001;0.0005;0.00025", "lr_extensions": "", "lr_extension_limit": "", "lr_pending": "", "lr_position": "interior"},
        {"lr_grid": "", "lr_extensions": 0, "lr_extension_limit": "", "lr_pending": 0.004, "lr_position": "provisional"},
        {"lr_grid": "0.004;0.002;0.001;0.0005", "lr_extensions": "", "lr_extension_limit": "", "lr_pending": 0.008,
         "lr_position": "provisional"},
        {"lr_grid": "0.001;0.0005;0.00025;0.000125", "lr_extensions": 2, "lr_extension_limit": 2, "lr_pending": "", "lr_position": "edge"},
        {"lr_grid": "", "lr_extensions": 0, "lr_extension_limit": 0, "lr_pending": "", "lr_position": "edge"},
    ]
    limit_hit = RateChoice.from_columns({**rows[4], "chosen_lr": 1.25e-4})  # a sentence that states the whole choice
    assert limit_hit.statement() == SENTENCES[4]
    evidence.write_csv(tmp_path / "now.csv", rows)  # written again: format 2
    assert (tmp_path / "now.csv").read_text().startswith("format,") and "lr_choice" not in (tmp_path / "now.csv").read_text()
    assert evidence.read_csv(tmp_path / "now.csv", scaled=False) == rows


def test_a_format_1_file_without_the_choice_columns_still_reads(tmp_path):
    """A cost benchmark's CSV (RCRN Table 10) was written before ``status`` and the choice existed."""
    path = tmp_path / "t.csv"
    path.write_text("model,encoder,variant,dataset,metric,seed,lr,phase,reported,dev,test,run\n"
                    "BiLSTM,bilstm,,IMDb/len128,seconds,1,0.001,final,yes,,,cost-r1\n")
    (row,) = evidence.read_csv(path)
    assert (row["seed"], row["lr"], row["test"], row["status"], row["lr_grid"], row["scale"]) == (1, 0.001, "", "", "", "")


def test_an_unknown_sentence_and_a_newer_format_are_refused_in_one_line(tmp_path):
    path = tmp_path / "t.csv"
    _format_1(path, [{**_row(), "lr_choice": "chosen by hand"}])
    with pytest.raises(RnnbenchError) as sentence:
        evidence.read_csv(path)
    assert str(sentence.value).startswith(f"{path}: lr_choice 'chosen by hand' is not a rate-choice sentence")
    evidence.write_csv(path, [_row()])
    path.write_text(path.read_text().replace("\n2,", f"\n{EVIDENCE_FORMAT + 1},"))
    with pytest.raises(RnnbenchError) as newer:
        evidence.read_csv(path)
    message = str(newer.value)
    assert message.startswith(f"{path}: evidence format {EVIDENCE_FORMAT + 1} is newer than this rnnbench reads")
    assert "update rnnbench" in message and "\n" not in message
    with pytest.raises(RnnbenchError, match="not an evidence format"):
        migrate({"format": "two"}, path)
