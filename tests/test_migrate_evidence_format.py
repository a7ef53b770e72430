"""scripts/migrate_evidence_format.py: a table's evidence written in the earlier format (the rate
choice as one sentence) is rewritten in the current one, exactly as the table writes it today, and
nothing else the table writes changes."""
from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

from rnnbench.results import rate_choice
from rnnbench.results.rate_choice import RateChoice
from tests.helpers import load_script

REPO = Path(__file__).resolve().parent.parent
TABLE = "synthetic_span_copy"  # generated data: made anywhere, no data folder needed


def as_format_1(text: str) -> str:
    """An evidence CSV as the earlier format wrote it: no ``format`` column, the choice as its sentence."""
    rows = list(csv.DictReader(io.StringIO(text)))
    fields = [f for f in csv.DictReader(io.StringIO(text)).fieldnames if f != "format" and f not in rate_choice.COLUMNS]
    at = fields.index("chosen_lr") + 1
    fields = [*fields[:at], "lr_choice", *fields[at:]]
    out = io.StringIO()
    writer = csv.DictWriter(out, fields, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        choice = RateChoice.from_columns(row)
        writer.writerow({**row, "lr_choice": choice.statement() if choice else ""})
    return out.getvalue()


def test_an_old_table_is_rewritten_as_the_table_writes_it_today(tmp_path, capsys):
    results = tmp_path / "results"
    (results / "plots").mkdir(parents=True)
    for name in [f"{TABLE}{s}" for s in (".csv", ".superseded.csv", ".md", ".tex")] + ["sanity.md", "floors.csv"]:
        shutil.copy(REPO / "results" / name, results / name)
    shutil.copy(REPO / "results" / "plots" / f"{TABLE}.png", results / "plots" / f"{TABLE}.png")
    for name in (f"{TABLE}.csv", f"{TABLE}.superseded.csv"):
        old = as_format_1((REPO / "results" / name).read_text())
        assert "lr_choice" in old.splitlines()[0] and not old.startswith("format,")
        (results / name).write_text(old)

    migrate = load_script("migrate_evidence_format").main
    assert migrate([TABLE, "--results", str(results)]) == 0
    assert capsys.readouterr().out.strip() == f"{TABLE}: {TABLE}.csv, {TABLE}.superseded.csv"
    for name in (f"{TABLE}.csv", f"{TABLE}.superseded.csv", f"{TABLE}.md"):
        assert (results / name).read_bytes() == (REPO / "results" / name).read_bytes(), name
    assert migrate([TABLE, "--results", str(results)]) == 0  # a second time: nothing to do
    assert capsys.readouterr().out.strip() == f"{TABLE}: already in the current format"
