"""Regenerate a paper table: run what is missing of its sweep, then write results/<table>.{md,tex}.

    python scripts/make_table.py rcrn_table5 [--no-run] [extra overrides ...]
    python scripts/make_table.py rcrn_table8_wikiqa rcrn_table8_wikiqa_ap rcrn_table8_trecqa rcrn_table8_trecqa_ap

The sweep is the experiment config's `hydra.sweeper.params` (conf/experiment/<name>.yaml).
Several experiments may fill one table (its columns or variants: `table.columns`,
`table.variant`); they run one after the other and the table is assembled from all.
Two copies started side by side share the work (each skips the runs the other holds).
Finished runs are skipped and interrupted ones resume, so the command can be
stopped and started again at will. `--until HH:MM` starts a run only if it is
expected to end by then (when the machine will be stopped: a run cut off there is lost work). Runs whose evidence is already committed in
results/<table>.csv count as finished too, so a campaign goes on later
(or on another machine) without the run folders. Encoders without a config yet are listed in
the table as "not built yet".
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import sys
import time
from pathlib import Path

from omegaconf import OmegaConf

from rnnbench.compose import compose_config
from rnnbench.encoders.build import known_encoders
from rnnbench.errors import ConfigError, RnnbenchError, RunInProgress
from rnnbench.experiments import claimed_parameter_counts, sweep_of
from rnnbench.results import evidence, patience, protocol, report
from rnnbench.results.identity import run_dir
from rnnbench.results.records import DONE, PREDICTIONS, RECORD, read_record, set_aside
from rnnbench.results.run_record import git_commit
from rnnbench.results.sanity_gate import Gate
from rnnbench.results.tables import column_metrics, model_name, ours_only_table, paper_table, table_title
from rnnbench.run import train
from rnnbench.training.checkpoint import LAST


def job_config(experiment: str, job: protocol.Job, extra: list[str]):
    return compose_config([f"experiment={experiment}", f"encoder={job.encoder}", f"seed={job.seed}", f"trainer.lr={job.lr!r}", *extra])


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
    and a busier machine. The first run starts. Its methods take ``cost_keys`` (or one string).
    Only runs made on this process's kind of device count (``device``, "cpu" or "cuda"; None:
    every run): a table filled partly on a borrowed GPU would otherwise price a CPU run at a GPU
    run's minutes (RCRN Table 4: a 4-minute GPU run of 3l_bilstm takes an hour here)."""

    MARGIN = 1.5

    def __init__(self, at: float | None = None, device: str | None = None):
        self.at = at
        self.device = device
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
        took = known[0] if known else max(self.longest.values(), default=None)  # else the table's longest run
        return None if took is None else time.time() + took * self.MARGIN

    def allows(self, keys) -> bool:
        end = self.expected_end(keys)
        return self.at is None or end is None or end <= self.at


DEADLINE = Deadline()
SANITY = Gate()  # a row that fails its sanity checks starts no run (docs/sanity.md)


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


def finished(experiment: str, job: protocol.Job, extra: list[str], committed: evidence.CommittedEvidence) -> dict | None:
    """The job's record if it has run: its run folder's, else its committed evidence's stand-in,
    with its ``status`` under the patience rule (``with_status``). A run whose status is "needs
    re-run" is returned too (its dev score stands for the choice until it is re-run); ``ensure``
    and ``--plan`` count it as not finished."""
    cfg = job_config(experiment, job, extra)
    folder = run_dir(cfg)
    record = read_record(folder) or committed.record(job.encoder, folder.name, cfg.table.scale)
    return None if record is None else with_status(record, cfg)


def is_done(record: dict | None) -> bool:
    """A finished run that need not run again (not one the patience rule would train further)."""
    return record is not None and record.get("status") != patience.NEEDS_RERUN


_MAJORITY: dict[str, float | None] = {}


