"""The regime ladder: each complete-data table's reference row (the paper's own baseline) measured
on a ladder of settings that climbs from today's toward the paper's, on the selection seeds 1 and 2
(``rnnbench ladder``, scripts/regime_ladder.py; docs/reproducing.md, "The regime ladder").

The rungs, each adding to the one before (``ladder_rungs``): 0, today's setting, the table's
committed runs (results/<table>.csv), read, never re-run; 1, trained word vectors; 2, dropout p of
{0.2, 0.5} chosen on the mean dev score of seeds 1-2 (both p's runs are evidence); 3, the RCRN
paper's character BiGRU at rung 2's p; 4, the paper's data setting, where the task has an option
for it (elsewhere "not built").

Every rung runs at the learning rate rung 0 chose on dev, held. Runs train in this process, one
thread each, into their run folders (finished runs are read back, interrupted ones resume); after
each run the per-run evidence results/regime_ladder.runs.csv (one row per run and table column:
``Evidence``) and results/regime_ladder.md (rendered from the CSV alone: ``ladder_page``) are
written again. ``climb_ladder`` is the whole of it as one call; what goes wrong is raised
(``RnnbenchError``, one line).
"""
from __future__ import annotations

import csv
import datetime
import functools
import io
import math
import statistics
import subprocess
from dataclasses import dataclass
from pathlib import Path

from rnnbench.campaign import definitions, pricing, protocol
from rnnbench.campaign.definitions import row_name, sweep_of
from rnnbench.campaign.jobs import job_config
from rnnbench.campaign.ladder_page import hours, render
from rnnbench.campaign.ladder_rungs import (CHAR_COST, DEFAULT_RUNGS, DROPOUTS, NO_DATA_OPTION, RUNGS, SEEDS, SMOKE, TABLES,
                                            PaperData, chosen_dropout, paper_data_of, rung_overrides, sort_key)
from rnnbench.campaign.one_run import train_and_say
from rnnbench.errors import RnnbenchError
from rnnbench.results import evidence, gates, plain_rows, timing
from rnnbench.results.identity import run_dir
from rnnbench.results.records import RECORD, is_partial, read_record
from rnnbench.results.tables import column_metrics, model_name, paper_table

RUN, PLAN, NO_RUN = "run", "plan", "no-run"  # what climb_ladder does: climb, print the plan, or only write the Markdown

FIELDS = ["table", "reference", "model", "experiment", "encoder", "variant", "column", "metric", "select_metric", "rung",
          "dropout", "overrides", "seed", "lr", "dev", "test", "selected_epoch", "epochs_run", "status", "cpu_hours",
          "gpu_hours", "device", "hardware", "commit", "date", "run"]


# ---------------------------------------------------------------------------------------------
# What runs: each table's reference row in each of its experiments, at rung 0's rate


@dataclass(frozen=True)
class Target:
    """A table's reference row in one of its experiments: what every rung's runs are of."""

    table: str
    reference: str  # the registry's row: encoder[/variant]
    model: str  # the paper's name for it
    experiment: str
    encoder: str
    variant: str
    columns: tuple[tuple[str, str], ...]  # (table column, metric)
    select_metric: str
    scale: float
    lr: float  # rung 0's chosen rate, held at every rung


@dataclass(frozen=True)
class Run:
    target: Target
    rung: int
    dropout: float | None
    seed: int
    overrides: tuple[str, ...]


def base_config(experiment: str, encoder: str, lr: float, extra: tuple[str, ...] = ()):
    return job_config(experiment, protocol.Job(encoder, SEEDS[0], lr, "select"), list(extra))


def experiments_to_climb(table: str, only: list[str] | None) -> list[str]:
    """The table's experiments the campaign runs (RCRN Table 1: the domains with runs), or those of
    ``only`` that fill it."""
    if only:
        return [name for name in definitions.experiments_of(table) if name in only]
    return definitions.to_run(table)


