"""Mechanism sweeps (``rnnbench sweep NAME``): cells of options a paper leaves open, screened under a
rule fixed before any run, to find the setting in which the mechanism the paper credits is present.

A sweep is declared in ``campaign/sweeps/NAME.yaml``: one experiment and encoder, a grid of
overrides (every combination a cell), screen and confirm seeds, and the rule: the encoder
statistic that shows the mechanism must fall in a range on the test split (thresholded as the
paper evaluates, and within a factor of its sampled value), and the cell's dev accuracy must stay
within a margin of a reference row of the table's committed evidence on the same seeds. Every
cell runs on the screen seeds; those that pass run on the confirm seeds; of the cells that pass on
all of them, the one with the best mean dev score is chosen. Test scores are shown, never read.

Runs train in this process into their run folders (identity from the config, so a run that
another command made is read back); after each, the per-run evidence
``results/sweeps/NAME.runs.csv`` and the page ``NAME.md`` (``sweep_page``) are written again.
"""
from __future__ import annotations

import csv
import datetime
import io
import statistics
from pathlib import Path

from omegaconf import OmegaConf

from rnnbench.campaign import pricing, protocol
from rnnbench.campaign.jobs import job_config
from rnnbench.campaign.one_run import train_and_say
from rnnbench.campaign.sweep_page import render
from rnnbench.campaign.sweep_rule import DECLARATIONS, Sweep, load, stages
from rnnbench.compose import compose_config
from rnnbench.results import evidence, gates, plain_rows, timing
from rnnbench.results.identity import run_dir
from rnnbench.results.records import RECORD, is_partial, read_record
from rnnbench.results.tables import column_metrics

RUN, PLAN, NO_RUN = "run", "plan", "no-run"

FIELDS = ["sweep", "cell", "overrides", "stage", "seed", "lr", "dev", "test", "thresholded", "gate_prob", "epsilon", "sampled",
          "reference_dev", "selected_epoch", "epochs_run", "status", "cpu_hours", "device", "hardware", "commit", "date", "run"]


# ---------------------------------------------------------------------------------------------
# Runs and their evidence


def experiment_lr(sweep: Sweep) -> float:
    """The experiment's own rate: the sweep varies the cells' options, not the rate."""
    return float(compose_config([f"experiment={sweep.experiment}", f"encoder={sweep.encoder}"]).trainer.lr)


def run_config(sweep: Sweep, cell: tuple[str, ...], seed: int, lr: float, extra: tuple[str, ...]):
    return job_config(sweep.experiment, protocol.Job(sweep.encoder, seed, lr, "select"), [*cell, *extra])


def reference_dev(sweep: Sweep, results_dir: Path) -> dict[int, float]:
    """The reference row's dev score per seed in the table's committed evidence (table units)."""
    path = results_dir / f"{sweep.table}.csv"
    encoder, variant = gates.split_row(sweep.reference)
    rows = evidence.read_csv(path) if path.exists() else []
    return {int(r["seed"]): float(r["dev"]) for r in rows if r["encoder"] == encoder and (r.get("variant") or "") == variant
            and r["dataset"] == sweep.column and r.get("reported") == "yes" and r["dev"] != ""}


def price_per_run(sweep: Sweep, results_dir: Path) -> tuple[float | None, bool]:
    """(CPU hours, whether scaled from another variant): the mean CPU hours of the experiment's
    committed runs of the same encoder and variant (the cells' parent row); with none yet, the
    encoder's runs at another variant scaled as the table's plan scales them
    (``pricing.priced_from_another_variant``: FHE at 200,000 sequences from FHE at 20,000, times
    the LSTM2's ratio)."""
    path = results_dir / f"{sweep.table}.csv"
    cfg = run_config(sweep, (), sweep.screen_seeds[0], 0.0, ())
    variant = str(cfg.table.get("variant") or "")
    rows = evidence.read_csv(path) if path.exists() else []
    hours = [timing.run_cpu_hours(r["seconds_per_epoch"], r["epochs_run"], r.get("threads") or 1) for r in rows
             if r["encoder"] == sweep.encoder and (r.get("variant") or "") == variant and r["dataset"] == sweep.column
             and r["seconds_per_epoch"] != "" and not timing.on_gpu(r)]
    if hours:
        return statistics.fmean(hours), False
    if not path.exists():
        return None, False
    committed = evidence.CommittedEvidence(path, evidence.items_path(path))
    scaled = pricing.priced_from_another_variant(sweep.encoder, variant, int(cfg.trainer.num_threads), committed)
    return scaled, scaled is not None


