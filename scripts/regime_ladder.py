"""The regime ladder: each complete-data table's reference row (the paper's own baseline) measured
on a ladder of settings that climbs from today's toward the paper's, on the selection seeds 1 and 2.

    python scripts/regime_ladder.py --plan                       # the runs to do, in CPU hours; runs nothing
    python scripts/regime_ladder.py rcrn_table5 rcrn_table3       # some tables (default: all, cheapest first)
    python scripts/regime_ladder.py rcrn_table1 --only rcrn_table1_mr rcrn_table1_apparel   # some experiments
    python scripts/regime_ladder.py --rungs 1 2                   # some rungs (default 0 1 2 3; rung 4: ask for it)
    python scripts/regime_ladder.py --until 18:30                 # start a run only if it should end by then
    python scripts/regime_ladder.py --no-run                      # only write results/regime_ladder.md from the CSV

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
byte. docs/reproducing.md ("The regime ladder") says how to read it.
"""
from __future__ import annotations

import argparse
import csv
import datetime
import functools
import io
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from rnnbench.campaign import definitions, pricing
from rnnbench.campaign.dropout import dropout_overrides, setting
from rnnbench.campaign.jobs import job_config
from rnnbench.errors import RnnbenchError, RunInProgress
from rnnbench.campaign.definitions import row_name, sweep_of
from rnnbench.campaign import protocol
from rnnbench.results import evidence, gates, timing
from rnnbench.results.identity import run_dir
from rnnbench.results.patience import DID_NOT_TRAIN, NEEDS_RERUN
from rnnbench.results.records import RECORD, is_partial, read_record, temporary_for
from rnnbench.results.tables import column_metrics, model_name, paper_table, registry_key

# The complete-data tables, cheapest first: the order they run in and are shown (each registry file's
# `regime_ladder`).
TABLES = tuple(t for t, _ in sorted(registry_key("regime_ladder").items(), key=lambda item: int(item[1])))
SEEDS = (1, 2)  # the protocol's selection seeds: every table has both at rung 0
RUNGS = (0, 1, 2, 3, 4)
DEFAULT_RUNGS = (0, 1, 2, 3)
DROPOUTS = (0.2, 0.5)
CHAR_COST = 1.3  # a run with the character BiGRU, priced from rung 0's runs
SMOKE = "smoke"  # the status of a run scored on part of its test split: no result, never averaged
NOT_AVERAGED = (DID_NOT_TRAIN, NEEDS_RERUN, SMOKE)  # as a paper table leaves them out of its means, counted beside them

RUNG_TEXT = {
    0: "today's setting (the table's committed runs)",
    1: "+ trained word vectors",
    2: "+ dropout",
    3: "+ the character BiGRU",
    4: "+ the paper's data setting",
}


@dataclass(frozen=True)
class PaperData:
    """Rung 4 of an experiment: the overrides that give the paper's data setting, and its price
    (the experiment config's ``table.paper_data``)."""

    overrides: tuple[str, ...]
    what: str
    cost: float  # the rung's training work per epoch over rung 3's (tokens, or pairs), measured on the data
    needs: str = ""  # a file under the data folder the rung reads (said in the plan where it is absent)


NO_DATA_OPTION = "no option gives another data setting: the training data are already the paper's"

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


def paper_data_of(experiment: str) -> PaperData | None:
    """Rung 4 of an experiment: its config's ``table.paper_data`` (read from its file and its parents'), or None."""
    spec = definitions.table_key(experiment, "paper_data")
    if not spec:
        return None
    return PaperData(tuple(str(o) for o in spec.get("overrides") or ()), str(spec.get("what", "")), float(spec.get("work", 1.0)),
                     str(spec.get("needs") or ""))


def paper_data(target: Target) -> PaperData | None:
    return paper_data_of(target.experiment)


# ---------------------------------------------------------------------------------------------
# A rung's overrides


def rung_overrides(cfg, rung: int, p: float | None, data: PaperData | None) -> list[str]:
    """The overrides of ``rung`` on the experiment's composed config: each rung adds to the one below."""
    out = []
    if rung >= 1:
        out.append(setting(cfg, "embedding.freeze", "false"))
    if rung >= 2:
        out += dropout_overrides(cfg, p)
    if rung >= 3:
        out.append(setting(cfg, "embedding.char.kind", "bigru"))
    if rung >= 4:
        out += list(data.overrides)
    return out


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


