"""``make_table``: a paper table in one call. Run what is missing of its experiments' protocol (or
only price it, or run nothing), then write the whole table from every experiment that fills it.

Finished runs are skipped and interrupted ones resume, so the call can be stopped and made again
at will; runs whose evidence is committed (results/<table>.csv) count as finished, so a campaign
goes on later, or on another machine, without the run folders. Two processes side by side share
the work (each skips the runs the other holds).
"""
from __future__ import annotations

from pathlib import Path

from hydra.errors import HydraException

from rnnbench.campaign import assemble, definitions, pricing, reruns, runner
from rnnbench.compose import compose_config
from rnnbench.encoders.build import known_encoders
from rnnbench.errors import ConfigError, RnnbenchError
from rnnbench.campaign.definitions import ExperimentPlan, sweep_of
from rnnbench.results import evidence

RUN, PLAN, NO_RUN = "run", "plan", "no-run"


def make_table(table: str, only: list[str] | None = None, mode: str = RUN, until: str | None = None,
               overrides: list[str] = (), skip_sanity: bool = False, part: str | None = None,
               replace_committed: bool = False) -> int:
    """Make ``table`` (its name or short form: ``rcrn-5``; ``fhe-2-small`` names a part): ``mode``
    RUN trains what is missing of its experiments (``only`` these, else those of ``part``, else
    every one not left out: ``definitions.to_run``), PLAN
    prints the runs finished and to run with their CPU hours and stops, NO_RUN trains nothing;
    then the table is written from all its experiments. ``until`` (HH:MM): start a run only if it
    is expected to end by then. ``replace_committed``: a run folder whose numbers differ from its
    committed rows (the same identity on another processor kind) replaces them, which move to
    ``results/<table>.superseded.csv`` with the reason; else the committed rows are kept and one
    line says so (``reruns``). Returns 0; what goes wrong is raised (``RnnbenchError``, one line):
    the commands print it."""
    name, named_part = definitions.resolve(table)
    if name in definitions.benchmarks():
        raise RnnbenchError(f"{name} is measured, not trained: run {definitions.benchmarks()[name]}")
    running = definitions.to_run(name, only, part or named_part)
    return make_experiments(name, definitions.experiments_of(name), running, mode, until, overrides, skip_sanity, replace_committed)


def make_experiments(name: str, experiments: list[str], running: list[str], mode: str = RUN, until: str | None = None,
                     overrides: list[str] = (), skip_sanity: bool = False, replace_committed: bool = False) -> int:
    """``make_table`` once the table is known: ``experiments`` are every experiment that fills the
    table ``name`` (each composes as ``experiment=<experiment>``: a config of conf/experiment/, or
    one defined in memory, as ``rnnbench compare`` defines its comparison), ``running`` those
    whose missing runs ``mode`` RUN trains. The other arguments are ``make_table``'s."""
    overrides = list(overrides)
    built = set(known_encoders())
    try:
        # Each experiment composed once: its config and the encoders of its sweep that exist.
        plans = [ExperimentPlan(experiment, compose_config([f"experiment={experiment}", *overrides]),
                                [e for e in sweep_of(experiment, overrides) if e in built]) for experiment in experiments]
    except HydraException as exc:  # an override that does not compose with one of the table's experiments
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"{name}: an override does not compose with its experiments: {first_line}") from None
    pricing.DEADLINE.at = pricing.parse_until(until) if until else None
    runner.SANITY.skip = skip_sanity
    runner.SANITY.unchecked.clear()  # the rows this table starts without the gate, not another table's of this process
    reruns.POLICY.replace = replace_committed
    first = plans[0].config
    pricing.DEADLINE.device = pricing.device_kind(first.trainer.device)
    out_dir = Path(first.paths.results_dir)
    pricing.DEADLINE.results_dir, pricing.DEADLINE.table = out_dir, name  # scales a first run of an encoder (Deadline)
    csv_path = out_dir / f"{name}.csv"
    committed = evidence.CommittedEvidence(csv_path, evidence.items_path(csv_path))
    # Said up front: a results_dir without the committed CSV (a scratch folder) means every
    # committed run is trained again.
    if committed.by_run:
        print(f"committed evidence: {len(committed.by_run)} runs in {csv_path}", flush=True)
    else:
        why = "has no rows" if committed.found else "not found"
        print(f"committed evidence: none ({csv_path} {why}): every run of the protocol is trained here", flush=True)
    to_run = [plan for plan in plans if plan.experiment in running]
    if mode == PLAN:
        pricing.print_plan(pricing.plan(to_run, overrides, committed, runner.SANITY))
        return 0
    if mode == RUN:
        if pricing.DEADLINE.at is not None:
            runner.note_finished_runs(plans, overrides, committed)
        for plan in to_run:
            runner.run_missing(plan.experiment, plan.config, plan.encoders, overrides, committed)
    return assemble.write(plans, overrides, committed, built, run=mode == RUN, sanity=runner.SANITY)
