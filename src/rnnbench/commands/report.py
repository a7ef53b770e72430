"""``rnnbench report``: the report, a static site of every table, claim and run (docs/report.md).

Builds the site as ``make report`` does (``rnnbench.site.build``). A table without evidence is
"not run" or "data missing" as the ledger tells them apart (``campaign.data_status``).
"""
from __future__ import annotations

import argparse

HELP = """Build the report: a static site of every table, claim and run, from the committed evidence
(results/), your runs (runs/, or RNNBENCH_RUNS) and your comparisons (comparisons/, written by
rnnbench compare), into site/ (ignored by git). Open site/index.html in a browser, or put the folder
on any static host: no server, nothing fetched from elsewhere.

  rnnbench report                    write site/
  rnnbench report --out /tmp/report  somewhere else
  rnnbench report --comparisons DIR  your comparisons from another folder (rnnbench compare --out DIR/NAME)"""


def add_parser(verbs, verb: str, summary: str) -> None:
    from rnnbench.site.options import add_arguments

    parser = verbs.add_parser(verb, help=summary, description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    parser.set_defaults(run=report)


def report(args) -> int:
    from rnnbench.campaign.data_status import status_of_table
    from rnnbench.site.build import run

    return run(args, status_of_table)
