"""The comparison protocol: which runs a table needs, and the learning rate each encoder gets.

Per encoder, the same budget: every rate of ``lr_grid`` runs on the first
``select_seeds`` seeds; the rate with the best mean dev score is chosen (test is
never looked at); the remaining seeds run at that rate. The table reports all
``seeds`` at the chosen rate. Seeds are paired: seed s gives every encoder the
same data order, so differences between encoders can be taken seed by seed.

A choice at the grid's edge (its smallest or largest rate) may be under-tuned: the best rate
may lie beyond. The grid then grows one step past that edge (x0.5 below the smallest, x2
above the largest: the spacing of the paper grids), the selection seeds run at the new rate,
and the choice is made again, until it is interior or ``max_grid_extensions`` steps were
added (``choose_rate``; ``RateChoice.statement`` says which, under the table).
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Callable

from rnnbench.errors import ConfigError
# The choice made here is a results type: the evidence stores it and the table page states it from there.
from rnnbench.results.dropout_choice import DropoutChoice  # noqa: F401 - made here, stored by the table
from rnnbench.results.rate_choice import ABOVE, BELOW, RateChoice, past_edge


@dataclass(frozen=True)
class Job:
    encoder: str
    seed: int
    lr: float
    phase: str  # "select": a grid run on a selection seed; "final": a remaining seed at the chosen rate
    dropout: float | None = None  # a p of ``dropout_grid`` (None: the config's own dropout)


def grid(protocol, config_lr: float) -> list[float]:
    return [float(lr) for lr in protocol.lr_grid] or [float(config_lr)]


def selection_seeds(protocol) -> list[int]:
    seeds = [int(s) for s in protocol.seeds]
    return seeds[: max(1, min(int(protocol.select_seeds), len(seeds)))]


def borrowed(protocol) -> str | None:
    """The experiment whose learning-rate choice this one takes (``lr_from``), if any."""
    return protocol.get("lr_from") or None


def selection_jobs(encoder: str, protocol, config_lr: float) -> list[Job]:
    if borrowed(protocol):  # the rate is chosen on another experiment's selection runs
        return []
    return [job for lr in grid(protocol, config_lr) for job in selection_jobs_at(encoder, protocol, lr)]


def selection_jobs_at(encoder: str, protocol, lr: float) -> list[Job]:
    """The selection seeds' runs at one rate (of the grid, or added past its edge)."""
    return [Job(encoder, seed, lr, "select") for seed in selection_seeds(protocol)]


def choice_jobs(encoder: str, protocol, config_lr: float, choice: "RateChoice | None") -> list[Job]:
    """The selection runs an encoder's choice is made on: the grid's, those at rates added past its
    edges, and those at the rate the choice now waits for (``RateChoice.pending``). No choice (a
    grid of one rate, none made yet) or a borrowed one: the grid's (``selection_jobs``)."""
    if choice is None or borrowed(protocol):
        return selection_jobs(encoder, protocol, config_lr)
    rates = [*choice.rates, *([choice.pending] if choice.pending is not None else [])]
    return [job for lr in rates for job in selection_jobs_at(encoder, protocol, lr)]


def only_rate(protocol, config_lr: float) -> float | None:
    """The grid's one rate when it has one and selects it itself: nothing to choose, so the final
    seeds need not wait for the selection runs (None: the rate comes from dev scores or lr_from)."""
    rates = grid(protocol, config_lr)
    return rates[0] if len(rates) == 1 and not borrowed(protocol) else None


def final_jobs(encoder: str, protocol, chosen_lr: float, dropout: float | None = None) -> list[Job]:
    chosen = [] if borrowed(protocol) else selection_seeds(protocol)
    return [Job(encoder, int(s), chosen_lr, "final", dropout) for s in protocol.seeds if int(s) not in chosen]


# ---------------------------------------------------------------------------------------------
# Dropout chosen on dev, after the rate (``table.protocol.dropout_grid``)
#
# Staged, not joint: the rate is chosen first at the config's own dropout (the runs of a table
# without a dropout grid, unchanged), then each p of the grid runs on the selection seeds at the
# chosen rate, and the best mean dev score among the config's own setting and the grid's p's is
# chosen. It costs len(grid) x selection seeds runs where a joint grid would cost len(lr grid) x
# that, and the rate's evidence is the same with or without a dropout grid. The price: a rate
# that suits a large p better than the config's own is not searched for.


def dropout_grid(protocol) -> list[float]:
    """``table.protocol.dropout_grid``: the p's tried at the chosen rate (empty: none, the config's own)."""
    values = [float(p) for p in (protocol.get("dropout_grid") or [])]
    for p in values:
        if not 0.0 <= p < 1.0:
            raise ConfigError(f"table.protocol.dropout_grid has {p:g}: a dropout p is at least 0 and below 1")
    if len(set(values)) != len(values):
        raise ConfigError(f"table.protocol.dropout_grid={values}: a p is listed twice")
    return values


def dropout_jobs(encoder: str, protocol, lr: float) -> list[Job]:
    """The selection seeds' runs at the chosen rate, one per p of the dropout grid (none without one,
    or with a borrowed rate: every seed then runs at the config's own dropout)."""
    if borrowed(protocol):
        return []
    return [Job(encoder, seed, lr, "select", p) for p in dropout_grid(protocol) for seed in selection_seeds(protocol)]


def choose_dropout(dev_by_p: dict, lower_is_better: bool = False) -> float | None:
    """The p with the best mean dev score (key None: the config's own dropout); a tie goes to the
    config's own, then to the smaller p (the smaller change)."""
    ordered = {p: dev_by_p[p] for p in sorted(dev_by_p, key=lambda p: -1.0 if p is None else p)}
    return choose_lr(ordered, lower_is_better)


