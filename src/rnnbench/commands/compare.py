"""``rnnbench compare --encoders A,B[,...] [OVERRIDE ...]``: your encoders on your data, under the
comparison protocol of the paper tables (docs/compare.md).

The comparison is defined in memory from the arguments (``rnnbench.campaign.comparison``): no
experiment config and no registry file to write. It then runs as a paper table does
(``campaign.make.make_experiments``) and prints each encoder against the baseline: the mean
difference, its interval at the pair's Holm level, p raw and Holm-adjusted over the pairs, the
verdict, and what would decide an inconclusive one.
"""
from __future__ import annotations

import argparse

HELP = """Compare encoders on your own data under the protocol the paper tables use: the sanity gate, the
learning rate chosen on dev over the first two seeds (the grid extended past an edge the choice sits
at), the remaining seeds at that rate, every encoder paired seed by seed; then each encoder against
the baseline, with Holm's correction over the pairs. Finished runs are skipped and interrupted ones
resume: stop it and start it again at will.

  rnnbench compare --encoders bilstm,rcrn,3l_bilstm task=text_classification task.reader.path=mine.csv
  rnnbench compare --encoders bilstm,rcrn task=text_classification task.reader.path=mine.csv --plan
  rnnbench compare --encoders rcrn,bilstm --baseline bilstm --seeds 5 --lr-grid 1e-3,3e-3 task=...
  rnnbench compare --encoders bilstm,rcrn task=text_pair_classification task.reader.path=pairs.jsonl \\
      'task.reader.text_fields=[premise,hypothesis]'

The arguments after the options are Hydra overrides, as for rnnbench train (the task, its data, sizes,
embedding=random ...), the same for every run. It writes comparisons/NAME/ (NAME: the task and the
data file's stem, or --name): NAME.md (the table and the comparison), NAME.csv (every run), NAME.items.csv.xz
(each test item's score), NAME.tex, plots/NAME.png and floors.csv; rnnbench report shows it.
docs/compare.md says how to read the verdicts."""


def add_parser(verbs, verb: str, summary: str) -> None:
    parser = verbs.add_parser(verb, help=summary, description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("overrides", nargs="*", metavar="OVERRIDE",
                        help="Hydra overrides for every run: task=..., task.reader.path=..., embedding=..., encoder sizes")
    parser.add_argument("--encoders", metavar="A,B,...", help="the encoders to compare, two or more (rnnbench list encoders)")
    parser.add_argument("--baseline", metavar="ENCODER", help="the encoder each other is compared with (default: the first listed)")
    parser.add_argument("--seeds", metavar="N", help="paired seeds per encoder, 1..N (default 5)")
    parser.add_argument("--lr-grid", metavar="LR,LR,...",
                        help="the learning rates chosen among on dev (default: the task's rate, twice it and half it)")
    parser.add_argument("--name", help="the comparison's name, its folder's and files' (default: <task>_<data file stem>)")
    parser.add_argument("--out", type=_path, metavar="DIR", help="where to write it (default: comparisons/NAME)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--plan", action="store_true", help="run nothing: the runs finished and to run, with CPU hours")
    mode.add_argument("--no-run", action="store_true", help="only write the comparison from finished runs")
    parser.add_argument("--until", metavar="HH:MM", help="start a run only if it is expected to end by then")
    parser.add_argument("--skip-sanity", action="store_true",
                        help="start runs of encoders that fail the sanity gate (docs/sanity.md); the table says so")
    parser.set_defaults(run=compare, extras="overrides")


def _path(text: str):
    from pathlib import Path

    return Path(text)


def compare(args) -> int:
    from rnnbench.campaign import comparison
    from rnnbench.campaign.make import NO_RUN, PLAN, RUN, make_experiments

    spec, base = comparison.build(args.encoders, args.baseline, args.seeds, args.lr_grid, args.name, args.out, args.overrides)
    comparison.check_data(base, read=not args.plan)
    comparison.define(spec, base)
    mode = PLAN if args.plan else NO_RUN if args.no_run else RUN
    doing = "planning" if args.plan else "writing only" if args.no_run else "running"
    print(f"compare {spec.name}: {', '.join(spec.encoders)} against {spec.baseline}, seeds {spec.seeds[0]}-{spec.seeds[-1]}, "
          f"learning rates {', '.join(f'{r:g}' for r in spec.lr_grid)}; {doing}", flush=True)
    if not args.plan:
        comparison.write_floors(spec)
    make_experiments(spec.name, [spec.experiment], [spec.experiment], mode, args.until, spec.extra(), args.skip_sanity)
    if args.plan:
        return 0
    print("\n".join(comparison.summary(spec)))
    md, csv_path, items = spec.files()
    folder = spec.out.parent
    report = "rnnbench report" + ("" if folder.absolute() == comparison.OUT.absolute() else f" --comparisons {folder}")
    print(f"wrote the table {md}, every run's evidence {csv_path}"
          + (f", each test item's score {items}" if items.exists() else "") + f" ({report} shows it)")
    return 0