def _fmt(text: str) -> str:
    return "none" if text == "" else f"{float(text):.1f}"


def _num(value) -> str:
    return "" if value in (None, "") else repr(float(value))


def sweep_row(sweep: Sweep, cell: tuple[str, ...], stage: str, record: dict, folder: Path, reference: dict[int, float]) -> dict:
    """A finished run's row, in the table's units (percent)."""
    scale = float(record["config"]["table"]["scale"])
    dev, test, _ = evidence.split_values(record, _metric(record, sweep.column))
    shut = evidence.split_values(record, evidence.STATS + sweep.thresholded)[1]
    prob = evidence.split_values(record, evidence.STATS + sweep.sampled)[1]
    epsilon = float(record["config"]["encoder"].get("epsilon") or 0.0)
    sampled = None if prob is None else min(1.0, prob + epsilon)
    hardware = record.get("hardware") or {}
    on_gpu = str(hardware.get("device", "")).startswith("cuda")
    spent = timing.run_cpu_hours(record.get("seconds_per_epoch") or 0.0, record.get("epochs_run") or 0,
                                 1 if on_gpu else record["config"]["trainer"].get("num_threads") or 1)
    seed = int(record["config"]["seed"])
    stamp = folder / RECORD
    return {
        "sweep": sweep.name, "cell": sweep.cell_name(cell), "overrides": " ".join(cell), "stage": stage, "seed": str(seed),
        "lr": f"{float(record['config']['trainer']['lr']):g}",
        "dev": _num(None if dev is None else dev * scale), "test": _num(None if test is None else test * scale),
        "thresholded": _num(None if shut is None else shut * 100), "gate_prob": _num(None if prob is None else prob * 100),
        "epsilon": f"{epsilon:g}", "sampled": _num(None if sampled is None else sampled * 100),
        "reference_dev": _num(reference.get(seed)), "selected_epoch": str(record.get("best_epoch") or ""),
        "epochs_run": str(record.get("epochs_run") or ""), "status": "smoke" if is_partial(record) else str(record.get("status") or ""),
        "cpu_hours": "" if on_gpu else f"{spent:.4f}", "device": str(hardware.get("device", "")),
        "hardware": str(hardware.get("gpu") or hardware.get("cpu", "")), "commit": str(record.get("git_commit") or ""),
        "date": datetime.date.fromtimestamp(stamp.stat().st_mtime).isoformat() if stamp.exists() else "", "run": folder.name,
    }


def _metric(record: dict, column: str) -> str:
    """The metric of ``column`` in the run's table (``table.columns``), e.g. "accuracy"."""
    cfg = OmegaConf.create(record["config"])
    return column_metrics(cfg.table, cfg)[column]


def csv_text(rows: list[dict]) -> str:
    return plain_rows.csv_text(rows, FIELDS, lambda r: (r["overrides"], int(r["seed"])))


class Evidence:
    """The sweep's rows, those of earlier invocations kept (a committed row counts as a finished
    run without its folder), rewritten with the page after every change."""

    def __init__(self, sweep: Sweep, out: Path):
        self.sweep = sweep
        self.csv, self.md = out / f"{sweep.name}.runs.csv", out / f"{sweep.name}.md"
        self.rows = {(r["overrides"], r["seed"]): r for r in plain_rows.read_rows(self.csv)}

    def add(self, row: dict) -> None:
        self.rows[(row["overrides"], row["seed"])] = row

    def has(self, cell: tuple[str, ...], seed: int) -> bool:
        return (" ".join(cell), str(seed)) in self.rows

    def write(self) -> None:
        text = csv_text(list(self.rows.values()))
        plain_rows.write_text(self.csv, text)
        plain_rows.write_text(self.md, render(self.sweep, list(csv.DictReader(io.StringIO(text)))))


