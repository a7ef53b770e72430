"""``rnnbench sweep NAME``: a declared mechanism sweep (``rnnbench.campaign.sweep``), run from the command."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rnnbench.errors import RnnbenchError

HELP = """A mechanism sweep: cells of options a paper leaves open (a grid of overrides of one experiment),
screened under a rule declared with them before any run, to find the setting in which the mechanism
the paper credits is present (FHE's sparse gates). The declarations are the package's
campaign/sweeps/NAME.yaml; docs/encoders.md says why each cell and rule.

    rnnbench sweep fhe_table4_sparsity --plan     # the runs the rule asks for now, in CPU hours
    rnnbench sweep fhe_table4_sparsity            # run them (finished runs are read back)
    rnnbench sweep fhe_table4_sparsity --until 18:30
    rnnbench sweep fhe_table4_sparsity --no-run   # only write the page from the CSV

Every cell runs on the screen seeds; a cell that passes the rule runs on the confirm seeds; of the
cells that pass on all of them, the best mean dev score is chosen (test is never read). Runs train
in this process, one thread each, into their run folders (interrupted ones resume); after each,
results/sweeps/NAME.runs.csv (one row per run) and results/sweeps/NAME.md are written again."""


def add_parser(verbs, verb: str, summary: str) -> None:
    parser = verbs.add_parser(verb, help=summary, description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_sweep_options(parser)
    parser.set_defaults(run=sweep)


def add_sweep_options(p) -> None:
    p.add_argument("name", metavar="NAME", help="a declared sweep, e.g. fhe_table4_sparsity")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--plan", action="store_true", help="run nothing: the runs the rule asks for now, with CPU hours")
    mode.add_argument("--no-run", action="store_true", help="only write the page from the CSV")
    p.add_argument("--until", metavar="HH:MM", help="start a run only if it is expected to end by then")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="an extra Hydra override for every run (repeatable), e.g. --set paths.runs_dir=/tmp/r")
    p.add_argument("--results", type=Path, default=Path("results"), help="the committed evidence the rule's reference row is read from")
    p.add_argument("--out", type=Path, default=None, help="where NAME.{runs.csv,md} go (default: RESULTS/sweeps)")


def sweep(args) -> int:
    """The campaign library's ``run_sweep``; its errors are one line on stderr, exit status 2."""
    # Imported here: `rnnbench --help` builds every verb's parser and must not load torch.
    from rnnbench.campaign.sweep import NO_RUN, PLAN, RUN, run_sweep

    mode = PLAN if args.plan else NO_RUN if args.no_run else RUN
    try:
        return run_sweep(args.name, mode=mode, until=args.until, overrides=args.overrides, results=args.results, out=args.out)
    except RnnbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
