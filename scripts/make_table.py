"""Regenerate a paper table: run what is missing of its sweep, then write results/<table>.{md,tex}.

    python scripts/make_table.py rcrn_table5 [--no-run] [extra overrides ...]
    python scripts/make_table.py rcrn_table8_wikiqa rcrn_table8_wikiqa_ap rcrn_table8_trecqa rcrn_table8_trecqa_ap

The sweep is the experiment config's `hydra.sweeper.params` (conf/experiment/<name>.yaml).
Several experiments may fill one table (its columns or variants: `table.columns`,
`table.variant`); they run one after the other and the table is assembled from all.
Two copies started side by side share the work (each skips the runs the other holds).
Finished runs are skipped and interrupted ones resume, so the command can be
stopped and started again at will. Encoders without a config yet are listed in
the table as "not built yet".
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from rnnbench.compose import compose_config
from rnnbench.encoders.build import known_encoders
from rnnbench.errors import RnnbenchError, RunInProgress
from rnnbench.results import protocol
from rnnbench.results.identity import run_dir
from rnnbench.results.records import read_record
from rnnbench.results.tables import (PAPER_NOTE, build_rows, column_metrics, describe_runs, ours_only_table, paper_table,
                                     table_title, write_table)
from rnnbench.run import train


def sweep_of(experiment: str, extra: list[str]) -> list[str]:
    """The encoders of an experiment's sweep (its ``hydra.sweeper.params.encoder``)."""
    cfg = compose_config([f"experiment={experiment}", *extra], return_hydra_config=True)
    return str(cfg.hydra.sweeper.params.encoder).split(",")


def job_config(experiment: str, job: protocol.Job, extra: list[str]):
    return compose_config([f"experiment={experiment}", f"encoder={job.encoder}", f"seed={job.seed}", f"trainer.lr={job.lr!r}", *extra])


def ensure(experiment: str, job: protocol.Job, extra: list[str], wait: bool) -> dict | None:
    """The job's record: read it, else train the run. A run locked by another process is
    skipped (``wait=False``) or waited for (polling) until its record appears."""
    cfg = job_config(experiment, job, extra)
    while True:
        record = read_record(run_dir(cfg))
        if record is not None:
            return record
        print(f"== {experiment}: {job.encoder} seed {job.seed} lr {job.lr:g} ({job.phase})", flush=True)
        try:
            return train(cfg)
        except RunInProgress as exc:  # a second `make table-...` is running it
            if not wait:
                print(f"skipped: {exc}", flush=True)
                return None
            time.sleep(20)


def chosen_lr(experiment: str, base, encoder: str, extra: list[str], wait: bool, run: bool) -> tuple[float | None, dict]:
    """The encoder's learning rate under the protocol, and {lr: [dev scores]} it was chosen on
    (None while a selection run is missing)."""
    select, lower = base.task.select_metric, base.task.get("select_mode", "max") == "min"
    dev_by_lr: dict[float, list[float]] = {}
    for job in protocol.selection_jobs(encoder, base.table.protocol, base.trainer.lr):
        record = ensure(experiment, job, extra, wait) if run else read_record(run_dir(job_config(experiment, job, extra)))
        if record is None:
            return None, dev_by_lr
        dev_by_lr.setdefault(job.lr, []).append(record["dev"][select])
    return protocol.choose_lr(dev_by_lr, lower), dev_by_lr


def run_missing(experiment: str, base, encoders: list[str], extra: list[str]) -> int:
    """Run the protocol: every selection run first (two copies of this script share them),
    then per encoder the remaining seeds at its chosen rate."""
    try:
        for enc in encoders:
            for job in protocol.selection_jobs(enc, base.table.protocol, base.trainer.lr):
                ensure(experiment, job, extra, wait=False)
        for enc in encoders:
            lr, _ = chosen_lr(experiment, base, enc, extra, wait=True, run=True)
            for job in protocol.final_jobs(enc, base.table.protocol, lr):
                ensure(experiment, job, extra, wait=False)
    except RnnbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def footnotes(records_by_task: dict[str, list[dict]], data_notes: list[str], dev: dict, digits: int, paper: bool) -> list[str]:
    notes: list[str] = [] if records_by_task else ["No finished runs yet."]
    for task, records in records_by_task.items():
        prefix = f"{task}: " if len(records_by_task) > 1 else ""
        notes += [prefix + line for line in describe_runs(records)]
    notes += [n for n in dict.fromkeys(data_notes) if n]
    if dev:
        notes.append(dev_footnote(dev, digits))
    if paper:
        notes.append(PAPER_NOTE)
    return notes


