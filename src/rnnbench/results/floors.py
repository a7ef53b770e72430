"""The majority-class floor of every table column: the score of the best constant predictor.

A row whose mean test score does not beat the test split's majority-class score has learnt
nothing a constant answer would not give ("row at the floor"), however it compares with
another row. The claims ledger decides from committed files alone, so these scores are
committed too: ``results/floors.csv``, one line per (table, column, split), columns

    table,dataset,split,majority,items,label

- ``dataset``: the table column as the evidence names it (``results/<table>.csv``'s
  ``dataset``: ``SciTail``, ``Laptop-HDS/accuracy_mean``, ``RACE-M``);
- ``split``: ``dev`` or ``test``;
- ``majority``: the column's metric scored on that split by always predicting its most common
  gold label, in the table's units (value x ``table.scale``, as ``evidence.read_csv`` gives
  ``test``), rounded to 4 decimals;
- ``items``: how many items the column scores; ``label``: the majority class's name.

A column scored on a subset of the split (``table.columns`` naming ``<metric>_<subset>``,
with ``task.metric_subsets: {<subset>: {field: value}}``: MZU Table 6's hard subsets
``hds: {hds: true}``, DCU Table 1's RACE levels ``middle: {level: middle}``) has its floor on
exactly the items the evaluator scores there (``rnnbench.metrics.score``'s rule), with the
majority class taken from that subset itself, not from the whole split: the floor is the best
constant predictor on the scored items. A column of ``table.evaluated_columns`` (the same
checkpoints re-scored with reader overrides: FHE Table 4's longer sequences) has a test floor
on the test split those overrides give, and no dev floor (those rows have no dev score).

Only metrics with a majority-class baseline have a floor (``rnnbench.metrics.has_majority_baseline``:
accuracy); ranking (MAP, MRR), bits per character, generation (ROUGE, BLEU, EM, F1), timing and
``stats:`` columns have none. Ties between classes go to the lowest label id, so the file is the
same on every run.

``campaign.floors.write_floors`` (``rnnbench floors [TABLE ...]``) recomputes the floors of the committed tables
(those with a ``results/<table>.csv``) from the data folder (``RNNBENCH_DATA``) and rewrites the
file, sorted, so that it regenerates byte for byte. A table whose data is absent is skipped with
one line, and its lines already in the file are kept.
"""
from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from rnnbench.errors import ConfigError

FILE = "floors.csv"
FIELDS = ["table", "dataset", "split", "majority", "items", "label"]
SPLITS = ("dev", "test")
DIGITS = 4  # decimals of ``majority`` in the file


@dataclass(frozen=True)
class Floor:
    table: str
    dataset: str  # the table column, as the evidence CSV's ``dataset``
    split: str  # dev | test
    majority: float  # in table units (value x table.scale)
    items: int  # items the column scores on that split
    label: str  # the majority class

    def key(self) -> tuple[str, str, str]:
        return self.table, self.dataset, self.split

    def row(self) -> dict[str, str]:
        return {"table": self.table, "dataset": self.dataset, "split": self.split,
                "majority": f"{self.majority:.{DIGITS}f}", "items": str(self.items), "label": self.label}


# ---------------------------------------------------------------------------------------------
# The file


def read_floors(results_dir: Path) -> dict[tuple[str, str, str], Floor]:
    """The committed floors, by (table, dataset, split); empty when ``results/floors.csv`` is absent."""
    path = Path(results_dir) / FILE
    if not path.is_file():
        return {}
    with open(path, newline="") as handle:
        return parse_floors(handle, path)


def parse_floors(lines: Iterable[str], where: str | Path = FILE) -> dict[tuple[str, str, str], Floor]:
    """Floors from CSV lines (an open file, or a committed version's text split in lines)."""
    reader = csv.DictReader(lines)
    if reader.fieldnames is not None and list(reader.fieldnames) != FIELDS:
        raise ConfigError(f"{where}: columns {','.join(reader.fieldnames)}, expected {','.join(FIELDS)}; "
                          "regenerate it with `rnnbench floors`")
    out = {}
    for number, row in enumerate(reader, start=2):
        try:
            floor = Floor(row["table"], row["dataset"], row["split"], float(row["majority"]), int(row["items"]), row["label"])
        except (TypeError, ValueError):
            raise ConfigError(f"{where}:{number}: not a floor line ({','.join(str(v) for v in row.values())}); "
                              "regenerate the file with `rnnbench floors`") from None
        out[floor.key()] = floor
    return out


