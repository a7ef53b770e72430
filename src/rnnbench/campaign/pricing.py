"""What a campaign's runs cost: their CPU hours (``--plan``), and whether a run can end before a
deadline (``--until``). Prices come from finished runs of the same model (and data), made on the
same kind of device."""
from __future__ import annotations

import csv
import datetime
import functools
import hashlib
import json
import re
import statistics
import time
from pathlib import Path

from omegaconf import OmegaConf

from rnnbench.campaign import protocol
from rnnbench.campaign.definitions import ExperimentPlan
from rnnbench.results import evidence, timing
from rnnbench.results.tables import column_metrics
from rnnbench.campaign.jobs import finished, is_done, job_config, jobs_of, started_runs
from rnnbench.campaign.rates import chosen_dropout, known_choice


# Trainer settings a run's duration does not depend on (the device kind is matched apart: same_device).
UNPRICED_TRAINER_KEYS = ("lr", "device", "progress", "checkpoint_every")


def cost_keys(cfg) -> tuple[str, str]:
    """What a run's duration depends on besides its seed and learning rate, as two keys: the model
    and how it trains (encoder, embedding, head, trainer settings), then that with the data (the
    task's reader and files). Runs are priced from runs under the same second key, else under the
    same first (another Amazon domain of RCRN Table 1: the same model on other data, which --plan
    marks: the domains' training data differ up to 12-fold); never from another model: LSTM Table
    2's Large 2-LSTM (hidden 360) was priced from the Baseline 2-LSTM's runs (hidden 120, a quarter
    of its cost) because both are `2l_lstm`."""
    parts = {k: OmegaConf.to_container(cfg[k], resolve=True) for k in ("encoder", "embedding", "task", "trainer")}
    for k in UNPRICED_TRAINER_KEYS:
        parts["trainer"].pop(k, None)
    model = {**parts, "task": {"head": parts["task"].get("head")}}

    def digest(value) -> str:
        return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:10]
    return f"{cfg.encoder.name} {digest(model)}", f"{cfg.encoder.name} {digest(parts)}"


def cost_keys_of(experiment: str, base, encoder: str, extra: list[str]) -> tuple[str, str]:
    """``cost_keys`` of an experiment's runs of ``encoder`` (its jobs differ in seed and rate only)."""
    job = protocol.Job(encoder, int(base.table.protocol.seeds[0]), float(base.trainer.lr), "final")
    return cost_keys(job_config(experiment, job, extra))


def same_device(record: dict, device: str | None) -> bool:
    """Whether a finished run (a record, or committed evidence's stand-in) was made on the kind
    of device ``device`` ("cpu", "cuda"); True when either is unknown."""
    made_on = record.get("hardware", {}).get("device") or record.get("device") or ""
    return not device or not made_on or made_on.split(":")[0] == device


