"""Write results/claims.md, the claims ledger (``rnnbench claims``, ``make claims``): a thin wrapper
over ``rnnbench.commands.claims``.

    python scripts/claims.py [--results results]
"""
from __future__ import annotations

import sys

from rnnbench.campaign.data_status import status_of_table  # noqa: F401 - what the ledger asks of a table without evidence
from rnnbench.commands.claims import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