def format_floors(floors: Iterable[Floor]) -> str:
    """The file's text: sorted by (table, dataset, split), so equal floors give equal bytes."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, FIELDS, lineterminator="\n")
    writer.writeheader()
    for floor in sorted(floors, key=Floor.key):
        writer.writerow(floor.row())
    return buffer.getvalue()


# ---------------------------------------------------------------------------------------------
# The computation, on records


def majority_label(records: list[dict]) -> int | str:
    """The most common gold label of ``records`` (ties: the lowest label, so reruns agree)."""
    counts = Counter(r["label"] for r in records)
    best = max(counts.values())
    return min(label for label, count in counts.items() if count == best)


def scored_metric(metric: str, task_cfg) -> tuple[str, dict | None] | None:
    """(the task metric, the subset's selection or None for all items) a column's ``metric``
    stands for: ``accuracy`` -> (accuracy, None); ``accuracy_hds`` -> (accuracy, {hds: True})
    where ``task.metric_subsets`` names ``hds``, as ``rnnbench.metrics.score`` names its scores.
    None for anything else (an encoder statistic ``stats:...``, an unknown name)."""
    metrics = [str(m) for m in task_cfg.get("metrics") or []]
    if metric in metrics:
        return metric, None
    for subset, where in (task_cfg.get("metric_subsets") or {}).items():
        for base in metrics:
            if metric == f"{base}_{subset}":
                return base, dict(where)
    return None


def subset_items(records: list[dict], where: dict | None) -> list[dict]:
    """The records a subset scores: ``rnnbench.metrics.score``'s rule (every field's value equal
    as text), all of them for no subset."""
    if not where:
        return list(records)
    return [r for r in records if all(str(r.get(k)) == str(v) for k, v in where.items())]


def column_floor(table: str, column: str, metric: str, split: str, records: list[dict], task_cfg, scale: float,
                 label_names: list[str]) -> Floor | None:
    """One column's floor on one split's records, or None where it has none (no majority-class
    baseline for its metric, no item in its subset)."""
    from rnnbench.metrics import has_majority_baseline, majority_baseline

    scored = scored_metric(metric, task_cfg)
    if scored is None or not has_majority_baseline(scored[0]):
        return None
    items = subset_items(records, scored[1])
    if not items:
        return None
    label = majority_label(items)
    name = label_names[label] if isinstance(label, int) and 0 <= label < len(label_names) else str(label)
    value = majority_baseline(scored[0], items) * float(scale)
    return Floor(table, column, split, round(value, DIGITS), len(items), name)


def columns_floors(table: str, columns: dict[str, str], splits: dict[str, list[dict]], task_cfg, scale: float,
                   label_names: list[str], split_names: Iterable[str] = SPLITS) -> list[Floor]:
    """The floors of ``columns`` ({table column: metric}) on each of ``split_names`` of ``splits``."""
    out = []
    for column, metric in columns.items():
        for split in split_names:
            floor = column_floor(table, column, str(metric), split, splits.get(split) or [], task_cfg, scale, label_names)
            if floor is not None:
                out.append(floor)
    return out


# ---------------------------------------------------------------------------------------------
# A table's floors, from its experiment configs and the data folder

Loader = Callable[[object], tuple[dict, list[str]]]  # task config (with paths) -> (splits, label names)


def has_floor(metric: str, task_cfg) -> bool:
    """Whether a column scored by ``metric`` has a majority-class floor (before any data is read)."""
    from rnnbench.metrics import has_majority_baseline

    scored = scored_metric(metric, task_cfg)
    return scored is not None and has_majority_baseline(scored[0])