def targets_of(table: str, experiments: list[str], results_dir: Path, say=print) -> list[Target]:
    """The reference rows of ``table`` (its registry's ``reference.rows``) in each experiment whose
    sweep has the row, with the rate their committed rung-0 runs ran at. An experiment without
    those runs has no rate to hold: said, and left out."""
    registry = paper_table(table)
    committed = rung0_evidence(table, results_dir)
    found = []
    for experiment in experiments:
        encoders = sweep_of(experiment)
        for reference in registry["reference"]["rows"]:
            encoder, variant = gates.split_row(reference)
            if encoder not in encoders:
                continue
            base = base_config(experiment, encoder, 0.0)
            if row_name(base) != reference:
                continue  # the experiment fills another variant of the row (RCRN Table 8 with attentive pooling)
            # the accuracy columns: an encoder statistic (stats:...) has no paper number to climb toward
            columns = tuple((c, m) for c, m in column_metrics(base.table, base).items() if not m.startswith(evidence.STATS))
            rows = [r for r in committed if r["encoder"] == encoder and (r.get("variant") or "") == variant
                    and r["dataset"] in dict(columns)]
            rates = sorted({float(r["lr"]) for r in rows})
            if len(rates) != 1:
                say(f"{experiment}: {reference}: " + ("no committed runs at rung 0 on seeds 1 and 2: no rate to hold, left out"
                                                       if not rates else f"committed runs at several rates {rates}: left out"))
                continue
            found.append(Target(table, reference, model_name(registry, encoder, variant or None), experiment, encoder, variant,
                                columns, str(base.task.select_metric), float(base.table.scale), rates[0]))
    return found


def rung0_evidence(table: str, results_dir: Path) -> list[dict]:
    """The table's committed reported runs on seeds 1 and 2, in table units."""
    path = results_dir / f"{table}.csv"
    rows = evidence.read_csv(path) if path.exists() else []
    return [r for r in rows if r.get("reported") == "yes" and int(r["seed"]) in SEEDS and not r["metric"].startswith(evidence.STATS)]


def paper_data(target: Target) -> PaperData | None:
    return paper_data_of(target.experiment)


# ---------------------------------------------------------------------------------------------
# A rung's runs


def runs_of(target: Target, rung: int, choice: float | None, extra: tuple[str, ...]) -> list[Run]:
    """A rung's runs of ``target`` (none for rung 0, read from the evidence; none for rung 4 where
    the task has no option for the paper's data). Rung 3 and above need rung 2's choice ``choice``."""
    data = paper_data(target)
    if rung == 0 or (rung == 4 and data is None):
        return []
    if rung == 1:
        dropouts = (None,)
    elif rung == 2:
        dropouts = DROPOUTS  # both p on both seeds: the choice's evidence
    else:
        dropouts = (choice,)
    cfg = base_config(target.experiment, target.encoder, target.lr, extra)
    return [Run(target, rung, p, seed, tuple(rung_overrides(cfg, rung, p, data))) for p in dropouts for seed in SEEDS]


def run_config(run: Run, extra: tuple[str, ...]):
    job = protocol.Job(run.target.encoder, run.seed, run.target.lr, "select")
    return job_config(run.target.experiment, job, [*run.overrides, *extra])


# ---------------------------------------------------------------------------------------------
# Evidence: one row per run and table column, in the table's units


def _num(value) -> str:
    return "" if value in (None, "") else repr(float(value))