def choose_dropout(dev_by_p: dict[float, list[float]]) -> float:
    """The p with the best mean dev score; a tie goes to the smaller p (the smaller change)."""
    return protocol.choose_lr({p: dev_by_p[p] for p in sorted(dev_by_p)})


def chosen_dropout(rows: list[dict], target_key: tuple[str, str, str]) -> float | None:
    """Rung 2's choice for (table, reference, experiment), from its runs' dev scores on the select
    metric; None until every p has a run on each seed."""
    dev: dict[float, list[float]] = {p: [] for p in DROPOUTS}
    for r in rows:
        if (r["table"], r["reference"], r["experiment"]) == target_key and r["rung"] == "2" and r["metric"] == r["select_metric"]:
            dev.setdefault(float(r["dropout"]), []).append(float(r["dev"]))
    if any(len(values) < len(SEEDS) for values in dev.values()):
        return None
    return choose_dropout(dev)


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


def sort_key(row: dict) -> tuple:
    table = TABLES.index(row["table"]) if row["table"] in TABLES else len(TABLES)
    return (table, row["table"], row["reference"], row["experiment"], int(row["rung"]), row["dropout"], int(row["seed"]), row["column"])


def read_rows(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def csv_text(rows: list[dict]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, FIELDS, lineterminator="\n")
    writer.writeheader()
    for row in sorted(rows, key=sort_key):
        writer.writerow({k: row.get(k, "") for k in FIELDS})
    return buffer.getvalue()


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with temporary_for(path) as tmp:  # a reader never sees half a file
        tmp.write_text(text)


class Evidence:
    """The ladder's rows, those of earlier invocations kept (a run committed in the CSV counts as
    finished without its folder), rewritten with the Markdown after every change."""

    def __init__(self, out: Path):
        self.csv, self.md = out / "regime_ladder.runs.csv", out / "regime_ladder.md"
        self.rows = {row_key(r): r for r in read_rows(self.csv)}

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

    def write(self) -> None:
        text = csv_text(list(self.rows.values()))
        write_text(self.csv, text)
        write_text(self.md, render(list(csv.DictReader(io.StringIO(text)))))


# ---------------------------------------------------------------------------------------------
# The Markdown, from the CSV's rows alone


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _fmt(value: float | None, signed: bool = False) -> str:
    return "" if value is None else f"{value:+.1f}" if signed else f"{value:.1f}"


def counted(row: dict) -> bool:
    """Whether a run's scores enter a mean: not one that did not train, needs re-running, or is a smoke run."""
    return row["status"] not in NOT_AVERAGED


def chosen_rows(rows: list[dict], rung: int) -> list[dict]:
    """A rung's rows that stand for it: at rung 2 each experiment's chosen p only."""
    at = [r for r in rows if r["rung"] == str(rung)]
    if rung != 2:
        return at
    choices: dict[str, float | None] = {}
    for r in at:
        choices.setdefault(r["experiment"], chosen_dropout(rows, (r["table"], r["reference"], r["experiment"])))
    return [r for r in at if choices[r["experiment"]] is not None and float(r["dropout"]) == choices[r["experiment"]]]


def column_means(rows: list[dict], quantity: str) -> dict[str, float]:
    """Per column, the mean over the counted runs (seeds) of ``quantity`` (dev or test)."""
    by_column: dict[str, list[float]] = {}
    for r in rows:
        if counted(r) and r[quantity] != "":
            by_column.setdefault(r["column"], []).append(float(r[quantity]))
    return {c: statistics.fmean(v) for c, v in by_column.items()}


def hours(rows: list[dict]) -> tuple[float, float]:
    """(CPU-thread hours, GPU hours) of the runs of ``rows`` (each run once, whatever its columns)."""
    runs = {r["run"]: r for r in rows}.values()
    return (sum(float(r["cpu_hours"]) for r in runs if r["cpu_hours"]),
            sum(float(r["gpu_hours"]) for r in runs if r["gpu_hours"]))


@dataclass
class Step:
    """One rung of a reference row: its means over seeds and columns beside the paper's."""

    rung: int
    adds: str
    dev: float | None
    test: float | None
    paper: float | None
    columns: int  # columns with a test mean
    cpu: float
    gpu: float
    left_out: str  # the runs not averaged, by status ("1 did not train"), or ""

    @property
    def gap(self) -> float | None:
        return None if self.test is None or self.paper is None else self.test - self.paper


def paper_numbers(table: str, reference: str, columns: list[str]) -> dict[str, float]:
    row = gates._paper_row(paper_table(table), reference)  # the parity gate's lookup of the reference row
    values = (row or {}).get("values") or {}
    return {c: float(values[c]) for c in columns if values.get(c) is not None}


def step_of(rung: int, rows: list[dict], paper: dict[str, float], adds: str) -> Step:
    """A rung's step: dev and test averaged over seeds, then over the columns with a paper number
    and a test mean (the parity gate's averaging); the paper's number averaged over the same."""
    chosen = chosen_rows(rows, rung)
    test, dev = column_means(chosen, "test"), column_means(chosen, "dev")
    shared = [c for c in sorted(test) if c in paper]
    cpu, gpu = hours([r for r in rows if r["rung"] == str(rung)])
    return Step(rung, adds, _mean([dev[c] for c in shared if c in dev]), _mean([test[c] for c in shared]),
                _mean([paper[c] for c in shared]), len(shared), cpu, gpu, left_out(chosen))


def left_out(rows: list[dict]) -> str:
    """The runs of ``rows`` not averaged, counted by status (each run once)."""
    runs = {r["run"]: r["status"] for r in rows if not counted(r)}
    return ", ".join(f"{list(runs.values()).count(status)} {status}" for status in NOT_AVERAGED if status in runs.values())


def added_overrides(rows: list[dict], rung: int) -> str:
    """The overrides a rung adds to the one below, from its rows (code font); rung 2's p as ``p``."""
    def overrides_at(r: int) -> list[str]:
        at = chosen_rows(rows, r) or [x for x in rows if x["rung"] == str(r)]  # rung 2 before its choice: either p
        return at[0]["overrides"].split() if at else []

    def key(override: str) -> str:
        return override.lstrip("+").split("=")[0]
    below = {key(o) for o in overrides_at(rung - 1)}
    new = [o.lstrip("+") for o in overrides_at(rung) if key(o) not in below]
    if rung == 2:
        new = [o.split("=")[0] + "=p" for o in new]
    return ", ".join(f"`{o}`" for o in new)


def rung_adds(rung: int, rows: list[dict], experiments: list[str]) -> str:
    """What a rung adds, in words, with the keys it sets; rung 2 with the p chosen."""
    if rung == 0:
        return RUNG_TEXT[0]
    if not any(r["rung"] == str(rung) for r in rows):
        return RUNG_TEXT[rung] + (": " + rung4_plan(experiments) if rung == 4 else " (not run yet)")
    keys = added_overrides(rows, rung)
    if rung == 2:
        table, reference = rows[0]["table"], rows[0]["reference"]
        choices = [chosen_dropout(rows, (table, reference, e)) for e in experiments]
        chosen = " / ".join(sorted({f"{c:g}" for c in choices if c is not None})) or "p (not chosen yet)"
        return f"+ dropout {chosen}, chosen on dev of {{{', '.join(f'{p:g}' for p in DROPOUTS)}}} ({keys})"
    if rung == 4:
        return f"{RUNG_TEXT[4]} ({keys}): " + "; ".join(sorted({paper_data_of(e).what for e in experiments if paper_data_of(e)}))
    return f"{RUNG_TEXT[rung]} ({keys})"


def rung4_plan(experiments: list[str]) -> str:
    """Rung 4 without runs: what it would train on, else why it is not built."""
    options = sorted({paper_data_of(e).what for e in experiments if paper_data_of(e)})
    if not options:
        return f"not built ({NO_DATA_OPTION})"
    return "not run yet (`--rungs 4`): " + "; ".join(options)


def render_reference(table: str, reference: str, rows: list[dict]) -> list[str]:
    """One reference row's ladder: a line per rung, the choice of p, the held rate, the columns."""
    registry = paper_table(table)
    experiments = list(dict.fromkeys(r["experiment"] for r in rows))
    columns = list(dict.fromkeys(r["column"] for r in rows))
    paper = paper_numbers(table, reference, columns)
    steps = [step_of(rung, rows, paper, rung_adds(rung, rows, experiments)) for rung in RUNGS]
    lines = [f"## {registry['paper'].upper()} Table {registry['table']}: {rows[0]['model']} (`{reference}`)", "",
             f"{registry['caption']}; test {', '.join(dict.fromkeys(r['metric'] for r in rows))} in the table's units, "
             f"the mean of seeds {', '.join(map(str, SEEDS))}" + (f" and of {len(columns)} columns" if len(columns) > 1 else "") + ".", "",
             "| rung | adds | dev | test | paper | test − paper | CPU h |", "|---:|---|---:|---:|---:|---:|---:|"]
    for s in steps:
        ran = s.cpu or s.gpu or s.test is not None
        note = f" (not averaged: {s.left_out})" if s.left_out else ""
        partial = f" ({s.columns} of {len(columns)} columns)" if s.test is not None and s.columns < len(columns) else ""
        lines.append(f"| {s.rung} | {s.adds}{note}{partial} | {_fmt(s.dev)} | {_fmt(s.test)} | {_fmt(s.paper)} | {_fmt(s.gap, True)} | "
                     + (timing.hours_cell(s.cpu, s.gpu) if ran else "") + " |")
    lines += ["", closest_line(steps, registry, reference, columns), ""]
    lines += held_rate_lines(rows) + choice_lines(rows, experiments) + stand_in_lines(registry, columns)
    cpu, gpu = hours(rows)
    lines.append(f"- Hours: {timing.hours_cell(cpu, gpu, ' CPU h')} in all (training time; rung 2 counts both p's runs).")
    if len(columns) > 1:
        lines += ["", *column_table(rows, columns, paper)]
    return lines + [""]


def closest_line(steps: list[Step], registry: dict, reference: str, columns: list[str]) -> str:
    """The rung nearest the paper among those with a test mean in every column, against the parity
    gate's margin (the larger of 2 points and twice the paper's printed std)."""
    whole = [s for s in steps if s.gap is not None and s.columns == len(columns)]
    if not whole:
        return "Closest to the paper: no rung has a test mean in every column yet."
    best = min(whole, key=lambda s: (abs(s.gap), s.rung))
    paper_row = gates._paper_row(registry, reference)
    margin = max(gates.margin_of(registry.get("reference") or {}, paper_row, c) for c in columns)
    within = "within" if abs(best.gap) <= margin else "outside"
    return (f"Closest to the paper: rung {best.rung} ({_fmt(best.gap, True)}), {within} the parity gate's margin of "
            f"±{margin:g} (docs/verdicts.md).")


def held_rate_lines(rows: list[dict]) -> list[str]:
    """The rate every rung ran at: rung 0's choice, per experiment where they differ."""
    by_experiment = {r["experiment"]: f"{float(r['lr']):g}" for r in rows if r["rung"] == "0"}
    rates = sorted(set(by_experiment.values()), key=float)
    shown = rates[0] if len(rates) == 1 else ", ".join(f"{lr} ({e})" for e, lr in by_experiment.items())
    return [f"- Learning rate {shown}: rung 0's choice on dev, held at every rung and not chosen again (a limitation: a rung "
            "whose best rate differs is under-tuned here)."]


def choice_lines(rows: list[dict], experiments: list[str]) -> list[str]:
    """Rung 2's dev means per p and experiment (every run's: what the choice reads), and the p chosen."""
    out = []
    for e in experiments:
        at = [r for r in rows if r["experiment"] == e and r["rung"] == "2" and r["metric"] == r["select_metric"]]
        if not at:
            continue
        means = {p: _mean([float(r["dev"]) for r in at if float(r["dropout"]) == p]) for p in DROPOUTS}
        choice = chosen_dropout(rows, (at[0]["table"], at[0]["reference"], e))
        shown = ", ".join(f"p {p:g}: {_fmt(m) or 'no run yet'}" for p, m in means.items())
        out.append(f"- Rung 2 in {e}, dev {at[0]['select_metric']} (mean of seeds): {shown}"
                   + (f"; chosen {choice:g}." if choice is not None else "; chosen when both p have both seeds."))
    return out


def stand_in_lines(registry: dict, columns: list[str]) -> list[str]:
    """The columns whose training data stand in for the paper's (the pipeline-check gate's registry entry)."""
    stand_in = registry.get("training_data_stand_in") or {}
    named = {c: stand_in[c] for c in columns if c in stand_in}
    return [f"- {c}: trained on {why}: a pipeline check, not the paper's data." for c, why in named.items()]


def column_table(rows: list[dict], columns: list[str], paper: dict[str, float]) -> list[str]:
    """Per column, each rung's test mean with its gap to the paper."""
    lines = ["| column | paper | " + " | ".join(f"rung {r}" for r in RUNGS) + " |", "|---|---:|" + "---:|" * len(RUNGS)]
    means = {rung: column_means(chosen_rows(rows, rung), "test") for rung in RUNGS}
    for c in columns:
        cells = []
        for rung in RUNGS:
            value = means[rung].get(c)
            gap = None if value is None or c not in paper else value - paper[c]
            cells.append("" if value is None else f"{_fmt(value)}" + (f" ({_fmt(gap, True)})" if gap is not None else ""))
        lines.append(f"| {c} | {_fmt(paper.get(c))} | " + " | ".join(cells) + " |")
    return lines


def provenance(rows: list[dict]) -> str:
    dates = sorted(r["date"] for r in rows if r["date"])
    commits = sorted({r["commit"][:12] + ("-dirty" if r["commit"].endswith("-dirty") else "") for r in rows if r["commit"]})
    span = f"{dates[0]} to {dates[-1]}" if dates else "undated"
    return (f"Runs dated {span} (rung 0: its code's commit date), code at {', '.join(commits) or 'no recorded commit'}; "
            f"hardware: {'; '.join(sorted({r['hardware'] for r in rows if r['hardware']}))}.")


def render(rows: list[dict]) -> str:
    """results/regime_ladder.md from the CSV's rows (strings, as read back)."""
    lines = ["# The regime ladder", "",
             "Each complete-data table's reference row (the paper's own baseline, the parity gate's: docs/verdicts.md) on the "
             f"selection seeds {', '.join(map(str, SEEDS))}, on rungs that climb from today's setting toward the paper's, each "
             "adding to the one below. Generated by `python scripts/regime_ladder.py` from its per-run evidence "
             "[regime_ladder.runs.csv](regime_ladder.runs.csv) (one row per run and column); docs/reproducing.md says how.", "",
             provenance(rows), ""]
    blocks: dict[tuple[str, str], list[dict]] = {}
    for r in sorted(rows, key=sort_key):
        blocks.setdefault((r["table"], r["reference"]), []).append(r)
    for (table, reference), block in blocks.items():
        lines += render_reference(table, reference, block)
    return "\n".join(lines).rstrip("\n") + "\n"


# ---------------------------------------------------------------------------------------------
# Planning and running


def price_per_run(target: Target, rows: list[dict], device: str) -> float | None:
    """Rung 0's mean hours per run, from its runs on ``device`` ("cpu", "cuda"); None where it has none."""
    runs = {r["run"]: r for r in rows if r["rung"] == "0" and of_target(r, target)
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


def plan(targets: list[Target], rungs: list[int], extra: tuple[str, ...], ladder: Evidence, device: str) -> int:
    """Print the runs to do per experiment and rung with their estimated hours; run nothing."""
    print(f"{'experiment':28} {'row':10} {'rung':>4} {'runs':>5} {'finished':>9} {'to run':>7} {'CPU h/run':>10} {'CPU h to run':>13}")
    total, unpriced = 0.0, []
    rows = list(ladder.rows.values())
    for target in targets:
        price = price_per_run(target, rows, device)
        for rung in [r for r in rungs if r != 0]:
            choice = ladder.choice(target)
            pending = rung >= 3 and choice is None
            # p not chosen yet: priced at either p (the count and price are the same), none finished
            runs = runs_of(target, rung, DROPOUTS[0] if pending else choice, extra)
            if not runs:
                print(f"{target.experiment:28} {target.reference:10} {rung:>4}  not built ({NO_DATA_OPTION})")
                continue
            done = 0 if pending else sum(1 for run in runs if is_finished(run, extra, ladder))
            per_run = None if price is None else price * rung_factor(target, rung)
            left = len(runs) - done
            notes = []
            if pending:
                notes.append("p from rung 2 (not chosen yet)")
            if missing := missing_data(target, rung, Path(str(run_config(runs[0], extra).paths.data_dir))):
                notes.append(f"needs {missing}, absent: not in the total")
            if per_run is None:
                unpriced.append(f"{target.experiment} rung {rung}")
                notes.append(f"rung 0 has no {device} run to price it: not in the total")
            elif not missing:
                total += per_run * left
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
            note_durations(target, ladder, deadline)
        ladder.write()
        for rung in [r for r in rungs if r != 0]:
            for target in of_table:
                failed += climb_rung(target, rung, extra, ladder, deadline)
    return 2 if failed else 0


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
    from rnnbench.run import train  # the trainer, which --plan and --no-run never load

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
        print(f"{what}: training ({' '.join(run.overrides)}) in {folder}", flush=True)
        try:
            record = train(cfg)
        except RunInProgress as exc:
            print(f"{what}: skipped: {exc}", flush=True)
            return 0
        except RnnbenchError as exc:
            print(f"{what}: error: {exc}", file=sys.stderr, flush=True)
            return 1
        deadline.note(key, record)
    rows = record_rows(run, record, folder)
    ladder.add(rows)
    ladder.write()
    select = next((r for r in rows if r["metric"] == r["select_metric"]), rows[0] if rows else None)
    if select is not None:
        print(f"{what}: {'finished earlier: ' if earlier else ''}dev {float(select['dev']):.2f} test {float(select['test']):.2f} "
              f"({select['column']}), {timing.hours_cell(*hours(rows), ' CPU h')}", flush=True)
    return 0


# ---------------------------------------------------------------------------------------------


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("tables", nargs="*", metavar="TABLE", help=f"tables to climb (default, in this order: {' '.join(TABLES)})")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--plan", action="store_true", help="run nothing: the runs to do per rung, with CPU hours")
    mode.add_argument("--no-run", action="store_true", help="only write the Markdown from the CSV")
    p.add_argument("--rungs", nargs="+", type=int, default=list(DEFAULT_RUNGS), choices=RUNGS, metavar="RUNG",
                   help="rungs to run (default 0 1 2 3; 0 is read from the committed evidence, never run)")
    p.add_argument("--only", nargs="+", default=None, metavar="EXPERIMENT", help="only these experiments of the tables")
    p.add_argument("--until", metavar="HH:MM", help="start a run only if it is expected to end by then")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="an extra Hydra override for every run (repeatable), e.g. --set paths.runs_dir=/tmp/r")
    p.add_argument("--results", type=Path, default=Path("results"), help="the committed evidence: rung 0's runs (default results)")
    p.add_argument("--out", type=Path, default=None, help="where regime_ladder.{csv,md} go (default: --results)")
    return p


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


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    out = args.out or args.results
    ladder = Evidence(out)
    if args.no_run:
        ladder.write()
        print(f"wrote {ladder.md} from {ladder.csv} ({len({r['run'] for r in ladder.rows.values()})} runs)")
        return 0
    try:
        extra = tuple(args.overrides)
        targets = [t for table in chosen_tables(args.tables, args.only)
                   for t in targets_of(table, experiments_to_climb(table, args.only), args.results)]
        device = pricing.device_kind(base_config(targets[0].experiment, targets[0].encoder, targets[0].lr, extra).trainer.device) \
            if targets else "cpu"
        if args.plan:
            for target in targets:  # rung 0's rows price the rest; read, not written
                ladder.set_rung0(target, rung0_rows(target, args.results))
            return plan(targets, sorted(set(args.rungs)), extra, ladder, device)
        deadline = pricing.Deadline(pricing.parse_until(args.until) if args.until else None, device)
        status = climb(targets, sorted(set(args.rungs)), extra, ladder, args.results, deadline)
    except RnnbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {ladder.csv} and {ladder.md}")
    return status


if __name__ == "__main__":
    sys.exit(main())