# ---------------------------------------------------------------------------------------------
# Running


def run_sweep(name: str, *, mode: str = RUN, until: str | None = None, overrides=(), results: Path = Path("results"),
              out: Path | None = None, folder: Path = DECLARATIONS) -> int:
    """Run (RUN), price (PLAN) or only render (NO_RUN) the declared sweep ``name``; its evidence and
    page go to ``out`` (default ``results/sweeps``). Returns 0, or 2 when a run failed."""
    sweep = load(name, folder)
    kept = Evidence(sweep, out or results / "sweeps")
    if mode == NO_RUN:
        kept.write()
        print(f"wrote {kept.md} from {kept.csv} ({len(kept.rows)} runs)")
        return 0
    extra, lr = tuple(overrides), experiment_lr(sweep)
    reference = reference_dev(sweep, results)
    if mode == PLAN:
        return plan(sweep, kept, lr, extra, results)
    deadline = pricing.Deadline(pricing.parse_until(until) if until else None, pricing.device_kind("auto"))
    failed, done = 0, set()
    while True:  # each pass runs what the rule asks for now; a screen that passes asks for its confirm seeds
        wanted, chosen, where = stages(sweep, list(kept.rows.values()))
        todo = [w for w in wanted if (w[0], w[1]) not in done]
        if not todo:
            break
        for cell, seed, stage in todo:
            done.add((cell, seed))
            failed += ensure(sweep, cell, seed, stage, lr, extra, kept, reference, deadline)
    kept.write()
    print(f"{sweep.name}: {where}; {kept.md}", flush=True)
    return 2 if failed else 0


def ensure(sweep: Sweep, cell, seed: int, stage: str, lr: float, extra, kept: Evidence, reference, deadline) -> int:
    """One run's row: read back where it finished, else trained now."""
    cfg = run_config(sweep, cell, seed, lr, extra)
    folder = run_dir(cfg)
    what = f"{sweep.name}: {sweep.cell_name(cell)} seed {seed} ({stage})"
    record = read_record(folder, allow_smoke=True)
    if record is None and kept.has(cell, seed):
        return 0
    if record is None:
        if not deadline.allows(sweep.name):
            print(f"{what}: not started, would end after --until", flush=True)
            return 0
        record, failed = train_and_say(cfg, what, cell, folder)
        if record is None:
            return failed
        deadline.note(sweep.name, record)
    row = sweep_row(sweep, cell, stage, record, folder, reference)
    kept.add(row)
    kept.write()
    print(f"{what}: dev {_fmt(row['dev'])} test {_fmt(row['test'])}; gates open {_fmt(row['thresholded'])}% thresholded, "
          f"{_fmt(row['sampled'])}% sampled", flush=True)
    return 0


def plan(sweep: Sweep, kept: Evidence, lr: float, extra, results: Path) -> int:
    """The runs the rule asks for now (the screen, or the confirm seeds of cells that passed), with CPU hours."""
    wanted, chosen, where = stages(sweep, list(kept.rows.values()))
    price, scaled = price_per_run(sweep, results)
    todo = [(c, s, st) for c, s, st in wanted if read_record(run_dir(run_config(sweep, c, s, lr, extra)), allow_smoke=True) is None]
    print(f"{sweep.name}: {where}")
    print(f"{'cell':40s} {'seed':>4s} {'stage':8s} {'CPU h':>6s}")
    for cell, seed, stage in todo:
        print(f"{sweep.cell_name(cell):40s} {seed:>4d} {stage:8s} {'?' if price is None else f'{price:.2f}':>6s}")
    later = len(sweep.cells) * len(sweep.confirm_seeds)
    total = "?" if price is None else f"{price * len(todo):.1f}"
    print(f"{len(todo)} run(s) now, about {total} CPU h (training time at one thread); the confirm seeds of the cells "
          f"that pass follow (at most {later} runs)")
    if scaled and todo:
        print(f"no run of {sweep.encoder} at this variant yet: priced from its runs at another variant of {sweep.table}, "
              f"times another encoder's cost at this variant over its cost at that one")
    return 0
