"""The comparison protocol: which runs a table needs, and the learning rate each encoder gets.

Per encoder, the same budget: every rate of ``lr_grid`` runs on the first
``select_seeds`` seeds; the rate with the best mean dev score is chosen (test is
never looked at); the remaining seeds run at that rate. The table reports all
``seeds`` at the chosen rate. Seeds are paired: seed s gives every encoder the
same data order, so differences between encoders can be taken seed by seed.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass


@dataclass(frozen=True)
class Job:
    encoder: str
    seed: int
    lr: float
    phase: str  # "select": a grid run on a selection seed; "final": a remaining seed at the chosen rate


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
    return [Job(encoder, seed, lr, "select") for lr in grid(protocol, config_lr) for seed in selection_seeds(protocol)]


def only_rate(protocol, config_lr: float) -> float | None:
    """The grid's one rate when it has one and selects it itself: nothing to choose, so the final
    seeds need not wait for the selection runs (None: the rate comes from dev scores or lr_from)."""
    rates = grid(protocol, config_lr)
    return rates[0] if len(rates) == 1 and not borrowed(protocol) else None


def final_jobs(encoder: str, protocol, chosen_lr: float) -> list[Job]:
    chosen = [] if borrowed(protocol) else selection_seeds(protocol)
    return [Job(encoder, int(s), chosen_lr, "final") for s in protocol.seeds if int(s) not in chosen]


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


def describe(protocol, config_lr: float, epochs: int, patience: int, threads) -> str:
    """The budget rule, one sentence, written under every table."""
    lrs = grid(protocol, config_lr)
    sel = selection_seeds(protocol)
    seeds = [int(s) for s in protocol.seeds]
    rest = [s for s in seeds if s not in sel]
    if borrowed(protocol):
        lr_part = (f"each encoder's learning rate as chosen on {borrowed(protocol)} (its selection runs, test never "
                   f"consulted), seeds {', '.join(map(str, seeds))} at that rate")
    elif len(lrs) > 1:
        lr_part = (f"learning rate chosen from {{{', '.join(f'{x:g}' for x in lrs)}}} on the mean dev score of seeds "
                   f"{', '.join(map(str, sel))} (test never consulted)"
                   + (f", then seeds {', '.join(map(str, rest))} at the chosen rate" if rest else ""))
    else:
        lr_part = f"learning rate {lrs[0]:g}, seeds {', '.join(map(str, seeds))}"
    stop = f"early stopping with patience {patience}" if patience else "no early stopping"
    return (f"Protocol, the same for every encoder: {lr_part}; at most {epochs} epochs, {stop}; "
            f"{threads if threads else 'default'} CPU thread(s) per run; a run whose selected epoch is within one of the cap is flagged not converged.")
