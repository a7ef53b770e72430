"""CSV files of plain rows (strings, a fixed column order): the regime ladder's and a mechanism
sweep's per-run evidence, which are written whole and read back as they were written."""
from __future__ import annotations

import csv
import io
from pathlib import Path

from rnnbench.results.records import temporary_for


def read_rows(path: Path) -> list[dict]:
    """The file's rows ([] when there is no file yet)."""
    if not path.exists():
        return []
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def csv_text(rows: list[dict], fields: list[str], sort_key) -> str:
    """The rows as CSV text, ``fields`` as columns (a missing one empty), sorted by ``sort_key``."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fields, lineterminator="\n")
    writer.writeheader()
    for row in sorted(rows, key=sort_key):
        writer.writerow({k: row.get(k, "") for k in fields})
    return buffer.getvalue()


def write_text(path: Path, text: str) -> None:
    """``text`` into ``path`` (its folder made), through a temporary file: a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with temporary_for(path) as tmp:
        tmp.write_text(text)
