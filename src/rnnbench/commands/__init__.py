"""The ``rnnbench`` command (also ``python -m rnnbench``): one verb per task a researcher does.

    rnnbench train [OVERRIDE ...]           train one run, or a sweep with -m (python train.py)
    rnnbench evaluate RUN [--split S]       re-score a finished run (python evaluate.py)
    rnnbench predict RUN "raw text"         a finished run's label and probabilities for new text
    rnnbench runs [compare A B]             your runs as a table; two runs side by side
    rnnbench list encoders|tasks|experiments|tables
    rnnbench table NAME [--plan | --no-run] a paper table under the comparison protocol
    rnnbench ladder [TABLE ...] [--plan]    the regime ladder: reference rows toward the paper's setting
    rnnbench sweep NAME [--plan]            a declared mechanism sweep: where the paper's mechanism is present
    rnnbench compare --encoders A,B [...]   your encoders on your data, under the same protocol
    rnnbench claims                         the claims ledger (results/claims.md)
    rnnbench floors [TABLE ...]             every table column's majority-class score (results/floors.csv)
    rnnbench sanity                         the sanity gate: can each campaign row learn?
    rnnbench report [--out DIR]             the report: a static site of every table, claim and run

Each verb lives in its own module of this package and is imported only when it runs, so
``rnnbench --help`` starts without torch. A bad input is one line on stderr (``error: ...``)
and exit status 2 (130 for Ctrl-C), as train.py does. docs/cli.md documents every verb.
"""
from __future__ import annotations

import argparse
import importlib
import sys

# verb -> (module of this package, one line for `rnnbench --help`)
VERBS = {
    "train": ("train", "train one run, or a sweep with -m (as python train.py)"),
    "evaluate": ("evaluate", "re-score a finished run on a split (as python evaluate.py)"),
    "predict": ("predict", "a finished run's label and probabilities for raw text"),
    "runs": ("runs", "your runs as a table; runs compare A B: two side by side"),
    "list": ("listing", "encoders, tasks, experiments or tables, and whether the data is here"),
    "table": ("table", "run what a paper table lacks, then write it (results/NAME.md)"),
    "ladder": ("ladder", "the regime ladder: each table's reference row on rungs toward the paper's setting (results/regime_ladder.md)"),
    "sweep": ("sweep", "a declared mechanism sweep: the cells of an open choice, screened under a fixed rule (results/sweeps/NAME.md)"),
    "compare": ("compare", "compare encoders on your own data under the tables' protocol (comparisons/NAME/)"),
    "claims": ("claims", "write the claims ledger results/claims.md from the evidence"),
    "floors": ("floors", "write results/floors.csv: each table column's majority-class score on dev and test"),
    "sanity": ("sanity", "check that each campaign row can learn before its runs start (results/sanity.md)"),
    "report": ("report", "build the report: a static site of every table, claim and run (site/)"),
}
# Verbs whose arguments go as they are to what runs them: Hydra's (-m, --cfg job, key=value)
# and the sanity gate's own parser (its --help is the gate's).
PASS_THROUGH = {"train": "run_hydra", "sanity": "run_sanity"}


class NamesAction(argparse.Action):
    """A list option (``nargs="+"``) that takes its names space- or comma-separated
    (``--only a b`` or ``--only a,b``), as Hydra's sweeps spell lists."""

    def __call__(self, parser, namespace, values, option_string=None):
        names = [name for value in values for name in value.split(",") if name]
        setattr(namespace, self.dest, names)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rnnbench", description="Reproduce and compare recurrent sequence encoders across NLP tasks.",
        epilog="`rnnbench VERB --help` describes a verb; docs/cli.md all of them.")
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    for verb, (module, summary) in VERBS.items():
        importlib.import_module(f"rnnbench.commands.{module}").add_parser(verbs, verb, summary)
    return parser


def main(argv: list[str] | None = None) -> int:
    from rnnbench.errors import RnnbenchError

    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in PASS_THROUGH:
            module = importlib.import_module(f"rnnbench.commands.{VERBS[argv[0]][0]}")
            return int(getattr(module, PASS_THROUGH[argv[0]])(argv[1:]) or 0)
        parser = build_parser()
        args, extra = parser.parse_known_args(argv)
        # Positional arguments after an option (`evaluate RUN --split dev key=value`) are what argparse
        # leaves over: they join the verb's list of positionals (its `extras`), options never do.
        if extra and (not getattr(args, "extras", None) or any(e.startswith("-") for e in extra)):
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        if extra:
            getattr(args, args.extras).extend(extra)
        return int(args.run(args) or 0)
    except RnnbenchError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr, flush=True)
        return 130