class Deadline:
    """Starts a run only if it is expected to end before ``at`` (epoch seconds; None: always).
    Expected duration: the longest finished run under the same ``cost_keys`` (the same model and
    data, else the same model) seen by this process or committed (epochs run x seconds per epoch,
    plus its test pass), else the longest of any in the table, times ``MARGIN`` for the dev passes
    and a busier machine. Where the table's longest is another encoder's, it is scaled by this
    encoder's cost over that one's in the other tables under ``results_dir`` (the median ratio,
    ``ratio_in_other_tables``; ``table`` names the table to leave out): RCRN Table 4's first
    3L-BiLSTM run at rung 2 would otherwise be judged by a BiLSTM run of a quarter its length.
    The first run starts. Its methods take ``cost_keys`` (or one string, whose first word is
    the encoder).
    Only runs made on this process's kind of device count (``device``, "cpu" or "cuda"; None:
    every run): a table filled partly on a GPU would otherwise price a CPU run at a GPU
    run's minutes (RCRN Table 4: a 4-minute GPU run of 3l_bilstm takes an hour here)."""

    MARGIN = 1.5

    def __init__(self, at: float | None = None, device: str | None = None, results_dir: Path | None = None,
                 table: str = ""):
        self.at = at
        self.device = device
        self.results_dir, self.table = results_dir, table
        self.longest: dict[str, float] = {}
        self.held_back: set[tuple] = set()  # jobs already reported as not started

    def hold_back(self, experiment: str, job, keys) -> None:
        """Say once that ``job`` is not started (a selection run is asked for again when the
        final runs look up its encoder's learning rate)."""
        key = (experiment, job.encoder, job.seed, job.lr)
        if key not in self.held_back:
            self.held_back.add(key)
            print(f"not started: {experiment}: {job.encoder} seed {job.seed} lr {job.lr:g} would end after --until "
                  f"(expected to end at {time.strftime('%H:%M', time.localtime(self.expected_end(keys)))})",
                  flush=True)

    def note(self, keys, record: dict) -> None:
        if not same_device(record, self.device):
            return  # another kind of device: its durations say nothing of this one's
        if record.get("seconds_per_epoch") and record.get("epochs_run"):
            took = record["seconds_per_epoch"] * record["epochs_run"] + (record.get("test_seconds") or 0.0)
            for key in _as_keys(keys):
                self.longest[key] = max(took, self.longest.get(key, 0.0))

    def expected_end(self, keys) -> float | None:
        known = [self.longest[k] for k in reversed(_as_keys(keys)) if k in self.longest]  # the most specific first
        took = known[0] if known else self.scaled_longest(_as_keys(keys)[0].split()[0])  # else the table's longest run
        return None if took is None else time.time() + took * self.MARGIN

    def scaled_longest(self, encoder: str) -> float | None:
        """The table's longest run, times ``encoder``'s cost over that run's encoder's in the other tables."""
        if not self.longest:
            return None
        key, took = max(self.longest.items(), key=lambda item: item[1])
        other = key.split()[0]
        if other == encoder or self.results_dir is None:
            return took
        ratios = ratio_in_other_tables(self.results_dir, self.table, encoder, other, 1)
        return took * statistics.median(ratios) if ratios else took

    def allows(self, keys) -> bool:
        end = self.expected_end(keys)
        return self.at is None or end is None or end <= self.at


DEADLINE = Deadline()


def _as_keys(keys) -> tuple[str, ...]:
    return (keys,) if isinstance(keys, str) else tuple(keys)


def device_kind(setting) -> str:
    """"cuda" or "cpu": where a run with ``trainer.device`` = ``setting`` trains on the machine running this process."""
    import torch

    return "cuda" if str(setting) == "cuda" or (str(setting) == "auto" and torch.cuda.is_available()) else "cpu"


def parse_until(text: str) -> float:
    """``HH:MM`` (today, by the local clock; tomorrow if already past) as epoch seconds."""
    try:
        hour, minute = (int(part) for part in text.split(":"))
        at = datetime.datetime.now().replace(hour=hour, minute=minute, second=0, microsecond=0)
    except ValueError:
        raise SystemExit(f"error: --until {text!r}: give a time as HH:MM, e.g. --until 17:30") from None
    if at < datetime.datetime.now():
        at += datetime.timedelta(days=1)
    return at.timestamp()