def majority_of(cfg) -> float | None:
    """The dev split's majority-class score on the task's select metric (``patience.task_baseline``;
    None where the rule does not apply), read once per task and data folder."""
    if not patience.applies(cfg.task):
        return None
    key = json.dumps([OmegaConf.to_container(cfg.task.reader, resolve=True), str(cfg.task.select_metric), str(cfg.paths.data_dir)],
                     sort_keys=True, default=str)
    if key not in _MAJORITY:
        from rnnbench.data.prepare import build_reader, load_splits

        dev = load_splits(build_reader(cfg.task.reader), cfg.paths.data_dir, cfg.paths.cache_dir)["dev"]
        _MAJORITY[key] = patience.task_baseline(cfg.task, dev)
    return _MAJORITY[key]


def with_status(record: dict, cfg) -> dict:
    """The record (or committed stand-in) with ``status`` and ``majority_baseline``: its own where
    it was made under the patience rule, else judged from its dev curve against the dev split's
    majority-class score (``patience.outcome``; "" where it has no curve of the select metric)."""
    if record.get("status"):
        return record
    select, lower = str(cfg.task.select_metric), cfg.task.get("select_mode", "max") == "min"
    majority = majority_of(cfg)
    if record.get("committed"):  # curves as committed: table units, six significant digits
        curve, cap = record.get("dev_curves", {}).get(select, []), record.get("epoch_cap")
        baseline = None if majority is None else evidence.curve_baseline(majority, cfg.table.scale)
    else:
        curve, cap = [h.get(f"dev_{select}") for h in record.get("history", [])], record["config"]["trainer"]["epochs"]
        baseline = majority
    status = patience.outcome(curve, baseline, int(record["epochs_run"]), int(cap), lower) if curve and cap not in (None, "") else ""
    return {**record, "status": status, "majority_baseline": majority}


def reopen(cfg) -> None:
    """A run folder's record made before the patience rule, which would train the run further: set
    aside, so the run resumes from its last checkpoint and goes on (``loop.apply_patience_rule``).
    The runs index keeps the old record's line (one line per identity)."""
    folder = run_dir(cfg)
    if (folder / RECORD).exists():
        aside = set_aside(folder / RECORD)
        (folder / DONE).unlink(missing_ok=True)
        print(f"re-running {folder}: early stopping ended it before its dev score beat the majority-class baseline, "
              f"where patience now starts counting (its record moved to {aside.name if aside else 'nothing'})", flush=True)


def ensure(experiment: str, job: protocol.Job, extra: list[str], wait: bool, committed: evidence.CommittedEvidence) -> dict | None:
    """The job's record: read it, else train the run. A run locked by another process is
    skipped (``wait=False``) or waited for (polling) until its record appears."""
    cfg = job_config(experiment, job, extra)
    while True:
        record = finished(experiment, job, extra, committed)
        key = cost_keys(cfg)
        if is_done(record):
            DEADLINE.note(key, record)
            return record
        if not DEADLINE.allows(key):
            DEADLINE.hold_back(experiment, job, key)
            return None
        if not SANITY.allows(experiment, job.encoder, extra):
            return None
        if record is not None:  # made before the patience rule, which trains it further
            reopen(cfg)
        print(f"== {experiment}: {job.encoder} seed {job.seed} lr {job.lr:g} ({job.phase})", flush=True)
        try:
            record = train(cfg)
            DEADLINE.note(key, record)
            return record
        except RunInProgress as exc:  # a second `make table-...` is running it
            if not wait:
                print(f"skipped: {exc}", flush=True)
                return None
            time.sleep(20)


