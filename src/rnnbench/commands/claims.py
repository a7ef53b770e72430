"""``rnnbench claims``: write results/claims.md, the claims ledger: every paper claim with ours and a
verdict (the rule: docs/verdicts.md), decided once (``results.decisions``).

Reads only the committed evidence (results/<table>.csv, .items.csv.xz and .parameters.csv) and the
registry (src/rnnbench/results/paper_numbers/); a table without evidence is "not run", or "data
missing" when its experiments' dataset files are absent from RNNBENCH_DATA (``campaign.data_status``).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = """Write results/claims.md, the claims ledger: every paper claim with our number, its interval and a
verdict, decided on the committed evidence (results/<table>.csv) only; nothing is trained."""


def add_parser(verbs, verb: str, summary: str) -> None:
    parser = verbs.add_parser(verb, help=summary, description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", default=None, help="the evidence folder (default: results)")
    parser.set_defaults(run=lambda args: main([*(["--results", args.results] if args.results else [])]))


def main(argv: list[str] | None = None) -> int:
    # Imported here, not above: `rnnbench --help` builds every verb's parser and must not load torch.
    from rnnbench.campaign.data_status import status_of_table
    from rnnbench.compose import compose_config
    from rnnbench.results import ledger

    parser = argparse.ArgumentParser(prog="rnnbench claims", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, default=Path("results"), help="the evidence folder (default: results)")
    results = parser.parse_args(argv).results
    data = Path(str(compose_config([]).paths.data_dir))  # the config's RNNBENCH_DATA rule, as the tables read it
    if not data.is_dir():  # every table without evidence would then read "data missing": say why once
        print(f"warning: data folder {data} not found (RNNBENCH_DATA); tables without evidence are marked "
              "'data missing'. Set RNNBENCH_DATA to the folder that holds the datasets.", file=sys.stderr)
    text = ledger.build(results, status_of_table)
    (results / "claims.md").write_text(text)
    print(next(line for line in text.splitlines() if line.startswith("**")))
    print(f"wrote {results / 'claims.md'}")
    return 0