def plan(plans: list[ExperimentPlan], extra: list[str], committed: evidence.CommittedEvidence, gate=None) -> list[dict]:
    """Per experiment and encoder: the protocol's runs, how many have finished (here or in the
    committed evidence), and the CPU hours of the rest, estimated from the mean cost of the
    finished runs of the same encoder in this experiment, else of runs elsewhere in the table
    under the same ``cost_keys`` (the same model and data, else the same model), made on this kind
    of device (``DEADLINE.device``). ``gate`` (the runner's sanity gate): rows its cached verdicts
    refuse are marked, and left out of the total."""
    lines, costs = [], {}
    for experiment, base, encoders in plans:  # ExperimentPlan: name, composed config, encoders
        for enc in encoders:
            lr, choice = known_choice(experiment, base, enc, extra, committed)
            total, jobs = jobs_of(base, enc, lr, choice, chosen_dropout(experiment, base, enc, lr, extra, committed))
            records = [(j, finished(experiment, j, extra, committed)) for j in jobs]
            done = [r for _, r in records if is_done(r)]
            spent = [h for h in (cpu_hours(r, base.trainer.num_threads) for r in done) if h is not None]
            keys = cost_keys_of(experiment, base, enc, extra)
            for key in keys:
                costs.setdefault(key, []).extend(spent)
            lines.append({"experiment": experiment, "encoder": enc, "total": total, "finished": len(done),
                          "own": spent, "keys": keys, "left_out": str(base.table.not_run),
                          "variant": str(base.table.variant or ""), "threads": base.trainer.num_threads,
                          "columns": frozenset(column_metrics(base.table, base)),
                          "table": str(base.table.name), "results_dir": str(base.paths.results_dir),
                          "started": started_runs(experiment, [j for j, r in records if not is_done(r)], extra),
                          "rerun": sum(1 for _, r in records if r is not None and not is_done(r)),
                          "refused": [] if gate is None or gate.off() else gate.known_failures(experiment, enc, extra, base),
                          "extension": None if choice is None or protocol.borrowed(base.table.protocol) else choice.pending})
    fallback = committed_costs(committed, {(line["encoder"], line["variant"], line["threads"]) for line in lines})
    by_data = {threads: committed_costs_by_data(committed, threads) for threads in {line["threads"] for line in lines}}
    own_of = {(line["experiment"], line["encoder"]): line["own"] for line in lines}
    for line in lines:
        model, data = line["keys"]
        known = line["own"] or costs[data]
        line["from_same_data"] = False
        if not known:
            line["per_run"] = priced_from_same_data(line, by_data[line["threads"]])
            line["from_same_data"] = line["per_run"] is not None
        if not line["from_same_data"]:
            known = known or costs[model] or fallback[(line["encoder"], line["variant"], line["threads"])]
            line["per_run"] = sum(known) / len(known) if known else None
        # Priced from the same model on other data (another Amazon domain: 0.2x to 2.5x Sports' words):
        # the plan marks it, so the estimate is not read as this data's cost.
        line["other_data"] = bool(known) and not (line["own"] or costs[data]) and not line["from_same_data"]
        line["from_ladder"], line["ratio_elsewhere"] = False, None
        if line["per_run"] is None:
            line["per_run"], line["ratio_elsewhere"] = priced_from_ladder(
                line, committed, {enc: own for (exp, enc), own in own_of.items() if exp == line["experiment"]})
            line["from_ladder"] = line["per_run"] is not None
        line["from_variant"] = False
        if line["per_run"] is None:
            line["per_run"] = priced_from_another_variant(line["encoder"], line["variant"], line["threads"], committed)
            line["from_variant"] = line["per_run"] is not None
        line["to_run"] = line["total"] - line["finished"]
    return lines


RUNG_VARIANT = re.compile(r"^(.*?)_?rung(\d)$")


def rung_of(variant: str) -> tuple[str, int]:
    """A row's variant (or an experiment's name) at rung 0 and its rung of the regime ladder:
    "ap_rung3" -> ("ap", 3), "rcrn_table3_rung2" -> ("rcrn_table3", 2), "" -> ("", 0)."""
    match = RUNG_VARIANT.match(variant)
    return (match.group(1), int(match.group(2))) if match else (variant, 0)