def chosen_lr(experiment: str, base, encoder: str, extra: list[str], wait: bool, run: bool,
              committed: evidence.CommittedEvidence) -> tuple[float | None, protocol.RateChoice]:
    """The encoder's learning rate under the protocol, and the choice it comes from: the grid,
    extended past an edge the choice sits at (``protocol.choose_rate``). The rate is None while a
    selection run is missing; with ``run`` (the runs are trained here first) also while one past
    the edge is; without, the edge choice stands, provisional (``RateChoice.pending``)."""
    source = protocol.borrowed(base.table.protocol)
    if source:  # another experiment's choice: its selection runs (run here if missing and `run`)
        if source == experiment:
            raise ConfigError(f"experiment {experiment}: table.protocol.lr_from names the experiment itself; "
                                "name another experiment of the table, or remove lr_from")
        other = compose_config([f"experiment={source}", *extra])
        if other.table.name != base.table.name or protocol.borrowed(other.table.protocol):
            raise ConfigError(f"experiment {experiment}: table.protocol.lr_from={source} must name an experiment of the "
                                f"same table ({base.table.name}) that selects its own learning rate")
        return chosen_lr(source, other, encoder, extra, wait, run, committed)
    select, lower = base.task.select_metric, base.task.get("select_mode", "max") == "min"

    def dev_scores(lr: float) -> list[float] | None:
        scores = []
        for job in protocol.selection_jobs_at(encoder, base.table.protocol, lr):
            record = ensure(experiment, job, extra, wait, committed) if run else finished(experiment, job, extra, committed)
            if record is None:
                return None
            scores.append(record["dev"][select])
        return scores

    choice = protocol.choose_rate(base.table.protocol, base.trainer.lr, dev_scores, lower)
    return (None if run and choice.pending is not None else choice.lr), choice


def known_choice(experiment: str, base, enc: str, extra: list[str],
                 committed: evidence.CommittedEvidence) -> tuple[float | None, protocol.RateChoice | None]:
    """The rate the table reports for ``enc`` and the choice behind it: the grid's one rate (nothing
    to choose, so it is known before any selection run finishes; no choice), else the one chosen on
    dev (None while a selection run is missing; provisional while a run past the grid's edge is)."""
    lr = protocol.only_rate(base.table.protocol, base.trainer.lr)
    if lr is not None:
        return lr, None
    return chosen_lr(experiment, base, enc, extra, wait=False, run=False, committed=committed)


def known_lr(experiment: str, base, enc: str, extra: list[str], committed: evidence.CommittedEvidence) -> float | None:
    """The rate the table reports for ``enc`` (``known_choice``)."""
    return known_choice(experiment, base, enc, extra, committed)[0]


def protocol_jobs(experiment: str, base, enc: str, extra: list[str], committed: evidence.CommittedEvidence) -> tuple[int, list[protocol.Job]]:
    """The protocol's run count for one encoder of one experiment, and the jobs known so far (the
    final seeds wait for the learning-rate choice, unless the protocol has one rate). The selection
    runs include those at rates added past the grid's edge, and at the one the choice now asks for."""
    return jobs_of(base, enc, *known_choice(experiment, base, enc, extra, committed))


def jobs_of(base, enc: str, lr: float | None, choice: protocol.RateChoice | None) -> tuple[int, list[protocol.Job]]:
    """``protocol_jobs`` for a known rate and choice."""
    # One rate: the final runs are known (and may have finished) before the selection runs have.
    jobs = protocol.choice_jobs(enc, base.table.protocol, base.trainer.lr, choice)
    finals = protocol.final_jobs(enc, base.table.protocol, lr if lr is not None else base.trainer.lr)
    return len(jobs) + len(finals), [*jobs, *(finals if lr is not None else [])]


def finished_runs(experiment: str, base, enc: str, extra: list[str], committed: evidence.CommittedEvidence) -> tuple[int, list[dict]]:
    """The protocol's run count for one encoder of one experiment, and the records of those finished."""
    total, jobs = protocol_jobs(experiment, base, enc, extra, committed)
    return total, [r for r in (finished(experiment, j, extra, committed) for j in jobs) if r]


def started_runs(experiment: str, unfinished: list[protocol.Job], extra: list[str]) -> int:
    """How many of the ``unfinished`` jobs were interrupted with their progress saved (a run folder
    with a checkpoint): they resume where they stopped, so --plan says so."""
    return sum(1 for j in unfinished if (run_dir(job_config(experiment, j, extra)) / LAST).exists())


def left_out_rows(plans) -> dict[tuple[str, str | None], str]:
    """(encoder, variant) -> the cell of a row its experiment leaves out of the campaign (``table.not_run``)."""
    return {(enc, cfg.table.variant or None): str(cfg.table.not_run) for _, cfg, encoders in plans if cfg.table.not_run for enc in encoders}


