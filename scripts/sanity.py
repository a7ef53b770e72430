"""Sanity-check every row a campaign runs, and write results/sanity.md (``rnnbench sanity``, ``make
sanity``): a thin wrapper over ``rnnbench.campaign.sanity_report``.

    python scripts/sanity.py [TABLE ...] [--plan | --no-run] [--budget-minutes N]
"""
from __future__ import annotations

import sys

from rnnbench.campaign.sanity_report import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
