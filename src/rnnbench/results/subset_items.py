"""Per-item test scores of a scored subset (MZU Table 6's hard subsets, RACE's middle and high
levels), so that a claim on a subset column is decided on seeds and test items together, as one
on the full column is.

A subset column's score is its base metric's mean over the subset's items (``task.metric_subsets``:
``accuracy_hds`` is accuracy over the records with ``hds: true``; ``rnnbench.metrics.score``). Its
per-item scores are therefore the base metric's item scores of the same run, restricted to the
subset's item ids: from a run's predictions (``from_predictions``), or from the committed items of
the table's full column (``derived_rows``), checked against the subset column's committed score.
"""
from __future__ import annotations

import math
from pathlib import Path

from rnnbench.results import evidence
from rnnbench.results.floors import scored_metric, subset_items

TOLERANCE = 1e-9  # the derived mean against the run's own subset score, in stored units (a fraction)


def subset_ids(records: list[dict], where: dict) -> set[str]:
    """The ids of the test records a subset scores."""
    return {str(r["id"]) for r in subset_items(records, where)}


def from_predictions(predictions: Path, metric: str, task_cfg, test_records: list[dict]) -> dict[str, float] | None:
    """A run's item scores for a column scored by ``metric``: ``evidence.item_scores`` for a whole
    split's metric, the base metric's restricted to the subset's items for a subset's."""
    scored = scored_metric(metric, task_cfg)
    if scored is None or scored[1] is None:
        return evidence.item_scores(predictions, metric)
    scores = evidence.item_scores(predictions, scored[0])
    if scores is None:
        return None
    keep = subset_ids(test_records, scored[1])
    return {item: score for item, score in scores.items() if item in keep}


def parent_column(columns: dict[str, str], column: str, task_cfg) -> str | None:
    """The column of ``columns`` ({column: metric}) scored by the base metric of ``column``'s
    subset metric over all items (Restaurant-DS for Restaurant-HDS); None where there is none or
    more than one."""
    scored = scored_metric(columns[column], task_cfg)
    if scored is None or scored[1] is None:
        return None
    parents = [c for c, m in columns.items() if m == scored[0]]
    return parents[0] if len(parents) == 1 else None


def row_key(row: dict) -> tuple[str, str, str, int]:
    """An evidence or item row's run within its table: (column, model, variant, seed)."""
    return row["dataset"], row["model"], row["variant"], int(row["seed"])


def lacking(rows: list[dict], items: list[dict], columns: dict[str, str], task_cfg) -> list[dict]:
    """The reported rows of ``columns``' subset columns that have no item scores in ``items``."""
    have = {row_key(i) for i in items}
    subsets = {c for c in columns if parent_column(columns, c, task_cfg)}
    return [r for r in rows if r["dataset"] in subsets and r.get("reported") == "yes" and row_key(r) not in have]


def derived_rows(rows: list[dict], items: list[dict], columns: dict[str, str], task_cfg, test_records: list[dict],
                 where: str) -> list[dict]:
    """Item rows (stored units, as ``evidence.read_items(scaled=False)`` gives them) for every
    reported evidence row of a subset column in ``columns`` that has none yet, derived from its
    parent column's items of the same model, variant and seed. Each derived mean must equal the
    row's committed subset score: a mismatch (another item set, another run) is an error naming
    the row, not a silent substitute."""
    by_row: dict[tuple[str, str, str, int], dict[str, dict]] = {}
    for i in items:
        by_row.setdefault(row_key(i), {})[i["item"]] = i
    out, keep = [], {}
    for row in lacking(rows, items, columns, task_cfg):
        column = row["dataset"]
        parent = parent_column(columns, column, task_cfg)
        source = by_row.get((parent, *row_key(row)[1:]))
        if source is None:
            continue
        if column not in keep:
            keep[column] = subset_ids(test_records, scored_metric(columns[column], task_cfg)[1])
        picked = [item for name, item in source.items() if name in keep[column]]
        if len(picked) != len(keep[column]):
            raise ValueError(f"{where}: {row['model']} seed {row['seed']}: {parent} has {len(picked)} of the {len(keep[column])} "
                             f"items of {column}; the subset's items cannot be derived")
        mean = math.fsum(float(i["score"]) for i in picked) / len(picked)
        if abs(mean - float(row["test"])) > TOLERANCE:
            raise ValueError(f"{where}: {row['model']} seed {row['seed']}: the mean of {column}'s items from {parent} is "
                             f"{mean:.6f}, its committed score {float(row['test']):.6f}: not the same run or items")
        out += [{**item, "dataset": column} for item in picked]
    return out
