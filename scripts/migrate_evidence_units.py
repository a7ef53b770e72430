"""Rewrite a table's evidence written in table units (before the ``scale`` column) in its records'
units: each value divided by the table's scale, so that reading it back in table units gives the
very number that was written (checked value by value; the table regenerates byte for byte).

    python scripts/migrate_evidence_units.py                 # every table under results/
    python scripts/migrate_evidence_units.py rcrn_table5     # some tables

Files with a ``scale`` column already are left as they are. Each stored value is the float whose
product with the scale is the written number (``rnnbench.results.evidence.from_table_units``).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rnnbench.campaign.definitions import table_scale
from rnnbench.results import evidence
from rnnbench.campaign.sanity_gate import committed_tables


def migrate(table: str, results: Path) -> list[str]:
    scale, written = table_scale(table), []
    csv_path = results / f"{table}.csv"
    for path, write in ((csv_path, evidence.write_csv), (evidence.superseded_path(csv_path), evidence.write_superseded)):
        if not path.exists() or "scale" in path.read_text().splitlines()[0].split(","):
            continue
        write(path, [evidence.from_table_units(r, scale) for r in evidence.read_csv(path, scaled=False)])
        written.append(path.name)
    items_path = evidence.items_path(csv_path)  # or the .gz an earlier version wrote: read, replaced by the .xz
    items = evidence.read_items(items_path, scaled=False)
    if items and items[0].get("scale", "") == "":
        evidence.write_items(items_path, [{**i, "score": evidence.value_from_table_units(i["score"], scale), "scale": scale} for i in items])
        written.append(items_path.name)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tables", nargs="*", help="tables (results/<table>.csv); none: every table")
    parser.add_argument("--results", default="results", help="the results folder (default: results)")
    args = parser.parse_args(argv)
    results = Path(args.results)
    for table in args.tables or committed_tables(results):
        try:
            written = migrate(table, results)
        except ValueError as exc:
            print(f"error: {table}: {exc}", file=sys.stderr)
            return 1
        print(f"{table}: {', '.join(written) if written else 'already in its records units'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