def ladder_row(target: Target, rung: int, p: float | None, overrides, row: dict, status: str, date: str) -> dict:
    """A ladder row from an evidence row (table units) of one run and column."""
    on_gpu = str(row.get("device", "")).startswith("cuda")
    # CPU-thread hours on a CPU, device hours on a GPU (its thread count is not a cost), as the tables count them
    spent = timing.run_cpu_hours(row["seconds_per_epoch"], row["epochs_run"], 1 if on_gpu else row.get("threads") or 1)
    return {
        "table": target.table, "reference": target.reference, "model": target.model, "experiment": target.experiment,
        "encoder": target.encoder, "variant": target.variant, "column": row["dataset"], "metric": row["metric"],
        "select_metric": target.select_metric, "rung": str(rung), "dropout": "" if p is None else f"{p:g}",
        "overrides": " ".join(overrides), "seed": str(row["seed"]), "lr": f"{float(row['lr']):g}",
        "dev": _num(row["dev"]), "test": _num(row["test"]), "selected_epoch": str(row["selected_epoch"]),
        "epochs_run": str(row["epochs_run"]), "status": status,
        "cpu_hours": "" if on_gpu else f"{spent:.4f}", "gpu_hours": f"{spent:.4f}" if on_gpu else "",
        "device": str(row.get("device", "")), "hardware": str(row.get("hardware", "")), "commit": str(row.get("commit", "")),
        "date": date, "run": str(row["run"]),
    }


def rung0_rows(target: Target, results_dir: Path) -> list[dict]:
    """Rung 0: the committed runs of the reference row on seeds 1 and 2, dated by their code's commit."""
    columns = dict(target.columns)
    return [ladder_row(target, 0, None, (), r, r.get("status") or "", commit_date(str(r.get("commit", ""))))
            for r in rung0_evidence(target.table, results_dir)
            if r["encoder"] == target.encoder and (r.get("variant") or "") == target.variant and r["dataset"] in columns]


@functools.lru_cache(maxsize=None)
def commit_date(commit: str) -> str:
    """The date of a commit of this repository (a "-dirty" one: its base's), or "" when unknown."""
    try:
        done = subprocess.run(["git", "show", "-s", "--format=%cs", commit.removesuffix("-dirty")],
                              capture_output=True, text=True, timeout=10, cwd=Path(__file__).resolve().parent)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 and commit else ""


def record_rows(run: Run, record: dict, folder: Path) -> list[dict]:
    """A finished run's rows, dated by its record's file."""
    target = run.target
    rows = evidence.evidence_rows({**record, "run_dir": str(folder)}, target.model, target.variant, dict(target.columns),
                                  target.scale, "select", True)
    status = SMOKE if is_partial(record) else str(record.get("status") or "")
    date = datetime.date.fromtimestamp((folder / RECORD).stat().st_mtime).isoformat() if (folder / RECORD).exists() else ""
    return [ladder_row(target, run.rung, run.dropout, run.overrides, evidence.in_table_units(r), status, date) for r in rows]


def of_target(row: dict, target: Target) -> bool:
    return (row["table"], row["reference"], row["experiment"]) == (target.table, target.reference, target.experiment)


def row_key(row: dict) -> tuple:
    return (row["table"], row["reference"], row["experiment"], row["rung"], row["dropout"], row["seed"], row["column"])


def csv_text(rows: list[dict]) -> str:
    return plain_rows.csv_text(rows, FIELDS, sort_key)