def note_finished_runs(plans, extra: list[str], committed: evidence.CommittedEvidence) -> None:
    """Give ``--until`` every finished run of the table before any run starts: a run's length is
    then known from its encoder's runs in all the experiments, not only in those visited so far
    (RCRN Table 8: WikiQA's 3l_bilstm runs take 30 minutes; its attentive-pooling experiment,
    listed first, would otherwise start one on the estimate of a 10-minute bilstm run)."""
    for experiment, base, encoders in plans:
        for enc in encoders:
            key = cost_keys_of(experiment, base, enc, extra)
            for record in finished_runs(experiment, base, enc, extra, committed)[1]:
                DEADLINE.note(key, record)


def paper_then_ours(cfg, encoders: list[str]) -> list[list[str]]:
    """The sweep's encoders in two groups, the paper's own rows, then our extra baselines: a
    group's runs all come before the next group's, so that when the work stops before the
    table is complete, what it did run is what the claims need."""
    table = ours_only_table(cfg.table.caption) if cfg.table.caption else paper_table(cfg.table.name)
    in_paper = {row.get("encoder") for row in table.get("rows", [])}
    groups = [[enc for enc in encoders if enc in in_paper], [enc for enc in encoders if enc not in in_paper]]
    return [group for group in groups if group]


def run_missing(experiment: str, base, encoders: list[str], extra: list[str], committed: evidence.CommittedEvidence) -> int:
    """Run the protocol, group by group (the paper's rows, then ours): every selection run of
    the group first (two copies of this script share them), then per encoder the remaining
    seeds at its chosen rate."""
    try:
        for group in paper_then_ours(base, encoders):
            for enc in group:
                for job in protocol.selection_jobs(enc, base.table.protocol, base.trainer.lr):
                    ensure(experiment, job, extra, False, committed)
            for enc in group:
                # One rate: the same final runs whatever the selection runs score, so they start
                # at once (a second worker starts them while the first runs the selection seeds).
                lr = protocol.only_rate(base.table.protocol, base.trainer.lr)
                if lr is None:
                    lr, _ = chosen_lr(experiment, base, enc, extra, wait=True, run=True, committed=committed)
                if lr is None:  # a selection run was not started (--until)
                    continue
                for job in protocol.final_jobs(enc, base.table.protocol, lr):
                    ensure(experiment, job, extra, False, committed)
    except RnnbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def plan(plans, extra: list[str], committed: evidence.CommittedEvidence) -> list[dict]:
    """Per experiment and encoder: the protocol's runs, how many have finished (here or in the
    committed evidence), and the CPU hours of the rest, estimated from the mean cost of the
    finished runs of the same encoder in this experiment, else of runs elsewhere in the table
    under the same ``cost_keys`` (the same model and data, else the same model), made on this kind
    of device (``DEADLINE.device``)."""
    lines, costs = [], {}
    for experiment, base, encoders in plans:
        for enc in encoders:
            lr, choice = known_choice(experiment, base, enc, extra, committed)
            total, jobs = jobs_of(base, enc, lr, choice)
            records = [(j, finished(experiment, j, extra, committed)) for j in jobs]
            done = [r for _, r in records if is_done(r)]
            spent = [h for h in (cpu_hours(r, base.trainer.num_threads) for r in done) if h is not None]
            keys = cost_keys_of(experiment, base, enc, extra)
            for key in keys:
                costs.setdefault(key, []).extend(spent)
            lines.append({"experiment": experiment, "encoder": enc, "total": total, "finished": len(done),
                          "own": spent, "keys": keys, "left_out": str(base.table.not_run),
                          "variant": str(base.table.variant or ""), "threads": base.trainer.num_threads,
                          "started": started_runs(experiment, [j for j, r in records if not is_done(r)], extra),
                          "rerun": sum(1 for _, r in records if r is not None and not is_done(r)),
                          "extension": None if choice is None or protocol.borrowed(base.table.protocol) else choice.pending})
    fallback = committed_costs(committed, {(line["encoder"], line["variant"], line["threads"]) for line in lines})
    for line in lines:
        model, data = line["keys"]
        known = line["own"] or costs[data] or costs[model] or fallback[(line["encoder"], line["variant"], line["threads"])]
        line["per_run"] = sum(known) / len(known) if known else None
        # Priced from the same model on other data (another Amazon domain: 0.2x to 2.5x Sports' words):
        # the plan marks it, so the estimate is not read as this data's cost.
        line["other_data"] = bool(known) and not (line["own"] or costs[data])
        line["to_run"] = line["total"] - line["finished"]
    return lines


