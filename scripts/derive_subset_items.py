"""Add the per-item scores of a table's scored subsets (MZU Table 6's HDS columns, DCU Table 1's
RACE-M and RACE-H) to its committed results/<table>.items.csv.xz, derived from the full column's
committed items of the same runs (``rnnbench.results.subset_items``), each checked against the
subset's committed score. Reads the test split from RNNBENCH_DATA (which items are in a subset).

    python scripts/derive_subset_items.py mzu_table6 dcu_table1

A migration for evidence written before the table writer recorded subset items itself; running it
again adds nothing.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rnnbench.campaign.definitions import experiments_of
from rnnbench.compose import compose_config
from rnnbench.errors import RnnbenchError
from rnnbench.campaign.assemble import scored_subset_items
from rnnbench.results import evidence


def derive(table: str, results: Path) -> int:
    csv_path = results / f"{table}.csv"
    items_path = evidence.items_path(csv_path)
    rows = evidence.read_csv(csv_path, scaled=False)
    items = evidence.read_items(items_path, scaled=False)
    cfgs = [compose_config([f"experiment={experiment}"]) for experiment in experiments_of(table)]
    added = scored_subset_items(cfgs, rows, items, str(csv_path))
    if added:
        evidence.write_items(items_path, items + added)
    print(f"{table}: {len(added)} item scores of scored subsets added to {items_path}")
    return len(added)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tables", nargs="+", help="tables with committed evidence, e.g. mzu_table6")
    parser.add_argument("--results", type=Path, default=Path("results"))
    args = parser.parse_args(argv)
    try:
        for table in args.tables:
            derive(table, args.results)
    except (RnnbenchError, ValueError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
