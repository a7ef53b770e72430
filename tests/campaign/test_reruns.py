"""A run folder whose identity matches committed evidence (the same run made again, perhaps on
another processor kind): it never silently replaces the committed rows (rnnbench.campaign.reruns)."""
from __future__ import annotations

import csv
import shutil

import pytest

from rnnbench.campaign import reruns
from rnnbench.results import evidence
from tests.helpers import load_script
from tests.results.test_evidence import _row

TABLE = "synthetic_span_copy"
XEON = "Intel(R) Xeon(R) Processor"


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """One smoke run of a one-encoder table and the CSV it wrote: each test copies both."""
    root = tmp_path_factory.mktemp("trained")
    main = load_script("make_table").main
    assert main([TABLE, *_options(root)]) == 0
    return root


def _options(root):
    return ["--set", "trainer=smoke", "--set", "trainer.max_eval_batches=null", "--set", "hydra.sweeper.params.encoder=bilstm",
            "--set", f"paths.runs_dir={root / 'runs'}", "--set", f"paths.results_dir={root / 'results'}"]


def _copy(trained, tmp_path):
    for name in ("runs", "results"):
        shutil.copytree(trained / name, tmp_path / name)
    return tmp_path / "results" / f"{TABLE}.csv"


def _rewrite(csv_path, **values):
    """The committed CSV with ``values`` in every row (as a committed row made elsewhere would have them)."""
    with open(csv_path, newline="") as handle:
        reader = csv.DictReader(handle)
        fields, rows = reader.fieldnames, [{**row, **values} for row in reader]
    with open(csv_path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return csv_path.read_text()


def _table(tmp_path, *flags):
    reruns.POLICY.replace = False  # the command sets it; a test never leaves it set for the next
    try:
        return load_script("make_table").main([TABLE, "--no-run", *flags, *_options(tmp_path)])
    finally:
        reruns.POLICY.replace = False


def test_a_run_folder_with_other_numbers_keeps_the_committed_row_and_says_so(trained, tmp_path, capsys):
    csv_path = _copy(trained, tmp_path)
    (run,) = {row["run"] for row in evidence.read_csv(csv_path)}
    local_tests = sorted(row["test"] for row in evidence.read_csv(csv_path, scaled=False))
    committed = _rewrite(csv_path, test="0.123", hardware=XEON, commit="eb6522bb1dff")
    capsys.readouterr()

    assert _table(tmp_path) == 0
    out = capsys.readouterr().out
    assert csv_path.read_text() == committed  # the committed numbers, processor and commit stand
    (line,) = [line for line in out.splitlines() if f"run {run}" in line]  # one line for the run, naming it
    assert line.startswith(f"{TABLE}: run {run} (bilstm) here has other numbers than its committed row (test differ)")
    assert f"committed test 12.3 on {XEON} kept" in line and "--replace-committed replaces it" in line
    assert f"this run folder's {min(local_tests) * 100:g} on " in line or f"this run folder's {max(local_tests) * 100:g} on " in line
    assert not (tmp_path / "results" / f"{TABLE}.superseded.csv").exists()
    assert "Re-run with other numbers" not in (tmp_path / "results" / f"{TABLE}.md").read_text()


def test_replace_committed_takes_the_run_folders_numbers_and_keeps_the_committed_row_superseded(trained, tmp_path, capsys):
    csv_path = _copy(trained, tmp_path)
    local = trained / "results" / f"{TABLE}.csv"
    _rewrite(csv_path, test="0.123", hardware=XEON)

    assert _table(tmp_path, "--replace-committed") == 0
    out = capsys.readouterr().out
    assert "(--replace-committed); the committed row moved to" in out
    assert csv_path.read_text() == local.read_text()  # the run folder's rows, as its own table wrote them
    superseded = tmp_path / "results" / f"{TABLE}.superseded.csv"
    moved = evidence.read_superseded(superseded, scaled=False)
    assert len(moved) == 2 and {row["test"] for row in moved} == {0.123} and {row["hardware"] for row in moved} == {XEON}
    assert all(row[reruns.REASON].startswith("replaced by a re-run of the same identity with other numbers (test differ;")
               for row in moved)
    md = (tmp_path / "results" / f"{TABLE}.md").read_text()
    assert "Re-run with other numbers" in md and "test 12.3 on Intel(R) Xeon(R) Processor, now" in md

    # written again, with or without the flag: the numbers now agree, nothing moves twice, the footnote stays
    for flags in ((), ("--replace-committed",)):
        before = superseded.read_text()
        assert _table(tmp_path, *flags) == 0
        assert "has other numbers" not in capsys.readouterr().out
        assert csv_path.read_text() == local.read_text() and superseded.read_text() == before
        assert "Re-run with other numbers" in (tmp_path / "results" / f"{TABLE}.md").read_text()


def test_a_rerun_with_the_same_numbers_changes_nothing(trained, tmp_path, capsys):
    """Another commit, processor name and timing, the same dev, test and epoch (a re-run on the same
    processor kind): the committed rows stay byte for byte, and nothing is said or moved."""
    csv_path = _copy(trained, tmp_path)
    committed = _rewrite(csv_path, hardware=XEON, commit="eb6522bb1dff", seconds_per_epoch="9.5")
    capsys.readouterr()
    for flags in ((), ("--replace-committed",)):
        assert _table(tmp_path, *flags) == 0
        assert "has other numbers" not in capsys.readouterr().out
        assert csv_path.read_text() == committed
        assert not (tmp_path / "results" / f"{TABLE}.superseded.csv").exists()


def test_differences_name_dev_test_epoch_and_items_and_skip_rescored_columns(tmp_path):
    record = {"dev": {"accuracy": 0.8569}, "test": {"accuracy": 0.88}, "best_epoch": 19, "history": []}
    row = {"encoder": "bilstm", "run": "s1-9b3fb52fd25e", "model": "BiLSTM", "variant": "", "dataset": "TREC", "metric": "accuracy",
           "scale": 100.0, "seed": 1, "lr": 1e-3, "reported": "yes", "dev": 0.8568807339449542, "test": 0.902,
           "selected_epoch": 16, "dev_curve": "0.6", "hardware": XEON}
    assert reruns.differences(record, [row]) == ["dev", "test", "selected epoch"]
    same = {"dev": {"accuracy": row["dev"]}, "test": {"accuracy": 0.902}, "best_epoch": 16, "history": []}
    assert reruns.differences(same, [row]) == []
    rescored = {**row, "dataset": "len400", "dev": "", "dev_curve": "", "test": 0.5}  # an evaluation's number, not the run's
    assert reruns.differences(same, [row, rescored]) == []

    evidence.write_csv(tmp_path / "t.csv", [row])
    evidence.write_items(tmp_path / "t.items.csv.xz", [{"model": "BiLSTM", "variant": "", "dataset": "TREC", "seed": 1, "item": str(i),
                                                         "score": float(i % 2), "scale": 100.0} for i in range(4)])
    committed = evidence.CommittedEvidence(tmp_path / "t.csv", tmp_path / "t.items.csv.xz")
    items = reruns.committed_items(committed, committed.by_run[("bilstm", row["run"])], "TREC")
    assert items == {"0": 0.0, "1": 1.0, "2": 0.0, "3": 1.0}
    assert not reruns.items_differ(dict(items), items)
    assert reruns.items_differ({**items, "0": 1.0, "1": 0.0}, items)  # the same accuracy, other items
    # the learning-rate choice and the plan read the committed row where the numbers differ, unless replacing
    assert reruns.keeps_committed(record, committed, "bilstm", row["run"])
    assert not reruns.keeps_committed(same, committed, "bilstm", row["run"])
    reruns.POLICY.replace = True
    try:
        assert not reruns.keeps_committed(record, committed, "bilstm", row["run"])
    finally:
        reruns.POLICY.replace = False


def test_superseded_runs_keep_their_rows_and_first_date_and_are_named_until_they_come_back(tmp_path):
    table = tmp_path / "t.csv"
    path = evidence.superseded_path(table)
    assert path.name == "t.superseded.csv" and evidence.superseded_note(path, []) is None
    reruns.record_superseded(path, [_row("s1-aaa", 1), _row("s1-aaa", 1, dataset="other")], "2026-11-20")
    reruns.record_superseded(path, [_row("s1-aaa", 1), _row("s2-bbb", 2)], "2026-11-25")  # s1-aaa again: keeps its date
    rows = evidence.read_superseded(path)
    assert sorted((r["run"], r["dataset"], r["superseded_on"]) for r in rows) == [
        ("s1-aaa", "SST-5", "2026-11-20"), ("s1-aaa", "other", "2026-11-20"), ("s2-bbb", "SST-5", "2026-11-25")]
    assert rows[0]["test"] == 41.0 and rows[0]["seed"] == 1  # the evidence itself, typed and in table units as the table's CSV
    assert evidence.superseded_note(path, []).endswith(": 1 on 2026-11-20 (bilstm 1); 1 on 2026-11-25 (bilstm 1).")
    assert "2026-11-20" not in evidence.superseded_note(path, [_row("s1-aaa", 1)])  # back in the table: not superseded


def test_a_committed_selection_run_now_reported_takes_no_item_scores_stored_for_its_seed(trained, tmp_path, capsys):
    """Item scores are stored per (model, seed): a committed unreported run that the rate choice now
    reports must not take the item scores stored for its seed (another rate's run, reported before).
    Its own come from its run folder (this task's span metrics have none); without its folder it has
    none, and the table says so."""
    csv_path = _copy(trained, tmp_path)
    items_path = tmp_path / "results" / f"{TABLE}.items.csv.xz"
    earlier = [{"model": row["model"], "variant": row["variant"], "dataset": row["dataset"], "seed": int(row["seed"]), "item": str(i),
                "score": 0.5, "scale": 100.0} for row in evidence.read_csv(csv_path, scaled=False) for i in range(3)]
    for folder in (True, False):
        _rewrite(csv_path, reported="no", phase="selection")  # committed as a selection run
        evidence.write_items(items_path, earlier)  # the seed's earlier run's scores
        if not folder:
            shutil.rmtree(tmp_path / "runs")
        capsys.readouterr()
        assert _table(tmp_path) == 0
        assert evidence.read_items(items_path, scaled=False) == []
        said = "is reported now, but its per-item test scores were not committed" in capsys.readouterr().out
        assert said == (not folder)