def cpu_hours(record: dict, threads: int) -> float | None:
    """A finished run's CPU hours of training (a record or committed evidence's stand-in), or None
    when it was made on another kind of device than ``DEADLINE.device`` or was not timed."""
    if not (record.get("seconds_per_epoch") and record.get("epochs_run") and same_device(record, DEADLINE.device)):
        return None
    return report.run_cpu_hours(record["seconds_per_epoch"], record["epochs_run"], threads)


def committed_costs(committed: evidence.CommittedEvidence | None, wanted: set[tuple[str, str, int]]) -> dict:
    """{(encoder, variant, threads): CPU hours of each of the table's committed runs of that encoder
    and variant}: the price of last resort. A fresh machine (no run folders) asked to plan only
    experiments with no finished run would otherwise price nothing (RCRN Table 1's ten larger Amazon
    domains, with the six done ones committed)."""
    costs = {key: [] for key in wanted}
    for (encoder, run), rows in (committed.by_run.items() if committed else []):
        for key in wanted:
            if key[:2] == (encoder, rows[0].get("variant", "")):
                hours = cpu_hours(committed.record(encoder, run, 1.0), key[2])
                costs[key] += [] if hours is None else [hours]
    return costs


def print_plan(lines: list[dict]) -> None:
    width = max([28, *(len(line["experiment"]) for line in lines)])
    print(f"{'experiment':{width}} {'encoder':12} {'finished':>9} {'to run':>7} {'CPU h/run':>10} {'CPU h to run':>13}")
    total, unknown = 0.0, []
    for line in lines:
        per_run = "?" if line["per_run"] is None else f"{line['per_run']:.2g}" + ("*" if line.get("other_data") else "")
        rest = "?" if line["per_run"] is None else f"{line['per_run'] * line['to_run']:.1f}"
        print(f"{line['experiment']:{width}} {line['encoder']:12} {line['finished']:>4}/{line['total']:<4} {line['to_run']:>7} {per_run:>10} {rest:>13}"
              + ("  left out of the campaign (table.not_run): not in the total" if line.get("left_out") else "")
              + (f"  {line['started']} of them started (they resume)" if line.get("started") else "")
              + (f"  {line['rerun']} of them to re-run under the patience rule" if line.get("rerun") else "")
              + (f"  grid extended past its edge to {line['extension']:g}: its selection runs are counted (if the choice "
                 f"moves there, the final seeds run again)" if line.get("extension") is not None else ""))
        if line.get("left_out"):
            continue  # named here, so it would run; but the campaign's cost is without it
        if line["per_run"] is None and line["to_run"]:
            unknown.append(line["encoder"])
        elif line["per_run"] is not None:
            total += line["per_run"] * line["to_run"]
    counted = [line for line in lines if not line.get("left_out")]
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


def evaluated(record: dict, overrides: list[str], allowed: bool) -> dict | None:
    """The evaluation of a finished run's checkpoint with reader ``overrides`` (evaluate.py's
    record beside the run): read if it exists, else computed when ``allowed``."""
    from rnnbench.inference import evaluate_run, existing_evaluation

    done = existing_evaluation(record["run_dir"], "test", list(overrides))
    if done is not None or not allowed:
        return done
    return evaluate_run(record["run_dir"], "test", list(overrides))[0]


