"""``rnnbench ladder``: the regime ladder (results/regime_ladder.md), run from the command.

``rnnbench ladder`` is the campaign library's ``climb_ladder`` (``rnnbench.campaign.ladder``):
each complete-data table's reference row measured on rungs of settings that climb from today's
toward the paper's. scripts/regime_ladder.py is the same command.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rnnbench.campaign.ladder_rungs import DEFAULT_RUNGS, RUNGS, TABLES
from rnnbench.commands import NamesAction
from rnnbench.errors import RnnbenchError

HELP = """The regime ladder: each complete-data table's reference row (the paper's own baseline) measured
on a ladder of settings that climbs from today's toward the paper's, on the selection seeds 1 and 2.

    rnnbench ladder --plan                        # the runs to do, in CPU hours; runs nothing
    rnnbench ladder rcrn_table5 rcrn_table3       # some tables (default: all, cheapest first)
    rnnbench ladder rcrn_table1 --only rcrn_table1_mr rcrn_table1_apparel   # some experiments
    rnnbench ladder --rungs 1 2                   # some rungs (default 0 1 2 3; rung 4: ask for it)
    rnnbench ladder --until 18:30                 # start a run only if it should end by then
    rnnbench ladder --no-run                      # only write results/regime_ladder.md from the CSV
    rnnbench ladder --merge /tmp/l2/regime_ladder.runs.csv   # add a second process's rows (its --out), then --no-run

The rungs, each adding to the one before:

0. today's setting: the table's committed runs (results/<table>.csv), read, never re-run;
1. trained word vectors (``embedding.freeze=false``);
2. dropout p on the embedding layer's output and on the head (and between the encoder's layers
   where it has several), p of {0.2, 0.5} chosen on the mean dev score of seeds 1-2 (test is never
   read for it; a tie goes to the smaller p); both p's runs are evidence;
3. the RCRN paper's character BiGRU (``embedding.char.kind=bigru``) at rung 2's p;
4. the paper's data setting, where the task has an option for it (SST's phrase-level training,
   IMDb's whole reviews, TrecQA's TRAIN-ALL); elsewhere the rung is "not built".

Every rung runs at the learning rate rung 0 chose on dev, held: a rung whose best rate differs is
under-tuned (said under each table). Runs train in this process, one thread each, into their run
folders (finished runs are read back, interrupted ones resume); after each run the per-run evidence
results/regime_ladder.runs.csv (one row per run and table column) and results/regime_ladder.md are
written again. The Markdown is rendered from the CSV alone, so ``--no-run`` regenerates it byte for
byte. `python scripts/regime_ladder.py` is the same command; docs/reproducing.md ("The regime
ladder") says how to read it."""


def add_parser(verbs, verb: str, summary: str) -> None:
    parser = verbs.add_parser(verb, help=summary, description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_ladder_options(parser)
    parser.set_defaults(run=ladder)


def add_ladder_options(p) -> None:
    """The options of the ladder's command line, shared by `rnnbench ladder` and scripts/regime_ladder.py."""
    p.add_argument("tables", nargs="*", metavar="TABLE", help=f"tables to climb (default, in this order: {' '.join(TABLES)})")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--plan", action="store_true", help="run nothing: the runs to do per rung, with CPU hours")
    mode.add_argument("--no-run", action="store_true", help="only write the Markdown from the CSV")
    p.add_argument("--rungs", nargs="+", type=int, default=list(DEFAULT_RUNGS), choices=RUNGS, metavar="RUNG",
                   help="rungs to run (default 0 1 2 3; 0 is read from the committed evidence, never run)")
    p.add_argument("--only", nargs="+", action=NamesAction, default=None, metavar="EXPERIMENT", help="only these experiments of the tables")
    p.add_argument("--until", metavar="HH:MM", help="start a run only if it is expected to end by then")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="an extra Hydra override for every run (repeatable), e.g. --set paths.runs_dir=/tmp/r")
    p.add_argument("--results", type=Path, default=Path("results"), help="the committed evidence: rung 0's runs (default results)")
    p.add_argument("--out", type=Path, default=None, help="where regime_ladder.{csv,md} go (default: --results)")
    p.add_argument("--merge", nargs="+", type=Path, default=[], metavar="CSV",
                   help="add the rows of other ladder evidence files (a second process's --out) that the CSV lacks, "
                        "keeping its own, then write the Markdown; runs nothing")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="rnnbench ladder", description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_ladder_options(p)
    return p


def main(argv: list[str] | None = None) -> int:
    return ladder(parser().parse_args(argv))


def ladder(args) -> int:
    """The campaign library's ``climb_ladder``; its errors are one line on stderr, exit status 2."""
    # Imported here, not above: `rnnbench --help` builds every verb's parser and must not load torch.
    from rnnbench.campaign.ladder import NO_RUN, PLAN, RUN, climb_ladder

    mode = PLAN if args.plan else NO_RUN if args.no_run or (args.merge and not args.tables) else RUN
    try:
        return climb_ladder(args.tables, only=args.only, mode=mode, rungs=args.rungs, until=args.until,
                            overrides=args.overrides, results=args.results, out=args.out, merge=args.merge)
    except RnnbenchError as exc:  # the campaign raises, the command prints
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
