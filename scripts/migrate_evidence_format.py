"""Rewrite a table's evidence CSVs in the current evidence format (``rnnbench.results.evidence_row``):
a ``format`` column, and the learning-rate choice as columns instead of the ``lr_choice`` sentence.

    python scripts/migrate_evidence_format.py                 # every committed table under results/
    python scripts/migrate_evidence_format.py rcrn_table5     # some tables

``results/<table>.csv`` is written again as ``rnnbench table NAME --no-run`` writes it, from its
experiment configs and its committed evidence alone (no run folders, in a scratch folder), so each
rate choice is stored whole: a format-1 sentence gives only part of it. Where no committed run
matches the configs here (its data is not in this data folder), the table is rendered from its
CSV as it is, and the CSV is rewritten row for row instead (its choices are what their sentences
said); so is ``<table>.superseded.csv``. Either way, everything else the table writes (its
markdown and LaTeX, its figure) must come out byte for byte as committed, or the table is left as
it is and the script says which file differs. Files in the current format already are left as
they are; run it again at will.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import shutil
import sys
import tempfile
from pathlib import Path

from rnnbench.campaign import reruns
from rnnbench.campaign.make import NO_RUN, make_table
from rnnbench.campaign.sanity_gate import committed_tables
from rnnbench.errors import RnnbenchError
from rnnbench.results import evidence
from rnnbench.results.evidence_row import FORMAT

EVIDENCE = (".csv", evidence.ITEMS_SUFFIX, ".parameters.csv", ".superseded.csv")
INPUTS = ("sanity.md", "floors.csv")  # what a table reads besides its evidence: the sanity verdicts, the floors


def current(path: Path) -> bool:
    """Whether a CSV is in the current format already (or absent)."""
    return not path.exists() or path.read_text().split("\n", 1)[0].split(",")[0] == FORMAT


def regenerated(table: str, results: Path, scratch: Path, csv_text: str | None = None) -> tuple[Path, list[str]]:
    """The table written by ``--no-run`` from a copy of its committed evidence (its CSV replaced by
    ``csv_text`` where given) in ``scratch``: its CSV there, and the other files written that differ
    from the committed ones."""
    out = scratch / "results"
    shutil.rmtree(out, ignore_errors=True)
    (out / "plots").mkdir(parents=True)
    for name in [f"{table}{suffix}" for suffix in EVIDENCE] + list(INPUTS):
        if (results / name).exists():
            shutil.copy(results / name, out / name)
    if csv_text is not None:
        (out / f"{table}.csv").write_text(csv_text)
    with contextlib.redirect_stdout(io.StringIO()):
        make_table(table, mode=NO_RUN, overrides=[f"paths.results_dir={out}", f"paths.runs_dir={scratch / 'runs'}"])
    differ = [str(p.relative_to(out)) for p in sorted(out.rglob("*")) if p.is_file() and p.name != f"{table}.csv"
              and (not (results / p.relative_to(out)).exists() or (results / p.relative_to(out)).read_bytes() != p.read_bytes())]
    return out / f"{table}.csv", differ


def row_for_row(path: Path) -> str:
    """An evidence CSV's rows, migrated as they are read, written in the current format."""
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / path.name
        evidence.write_csv(copy, evidence.read_csv(path, scaled=False))
        return copy.read_text()


def migrate(table: str, results: Path) -> list[str]:
    """Rewrite the table's evidence CSVs not in the current format; returns the files written."""
    csv_path, written = results / f"{table}.csv", []
    if not current(csv_path):
        with tempfile.TemporaryDirectory() as scratch:
            new, differ = regenerated(table, results, Path(scratch))
            if not differ and not current(new):  # rendered as it is: no committed run matched the configs here
                new, differ = regenerated(table, results, Path(scratch), row_for_row(csv_path))
            if differ:
                raise ValueError(f"written from its committed evidence in the current format, {', '.join(differ)} would "
                                 f"change: make the committed table current first (rnnbench table {table} --no-run)")
            shutil.copy(new, csv_path)
        written.append(csv_path.name)
    superseded = evidence.superseded_path(csv_path)
    if not current(superseded):
        reruns.record_superseded(superseded, [], "")  # nothing added: the file's rows, written again by its own writer
        written.append(superseded.name)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tables", nargs="*", help="tables (results/<table>.csv); none: every committed table")
    parser.add_argument("--results", default="results", help="the results folder (default: results)")
    args = parser.parse_args(argv)
    results = Path(args.results)
    for table in args.tables or committed_tables(results):
        try:
            written = migrate(table, results)
        except (ValueError, RnnbenchError) as exc:
            print(f"error: {table}: {exc}", file=sys.stderr)
            return 1
        print(f"{table}: {', '.join(written) if written else 'already in the current format'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