class Evidence:
    """The ladder's rows, those of earlier invocations kept (a run committed in the CSV counts as
    finished without its folder), rewritten with the Markdown after every change."""

    def __init__(self, out: Path):
        self.csv, self.md = out / "regime_ladder.runs.csv", out / "regime_ladder.md"
        self.rows = {row_key(r): r for r in plain_rows.read_rows(self.csv)}

    def committed(self, run: Run, folder_name: str) -> list[dict]:
        """The rows of a run already in the CSV under its run folder's name (same identity)."""
        keys = {(run.target.table, run.target.reference, run.target.experiment, str(run.rung),
                 "" if run.dropout is None else f"{run.dropout:g}", str(run.seed))}
        return [r for r in self.rows.values() if r["run"] == folder_name and row_key(r)[:6] in keys]

    def add(self, rows: list[dict]) -> None:
        self.rows.update({row_key(r): r for r in rows})

    def set_rung0(self, target: Target, rows: list[dict]) -> None:
        """Rung 0 of ``target`` as the committed evidence has it now (a run it no longer reports goes)."""
        self.rows = {k: r for k, r in self.rows.items() if not (r["rung"] == "0" and of_target(r, target))}
        self.add(rows)

    def choice(self, target: Target) -> float | None:
        return chosen_dropout(list(self.rows.values()), (target.table, target.reference, target.experiment))

    def drop_stale(self, target: Target) -> int:
        """Drop ``target``'s rows that no longer stand for their rung: runs at a rate other than rung
        0's choice (held at every rung), and rung 3-4 runs at a p other than rung 2's choice. A row
        of the current setting replaces its stale twin by key; these have no twin (the key holds p,
        not the rate), and would be averaged into their rung. Returns how many runs went."""
        choice = self.choice(target)

        def stale(r: dict) -> bool:
            if r["rung"] == "0" or not of_target(r, target):
                return False
            other_rate = not math.isclose(float(r["lr"]), target.lr, rel_tol=1e-9)
            other_p = int(r["rung"]) >= 3 and choice is not None and r["dropout"] != "" and float(r["dropout"]) != choice
            return other_rate or other_p

        gone = {k for k, r in self.rows.items() if stale(r)}
        runs = {self.rows[k]["run"] for k in gone}
        self.rows = {k: r for k, r in self.rows.items() if k not in gone}
        return len(runs)

    def merge(self, path: Path) -> tuple[int, int]:
        """Add the rows of another ladder's evidence file (a second process's ``--out``) whose run
        and column these rows lack; a row already here is kept. Returns how many were added, and how
        many of the file's rows differ from the row kept here (said, so that none is dropped unseen)."""
        if not path.is_file():
            raise RnnbenchError(f"--merge {path}: no such file (give a regime_ladder.runs.csv another ladder process wrote with --out)")
        rows = plain_rows.read_rows(path)
        lacking = sorted(set(FIELDS) - set(rows[0])) if rows else []
        if lacking:
            raise RnnbenchError(f"--merge {path}: not a ladder's evidence file (no column {', '.join(lacking)})")

        def fields(row: dict) -> list[str]:
            return [row.get(k, "") for k in FIELDS]

        new = [r for r in rows if row_key(r) not in self.rows]
        differing = sum(1 for r in rows if row_key(r) in self.rows and fields(r) != fields(self.rows[row_key(r)]))
        self.add(new)
        return len(new), differing

    def write(self) -> None:
        text = csv_text(list(self.rows.values()))
        plain_rows.write_text(self.csv, text)
        plain_rows.write_text(self.md, render(list(csv.DictReader(io.StringIO(text)))))


# ---------------------------------------------------------------------------------------------
# Planning and running


def price_per_run(target: Target, rows: list[dict], device: str, rung: int = 0) -> float | None:
    """A rung's mean hours per run (rung 0's by default), from its runs on ``device`` ("cpu",
    "cuda"); None where it has none."""
    runs = {r["run"]: r for r in rows if r["rung"] == str(rung) and of_target(r, target)
            and (r["device"] or "cpu").split(":")[0] == device}.values()
    key = "gpu_hours" if device == "cuda" else "cpu_hours"
    values = [float(r[key]) for r in runs if r[key]]
    return statistics.fmean(values) if values else None


def rung_factor(target: Target, rung: int) -> float:
    """A rung's price over rung 0's: the character BiGRU from rung 3, the paper's data at rung 4."""
    factor = CHAR_COST if rung >= 3 else 1.0
    return factor * (paper_data(target).cost if rung == 4 else 1.0)


def is_finished(run: Run, extra: tuple[str, ...], ladder: Evidence) -> bool:
    folder = run_dir(run_config(run, extra))
    return read_record(folder, allow_smoke=True) is not None or bool(ladder.committed(run, folder.name))


def missing_data(target: Target, rung: int, data_dir: Path) -> str:
    """The file rung 4 needs that the data folder lacks ("" when none)."""
    data = paper_data(target)
    if rung != 4 or data is None or not data.needs or (data_dir / data.needs).exists():
        return ""
    return str(data_dir / data.needs)