def priced_from_ladder(line: dict, committed: evidence.CommittedEvidence | None,
                       table_runs: dict[str, list[float]]) -> tuple[float | None, tuple | None]:
    """A table re-run at a rung of the regime ladder before any run of this encoder there: the
    reference row's runs at that rung, times this encoder's CPU hours over the reference row's in the
    table's committed runs at rung 0. At rung 4 a run of RCRN Table 3's BiLSTM cost 33 times one at
    rung 0, so rung 0's price would mislead. The reference row's runs are the table's own at this
    rung where it has some (``table_runs``: {encoder: CPU hours of its finished runs}), else the
    ladder's (results/regime_ladder.runs.csv, the same experiment): the ladder's may have run on
    other hardware (RCRN Table 4's rung-2 BiLSTM took 4 times as long an epoch on an Intel Xeon as
    the table's own on an AMD EPYC). The reference row is that price itself. Where rung 0 has no
    committed CPU run of either encoder (RCRN Table 4's were all on a GPU), the ratio is read off the
    other tables of the results folder instead (``ratio_in_other_tables``). Returns (price, None),
    (price, (lowest, median, highest, how many) of the other tables' ratios) where those priced it,
    or (None, None) where the ladder has no CPU run there or no table has run both encoders on the CPU."""
    variant, rung = rung_of(line["variant"])
    path = Path(line["results_dir"]) / "regime_ladder.runs.csv"
    if not rung or not path.exists() or DEADLINE.device not in (None, "cpu"):
        return None, None
    experiment = rung_of(line["experiment"])[0]  # rcrn_table3_rung2 -> rcrn_table3, the ladder's experiment
    with path.open(newline="") as f:
        runs = {r["run"]: r for r in csv.DictReader(f) if (r["table"], r["experiment"], r["variant"], r["rung"]) ==
                (line["table"], experiment, variant, str(rung)) and r["status"] == "trained" and r["cpu_hours"]}
    if not runs:
        return None, None
    reference = next(iter(runs.values()))["encoder"]
    price = statistics.fmean(table_runs.get(reference) or [float(r["cpu_hours"]) for r in runs.values()])
    if line["encoder"] == reference:
        return price, None  # the reference row itself: no ratio
    at_rung0 = committed_costs(committed, {(enc, variant, line["threads"]) for enc in (reference, line["encoder"])})
    own, of_reference = at_rung0[(line["encoder"], variant, line["threads"])], at_rung0[(reference, variant, line["threads"])]
    if own and of_reference:
        return price * statistics.fmean(own) / statistics.fmean(of_reference), None
    ratios = ratio_in_other_tables(Path(line["results_dir"]), line["table"], line["encoder"], reference, line["threads"])
    if not ratios:
        return None, None
    median = statistics.median(ratios)
    return price * median, (min(ratios), median, max(ratios), len(ratios))


def ratio_in_other_tables(results_dir: Path, table: str, encoder: str, reference: str, threads: int) -> list[float]:
    """``encoder``'s mean CPU hours a run over ``reference``'s, in each other table's committed
    evidence under ``results_dir`` and each of its variants where both ran on this kind of device.
    The ratios spread (RCRN's over the BiLSTM's: 1.3 to 4.4 across RCRN Tables 1-8, as the epochs
    each run takes differ), so a price from them is a rough one: the plan says how rough."""
    return [statistics.fmean(hours) / statistics.fmean(costs[(reference, variant)])
            for other, costs in _costs_by_table(results_dir, threads, DEADLINE.device) if other != table
            for (enc, variant), hours in costs.items() if enc == encoder and costs.get((reference, variant))]


@functools.lru_cache(maxsize=4)
def _costs_by_table(results_dir: Path, threads: int, device: str | None) -> tuple[tuple[str, dict], ...]:
    """(table, {(encoder, variant): CPU hours of each committed run}) for every table's evidence
    under ``results_dir``, made on ``device`` (``DEADLINE.device``: a key here, so that a cached
    answer is never another device's); read once a plan (reading them all takes seconds)."""
    tables = []
    for path in sorted(results_dir.glob("*.csv")):
        if not evidence.holds_run_evidence(path):
            continue
        costs: dict[tuple[str, str], list[float]] = {}
        committed = evidence.CommittedEvidence(path, evidence.items_path(path))
        for (encoder, variant, _), hours in committed_costs_by_data(committed, threads).items():
            costs.setdefault((encoder, variant), []).extend(hours)
        tables.append((path.stem, costs))
    return tuple(tables)


def cpu_hours(record: dict, threads: int) -> float | None:
    """A finished run's CPU hours of training (a record or committed evidence's stand-in), or None
    when it was made on another kind of device than ``DEADLINE.device`` or was not timed."""
    if not (record.get("seconds_per_epoch") and record.get("epochs_run") and same_device(record, DEADLINE.device)):
        return None
    return timing.run_cpu_hours(record["seconds_per_epoch"], record["epochs_run"], threads)