def choose_lr(dev_by_lr: dict[float, list[float]], lower_is_better: bool = False) -> float:
    """The rate with the best mean dev score; a tie goes to the rate listed first (the grid's order)."""
    if not dev_by_lr or any(not v for v in dev_by_lr.values()):
        raise ValueError("choose_lr needs a dev score for every rate of the grid")
    best_lr, best = None, None
    for lr, scores in dev_by_lr.items():
        mean = statistics.fmean(scores)
        if best is None or (mean < best if lower_is_better else mean > best):
            best_lr, best = lr, mean
    return best_lr


DEFAULT_MAX_GRID_EXTENSIONS = 3


def max_grid_extensions(protocol) -> int:
    """``table.protocol.max_grid_extensions``: how many rates may be added past the grid's edges."""
    value = protocol.get("max_grid_extensions", DEFAULT_MAX_GRID_EXTENSIONS)
    value = DEFAULT_MAX_GRID_EXTENSIONS if value is None else int(value)
    if value < 0:
        raise ConfigError(f"table.protocol.max_grid_extensions={value}: must be at least 0 (0: never extend the grid)")
    return value


def choose_rate(protocol, config_lr: float, dev_scores: Callable[[float], list[float] | None],
                lower_is_better: bool = False) -> RateChoice:
    """The learning rate under the protocol, extending the grid past the edge the choice sits at.

    ``dev_scores(lr)`` gives the selection seeds' dev scores at a rate (running them where the
    caller may), or None while one is missing: a rate of the configured grid without them leaves
    no choice; an added rate without them leaves the edge choice provisional (``pending``)."""
    rates = grid(protocol, config_lr)
    limit = max_grid_extensions(protocol)
    dev_by_lr: dict[float, list[float]] = {}
    for lr in rates:
        scores = dev_scores(lr)
        if scores is None:
            return RateChoice(None, tuple(rates), 0, limit, None, dev_by_lr)
        dev_by_lr[lr] = scores
    added = 0
    while True:
        chosen = choose_lr(dev_by_lr, lower_is_better)  # ties go to the rate listed first: the configured grid's
        beyond = past_edge(rates, chosen)
        if beyond is None or added >= limit:
            return RateChoice(chosen, tuple(rates), added, limit, None, dev_by_lr)
        scores = dev_scores(beyond)
        if scores is None:
            return RateChoice(chosen, tuple(rates), added, limit, beyond, dev_by_lr)
        rates.append(beyond)
        dev_by_lr[beyond] = scores
        added += 1


def describe(protocol, config_lr: float, epochs: int, patience: int, threads, select_metric: str | None = None,
             majority_rule: bool | None = None, start_below_prior: float | None = None) -> str:
    """The budget rule, one sentence, written under every table. ``majority_rule``: whether patience
    counts from the first epoch that beats the majority-class baseline on ``select_metric``
    (``results/patience.py``; False: the metric has none; None: not said); ``start_below_prior``:
    the trainer's option of that name, which also asks the epoch's training loss to have left the prior's."""
    lrs = grid(protocol, config_lr)
    sel = selection_seeds(protocol)
    seeds = [int(s) for s in protocol.seeds]
    rest = [s for s in seeds if s not in sel]
    if borrowed(protocol):
        lr_part = (f"each encoder's learning rate as chosen on {borrowed(protocol)} (its selection runs, test never "
                   f"consulted), seeds {', '.join(map(str, seeds))} at that rate")
    elif len(lrs) > 1:
        limit = max_grid_extensions(protocol)
        extension = (f", the grid extended one step past the edge the choice sits at (x{BELOW:g} below its smallest rate, "
                     f"x{ABOVE:g} above its largest) and the choice made again, until it is interior or {limit} rate(s) were added"
                     if limit else ", the grid never extended (table.protocol.max_grid_extensions=0)")
        lr_part = (f"learning rate chosen from {{{', '.join(f'{x:g}' for x in lrs)}}} on the mean dev score of seeds "
                   f"{', '.join(map(str, sel))} (test never consulted){extension}"
                   + (f"; then seeds {', '.join(map(str, rest))} at the chosen rate" if rest else ""))
    else:
        lr_part = f"learning rate {lrs[0]:g}, seeds {', '.join(map(str, seeds))}"
    ps = dropout_grid(protocol)
    if ps and not borrowed(protocol):
        lr_part += (f"; dropout chosen after the rate, at the chosen rate, among the config's own and "
                    f"{{{', '.join(f'{p:g}' for p in ps)}}} on the mean dev score of seeds {', '.join(map(str, sel))} "
                    f"(on the embedding layer's output and the head, between the encoder's layers where it has several)"
                    + (", the other seeds at the chosen p" if rest else ""))
    stop = f"early stopping with patience {patience}" if patience else "no early stopping"
    if majority_rule:
        stop += ((f" counted from the first epoch whose dev {select_metric} beats the dev split's majority-class score"
                  + (f" with a mean training loss under {start_below_prior:g} x the prior's (the cross-entropy of predicting "
                     f"the training labels' frequencies)" if start_below_prior is not None else "") if patience else "")
                 + f" (a run whose dev {select_metric} never beats it within the cap did not train: not averaged)")
    elif majority_rule is not None and patience:
        stop += f" counted from the first epoch ({select_metric} has no majority-class baseline)"
    return (f"Protocol, the same for every encoder: {lr_part}; at most {epochs} epochs, {stop}; "
            f"{threads if threads else 'default'} CPU thread(s) per run; a run whose selected epoch is within one of the cap is flagged not converged.")
