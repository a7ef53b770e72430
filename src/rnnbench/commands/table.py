"""``rnnbench table``: a paper table, run from the command.

``rnnbench table NAME`` is the campaign library's ``make_table`` (rnnbench.campaign): every
experiment whose config names the table (``table.name``), ``--only`` some of them. A table
measured by a benchmark rather than trained (RCRN Table 10) runs that benchmark, a script of a
checkout (``scripts/``, not in an installed wheel), loaded from there by path.
"""
from __future__ import annotations

import argparse
import importlib.util
import inspect
import sys
from pathlib import Path

from rnnbench.commands import NamesAction
from rnnbench.errors import ConfigError

TABLE_HELP = """Regenerate a paper table: run what is missing of the sweep of every experiment that fills it
(their configs' table.name, in their table.order), under the comparison protocol, then write
results/NAME.{md,tex,csv}. Finished runs are skipped and interrupted ones resume: stop and start
it again at will. Experiments with table.not_run (rows out of a CPU budget's reach) run only
when named with --only.

  rnnbench table rcrn_table5 --plan      run nothing: the runs finished and to run, with CPU hours estimated
  rnnbench table rcrn_table5             run what is missing, then write the table
  rnnbench table rcrn_table5 --no-run    only assemble the table from finished (and committed) runs
  rnnbench table rcrn_table5 --no-run --replace-committed    run folders whose numbers differ replace their committed rows
  rnnbench table rcrn_table5 --set paths.runs_dir=/tmp/r    an extra override for every run
  rnnbench table lstm_odyssey_table1 --only lstm_odyssey_table1_large    one experiment of the table
  rnnbench table fhe_table2 --part small      only the CPU-sized rows (table.part), then the whole table

`rnnbench list tables` names the tables (NAME may also be the short form: rcrn-5, odyssey-1; fhe-2-small for a part)."""


def add_parser(verbs, verb: str, summary: str) -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = verbs.add_parser(verb, help=summary, description=TABLE_HELP, formatter_class=raw)
    parser.add_argument("name", metavar="NAME", help="a table, e.g. rcrn_table5 or mzu_table6 (rnnbench list tables)")
    add_table_options(parser)
    parser.set_defaults(run=table)


def add_table_options(parser) -> None:
    """The options of a table's command line, shared by `rnnbench table` and scripts/make_table.py."""
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--plan", action="store_true", help="run nothing: list the runs finished and to run, with CPU hours")
    mode.add_argument("--no-run", action="store_true", help="only assemble the table from finished runs")
    parser.add_argument("--only", nargs="+", action=NamesAction, default=None, metavar="EXPERIMENT",
                        help="run only these experiments of the table (a row left out of the campaign runs when named)")
    parser.add_argument("--part", default=None, help="run only the experiments of this part of the table (table.part: small, large)")
    parser.add_argument("--until", metavar="HH:MM", help="start a run only if it is expected to end by then")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="an extra Hydra override for every run (repeatable)")
    parser.add_argument("--skip-sanity", action="store_true",
                        help="start runs of rows that fail the sanity gate (docs/sanity.md); the table says so")
    parser.add_argument("--replace-committed", action="store_true",
                        help="a run folder whose numbers differ from its committed rows (the same run on another "
                             "processor kind) replaces them; they move to results/NAME.superseded.csv (default: keep them)")


def checkout_scripts() -> Path:
    """The ``scripts/`` folder of the checkout this package runs from."""
    return Path(__file__).resolve().parents[3] / "scripts"


def load_script(name: str, needed_by: str):
    """``scripts/<name>.py`` as a module; one error line when this is not a checkout that has it."""
    path = checkout_scripts() / f"{name}.py"
    if not path.is_file():
        raise ConfigError(f"{needed_by} runs scripts/{name}.py of a checkout, and {path} does not exist "
                          "(an installed package has no scripts/): run it from a clone of the repository")
    spec = importlib.util.spec_from_file_location(f"rnnbench_script_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def table(args) -> int:
    """The campaign library's ``make_table`` (the engine scripts/make_table.py is the command line of)."""
    from rnnbench.campaign import definitions
    from rnnbench.campaign.make import NO_RUN, PLAN, RUN, make_table

    name, part = definitions.resolve(args.name)
    if name in definitions.benchmarks():  # measured by a script of the checkout, not trained
        script = definitions.benchmarks()[name]
        if args.plan or args.no_run:  # measuring again would overwrite the committed timings
            print(f"table {name}: measured by {script}, not trained: {'--plan' if args.plan else '--no-run'} leaves "
                  f"results/{name}.* as committed (`rnnbench table {name}` measures it again, minutes on a CPU)")
            return 0
        return load_script(Path(script).stem, "rnnbench table").main([])
    part = args.part or part
    running = definitions.to_run(name, args.only, part)
    print(f"table {name}: {len(definitions.experiments_of(name))} experiment(s); "
          f"{'planning' if args.plan else 'writing only' if args.no_run else 'running'} {', '.join(running)}", flush=True)
    mode = PLAN if args.plan else NO_RUN if args.no_run else RUN
    return make_table(name, only=args.only, mode=mode, until=args.until, overrides=args.overrides, skip_sanity=args.skip_sanity,
                      part=part, replace_committed=args.replace_committed)
