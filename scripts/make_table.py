"""Make a paper table: run what is missing of its experiments' protocol, then write results/<table>.{md,tex,csv}.

    python scripts/make_table.py rcrn_table5                 # or rcrn-5; also `rnnbench table rcrn_table5`
    python scripts/make_table.py rcrn_table5 --plan          # run nothing: the runs left, with CPU hours
    python scripts/make_table.py rcrn_table5 --no-run        # only write the table from finished runs
    python scripts/make_table.py rcrn_table5 --no-run --replace-committed   # run folders replace differing committed rows
    python scripts/make_table.py fhe_table2 --part small      # or fhe-2-small: only its CPU-sized rows
    python scripts/make_table.py lstm_odyssey_table1 --only lstm_odyssey_table1_large

A table's experiments are the configs that name it (conf/experiment/, `table.name`), in their
`table.order`; those with `table.not_run` run only when named (--only) or when their part
(`table.part`) is asked for. Naming experiments
instead of a table runs only those, then writes their whole table. The engine is the library
``rnnbench.campaign`` (docs/reproducing.md); this is its command line.
"""
from __future__ import annotations

import argparse
import sys

from rnnbench.campaign import definitions
from rnnbench.campaign.make import NO_RUN, PLAN, RUN, make_table
from rnnbench.commands.table import add_table_options
from rnnbench.errors import RnnbenchError


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("names", nargs="+", metavar="NAME",
                   help="a table (rcrn_table5, or its short form rcrn-5), or experiments of one table (conf/experiment/<name>.yaml)")
    add_table_options(p)
    return p


def table_and_experiments(names: list[str]) -> tuple[str, list[str] | None]:
    """One table name, or experiment names (all of one table): the table, and the experiments to run (None: its default)."""
    if len(names) == 1 and "=" not in names[0] and names[0] not in {e.name for e in definitions.all_experiments()}:
        return names[0], None
    bare = [n for n in names if "=" in n]
    if bare:
        raise RnnbenchError(f"{bare[0]}: give overrides with --set {bare[0]}")
    by_name = {e.name: e for e in definitions.all_experiments()}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise RnnbenchError(f"no experiment {unknown[0]!r} (conf/experiment/); `rnnbench list experiments` names them")
    tables = sorted({str(by_name[n].table) for n in names})
    if len(tables) != 1:
        raise RnnbenchError(f"these experiments fill different tables ({', '.join(tables)}); give one table's experiments")
    return tables[0], names


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        table, named = table_and_experiments(args.names)
    except RnnbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    mode = PLAN if args.plan else NO_RUN if args.no_run else RUN
    try:
        return make_table(table, only=args.only or named, mode=mode, until=args.until, overrides=args.overrides,
                          skip_sanity=args.skip_sanity, part=args.part, replace_committed=args.replace_committed)
    except RnnbenchError as exc:  # the campaign raises, the command prints
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
