"""Regenerate a paper table: run what is missing of its sweep, then write results/<table>.{md,tex}.

    python scripts/make_table.py rcrn_table5 [--no-run] [extra overrides ...]

The sweep is the experiment config's `hydra.sweeper.params` (conf/experiment/<name>.yaml).
Two copies started side by side share the work (each skips the runs the other holds).
Finished runs are skipped and interrupted ones resume, so the command can be
stopped and started again at will. Encoders without a config yet are listed in
the table as "not built yet".
"""
from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

from rnnbench.compose import compose_config
from rnnbench.encoders.build import known_encoders
from rnnbench.errors import RnnbenchError, RunInProgress
from rnnbench.results.identity import run_dir
from rnnbench.results.records import read_record
from rnnbench.results.tables import build_rows, describe_runs, paper_table, write_table
from rnnbench.run import train


def sweep_of(experiment: str, extra: list[str]) -> tuple[list[str], list[str]]:
    cfg = compose_config([f"experiment={experiment}", *extra], return_hydra_config=True)
    params = cfg.hydra.sweeper.params
    return str(params.encoder).split(","), str(params.seed).split(",")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("experiment", help="conf/experiment/<name>.yaml, e.g. rcrn_table5")
    parser.add_argument("--no-run", action="store_true", help="only assemble the table from finished runs")
    parser.add_argument("overrides", nargs="*", help="extra Hydra overrides for every run (e.g. paths.runs_dir=...)")
    args = parser.parse_args(argv)

    encoders, seeds = sweep_of(args.experiment, args.overrides)
    built = set(known_encoders())
    jobs = [(enc, seed) for enc, seed in itertools.product(encoders, seeds) if enc in built]
    configs = {job: compose_config([f"experiment={args.experiment}", f"encoder={job[0]}", f"seed={job[1]}", *args.overrides]) for job in jobs}
    if not args.no_run:
        for (enc, seed), cfg in configs.items():
            if read_record(run_dir(cfg)) is not None:
                continue
            print(f"== {enc} seed {seed}", flush=True)
            try:
                train(cfg)
            except RunInProgress as exc:  # a second `make table-...` is running it: take the next job
                print(f"skipped: {exc}", flush=True)
            except RnnbenchError as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 2
    # Assemble from whatever has finished now (a parallel copy may have finished more).
    values: dict[str, list[float]] = {}
    records = []
    cfg = compose_config([f"experiment={args.experiment}", *args.overrides])
    for (enc, _), run_cfg in configs.items():
        record = read_record(run_dir(run_cfg))
        if record is not None:
            records.append(record)
            values.setdefault(enc, []).append(record["test"][cfg.table.metric] * cfg.table.scale)
    table = paper_table(cfg.table.name)
    rows = build_rows(table, cfg.table.column, values, built)
    title = f"{table['paper'].upper()} Table {table['table']}: {table['caption']} (test {cfg.table.metric}, %)"
    md, tex = write_table(cfg.table.name, title, rows, describe_runs(records), Path(cfg.paths.results_dir))
    print(md.read_text())
    print(f"wrote {md} and {tex}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
