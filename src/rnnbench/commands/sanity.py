"""``rnnbench sanity``: the sanity gate over every row a campaign runs (``campaign.sanity_report``),
its arguments passed as they are (its --help is the gate's own)."""
from __future__ import annotations

import argparse

HELP = """Run the sanity gate: check that each encoder under each experiment config learns and reads its
input as it should, before its runs are trusted. `rnnbench sanity --help` shows its options."""


def add_parser(verbs, verb: str, summary: str) -> None:
    """Listed in `rnnbench --help`; its arguments go to ``main`` as they are (``run_sanity``)."""
    verbs.add_parser(verb, help=summary, description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter, add_help=False)


def run_sanity(argv: list[str]) -> int:
    return main(argv)


def main(argv: list[str] | None = None) -> int:
    from rnnbench.campaign.sanity_report import main as check_rows  # torch: not for `rnnbench --help`

    return check_rows(argv)