def committed_costs_by_data(committed: evidence.CommittedEvidence | None, threads: int) -> dict:
    """{(encoder, variant, the run's columns): CPU hours of each of the table's committed runs}, at
    ``threads`` threads: what every price read off the committed evidence starts from."""
    costs: dict[tuple[str, str, frozenset], list[float]] = {}
    for (encoder, run), rows in (committed.by_run.items() if committed else []):
        hours = cpu_hours(committed.record(encoder, run), threads)
        if hours is not None:
            costs.setdefault((encoder, rows[0].get("variant", ""), frozenset(r["dataset"] for r in rows)), []).append(hours)
    return costs


def committed_costs(committed: evidence.CommittedEvidence | None, wanted: set[tuple[str, str, int]]) -> dict:
    """{(encoder, variant, threads): CPU hours of each of the table's committed runs of that encoder
    and variant}: the price of last resort. A fresh machine (no run folders) asked to plan only
    experiments with no finished run would otherwise price nothing (RCRN Table 1's ten larger Amazon
    domains, with the six done ones committed)."""
    costs = {key: [] for key in wanted}
    for threads in {key[2] for key in wanted}:
        for (encoder, variant, _), hours in committed_costs_by_data(committed, threads).items():
            if (encoder, variant, threads) in costs:
                costs[(encoder, variant, threads)] += hours
    return costs


def priced_from_same_data(line: dict, by_data: dict) -> float | None:
    """A row with no run on its data at its variant whose encoder the table has run on that data at
    another variant (RCRN Table 1's Amazon domains at rung 1, each run at rung 0): those runs' CPU
    hours, times the encoder's cost at this variant over its cost at that one on the data run at
    both (Apparel and MR). Another domain's price alone misled: the domains' training data differ
    up to 12-fold, and a plan priced from MR's runs read half of what the rung cost. Of the
    estimates the table's evidence allows (one per other variant), the largest. None where the
    encoder has no run on this data, or none on other data at both variants. ``by_data``:
    ``committed_costs_by_data`` at the row's threads."""
    mean = {(variant, columns): statistics.fmean(hours)
            for (encoder, variant, columns), hours in by_data.items() if encoder == line["encoder"]}
    here, data = line["variant"], line["columns"]
    estimates = []
    for (other, columns), on_this_data in mean.items():
        if other == here or not columns & data:
            continue
        both = [cols for (v, cols) in mean if v == other and not cols & data and (here, cols) in mean]
        if both:
            estimates.append(on_this_data * sum(mean[(here, c)] for c in both) / sum(mean[(other, c)] for c in both))
    return max(estimates) if estimates else None


def priced_from_another_variant(encoder: str, variant: str, threads: int,
                                committed: evidence.CommittedEvidence | None) -> float | None:
    """A row with no CPU run at its variant (FHE Table 4's FHE at 200,000 training sequences, before
    its first run): its encoder's committed runs at another variant of the table, times another
    encoder's cost at this variant over its cost at that one (the LSTM2's 200,000-sequence runs over
    its 20,000-sequence ones). Of the estimates the table's evidence allows, the largest: a plan
    that errs long. None where no encoder has runs at both variants."""
    every = {(enc, rows[0].get("variant", ""), threads) for (enc, _), rows in (committed.by_run.items() if committed else [])}
    costs = {key[:2]: hours for key, hours in committed_costs(committed, every).items() if hours}
    estimates = [statistics.fmean(own) * statistics.fmean(here) / statistics.fmean(costs[(other_enc, other)])
                 for (enc, other), own in costs.items() if enc == encoder and other != variant
                 for (other_enc, v), here in costs.items() if other_enc != encoder and v == variant
                 and costs.get((other_enc, other))]
    return max(estimates) if estimates else None


