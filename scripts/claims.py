"""Write results/claims.md, the claims ledger: every paper claim with ours and a verdict
(the rule: docs/verdicts.md).

    python scripts/claims.py            (make claims)

Reads only the committed evidence (results/<table>.csv, .items.csv.gz and .parameters.csv) and the
registry (src/rnnbench/results/paper_numbers/); a table without evidence is "not run",
or "data missing" when its experiments' dataset files are absent from RNNBENCH_DATA.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rnnbench.compose import compose_config
from rnnbench.errors import RnnbenchError
from rnnbench.campaign.definitions import experiments_of
from rnnbench.results import ledger, verdicts
from rnnbench.results.identity import data_inputs


def status_of_table(table: str) -> str:
    """Why a table has no evidence: its data is absent here, or it has not been run."""
    for experiment in experiments_of(table):
        try:
            inputs, _ = data_inputs(compose_config([f"experiment={experiment}"]))
        except RnnbenchError:
            continue
        if any(not p.exists() for name, p in inputs.items() if name != "embedding"):
            return verdicts.DATA_MISSING
    return verdicts.NOT_RUN


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
