"""The report's command-line options, of ``rnnbench report``
(light: ``rnnbench --help`` imports it without matplotlib or torch)."""
from __future__ import annotations

import argparse
import os
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=Path("site"), help="the folder to write the site into (default: site)")
    parser.add_argument("--results", type=Path, default=Path("results"), help="the committed evidence (default: results)")
    parser.add_argument("--runs", type=Path, default=None, help="your runs (default: RNNBENCH_RUNS, else runs)")
    parser.add_argument("--comparisons", type=Path, default=Path("comparisons"),
                        help="your comparisons, one folder each (rnnbench compare; default: comparisons)")


def runs_folder(args: argparse.Namespace) -> Path:
    return args.runs if args.runs is not None else Path(os.environ.get("RNNBENCH_RUNS") or "runs")