def collect(plans, extra: list[str], built: set[str], committed: evidence.CommittedEvidence,
            run: bool = False) -> tuple[list[dict], list[dict]]:
    """Evidence rows of every finished run of the plans' protocol, and per-item test scores
    of the runs the table reports (the chosen learning rate). Columns of ``table.evaluated_columns``
    come from evaluating the reported runs' checkpoints (computed only when ``run``). A run
    without its folder here contributes its committed rows."""
    rows, items = [], []
    for experiment, cfg, encoders in plans:
        table = ours_only_table(cfg.table.caption) if cfg.table.caption else paper_table(cfg.table.name)
        mapping = column_metrics(cfg.table, cfg)
        variant = cfg.table.variant or ""
        for enc in encoders:
            model = model_name(table, enc, variant or None)
            lr, choice = known_choice(experiment, cfg, enc, extra, committed)  # one rate: a finished seed is reported before the others
            jobs = protocol.choice_jobs(enc, cfg.table.protocol, cfg.trainer.lr, choice)
            encoder_rows: list[dict] = []  # this encoder's rows in this experiment: they state its rate choice
            if lr is not None:
                jobs += protocol.final_jobs(enc, cfg.table.protocol, lr)
            else:  # the choice waits on selection runs (a rate new to the grid): finals at any rate stay, unreported
                jobs += [job for rate in protocol.grid(cfg.table.protocol, cfg.trainer.lr)
                         for job in protocol.final_jobs(enc, cfg.table.protocol, rate)]
            for job in jobs:
                job_cfg = job_config(experiment, job, extra)
                folder = run_dir(job_cfg)
                record = read_record(folder)
                is_reported = lr is not None and job.lr == lr
                if record is None:
                    columns = {*mapping, *(cfg.table.evaluated_columns or {})}
                    kept, kept_items = committed.rows_of(enc, folder.name, model, variant, job.phase, is_reported, columns)
                    encoder_rows += with_row_status(kept, committed.record(enc, folder.name, cfg.table.scale), job_cfg)
                    items += kept_items
                    continue
                committed.use(enc, folder.name)  # its committed rows, if any, are these rows
                record = with_status(record, job_cfg)  # a record made before the patience rule is judged by it
                encoder_rows += evidence.evidence_rows(record, model, variant, mapping, cfg.table.scale, job.phase, is_reported)
                predictions = Path(record["run_dir"]) / PREDICTIONS
                scored = {column: (metric, predictions) for column, metric in mapping.items()}
                for column, overrides in (cfg.table.evaluated_columns or {}).items() if is_reported else ():
                    evaluation = evaluated(record, overrides, run)
                    if evaluation is None:
                        continue
                    metric = str(cfg.table.metric)
                    row = evidence.evidence_rows(record, model, variant, {column: metric}, cfg.table.scale, job.phase, True)[0]
                    row.update(test=evaluation["metrics"][metric] * cfg.table.scale, dev="", dev_curve="",
                               inference_seconds_per_example=evaluation["inference_seconds_per_example"])
                    encoder_rows.append(row)
                    scored[column] = (metric, Path(record["run_dir"]) / evaluation["predictions"])
                if is_reported:
                    for column, (metric, path) in scored.items():
                        scores = evidence.item_scores(path, metric) if path.exists() else None
                        items += [{"model": model, "variant": variant, "dataset": column, "seed": record["seed"], "item": i, "score": v * cfg.table.scale}
                                  for i, v in (scores or {}).items()]
            # The choice is stored with the evidence, so the table states it rather than re-deriving it.
            rows += [{**row, "chosen_lr": "" if lr is None else lr, "lr_choice": choice.statement() if choice else ""} for row in encoder_rows]
    return rows, items


def with_row_status(rows: list[dict], stand_in: dict | None, cfg) -> list[dict]:
    """Committed rows with their run's ``status`` and ``majority`` filled in where they predate the
    patience rule (judged from the run's committed dev curve: ``with_status``)."""
    if stand_in is None or all(row.get("status") for row in rows):
        return rows
    judged = with_status(stand_in, cfg)
    majority = judged.get("majority_baseline")
    return [row if row.get("status") else {**row, "status": judged["status"], "majority": "" if majority is None else majority * cfg.table.scale}
            for row in rows]


