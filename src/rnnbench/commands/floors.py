"""``rnnbench floors [TABLE ...]``: write ``results/floors.csv``, the majority-class floor of every
column of the committed tables (``rnnbench.results.floors``), from the data folder."""
from __future__ import annotations

import argparse
from pathlib import Path

HELP = """Write results/floors.csv: for every column of every committed table (results/<table>.csv), the dev
and test splits' majority-class score (always predicting the most common label of the items the
column scores: a hard subset's own majority for a subset column), in the table's units. The claims
ledger reads it to tell a row at the floor. Only accuracy-like columns have one. Reads the data
folder (RNNBENCH_DATA); a table whose data is absent is skipped, its lines kept.

  rnnbench floors                       every committed table
  rnnbench floors mzu_table6 rcrn-7     only these (the others' lines are kept)
  rnnbench floors --results /tmp/res    another evidence folder"""


def add_parser(verbs, verb: str, summary: str) -> None:
    parser = verbs.add_parser(verb, help=summary, description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tables", nargs="*", metavar="TABLE", help="tables to recompute (default: every committed one)")
    parser.add_argument("--results", default="results", help="the evidence folder (default: results)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="an extra Hydra override for every experiment config, e.g. paths.data_dir=/data (repeatable)")
    parser.set_defaults(run=floors)


def floors(args) -> int:
    from rnnbench.campaign.definitions import resolve
    from rnnbench.errors import ConfigError
    from rnnbench.campaign.floors import FILE, write_floors

    results = Path(args.results)
    if not results.is_dir():
        raise ConfigError(f"evidence folder {results} does not exist: run from the repository root or give --results DIR")
    tables = [resolve(name)[0] for name in args.tables] or None
    written = write_floors(results, tables, args.overrides, say=lambda line: print(line, flush=True))
    print(f"wrote {results / FILE}: {len(written)} floors")
    return 0