def bound_from_other_rows(target: Target, results_dir: Path, device: str) -> float | None:
    """Where rung 0 has no run of ``target`` on ``device`` (RCRN Table 4's BiLSTM ran on a GPU): the
    mean hours per run of the cheapest other row of the same experiment that has, an upper bound
    for the reference row, which is the table's smallest model; None where no row has one."""
    path = results_dir / f"{target.table}.csv"
    rows = evidence.read_csv(path) if path.exists() else []
    per_row: dict[str, list[float]] = {}
    for r in rows:
        if (r["encoder"] == target.encoder or r["dataset"] != target.columns[0][0] or r["seconds_per_epoch"] == ""
                or (str(r["device"]) or "cpu").split(":")[0] != device):
            continue
        threads = 1 if device == "cuda" else r.get("threads") or 1
        per_row.setdefault(f"{r['encoder']}/{r['variant']}", []).append(
            timing.run_cpu_hours(r["seconds_per_epoch"], r["epochs_run"], threads))
    return min((statistics.fmean(v) for v in per_row.values()), default=None)


def plan(targets: list[Target], rungs: list[int], extra: tuple[str, ...], ladder: Evidence, device: str,
         results_dir: Path = Path("results")) -> int:
    """Print the runs to do per experiment and rung with their estimated hours; run nothing."""
    print(f"{'experiment':28} {'row':10} {'rung':>4} {'runs':>5} {'finished':>9} {'to run':>7} {'CPU h/run':>10} {'CPU h to run':>13}")
    total, unpriced = 0.0, []
    rows = list(ladder.rows.values())
    for target in targets:
        price, bound = price_per_run(target, rows, device), False
        if price is None:
            price = bound_from_other_rows(target, results_dir, device)
            bound = price is not None
        for rung in [r for r in rungs if r != 0]:
            choice = ladder.choice(target)
            pending = rung >= 3 and choice is None
            # p not chosen yet: priced at either p (the count and price are the same), none finished
            runs = runs_of(target, rung, DROPOUTS[0] if pending else choice, extra)
            if not runs:
                print(f"{target.experiment:28} {target.reference:10} {rung:>4}  not built ({NO_DATA_OPTION})")
                continue
            done = 0 if pending else sum(1 for run in runs if is_finished(run, extra, ladder))
            left = len(runs) - done
            # A rung's own finished runs price the rest of it: rung 4's factor is the work per epoch,
            # and RCRN Table 3's BiLSTM ran 14 epochs there where rung 3's ran 6 (0.65 CPU h, not 0.11).
            measured = price_per_run(target, rows, device, rung) if done else None
            if measured is not None:
                per_run, at_most = measured, False
            else:
                per_run, at_most = (None if price is None else price * rung_factor(target, rung)), bound
            notes = [f"priced from its {done} finished run(s)"] if measured is not None and left else []
            if pending:
                notes.append("p from rung 2 (not chosen yet)")
            if missing := missing_data(target, rung, Path(str(run_config(runs[0], extra).paths.data_dir))):
                notes.append(f"needs {missing}, absent: not in the total")
            if per_run is None:
                unpriced.append(f"{target.experiment} rung {rung}")
                notes.append(f"rung 0 has no {device} run to price it: not in the total")
            elif not missing:
                total += per_run * left
            if per_run is not None and at_most:
                notes.append(f"at most: rung 0 has no {device} run of the row, priced as the experiment's cheapest other row")
            cost = "?" if per_run is None else f"{per_run:.2g}"
            rest = "?" if per_run is None else f"{per_run * left:.2f}"
            print(f"{target.experiment:28} {target.reference:10} {rung:>4} {len(runs):>5} {done:>9} {left:>7} {cost:>10} {rest:>13}"
                  + (f"  {'; '.join(notes)}" if notes else ""))
    print(f"total to run: {total:.1f} CPU h (training time at one thread; wall time is about 1.5 times that)"
          + (f"; not priced: {', '.join(unpriced)}" if unpriced else ""))
    return 0