def dev_footnote(dev: dict[tuple, dict[str, list[float]]], digits: int) -> str:
    """Our dev scores at the selected epoch (mean over seeds): the split a run selects on."""
    parts = []
    for (enc, variant), cells in dev.items():
        name = f"`{enc}`" + (f" ({variant})" if variant else "")
        parts.append(name + " " + ", ".join(f"{c} {statistics.fmean(v):.{digits}f}" for c, v in cells.items()))
    return "Dev, at the selected epoch (mean over seeds): " + "; ".join(parts) + "."


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("experiments", nargs="+", metavar="experiment",
                        help="conf/experiment/<name>.yaml, e.g. rcrn_table5; several may fill one table (then before any override)")
    parser.add_argument("--no-run", action="store_true", help="only assemble the table from finished runs")
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        help="an extra Hydra override for every run (repeatable), e.g. --set paths.runs_dir=/tmp/r")
    args = parser.parse_args(argv)
    # Overrides given bare after the experiments (the old form `make_table.py exp a=b`) are overrides too.
    experiments = [e for e in args.experiments if "=" not in e]
    overrides = [e for e in args.experiments if "=" in e] + args.overrides

    built = set(known_encoders())
    plans = []
    for experiment in experiments:
        encoders = [e for e in sweep_of(experiment, overrides) if e in built]
        plans.append((experiment, compose_config([f"experiment={experiment}", *overrides]), encoders))
    names = {cfg.table.name for _, cfg, _ in plans}
    if len(names) != 1:
        print(f"error: these experiments fill different tables ({', '.join(sorted(names))}); give one table's experiments", file=sys.stderr)
        return 2
    if not args.no_run:
        for experiment, base, encoders in plans:
            code = run_missing(experiment, base, encoders, overrides)
            if code:
                return code

    # Assemble from whatever has finished now (a parallel copy may have finished more).
    ours: dict[tuple, dict[str, list[float]]] = {}
    dev: dict[tuple, dict[str, list[float]]] = {}  # the same cells on the dev split, for a footnote
    records_by_task: dict[str, list[dict]] = {}
    columns: list[str] = []
    for experiment, cfg, encoders in plans:
        mapping = column_metrics(cfg.table)
        columns += [c for c in mapping if c not in columns]
        for enc in encoders:
            lr, _ = chosen_lr(experiment, cfg, enc, overrides, wait=False, run=False)
            if lr is None:
                continue
            finished = [read_record(run_dir(job_config(experiment, protocol.Job(enc, int(s), lr, "final"), overrides)))
                        for s in cfg.table.protocol.seeds]
            for record in finished:
                if record is None:
                    continue
                records_by_task.setdefault(record["task"], []).append(record)
                cells = ours.setdefault((enc, cfg.table.variant), {})
                for column, metric in mapping.items():
                    cells.setdefault(column, []).append(record["test"][metric] * cfg.table.scale)
                    if metric in record.get("dev", {}):
                        dev.setdefault((enc, cfg.table.variant), {}).setdefault(column, []).append(record["dev"][metric] * cfg.table.scale)
    first = plans[0][1]
    table = ours_only_table(first.table.caption) if first.table.caption else paper_table(first.table.name)
    has_paper = not table.get("ours_only")
    rows = build_rows(table, columns, ours, built, first.table.digits)
    metrics = dict.fromkeys(m for _, cfg, _ in plans for m in column_metrics(cfg.table).values())
    title = table_title(table, list(metrics), ", %" if first.table.scale == 100 else "")
    notes = footnotes(records_by_task, [cfg.table.data_note for _, cfg, _ in plans], dev, first.table.digits, has_paper)
    md, tex = write_table(first.table.name, title, rows, notes, Path(first.paths.results_dir), columns, has_paper)
    print(md.read_text())
    print(f"wrote {md} and {tex}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
