"""Recover a table's superseded runs from the git history of its evidence CSV.

Until commit a3e97b7 (2026-11-25), a run dropped from a table (its config changed) left only the git history
of ``results/<table>.csv``; since then ``make_table.py`` moves such rows to
``results/<table>.superseded.csv``. This script fills that file for the runs dropped before:
every run found in an earlier committed version of the CSV and absent from the current one,
dated by the commit that removed it.

    python scripts/backfill_superseded.py results/dcu_table1.csv results/mzu_table6.csv
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from rnnbench.campaign import reruns
from rnnbench.campaign.definitions import table_scale
from rnnbench.results import evidence


def versions(csv_path: Path) -> list[tuple[str, str]]:
    """(commit, commit date) of every commit that changed the file, oldest first."""
    log = subprocess.run(["git", "log", "--reverse", "--format=%H %cs", "--", str(csv_path)],
                         capture_output=True, text=True, check=True).stdout
    return [tuple(line.split()) for line in log.splitlines()]


def rows_at(commit: str, csv_path: Path) -> list[dict]:
    """The rows of an earlier version, as stored now (a version written in table units, before the
    ``scale`` column, converted: ``evidence.from_table_units``)."""
    text = subprocess.run(["git", "show", f"{commit}:{csv_path}"], capture_output=True, text=True).stdout
    rows = evidence.parse_csv(text.splitlines(), scaled=False) if text else []
    if any(row.get("scale", "") == "" for row in rows):
        scale = table_scale(csv_path.stem)
        rows = [row if row.get("scale", "") != "" else evidence.from_table_units(row, scale) for row in rows]
    return rows


def backfill(csv_path: Path) -> int:
    current = {(r["encoder"], r["run"]) for r in evidence.read_csv(csv_path)}
    dropped: dict[tuple[str, str], tuple[list[dict], str]] = {}
    previous: dict[tuple[str, str], list[dict]] = {}
    for commit, date in versions(csv_path):
        by_run: dict[tuple[str, str], list[dict]] = {}
        for row in rows_at(commit, csv_path):
            by_run.setdefault((row["encoder"], row["run"]), []).append(row)
        for key, rows in previous.items():
            if key not in by_run and key not in current and key not in dropped:
                dropped[key] = (rows, date)
        previous = by_run
    for rows, date in dropped.values():
        reruns.record_superseded(evidence.superseded_path(csv_path), rows, date)
    return len(dropped)


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    for name in argv:
        path = Path(name)
        print(f"{path}: {backfill(path)} superseded run(s) recovered from git history")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
