"""Running a campaign: every missing run of a table's protocol, the paper's rows first, selection
runs before the final seeds at the chosen rate; a run that cannot end before ``--until`` or whose
row fails the sanity gate is not started. Two processes side by side share the work."""
from __future__ import annotations

import time

from rnnbench.errors import RunInProgress
from rnnbench.campaign import protocol
from rnnbench.results import evidence
from rnnbench.results.identity import run_dir
from rnnbench.results.records import DONE, RECORD, set_aside
from rnnbench.campaign.sanity_gate import Gate
from rnnbench.run import train
from rnnbench.campaign import pricing
from rnnbench.campaign.jobs import evaluate_columns, finished, is_done, job_config
from rnnbench.campaign.rates import chosen_dropout, chosen_lr, finished_runs
from rnnbench.campaign.pricing import cost_keys, cost_keys_of
from rnnbench.campaign.definitions import ExperimentPlan, table_spec

SANITY = Gate()  # a row that fails its sanity checks starts no run (docs/sanity.md)


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
    announced = waiting = False
    while True:
        record = finished(experiment, job, extra, committed)
        key = cost_keys(cfg)
        if is_done(record):
            pricing.DEADLINE.note(key, record)
            evaluate_columns(cfg)  # a run finished before its columns were scored (a table stopped early)
            return record
        if not pricing.DEADLINE.allows(key):
            pricing.DEADLINE.hold_back(experiment, job, key)
            return None
        if not SANITY.allows(experiment, job.encoder, extra):
            return None
        if record is not None:  # made before the patience rule, which trains it further
            reopen(cfg)
        if not announced:  # once, not at every poll while waiting
            with_p = "" if job.dropout is None else f" dropout {job.dropout:g}"
            print(f"== {experiment}: {job.encoder} seed {job.seed} lr {job.lr:g}{with_p} ({job.phase})", flush=True)
            announced = True
        try:
            record = train(cfg)
            pricing.DEADLINE.note(key, record)
            evaluate_columns(cfg)
            return record
        except RunInProgress as exc:  # a second `make table-...` is running it
            if not wait:
                print(f"skipped: {exc}", flush=True)
                return None
            if not waiting:
                print(f"waiting for it: {exc}", flush=True)
                waiting = True
            time.sleep(20)


def fetch_selection(experiment: str, job: protocol.Job, extra: list[str], committed: evidence.CommittedEvidence,
                    wait: bool = True) -> dict | None:
    """A selection run's record for a rate choice (``ensure``; with ``wait``, waiting while another
    process holds it). Before waiting, the other selection seeds' runs at its rate start where no
    process holds them: two workers extending a grid past its edge then share the new rate's seeds,
    where the second used to wait for the first's seed 1 and leave seed 2 for later."""
    record = ensure(experiment, job, extra, False, committed)
    if record is not None:
        return record
    grid_protocol = job_config(experiment, job, extra).table.protocol  # lr_from: the experiment choosing the rate
    for sibling in protocol.selection_jobs_at(job.encoder, grid_protocol, job.lr):
        if sibling != job:
            ensure(experiment, sibling, extra, False, committed)
    return ensure(experiment, job, extra, wait, committed)


def note_finished_runs(plans: list[ExperimentPlan], extra: list[str], committed: evidence.CommittedEvidence) -> None:
    """Give ``--until`` every finished run of the table before any run starts: a run's length is
    then known from its encoder's runs in all the experiments, not only in those visited so far
    (RCRN Table 8: WikiQA's 3l_bilstm runs take 30 minutes; its attentive-pooling experiment,
    listed first, would otherwise start one on the estimate of a 10-minute bilstm run)."""
    for experiment, base, encoders in plans:
        for enc in encoders:
            key = cost_keys_of(experiment, base, enc, extra)
            for record in finished_runs(experiment, base, enc, extra, committed)[1]:
                pricing.DEADLINE.note(key, record)


def paper_then_ours(cfg, encoders: list[str]) -> list[list[str]]:
    """The sweep's encoders in two groups, the paper's own rows, then our extra baselines: a
    group's runs all come before the next group's, so that when the work stops before the
    table is complete, what it did run is what the claims need."""
    table = table_spec(cfg)
    in_paper = {row.get("encoder") for row in table.get("rows", [])}
    groups = [[enc for enc in encoders if enc in in_paper], [enc for enc in encoders if enc not in in_paper]]
    return [group for group in groups if group]


def run_missing(experiment: str, base, encoders: list[str], extra: list[str], committed: evidence.CommittedEvidence) -> int:
    """Run the protocol, group by group (the paper's rows, then ours): every selection run of
    the group first (two copies of this script share them), then per encoder the remaining
    seeds at its chosen rate (and dropout). An encoder whose choice needs a run another process
    holds comes after the group's others, so this worker waits only when nothing else is left.
    Returns 0; what goes wrong is raised (``RnnbenchError``)."""
    for group in paper_then_ours(base, encoders):
        for enc in group:
            for job in protocol.selection_jobs(enc, base.table.protocol, base.trainer.lr):
                ensure(experiment, job, extra, False, committed)
        held = [enc for enc in group if not run_at_choice(experiment, base, enc, extra, committed, wait=False)]
        for enc in held:
            run_at_choice(experiment, base, enc, extra, committed, wait=True)
    return 0


def run_at_choice(experiment: str, base, enc: str, extra: list[str], committed: evidence.CommittedEvidence, wait: bool) -> bool:
    """The encoder's runs after its selection runs: the remaining seeds at its chosen rate (and
    dropout). False when a choice is not known yet: a run it needs is held by another process
    (waited for with ``wait``) or was not started (``--until``)."""
    # One rate: the same final runs whatever the selection runs score, so they start
    # at once (a second worker starts them while the first runs the selection seeds).
    lr = protocol.only_rate(base.table.protocol, base.trainer.lr)
    if lr is None:
        lr, _ = chosen_lr(experiment, base, enc, extra, committed,
                          run=lambda exp, job: fetch_selection(exp, job, extra, committed, wait))
    if lr is None:
        return False
    p = None
    if protocol.dropout_jobs(enc, base.table.protocol, lr):  # dropout chosen at the chosen rate
        for job in protocol.dropout_jobs(enc, base.table.protocol, lr):
            ensure(experiment, job, extra, False, committed)
        dropout = chosen_dropout(experiment, base, enc, lr, extra, committed,
                                 run=lambda exp, job: ensure(exp, job, extra, wait, committed))
        if dropout is None:
            return False
        p = dropout.p
    for job in protocol.final_jobs(enc, base.table.protocol, lr, p):
        ensure(experiment, job, extra, False, committed)
    return True