def footnotes(plans, rows: list[dict]) -> list[str]:
    """How our numbers were obtained: from the configs and the evidence rows."""
    if not rows:
        return ["No finished runs yet."]
    # The embeddings described are those of the first experiment with runs (DCU Table 1: the
    # CPU-sized "small" variant, not the paper-sized experiment listed first).
    with_runs = [(name, cfg) for name, cfg, _ in plans if any(r["variant"] == (cfg.table.variant or "") for r in rows)] or [plans[0][:2]]
    first = with_runs[0][1]
    seeds = sorted({int(r["seed"]) for r in rows if r["reported"] == "yes"})
    commits = sorted({r["commit"][:12] for r in rows})
    hardware = sorted({f"{r['hardware']} ({r['device']})" for r in rows})
    notes = [
        f"Ours: test split, best epoch chosen on dev; embeddings {first.embedding.name} "
        f"({'frozen' if (first.embedding.freeze if first.embedding.freeze is not None else first.task.get('freeze_embeddings')) else 'trained'}); "
        + (f"reported seeds {', '.join(map(str, seeds))}." if seeds else "no reported runs yet (learning-rate selection runs only)."),
        *protocol_notes(with_runs),
        f"Hardware: {'; '.join(hardware)}; code {', '.join(commits)}.",
    ]
    notes += [n for n in dict.fromkeys(str(cfg.table.data_note) for _, cfg, _ in plans) if n]
    return notes


def protocol_notes(experiments) -> list[str]:
    """The budget rule of the experiments with runs: one sentence when they share it (MZU Table
    6's two domains), else one per experiment, named, so no table states a cap some runs did not have."""
    def sentence(cfg) -> str:
        t = cfg.trainer
        return (protocol.describe(cfg.table.protocol, t.lr, t.epochs, t.patience, t.num_threads, str(cfg.task.select_metric),
                                  patience.applies(cfg.task))
                + (f" At most {t.max_batches} batches per epoch." if t.max_batches else "") + f" {t.optimizer}, batch {t.batch_size}.")

    by_sentence: dict[str, list[str]] = {}
    for name, cfg in experiments:
        by_sentence.setdefault(sentence(cfg), []).append(name)
    if len(by_sentence) == 1:
        return list(by_sentence)
    return [f"{', '.join(names)}: {text}" for text, names in by_sentence.items()]


