"""The regime ladder (``rnnbench ladder``): each complete-data table's reference row measured on rungs
of settings that climb from today's toward the paper's, written to results/regime_ladder.md. A thin
wrapper over ``rnnbench.commands.ladder``; the ladder itself is ``rnnbench.campaign.ladder``.

    python scripts/regime_ladder.py --plan            # the runs to do, in CPU hours; runs nothing
    python scripts/regime_ladder.py rcrn_table5       # some tables (default: all, cheapest first)
    python scripts/regime_ladder.py --no-run          # only write results/regime_ladder.md from the CSV

`rnnbench ladder --help` (or this script's) lists every option.
"""
from __future__ import annotations

import sys

from rnnbench.commands.ladder import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
