"""What stops a claim's decided verdict, whichever side it favours.

The statistics say how sure the difference between two rows is; they cannot say whether the
comparison was fair. A verdict (reproduced, contradicted or smaller than claimed) is
withheld, and says why, when either row of the comparison:

- chose its learning rate at the edge of a grid of three or more rates (``grid_edges``): its
  best rate may lie outside the grid, so the row may be under-tuned;
- has a paired run that stopped at its epoch cap (``at_cap``: best dev epoch within one of the
  cap, ``evidence.not_converged``): it may still have been improving;
- has a paired run that did not train (``untrained``: the ``status`` the patience rule writes
  in the evidence, "did not train" or "needs re-run": ``evidence.did_not_train``, ``needs_rerun``);
- has a paired run that collapsed (``collapsed``): it beat the majority class once, so the patience
  rule counts it as trained, but its selected dev score lies nearer the dev split's majority-class
  score than its row's median (RCRN Table 4's 3L-BiLSTM seed 3: 58.6 beside 85 for the others);

and, for a claim on time, when the two rows were not timed together (``timed_apart``): seconds
from separate runs on a shared machine vary several-fold from run to run (load, thermal state,
other jobs), so only the ratio of two rows timed in the same process and round (the cost
benchmark, ``scripts/bench_cost.py``) decides one, or when their runs were timed on another
device, processor or thread count.

Each guard is applied to both rows alike: a guard that spoke only against the losing row would
favour the side that happened to win.
"""
from __future__ import annotations

from rnnbench.results import evidence

# The patience rule's statuses (results/patience.py) that say a run's test score is not a trained model's.
UNTRAINED = ((evidence.did_not_train, "did not train"), (evidence.needs_rerun, "predate the patience rule and need a re-run"))


def _label(name: str, seeds: list[int]) -> str:
    return f"{name} in seed(s) {', '.join(map(str, sorted(seeds)))}"


def grid_edges(rows: list[dict], runs: dict[str, list[dict]], datasets: set[str]) -> list[str]:
    """``runs``: row name -> its paired reported runs' evidence rows. A row whose chosen rate is
    the smallest or largest of the three or more rates its selection runs tried (in the claim's
    columns, else wherever its rate was chosen: ``lr_from``)."""
    notes = []
    for name, paired in runs.items():
        if not paired:
            continue
        rates = grid(rows, paired[0]["encoder"], paired[0]["variant"], datasets)
        for lr in sorted({float(r["lr"]) for r in paired}):
            if len(rates) >= 3 and lr in (rates[0], rates[-1]):
                side = "largest" if lr == rates[-1] else "smallest"
                notes.append(f"{name} chose the grid's {side} rate ({lr:g} of {', '.join(f'{x:g}' for x in rates)}): "
                             "its best rate may lie outside the grid")
    return notes


def grid(rows: list[dict], encoder: str, variant: str, datasets: set[str]) -> list[float]:
    """The rates a row's selection runs tried, in the claim's columns, else wherever its rate was
    chosen (``lr_from``); [] where it borrowed a rate chosen elsewhere or ran one rate only."""
    selection = [r for r in rows if r["encoder"] == encoder and r["variant"] == variant and r.get("phase") == "select"]
    here = [r for r in selection if r["dataset"] in datasets]
    return sorted({float(r["lr"]) for r in (here or selection)})


def at_cap(runs: dict[str, list[dict]]) -> list[str]:
    notes = []
    for name, paired in runs.items():
        capped = sorted({int(r["seed"]) for r in paired if r.get("selected_epoch") not in (None, "") and evidence.not_converged(r)})
        if capped:
            notes.append(f"{_label(name, capped)} stopped at the epoch cap (not converged): a longer cap could change it")
    return notes


def untrained(runs: dict[str, list[dict]]) -> list[str]:
    notes = []
    for name, paired in runs.items():
        for says, meaning in UNTRAINED:
            seeds = sorted({int(r["seed"]) for r in paired if says(r)})
            if seeds:
                notes.append(f"the runs of {_label(name, seeds)} {meaning}")
    return notes


def timing_conditions(runs: list[dict]) -> tuple[str, bool]:
    """(the conditions the runs were timed under, in words; whether they differ)."""
    conditions = {(r.get("device", ""), r.get("hardware", ""), str(r.get("threads", ""))) for r in runs}
    described = "; ".join(f"{d or '?'} {h or '?'}, {t or 'default'} thread(s)" for d, h, t in sorted(conditions))
    return described, len(conditions) > 1


def benchmark(runs: list[dict]) -> bool:
    """Rows of the cost benchmark (RCRN Table 10: epoch cap 0), which times every row in each
    round of one process: their seed is the round, and rows of one round were timed together."""
    return bool(runs) and all(int(r.get("epoch_cap") or 0) == 0 for r in runs)


def timed_apart(runs: list[dict]) -> list[str]:
    described, differ = timing_conditions(runs)
    notes = []
    if differ:
        notes.append(f"timed under different conditions ({described}): the times do not compare")
    if not benchmark(runs):
        notes.append("timed in separate training runs, not together in one process and round: seconds from "
                     "separate runs on a shared machine vary several-fold")
    return notes


def collapsed(runs: dict[str, list[dict]]) -> list[str]:
    """Paired runs whose selected dev score is nearer the dev majority-class score (the evidence's
    ``majority``) than the median of their row's runs in the same column."""
    notes = []
    for name, paired in runs.items():
        flagged = set()
        for dataset in {r["dataset"] for r in paired}:
            here = [r for r in paired if r["dataset"] == dataset and r.get("dev") not in (None, "") and r.get("majority") not in (None, "")]
            if len(here) < 3:  # a median of two is their mean: no run stands apart from it
                continue
            median = sorted(float(r["dev"]) for r in here)[len(here) // 2] if len(here) % 2 else \
                sum(sorted(float(r["dev"]) for r in here)[len(here) // 2 - 1:len(here) // 2 + 1]) / 2
            for r in here:
                dev, majority = float(r["dev"]), float(r["majority"])
                if abs(dev - majority) < abs(dev - median):
                    flagged.add((int(r["seed"]), f"dev {dev:.1f}, majority {majority:.1f}, the row's median {median:.1f}"))
        for seed, why in sorted(flagged):
            notes.append(f"the run of {name} in seed {seed} collapsed ({why}): its score is not a trained model's")
    return notes