def print_plan(lines: list[dict]) -> None:
    width = max([28, *(len(line["experiment"]) for line in lines)])
    print(f"{'experiment':{width}} {'encoder':12} {'finished':>9} {'to run':>7} {'CPU h/run':>10} {'CPU h to run':>13}")
    total, unknown = 0.0, []
    for line in lines:
        per_run = "?" if line["per_run"] is None else (f"{line['per_run']:.2g}" + ("*" if line.get("other_data") else "")
                                                       + ("^" if line.get("from_same_data") else "")
                                                       + ("+" if line.get("from_ladder") and not line.get("ratio_elsewhere") else "")
                                                       + ("=" if line.get("ratio_elsewhere") else "")
                                                       + ("~" if line.get("from_variant") else ""))
        rest = "?" if line["per_run"] is None else f"{line['per_run'] * line['to_run']:.1f}"
        print(f"{line['experiment']:{width}} {line['encoder']:12} {line['finished']:>4}/{line['total']:<4} {line['to_run']:>7} {per_run:>10} {rest:>13}"
              + ("  left out of the campaign (table.not_run): not in the total" if line.get("left_out") else "")
              + (f"  {line['started']} of them started (they resume)" if line.get("started") else "")
              + (f"  {line['rerun']} of them to re-run under the patience rule" if line.get("rerun") else "")
              + (f"  refused by the sanity gate ({'; '.join(line['refused'])}): not in the total; --skip-sanity runs it"
                 if line.get("refused") else "")
              + (f"  grid extended past its edge to {line['extension']:g}: its selection runs are counted (if the choice "
                 f"moves there, the final seeds run again)" if line.get("extension") is not None else ""))
        if line.get("left_out") or line.get("refused"):
            continue  # named here, so it would run; but the campaign's cost is without it
        if line["per_run"] is None and line["to_run"]:
            unknown.append(line["encoder"])
        elif line["per_run"] is not None:
            total += line["per_run"] * line["to_run"]
    counted = [line for line in lines if not line.get("left_out") and not line.get("refused")]
    runs = sum(line["to_run"] for line in counted)
    priced = sum(line["to_run"] for line in counted if line["per_run"] is not None)
    # A total over some rows only must not read as the table's cost: say which runs it covers.
    cost = (f"about {total:.1f} CPU h of training" if priced == runs else
            f"about {total:.1f} CPU h of training for the {priced} priced" if priced else "no CPU estimate yet")
    print(f"{runs} run(s) to run, {cost} (wall time per run is about 1.5 times its training "
          f"time here: dev and test passes, a shared machine)"
          + (f"; no finished run{' on ' + DEADLINE.device if DEADLINE.device else ''} to estimate "
             f"{', '.join(sorted(set(unknown)))} from: run one first" if unknown else ""))
    if any(line.get("other_data") and line["to_run"] and not line.get("left_out") for line in lines):
        print("*: priced from the same model's runs on other data (another domain; with none here, the same "
              "encoder's committed runs in the table); its cost scales with the size of this experiment's training data")
    if any(line.get("from_same_data") and line["to_run"] and not line.get("left_out") for line in lines):
        print("^: no run of this model on this data yet: priced from this encoder's runs on this data at another variant "
              "of the table, times its cost at this variant over that one on the data run at both")
    if any(line.get("from_ladder") and not line.get("ratio_elsewhere") and line["to_run"] for line in lines):
        print("+: priced from the reference row's runs at this rung (the table's own where it has some, else the regime "
              "ladder's), times this encoder's cost over the "
              "reference row's at rung 0 (the table's committed runs); the epochs a run takes can differ between encoders")
    elsewhere = [line for line in lines if line.get("ratio_elsewhere") and line["to_run"]]
    if elsewhere:
        print("=: priced from the reference row's runs at this rung (the table's own where it has some, else the regime "
              "ladder's), times the median of this encoder's "
              "cost over the reference row's in the other tables (the table has no CPU run of both at rung 0); "
              + "; ".join(f"{line['encoder']}: {line['ratio_elsewhere'][3]} ratios from {line['ratio_elsewhere'][0]:.2g} to "
                          f"{line['ratio_elsewhere'][2]:.2g}, so {line['per_run'] / line['ratio_elsewhere'][1] * line['ratio_elsewhere'][0] * line['to_run']:.0f}"
                          f"-{line['per_run'] / line['ratio_elsewhere'][1] * line['ratio_elsewhere'][2] * line['to_run']:.0f} CPU h"
                          for line in elsewhere))
    if any(line.get("from_variant") and line["to_run"] for line in lines):
        print("~: no run of this encoder at this variant yet: priced from its runs at another variant of the table, times "
              "another encoder's cost at this variant over its cost at that one (the largest such estimate)")