def climb(targets: list[Target], rungs: list[int], extra: tuple[str, ...], ladder: Evidence, results_dir: Path,
          deadline: pricing.Deadline) -> int:
    """Per table, rung 0's rows, then each asked-for rung over all the table's experiments before the
    next rung: a stopped climb leaves whole rungs. The CSV and the Markdown are written after every run."""
    failed = 0
    for table in dict.fromkeys(t.table for t in targets):
        of_table = [t for t in targets if t.table == table]
        for target in of_table:
            ladder.set_rung0(target, rung0_rows(target, results_dir))
            _drop_stale(target, ladder)
            note_durations(target, ladder, deadline)
        ladder.write()
        for rung in [r for r in rungs if r != 0]:
            for target in of_table:
                failed += climb_rung(target, rung, extra, ladder, deadline)
                _drop_stale(target, ladder)  # rung 2's choice of p may have moved
        ladder.write()
    return 2 if failed else 0


def _drop_stale(target: Target, ladder: Evidence) -> None:
    if gone := ladder.drop_stale(target):
        p = ladder.choice(target)
        print(f"-- {target.experiment}: {target.reference}: {gone} run(s) of another rate or p left the ladder's evidence "
              f"(rung 0's rate {target.lr:g}, rung 2's p {'not chosen yet' if p is None else f'{p:g}'}; their folders stay)",
              flush=True)


def note_durations(target: Target, ladder: Evidence, deadline: pricing.Deadline) -> None:
    """Give ``--until`` each rung's expected run length: rung 0's longest run times the rung's price factor."""
    for r in {r["run"]: r for r in ladder.rows.values() if r["rung"] == "0" and of_target(r, target)}.values():
        for rung in RUNGS[1:]:
            if rung == 4 and paper_data(target) is None:
                continue  # not built: nothing to time
            seconds = float(r["cpu_hours"] or r["gpu_hours"]) * 3600 * rung_factor(target, rung)
            deadline.note(duration_key(target, rung), {"seconds_per_epoch": seconds, "epochs_run": 1, "device": r["device"]})


def duration_key(target: Target, rung: int) -> str:
    return f"{target.experiment} {target.reference} rung {rung}"


def climb_rung(target: Target, rung: int, extra: tuple[str, ...], ladder: Evidence, deadline: pricing.Deadline) -> int:
    """Every run of one rung of ``target``; returns how many failed."""
    choice = ladder.choice(target)
    if rung >= 3 and choice is None:
        print(f"-- {target.experiment}: {target.reference} rung {rung}: waits for rung 2's choice of p (its runs have not all finished)", flush=True)
        return 0
    runs = runs_of(target, rung, choice, extra)
    if rung == 4 and not runs:
        print(f"-- {target.experiment}: {target.reference} rung 4 not built ({NO_DATA_OPTION})", flush=True)
        return 0
    if missing := missing_data(target, rung, Path(str(run_config(runs[0], extra).paths.data_dir))):
        print(f"-- {target.experiment}: {target.reference} rung {rung} not started: it needs {missing}, absent", flush=True)
        return 0
    failed = 0
    for i, run in enumerate(runs, 1):
        failed += ensure(run, extra, ladder, deadline, f"[{i}/{len(runs)}]")
    return failed


