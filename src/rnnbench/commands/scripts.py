"""``rnnbench table``, ``rnnbench claims`` and ``rnnbench sanity``: the repository scripts that
build the paper tables, the claims ledger and the sanity gate, run from the command.

They live in ``scripts/`` of a checkout (not in an installed wheel), and are loaded from
there by path. ``rnnbench table NAME`` runs every experiment whose config names the table
(``table.name``) through ``scripts/make_table.py``; a Makefile target that runs a subset of a
table first (``make table-odyssey-1``, ``make table-fhe-2-small``) stays the way to do that.
"""
from __future__ import annotations

import argparse
import importlib.util
import inspect
import sys
from pathlib import Path

from rnnbench.errors import ConfigError

TABLE_HELP = """Regenerate a paper table: run what is missing of the sweep of every experiment that fills it
(their configs' table.name), under the comparison protocol, then write results/NAME.{md,tex,csv}.
Finished runs are skipped and interrupted ones resume: stop and start it again at will.

  rnnbench table rcrn_table5 --plan      run nothing: the runs finished and to run, with CPU hours estimated
  rnnbench table rcrn_table5             run what is missing, then write the table
  rnnbench table rcrn_table5 --no-run    only assemble the table from finished (and committed) runs
  rnnbench table rcrn_table5 --set paths.runs_dir=/tmp/r    an extra override for every run

`rnnbench list tables` names the tables; a table's experiments run one after the other, in name order."""
CLAIMS_HELP = """Write results/claims.md, the claims ledger: every paper claim with our number, its interval and a
verdict, decided on the committed evidence (results/<table>.csv) only; nothing is trained."""
SANITY_HELP = """Run the sanity gate, scripts/sanity.py of a checkout, with these arguments as they are: checks
that each encoder under each experiment config learns and reads its input as it should, before
its runs are trusted. `rnnbench sanity --help` shows the script's own options."""


def add_parser(verbs, verb: str, summary: str) -> None:
    raw = argparse.RawDescriptionHelpFormatter
    if verb == "table":
        parser = verbs.add_parser(verb, help=summary, description=TABLE_HELP, formatter_class=raw)
        parser.add_argument("name", metavar="NAME", help="a table, e.g. rcrn_table5 or mzu_table6 (rnnbench list tables)")
        mode = parser.add_mutually_exclusive_group()
        mode.add_argument("--plan", action="store_true", help="run nothing: list the runs finished and to run, with CPU hours")
        mode.add_argument("--no-run", action="store_true", help="only assemble the table from finished runs")
        parser.add_argument("--until", metavar="HH:MM", help="start a run only if it is expected to end by then")
        parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                            help="an extra Hydra override for every run (repeatable)")
        parser.set_defaults(run=table)
    elif verb == "claims":
        parser = verbs.add_parser(verb, help=summary, description=CLAIMS_HELP, formatter_class=raw)
        parser.add_argument("--results", default=None, help="the evidence folder (default: results)")
        parser.set_defaults(run=claims)
    else:  # listed in `rnnbench --help`; its arguments go to run_sanity as they are
        verbs.add_parser(verb, help=summary, description=SANITY_HELP, formatter_class=raw, add_help=False)


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


def table_experiments(name: str) -> list[str]:
    """The experiments whose config names table ``name``; one error line naming the tables if none does."""
    from rnnbench.commands.listing import tables

    known = tables()
    if name not in known:
        raise ConfigError(f"no experiment config fills a table {name!r}; the tables: {', '.join(sorted(known))}")
    return known[name]


def table(args) -> int:
    experiments = table_experiments(args.name)
    argv = [*experiments, *(["--plan"] if args.plan else []), *(["--no-run"] if args.no_run else []),
            *(["--until", args.until] if args.until else []), *[f"--set={o}" for o in args.overrides]]
    print(f"table {args.name}: {len(experiments)} experiment{'s' * (len(experiments) > 1)} ({', '.join(experiments)})", flush=True)
    return load_script("make_table", "rnnbench table").main(argv)


def claims(args) -> int:
    return load_script("claims", "rnnbench claims").main([*(["--results", args.results] if args.results else [])])


def run_sanity(argv: list[str]) -> int:
    """scripts/sanity.py's ``main`` on ``argv``; one error line where the checkout has no sanity gate."""
    if not (checkout_scripts() / "sanity.py").is_file():
        if any(a in ("-h", "--help") for a in argv):
            print(f"usage: rnnbench sanity [ARGUMENTS ...]\n\n{SANITY_HELP}")
        raise ConfigError("the sanity gate is not available in this version of rnnbench (no scripts/sanity.py in this checkout)")
    module = load_script("sanity", "rnnbench sanity")
    if not callable(getattr(module, "main", None)):
        raise ConfigError(f"{checkout_scripts() / 'sanity.py'} has no main() to run")
    sys.argv = ["rnnbench sanity", *argv]  # its argparse names the command in its usage line
    return module.main(argv) if inspect.signature(module.main).parameters else module.main()
