"""Early stopping that waits for a run to start: the protocol's patience rule.

Patience counts from the first epoch whose dev score beats the **majority-class
baseline**: the dev split's score of always predicting its most common label
(``rnnbench.metrics.majority_baseline``; defined for accuracy). Before that epoch the
run has not started to learn (a deep stack whose head's units died in the first
steps sits at chance for epochs, then may take off), so epochs without improvement
are not counted. A run that never beats the baseline within its epoch cap is
reported as "did not train": its test score is kept in the evidence but never
averaged into a row as a trained result.

Where a task's metric has no majority baseline (ranking: MAP, MRR; generation:
ROUGE, BLEU; language modelling: bits per character, where lower is better),
patience counts from the first epoch, as before this rule, and every run counts
as trained.

Runs made before the rule (records without ``status``) are judged from their dev
curve (``outcome``): the rule changes a run only if it never beat the baseline
and early stopping ended it before its cap. Those are "needs re-run"; every other
run is what the rule would have produced, so the training pipeline's version
(``rnnbench.versions.TRAINING``) was not bumped and finished runs keep their identity.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

TRAINED = "trained"  # beat the baseline at some epoch (or the task has none)
DID_NOT_TRAIN = "did not train"  # never beat the baseline within its epoch cap
NEEDS_RERUN = "needs re-run"  # made before the rule, which would have trained it on: stopped early, never beat the baseline
STATUSES = (TRAINED, DID_NOT_TRAIN, NEEDS_RERUN)


def task_baseline(task_cfg, dev_records: list[dict]) -> float | None:
    """The task's majority-class dev score on the metric runs select on, or None where the rule
    does not apply (a metric without a majority baseline, or one where lower is better)."""
    from rnnbench.metrics import majority_baseline  # metrics import their implementations: only when needed

    if task_cfg.get("select_mode", "max") == "min":
        return None
    return majority_baseline(str(task_cfg.select_metric), dev_records)


def applies(task_cfg) -> bool:
    """Whether patience waits for the majority-class baseline on this task (see ``task_baseline``)."""
    from rnnbench.metrics import has_majority_baseline

    return task_cfg.get("select_mode", "max") != "min" and has_majority_baseline(str(task_cfg.select_metric))


def beats(value: float | None, baseline: float | None, lower_is_better: bool = False) -> bool:
    """Whether a dev score beats the baseline (strictly: predicting the majority class ties it);
    every score does where there is no baseline."""
    if baseline is None:
        return True
    if value is None:
        return False
    return value < baseline if lower_is_better else value > baseline


def started(curve: list[float | None], baseline: float | None, lower_is_better: bool = False,
            losses: list[float | None] | None = None, below: float | None = None) -> bool:
    """Whether any epoch of a dev curve beat the baseline: from that epoch on, patience counts.
    With ``below`` (``trainer.start_below_prior`` times the prior's loss), the same epoch's mean
    training loss (``losses``, one per epoch) must also be under it: a dev score that beats the
    majority class by chance while the model still predicts the prior does not start the count."""
    if below is None:
        return any(beats(v, baseline, lower_is_better) for v in curve)
    return any(beats(v, baseline, lower_is_better) and loss is not None and loss < below
               for v, loss in zip(curve, losses or []))


def prior_loss(records: list[dict]) -> float | None:
    """The cross-entropy of predicting the training labels' frequencies for every example (their
    entropy, in nats): a classifier that has learnt nothing but the prior sits there. None where the
    records carry no ``label``."""
    labels = [r["label"] for r in records if "label" in r]
    if not labels:
        return None
    counts = Counter(map(str, labels)).values()
    return -sum(c / len(labels) * math.log(c / len(labels)) for c in counts)


def start_bound(ratio: float | None, baseline: float | None, train_records: list[dict]) -> float | None:
    """The training loss a run must fall under to count as started (``trainer.start_below_prior``
    times the prior's loss), or None: the option unset, a task without a majority baseline (patience
    counts from epoch 1 there), or training records without labels."""
    if ratio is None or baseline is None:
        return None
    prior = prior_loss(train_records)
    return None if prior is None else float(ratio) * prior


def bad_epochs_after(bad_epochs: int, improved: bool, has_started: bool) -> int:
    """Epochs without a dev improvement, after one more epoch: reset by an improvement, not
    counted before the run has started."""
    if improved:
        return 0
    return bad_epochs + 1 if has_started else 0


def should_stop(bad_epochs: int, patience: int) -> bool:
    return bool(patience) and bad_epochs >= patience


def outcome(curve: list[float | None], baseline: float | None, epochs_run: int, epoch_cap: int,
            lower_is_better: bool = False) -> str:
    """A finished run's status under the rule, from its dev curve: "trained" if it beat the
    baseline (or there is none); else "did not train" if it ran to its cap, and "needs re-run" if
    early stopping ended it before (only the earlier rule could: see the module docstring)."""
    if started(curve, baseline, lower_is_better):
        return TRAINED
    return DID_NOT_TRAIN if epochs_run >= epoch_cap else NEEDS_RERUN


@dataclass(frozen=True)
class Replay:
    epochs_run: int
    best_epoch: int
    status: str


def replay(curve: list[float], baseline: float | None, patience: int, epoch_cap: int, lower_is_better: bool = False) -> Replay:
    """What the training loop decides on a dev curve (one score per epoch, as many as the run
    would reach): when early stopping ends it, its best epoch and its status. The loop makes the
    same decisions epoch by epoch (``bad_epochs_after``, ``should_stop``)."""
    best, best_epoch, bad, seen = None, 0, 0, []
    for epoch, value in enumerate(curve[:epoch_cap], start=1):
        seen.append(value)
        improved = best is None or (value < best if lower_is_better else value > best)
        if improved:
            best, best_epoch = value, epoch
        bad = bad_epochs_after(bad, improved, started(seen, baseline, lower_is_better))
        if should_stop(bad, patience):
            break
    return Replay(len(seen), best_epoch, outcome(seen, baseline, len(seen), epoch_cap, lower_is_better))
