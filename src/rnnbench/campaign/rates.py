"""Each encoder's learning rate under the comparison protocol: the grid's one rate, or the rate
chosen on the dev scores of its selection runs (extended past the grid's edge where the choice
sits there: ``protocol.choose_rate``). The choice is stored with the evidence (the CSV's
``chosen_lr`` and the choice's columns: ``results/rate_choice.py``), so a table states it rather
than deriving it again."""
from __future__ import annotations

import dataclasses
from typing import Callable

from rnnbench.compose import compose_config
from rnnbench.errors import ConfigError
from rnnbench.campaign import protocol
from rnnbench.results import evidence
from rnnbench.campaign.jobs import finished, jobs_of

Fetch = Callable[[str, protocol.Job], "dict | None"]  # (experiment, job) -> its record, trained first or not


def chosen_lr(experiment: str, base, encoder: str, extra: list[str], committed: evidence.CommittedEvidence,
              run: Fetch | None = None) -> tuple[float | None, protocol.RateChoice]:
    """The encoder's learning rate under the protocol, and the choice it comes from: the grid,
    extended past an edge the choice sits at (``protocol.choose_rate``). The rate is None while a
    selection run is missing; with ``run`` (it returns a selection run's record, training it
    first: the runner's ``ensure``) also while one past the edge is; without, the edge choice
    stands, provisional (``RateChoice.pending``)."""
    source = protocol.borrowed(base.table.protocol)
    if source:  # another experiment's choice: its selection runs (run here if missing and `run`)
        if source == experiment:
            raise ConfigError(f"experiment {experiment}: table.protocol.lr_from names the experiment itself; "
                                "name another experiment of the table, or remove lr_from")
        other = compose_config([f"experiment={source}", *extra])
        if other.table.name != base.table.name or protocol.borrowed(other.table.protocol):
            raise ConfigError(f"experiment {experiment}: table.protocol.lr_from={source} must name an experiment of the "
                                f"same table ({base.table.name}) that selects its own learning rate")
        return chosen_lr(source, other, encoder, extra, committed, run)
    select, lower = base.task.select_metric, base.task.get("select_mode", "max") == "min"

    def dev_scores(lr: float) -> list[float] | None:
        scores = []
        for job in protocol.selection_jobs_at(encoder, base.table.protocol, lr):
            record = run(experiment, job) if run else finished(experiment, job, extra, committed)
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
    return chosen_lr(experiment, base, enc, extra, committed)


def known_lr(experiment: str, base, enc: str, extra: list[str], committed: evidence.CommittedEvidence) -> float | None:
    """The rate the table reports for ``enc`` (``known_choice``)."""
    return known_choice(experiment, base, enc, extra, committed)[0]


def chosen_dropout(experiment: str, base, encoder: str, lr: float | None, extra: list[str],
                   committed: evidence.CommittedEvidence, run: Fetch | None = None) -> protocol.DropoutChoice | None:
    """The encoder's dropout at its chosen rate ``lr`` under the protocol's dropout grid: the best
    mean dev score of the selection seeds among the config's own dropout (the rate's own selection
    runs) and each p of the grid. None without a grid, a rate, or while a run is missing (``run``:
    as for ``chosen_lr``)."""
    ps = protocol.dropout_grid(base.table.protocol)
    if not ps or lr is None or protocol.borrowed(base.table.protocol):
        return None
    select, lower = base.task.select_metric, base.task.get("select_mode", "max") == "min"
    dev_by_p: dict = {}
    for p in [None, *ps]:
        scores = []
        for job in protocol.selection_jobs_at(encoder, base.table.protocol, lr):
            job = dataclasses.replace(job, dropout=p)
            record = run(experiment, job) if run else finished(experiment, job, extra, committed)
            if record is None:
                return None
            scores.append(record["dev"][select])
        dev_by_p[p] = scores
    return protocol.DropoutChoice(protocol.choose_dropout(dev_by_p, lower), tuple(ps), dev_by_p)


def protocol_jobs(experiment: str, base, enc: str, extra: list[str], committed: evidence.CommittedEvidence) -> tuple[int, list[protocol.Job]]:
    """The protocol's run count for one encoder of one experiment, and the jobs known so far (the
    final seeds wait for the learning-rate choice, unless the protocol has one rate, and for the
    dropout choice where it has a dropout grid). The selection runs include those at rates added
    past the grid's edge, and at the one the choice now asks for."""
    lr, choice = known_choice(experiment, base, enc, extra, committed)
    return jobs_of(base, enc, lr, choice, chosen_dropout(experiment, base, enc, lr, extra, committed))


def finished_runs(experiment: str, base, enc: str, extra: list[str], committed: evidence.CommittedEvidence) -> tuple[int, list[dict]]:
    """The protocol's run count for one encoder of one experiment, and the records of those finished."""
    total, jobs = protocol_jobs(experiment, base, enc, extra, committed)
    return total, [r for r in (finished(experiment, j, extra, committed) for j in jobs) if r]