def ensure(run: Run, extra: tuple[str, ...], ladder: Evidence, deadline: pricing.Deadline, count: str) -> int:
    """One run's rows: read back where it finished (its folder, else the CSV), else trained now."""
    cfg = run_config(run, extra)
    folder = run_dir(cfg)
    what = (f"{count} {run.target.experiment}: {run.target.reference} rung {run.rung}"
            + (f" p {run.dropout:g}" if run.dropout is not None else "") + f" seed {run.seed} lr {run.target.lr:g}")
    record = read_record(folder, allow_smoke=True)
    if record is None and ladder.committed(run, folder.name):
        print(f"{what}: finished (committed in {ladder.csv.name})", flush=True)
        return 0
    key = duration_key(run.target, run.rung)
    if record is None and not deadline.allows(key):
        print(f"{what}: not started, would end after --until", flush=True)
        return 0
    earlier = record is not None
    if record is None:
        record, failed = train_and_say(cfg, what, run.overrides, folder)
        if record is None:
            return failed
        deadline.note(key, record)
    rows = record_rows(run, record, folder)
    ladder.add(rows)
    ladder.write()
    select = next((r for r in rows if r["metric"] == r["select_metric"]), rows[0] if rows else None)
    if select is not None:
        print(f"{what}: {'finished earlier: ' if earlier else ''}dev {float(select['dev']):.2f} test {float(select['test']):.2f} "
              f"({select['column']}), {timing.hours_cell(*hours(rows), ' CPU h')}", flush=True)
    return 0



def chosen_tables(names: list[str], only: list[str] | None) -> list[str]:
    unknown = [n for n in names if n not in TABLES]
    if unknown:
        raise RnnbenchError(f"{unknown[0]}: not a table of the ladder; its tables: {', '.join(TABLES)}")
    tables = [t for t in TABLES if t in names] if names else list(TABLES)
    if only:
        named = {e.name: e.table for e in definitions.all_experiments()}
        missing = [e for e in only if named.get(e) not in tables]
        if missing:
            raise RnnbenchError(f"--only {missing[0]}: not an experiment of {', '.join(tables)}")
        tables = [t for t in tables if t in {named[e] for e in only}]
    return tables


def climb_ladder(tables: list[str] | None = None, *, only: list[str] | None = None, mode: str = RUN,
                 rungs=DEFAULT_RUNGS, until: str | None = None, overrides=(), results: Path = Path("results"),
                 out: Path | None = None, merge: list[Path] = ()) -> int:
    """The ladder of ``tables`` (default: all of them, cheapest first), ``only`` some of their
    experiments: RUN climbs ``rungs`` (rung 0 is read from the committed evidence in ``results``),
    PLAN prints the runs to do with their hours and runs nothing, NO_RUN only writes the Markdown
    from the CSV, after adding the rows of the evidence files ``merge`` names that it lacks (two
    ladder processes side by side, the second with its own ``out``). The CSV and the Markdown go to
    ``out`` (default: ``results``). Returns 0, or 2 when a run failed; a bad table or experiment name
    or merged file is raised (``RnnbenchError``)."""
    out = out or results
    ladder = Evidence(out)
    if merge and mode != NO_RUN:
        raise RnnbenchError("--merge only writes the evidence and the page: it runs nothing, so it goes without --plan and tables")
    for path in merge:
        added, differing = ladder.merge(Path(path))
        print(f"{path}: {added} row(s) added" + (f"; {differing} row(s) of it differ from this CSV's, whose are kept (merge the "
                                                  f"other way to keep those instead)" if differing else ""))
    if mode == NO_RUN:
        ladder.write()
        print(f"wrote {ladder.md} from {ladder.csv} ({len({r['run'] for r in ladder.rows.values()})} runs)")
        return 0
    extra = tuple(overrides)
    targets = [t for table in chosen_tables(list(tables or []), only)
               for t in targets_of(table, experiments_to_climb(table, only), results)]
    device = pricing.device_kind(base_config(targets[0].experiment, targets[0].encoder, targets[0].lr, extra).trainer.device) \
        if targets else "cpu"
    if mode == PLAN:
        for target in targets:  # rung 0's rows price the rest; read, not written
            ladder.set_rung0(target, rung0_rows(target, results))
        return plan(targets, sorted(set(rungs)), extra, ladder, device, results)
    deadline = pricing.Deadline(pricing.parse_until(until) if until else None, device)
    status = climb(targets, sorted(set(rungs)), extra, ladder, results, deadline)
    print(f"wrote {ladder.csv} and {ladder.md}")
    return status