def stale_runs(plans, rows: list[dict]) -> list[str]:
    """Finished runs filed under these experiments that the current configs no longer select
    (another component version, data or config): listed so a reader knows they were left out."""
    used = {r["run"] for r in rows}
    stale = []
    for experiment, cfg, encoders in plans:
        for enc in encoders:
            folder = Path(cfg.paths.runs_dir) / str(cfg.task.name) / enc
            for done in sorted(folder.glob("*/record.json")) if folder.exists() else []:
                if done.parent.name in used or not (done.parent / "done").exists():
                    continue
                try:
                    if json.loads(done.read_text()).get("experiment") == experiment:
                        stale.append(str(done.parent))
                except ValueError:
                    continue
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("experiments", nargs="+", metavar="experiment",
                        help="conf/experiment/<name>.yaml, e.g. rcrn_table5; several may fill one table (then before any override)")
    parser.add_argument("--no-run", action="store_true", help="only assemble the table from finished runs")
    parser.add_argument("--plan", action="store_true",
                        help="run nothing: list the protocol's runs finished and to run, with their CPU hours estimated")
    parser.add_argument("--until", metavar="HH:MM", help="start a run only if it is expected to end by then (e.g. when the machine will be stopped)")
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        help="an extra Hydra override for every run (repeatable), e.g. --set paths.runs_dir=/tmp/r")
    parser.add_argument("--skip-sanity", action="store_true", help="start runs of rows that fail the sanity gate (docs/sanity.md); the table says so")
    args = parser.parse_args(argv)
    DEADLINE.at = parse_until(args.until) if args.until else None
    SANITY.skip = args.skip_sanity
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
    first = plans[0][1]
    DEADLINE.device = device_kind(first.trainer.device)
    name = first.table.name
    out_dir = Path(first.paths.results_dir)
    csv_path, items_path = out_dir / f"{name}.csv", out_dir / f"{name}.items.csv.gz"
    committed = evidence.CommittedEvidence(csv_path, items_path)
    # Said up front: a results_dir without the committed CSV (a scratch folder) means every
    # committed run is trained again.
    if committed.by_run:
        print(f"committed evidence: {len(committed.by_run)} runs in {csv_path}", flush=True)
    else:
        why = "has no rows" if committed.found else "not found"
        print(f"committed evidence: none ({csv_path} {why}): every run of the protocol is trained here", flush=True)
    if args.plan:
        try:
            print_plan(plan(plans, overrides, committed))
        except RnnbenchError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        return 0
    if not args.no_run:
        if DEADLINE.at is not None:
            note_finished_runs(plans, overrides, committed)
        for experiment, base, encoders in plans:
            code = run_missing(experiment, base, encoders, overrides, committed)
            if code:
                return code

    # Assemble from whatever has finished now (a parallel copy may have finished more), through the
    # evidence CSV: the table is always rendered from the CSV, so the committed CSV regenerates it.
    try:
        rows, items = collect(plans, overrides, built, committed, run=not args.no_run)
    except RnnbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    superseded, dropped = evidence.superseded_path(csv_path), []
    if rows:
        scope = {(column, cfg.table.variant or "") for _, cfg, _ in plans
                 for column in [*column_metrics(cfg.table, cfg), *(cfg.table.evaluated_columns or {})]}
        other_rows, other_items = committed.outside(scope)  # another experiment's columns: kept as committed
        rows, items = rows + other_rows, items + other_items
        evidence.write_csv(csv_path, rows)
        if items:
            evidence.write_items(items_path, items)
        dropped = committed.unused()
    elif csv_path.exists():
        # Nothing matched: more likely another data folder (RNNBENCH_DATA) than a config change, so nothing is dropped.
        print(f"no finished or committed run matches the current configs (is RNNBENCH_DATA the data the runs read?): "
              f"rendering the committed evidence {csv_path} as it is")
    counts = claimed_parameter_counts(name)  # a size claim's evidence, run or not (no file for other tables)
    if counts:
        evidence.write_parameter_counts(evidence.parameters_path(csv_path), counts, git_commit())
    rows = evidence.read_csv(csv_path) if csv_path.exists() else []
    items = evidence.read_items(items_path)
    table = ours_only_table(first.table.caption) if first.table.caption else paper_table(name)
    has_paper = not table.get("ours_only")
    columns: list[str] = []
    for _, cfg, _ in plans:
        columns += [c for c in [*column_metrics(cfg.table, cfg), *(cfg.table.evaluated_columns or {})] if c not in columns]
    metrics = dict.fromkeys(m for _, cfg, _ in plans for m in column_metrics(cfg.table, cfg).values())
    title = table_title(table, list(metrics), ", %" if first.table.scale == 100 else "")
    notes = footnotes(plans, rows) + SANITY.notes(plans, overrides)
    stale = stale_runs(plans, rows)
    if dropped:
        evidence.record_superseded(superseded, committed.unused_rows(), datetime.datetime.now(datetime.timezone.utc).date().isoformat())
        print(f"{len(dropped)} committed run(s) are no longer selected by the current configs (component versions, data or "
              f"config): moved to {superseded}: {', '.join(dropped)}", flush=True)
    note = evidence.superseded_note(superseded, rows)
    if note:
        notes.append(note)
    if stale:
        notes.append(f"{len(stale)} finished run(s) of these experiments were left out: other component versions, data or "
                     f"config than the current ones (re-run with make): {', '.join(stale)}.")
    try:
        md, tex = report.render(name, table, title, columns, rows, items, built, notes, out_dir, first.table.digits, has_paper,
                                first.table.protocol, str(first.task.select_metric), left_out_rows(plans))
    except RnnbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(md.read_text())
    print(f"wrote {md}, {tex} and {csv_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
