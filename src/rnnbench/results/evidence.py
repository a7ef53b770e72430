"""Per-run evidence of a table, committed beside it: one CSV row per (run, column), and
the per-item test scores the paired bootstrap needs.

``results/<table>.csv`` holds every run of the table's protocol (the learning-rate
selection runs too, marked by ``phase``); ``results/<table>.items.csv.xz`` (``items_path``) holds,
for the runs the table reports, each test item's score. A table is rendered from these
files alone, so it can be regenerated (and checked) without the runs.

Values are stored as the run's record has them (accuracy 0.432, not 43.2), with the table's
``scale`` beside them (100 for a table in %): a row is its record's numbers, unchanged on the way
from run to table. ``read_csv`` gives them in table units (value x scale; a dev curve at six
significant digits) for the renderer, the claims and the figures; ``read_csv(..., scaled=False)``
gives them as stored, for the campaign, which reads them as it reads records. A row without a
``scale`` (a cost benchmark's) is in its own units.

Each row also says what the protocol decided about its run: ``status`` under the patience
rule (``results/patience.py``: "trained", "did not train", "needs re-run"; empty in rows
written before the rule), ``majority`` (the dev split's majority-class score on the metric
runs select on; empty where the metric has none), ``chosen_lr`` (the rate the
protocol chose for the run's encoder in its experiment; empty while none is) and the choice
itself (``results/rate_choice.py``: the grid chosen among, its extension past an edge).

A row's columns, its format and the migration of older rows are ``results/evidence_row.py``'s:
every CSV is written and read through ``EvidenceRow``.
"""
from __future__ import annotations

import csv
import functools
import gzip
import io
import json
import lzma
import math
from pathlib import Path

from rnnbench.errors import RnnbenchError
from rnnbench.results import patience
from rnnbench.results import timing
from rnnbench.results.evidence_row import FIELDS, OPTIONAL_FIELDS, EvidenceRow
from rnnbench.results.record_format import CommittedRun, Record
from rnnbench.results.records import temporary_for

ITEM_FIELDS = ["model", "variant", "dataset", "seed", "item", "score", "scale"]
SCALED = ("dev", "test", "majority")  # the values read_csv gives in table units (and each dev curve point)


def evidence_rows(record: Record | dict, model: str, variant: str | None, columns: dict[str, str], scale: float, phase: str,
                  reported: bool) -> list[dict]:
    """One row per table column (dataset) of a finished run's record. ``phase`` is "select" (a
    learning-rate grid run) or "final"; ``reported``: the run is at the encoder's chosen rate."""
    record = Record.of(record)
    trainer = record.config["trainer"]
    rows = []
    for column, metric in columns.items():
        dev, test, curve = split_values(record, metric)
        if test is None:  # a statistic this encoder does not have (gate openness of an LSTM)
            continue
        row = {
            "model": model, "encoder": record.encoder, "variant": variant or "", "dataset": column, "metric": metric,
            "scale": float(scale), "seed": record.seed, "lr": trainer["lr"], "phase": phase, "reported": "yes" if reported else "no",
            "dev": "" if dev is None else dev, "test": test,
            "selected_epoch": record.best_epoch, "epoch_cap": trainer["epochs"], "epochs_run": record.epochs_run,
            "seconds_per_epoch": record.seconds_per_epoch, "inference_seconds_per_example": record.inference_seconds_per_example,
            "parameters": record.encoder_parameters, "threads": trainer.get("num_threads") or "",
            "commit": record.git_commit, "versions": json.dumps(record.versions, sort_keys=True),
            "device": record.hardware.get("device", ""), "hardware": record.hardware.get("gpu") or record.hardware.get("cpu", ""),
            timing.RECORD_CPU: record.cpu_seconds_per_epoch, timing.LOAD: record.load_average,
            "dev_curve": ";".join("" if v is None else repr(float(v)) for v in curve),
            "run": Path(record.run_dir).name,
            "status": record.status, "majority": record.majority_baseline,
        }
        rows.append({key: "" if value is None else value for key, value in row.items()})  # an empty cell, as read back
    return rows


def rescored(row: dict) -> bool:
    """A row of a checkpoint re-scored on other inputs (make_table's table.evaluated_columns: no dev
    score, no curve). Its inference time is of those inputs (FHE Table 4 at length 10000), not the run's."""
    return row.get("dev", "") == "" and row.get("dev_curve", "") == ""


STATS = "stats:"  # a column showing an encoder statistic (FHE's gate openness) instead of a metric


def split_values(record: Record | dict, metric: str) -> tuple[float | None, float | None, list[float | None]]:
    """(dev at the selected epoch, test, dev per epoch) of a metric, or of an encoder statistic
    named ``stats:<key>`` (test: the test pass's mean, ``test_stats``; dev: the epoch history's)."""
    record = Record.of(record)
    history = record.history
    if metric.startswith(STATS):
        key = metric[len(STATS):]
        best = record.best_epoch or 0
        dev = history[best - 1].get(key) if 0 < best <= len(history) else None
        return dev, record.test_stats.get(key), [h.get(key) for h in history]
    return record.dev.get(metric), record.test[metric], [h.get(f"dev_{metric}") for h in history]


def _sort_key(row: dict):
    p = row.get("dropout")
    return (row["dataset"], row["model"], row["variant"], float(row["lr"]), int(row["seed"]), -1.0 if p in (None, "") else float(p))


def write_csv(path: Path, rows: list[EvidenceRow | dict], fields: list[str] = FIELDS, sort_key=_sort_key) -> None:
    """The rows in the current evidence format (``EvidenceRow``), sorted by ``sort_key`` (given
    each row as a dict), with ``fields`` as columns and those of ``OPTIONAL_FIELDS`` some row has."""
    path.parent.mkdir(parents=True, exist_ok=True)
    typed = [EvidenceRow.of(row) for row in rows]
    present = [f for f in OPTIONAL_FIELDS if f not in fields and any(row.has(f) for row in typed)]
    at = fields.index(FIELDS[-1]) + 1 if FIELDS[-1] in fields else len(fields)  # before a file's own last columns (superseded_on)
    fields = [*fields[:at], *present, *fields[at:]]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fields, lineterminator="\n")
    writer.writeheader()
    for row in sorted(typed, key=lambda row: sort_key(row.as_dict())):
        writer.writerow(row.cells(fields))
    # Through a temporary file: workers assembling one table side by side never read half a file.
    with temporary_for(path) as tmp:
        tmp.write_text(buffer.getvalue())


def _fmt(value) -> str:
    if isinstance(value, float):
        return repr(value)  # exact round trip: a table rendered from the CSV equals one from the records
    return str(value)


def read_csv(path: Path, scaled: bool = True) -> list[dict]:
    """Evidence rows, typed: in table units (``scaled``), else as stored."""
    with open(path, newline="") as handle:
        return parse_csv(handle, scaled, source=path)


def parse_csv(lines, scaled: bool = True, source: str | Path = "evidence") -> list[dict]:
    """Evidence rows, typed, from an open file or any iterable of CSV lines (a committed version's
    text), of any evidence format this version reads (``evidence_row.migrate``; ``source`` names
    the file in an error): in table units (``scaled``), else as stored."""
    rows = []
    for cells in csv.DictReader(lines):
        row = EvidenceRow.from_cells(cells, source).as_dict()
        rows.append(in_table_units(row) if scaled else row)
    return rows


def in_table_units(row: dict) -> dict:
    """A stored row's values in its table's units: each times the row's ``scale``, a dev curve's
    points rounded to six significant digits (what a table, a plot and the patience rule read).
    The row's ``scale`` becomes empty: its values are in their own units now (written back, they
    would not be scaled twice)."""
    scale = row.get("scale", "")
    if scale == "":
        return row
    row.update({key: row[key] * scale for key in SCALED if row.get(key, "") != ""})
    if row.get("dev_curve"):
        row["dev_curve"] = ";".join(p if p == "" else f"{float(p) * scale:.6g}" for p in row["dev_curve"].split(";"))
    row["scale"] = ""
    return row


CONVERGENCE_MARGIN = 1  # a run whose selected epoch is within this many epochs of its cap is "not converged"


def not_converged(row: dict) -> bool:
    """The run's best dev epoch is at (or next to) its epoch cap: it may still have been improving."""
    return int(row["selected_epoch"]) >= int(row["epoch_cap"]) - CONVERGENCE_MARGIN


def dev_curve(row: dict) -> list[float | None]:
    return [float(v) if v else None for v in row["dev_curve"].split(";")] if row.get("dev_curve") else []


def from_table_units(row: dict, scale: float) -> dict:
    """A row written in table units (before the ``scale`` column) as stored now: each value the
    float whose product with ``scale`` is the number written (a curve point: its six digits), so
    ``in_table_units`` gives back exactly what was written. ValueError where no float does."""
    out = {**row, "scale": float(scale)}
    for key in SCALED:
        if row.get(key, "") != "":
            out[key] = value_from_table_units(float(row[key]), scale)
    if row.get("dev_curve"):
        out["dev_curve"] = ";".join(p if p == "" else repr(value_from_table_units(float(p), scale, lambda x: f"{x:.6g}"))
                                    for p in row["dev_curve"].split(";"))
    return out


def value_from_table_units(value: float, scale: float, shown=lambda x: x, steps: int = 8) -> float:
    """The float u with ``shown(u * scale) == shown(value)`` nearest to value / scale."""
    want, up = shown(value), value / scale
    down = up
    candidates = [up]
    for _ in range(steps):
        up, down = math.nextafter(up, math.inf), math.nextafter(down, -math.inf)
        candidates += [up, down]
    for u in candidates:
        if shown(u * scale) == want:
            return u
    raise ValueError(f"no float gives {value!r} when multiplied by {scale}")


def scaled_curve(row: dict) -> list[float | None]:
    """A stored row's dev curve in table units (``in_table_units``), without scaling the row."""
    return dev_curve(in_table_units({"scale": row.get("scale", ""), "dev_curve": row.get("dev_curve", "")}))


def curve_baseline(majority: float, scale: float) -> float:
    """A majority-class score in table units, rounded as ``dev_curve`` points are written: a curve
    point that ties the baseline reads back equal to it, never a rounding above."""
    return float(f"{majority * scale:.6g}")


def did_not_train(row: dict) -> bool:
    """The row's run never beat the dev split's majority-class score within its epoch cap
    (results/patience.py): its test score is not a trained result, and a claim on its row says so."""
    return row.get("status") == patience.DID_NOT_TRAIN


def needs_rerun(row: dict) -> bool:
    """The row's run predates the patience rule, which would have trained it further (stopped
    early before beating the majority-class score): its numbers stand for nothing until re-run."""
    return row.get("status") == patience.NEEDS_RERUN


def item_scores(predictions: Path, metric: str) -> dict[str, float] | None:
    """Each test item's score from a run's predictions.jsonl, for metrics that are a mean over
    items: accuracy (an example), MAP and MRR (a question). None for metrics that are not
    (BLEU, bits per character): the bootstrap is then not offered."""
    entries = [json.loads(line) for line in predictions.read_text().splitlines() if line.strip()]
    if metric == "accuracy":
        return {str(e["id"]): float(e["prediction"] == e["gold"]) for e in entries}
    if metric in ("map", "mrr"):
        from rnnbench.metrics.ranking import TREC_MEASURES, per_question

        records = [{"qid": e["qid"], "id": e["id"], "label": e["gold"]} for e in entries]
        return {str(q): v for q, v in per_question([e["prediction"] for e in entries], records, TREC_MEASURES[metric]).items()}
    return None


# Per-item scores are an xz-compressed CSV. Deflate (gzip) pays for every row, though each run repeats
# the same item ids in the same order (its 32 KiB window never reaches the previous run's rows): the
# largest table's file passed 1 MiB as gzip, about five times what LZMA, whose window spans runs, makes of it.
ITEMS_SUFFIX = ".items.csv.xz"
LEGACY_ITEMS_SUFFIX = ".items.csv.gz"  # written by earlier versions: still read (``items_path``'s sibling)
# Fixed, so that the same rows give the same bytes (xz stores no file name or time). Preset 6 with a
# longer match length: each run's rows repeat the item ids of the run before, with scores between, and
# preset 6's own length (64) found those repeats poorly in the largest file (RCRN Table 4, 725,000 rows:
# 1.05 MB; 0.42 MB at 96, in about twice the time; every committed items file together 2.6 MB -> 1.6 MB).
# Lengths near 64 behave erratically (48: 0.64 MB, 72: 0.64 MB): measure before changing it.
XZ_FILTERS = [{"id": lzma.FILTER_LZMA2, "preset": 6, "nice_len": 96}]
XZ_MAGIC = b"\xfd7zXZ\x00"


def holds_run_evidence(csv_path: Path) -> bool:
    """Whether ``csv_path`` holds a table's evidence of trained runs. Beside such files in
    ``results/``: side files named ``<table>.<kind>.csv``, the floors (no evidence format), and the
    cost benchmark's rows (``rcrn_table10.csv``, ``rcrn_table10_cuda.csv``: timed calls, no epoch
    trained, no ``scale``)."""
    if "." in csv_path.stem:
        return False
    with csv_path.open(newline="") as f:
        first = next(csv.DictReader(f), None)
    return first is not None and "format" in first and first.get("epochs_run") not in ("", "0")


def items_path(csv_path: Path) -> Path:
    """``<table>.items.csv.xz`` beside ``<table>.csv``: the per-item scores of its reported runs."""
    return csv_path.with_name(f"{csv_path.stem}{ITEMS_SUFFIX}")


def legacy_items_path(path: Path) -> Path | None:
    """The gzipped file an earlier version wrote in place of the items file ``path`` (None for a path
    not named ``<name>.items.csv.xz``)."""
    return path.with_name(path.name[:-len(ITEMS_SUFFIX)] + LEGACY_ITEMS_SUFFIX) if path.name.endswith(ITEMS_SUFFIX) else None


def write_items(path: Path, rows: list[dict]) -> None:
    """The rows as an xz-compressed CSV, sorted, at a fixed preset: the same evidence gives the same
    bytes. A gzipped file of an earlier version beside it is removed: it is replaced."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, ITEM_FIELDS, lineterminator="\n")
    writer.writeheader()
    for row in sorted(rows, key=lambda r: (r["dataset"], r["model"], r["variant"], int(r["seed"]), r["item"])):
        writer.writerow({k: _fmt(row.get(k, "")) for k in ITEM_FIELDS})
    data = lzma.compress(buffer.getvalue().encode(), format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, filters=XZ_FILTERS)
    with temporary_for(path) as tmp:
        tmp.write_bytes(data)
    legacy = legacy_items_path(path)
    if legacy is not None and legacy.exists():  # a folder holds one version of its scores, never two that differ
        legacy.unlink()


def _open_items(path: Path):
    """The items file ``path`` as text, or None where there is none. Asked for ``<name>.items.csv.xz``
    where only an earlier version's ``<name>.items.csv.gz`` exists (a comparison folder written
    before), that one; each file is decompressed as its first bytes say it was written."""
    if not path.exists():
        path = legacy_items_path(path)
        if path is None or not path.exists():
            return None
    with open(path, "rb") as raw:
        xz = raw.read(len(XZ_MAGIC)) == XZ_MAGIC
    return (lzma.open if xz else gzip.open)(path, "rt", newline="")


def read_items(path: Path, scaled: bool = True) -> list[dict]:
    """Per-item scores: in table units (``scaled``: the score times the row's ``scale``), else as stored."""
    handle = _open_items(path)
    if handle is None:
        return []
    with handle:
        items = []
        for r in csv.DictReader(handle):
            scale = float(r["scale"]) if r.get("scale") else ""
            item = {**r, "seed": int(r["seed"]), "score": float(r["score"]), "scale": scale}
            if scaled and scale != "":  # in table units, and so in its own units now (as in_table_units leaves a row)
                item.update(score=item["score"] * scale, scale="")
            items.append(item)
        return items


class ItemScores:
    """Per-item test scores grouped by row: (dataset, model, variant) -> seed -> item -> score.

    What a claim's estimate over test items reads. A table holds up to some 500,000 items and
    has dozens of claims: looked up here, not scanned once per claim, and read without a dict
    per item (``read_item_scores``). Callers read the dicts it returns; they do not change them."""

    def __init__(self, items: list[dict] = ()):
        self._rows: dict[tuple[str, str, str], dict[int, dict[str, float]]] = {}
        for it in items:  # as read_items gives them, or written by hand (tests)
            self._rows.setdefault((it["dataset"], it["model"], it["variant"]), {}).setdefault(it["seed"], {})[it["item"]] = it["score"]

    def of(self, dataset: str, model: str, variant: str) -> dict[int, dict[str, float]]:
        """Seed -> item -> score of one row's runs in one column; {} where it has none."""
        return self._rows.get((dataset, model, variant), {})

    def __bool__(self) -> bool:
        return bool(self._rows)


def grouped_items(items: list[dict] | ItemScores) -> ItemScores:
    """``items`` grouped (``read_items``'s list), or as they are when grouped already."""
    return items if isinstance(items, ItemScores) else ItemScores(items)


def read_item_scores(path: Path) -> ItemScores:
    """``read_items`` grouped by row, the same numbers (scores and seeds parsed alike)."""
    scores = ItemScores()
    handle = _open_items(path)
    if handle is None:
        return scores
    with handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None:
            return scores
        dataset, model, variant, seed, item, score = (header.index(f) for f in ("dataset", "model", "variant", "seed", "item", "score"))
        scale = header.index("scale") if "scale" in header else None
        last, of_seed = None, {}
        for row in reader:
            if not row:  # a blank line, as csv.DictReader skips it
                continue
            key = (row[dataset], row[model], row[variant], row[seed])
            if key != last:  # the file is sorted by row and seed: one lookup per run, not per item
                of_seed = scores._rows.setdefault(key[:3], {}).setdefault(int(key[3]), {})
                last = key
            of_seed[row[item]] = float(row[score]) * float(row[scale]) if scale is not None and row[scale] else float(row[score])
    return scores


PARAMETER_FIELDS = ["row", "parameters", "experiment", "commit"]


def parameters_path(csv_path: Path) -> Path:
    """``results/<table>.parameters.csv`` beside ``results/<table>.csv``."""
    return csv_path.with_name(f"{csv_path.stem}.parameters.csv")


def write_parameter_counts(path: Path, counts: dict[str, tuple[int, str]], commit: str) -> None:
    """Each row's encoder size as its experiment config builds it (``rnnbench.campaign.definitions``),
    with the code's commit: the evidence a size claim is decided on when a row has no runs. Counts
    unchanged since the file was written leave it as it is (and its commit, when they were counted),
    unless they were counted on uncommitted code (``-dirty``) and now are on committed code: only
    then does the commit name the code that counted them."""
    if read_parameter_counts(path) == counts and not (_counted_on_dirty_code(path) and not commit.endswith("-dirty")):
        return
    rows = [{"row": row, "parameters": n, "experiment": experiment, "commit": commit} for row, (n, experiment) in sorted(counts.items())]
    with temporary_for(path) as tmp, open(tmp, "w", newline="") as handle:
        writer = csv.DictWriter(handle, PARAMETER_FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def _counted_on_dirty_code(path: Path) -> bool:
    if not path.exists():
        return False
    with open(path, newline="") as handle:
        return any(r["commit"].endswith("-dirty") for r in csv.DictReader(handle))


def read_parameter_counts(path: Path) -> dict[str, tuple[int, str]]:
    """Row -> (encoder parameters, experiment) from ``write_parameter_counts``'s file; {} without one."""
    if not path.exists():
        return {}
    with open(path, newline="") as handle:
        return {r["row"]: (int(r["parameters"]), r["experiment"]) for r in csv.DictReader(handle)}


def _number(value):
    return None if value == "" else value


class CommittedEvidence:
    """A table's committed evidence, looked up by run: what lets a campaign go on later
    (or on another machine) without the run folders. A run whose rows are committed
    counts as finished: it is not trained again, its dev score takes part in the learning-rate
    choice, and its rows (with their per-item scores) are carried into the regenerated table.
    Runs are matched by encoder and run folder name, which holds the run's identity hash
    (config, component versions, data fingerprint), so evidence of another config never matches."""

    def __init__(self, csv_path: Path, items_path: Path):
        self.rows = read_csv(csv_path, scaled=False) if csv_path.exists() else []  # as stored: the records' values
        if any(row.get("scale", "") == "" for row in self.rows):  # read as a record's, table units would be off by the scale
            raise RnnbenchError(f"{csv_path} holds evidence in table units, written before its 'scale' column: rewrite it once "
                                f"with python scripts/migrate_evidence_units.py {csv_path.stem} --results {csv_path.parent}")
        self.items_path = items_path
        self.by_run: dict[tuple[str, str], list[dict]] = {}
        for row in self.rows:
            self.by_run.setdefault((row["encoder"], row["run"]), []).append(row)
        self.found = csv_path.exists()
        self.used: set[tuple[str, str]] = set()

    @functools.cached_property
    def items(self) -> list[dict]:
        """The per-item scores of the reported runs, as stored: read on first use (the largest
        file takes seconds to decompress; pricing reads only the rows)."""
        return read_items(self.items_path, scaled=False)

    def use(self, encoder: str, run: str) -> None:
        """Mark a committed run as taken into the regenerated table (so it is not reported dropped)."""
        self.used.add((encoder, run))

    def record(self, encoder: str, run: str) -> CommittedRun | None:
        """What the committed rows hold of the run's record (its dev scores, as stored: the record's
        own; ``record_format.CommittedRun``), or None when the run is not committed."""
        rows = self.by_run.get((encoder, run))
        if not rows:
            return None
        first = rows[0]
        return CommittedRun(dev={r["metric"]: r["dev"] for r in rows if r["dev"] != "" and not r["metric"].startswith(STATS)},
                            seconds_per_epoch=_number(first["seconds_per_epoch"]), epochs_run=_number(first["epochs_run"]),
                            device=first.get("device", ""),
                            # the patience rule's verdict, or what judges it where the rows predate the rule (table units)
                            status=first.get("status") or "", epoch_cap=_number(first.get("epoch_cap", "")),
                            dev_curves={r["metric"]: scaled_curve(r) for r in rows if r.get("dev_curve")})

    def reported_rows(self, encoder: str, run: str) -> list[dict]:
        """The run's committed rows that were committed as reported (at the chosen rate): only
        these have per-item scores stored under their (model, variant, dataset, seed)."""
        return [r for r in self.by_run.get((encoder, run), []) if r.get("reported") == "yes"]

    def rows_of(self, encoder: str, run: str, model: str, variant: str, phase: str, reported: bool,
                columns: set[str]) -> tuple[list[dict], list[dict]]:
        """The committed rows of a run for the table's ``columns``, relabelled as the current
        configs name them, and (when ``reported``) their per-item scores."""
        self.use(encoder, run)
        rows = [{**r, "model": model, "variant": variant, "phase": phase, "reported": "yes" if reported else "no"}
                for r in self.by_run.get((encoder, run), []) if r["dataset"] in columns]
        items = []
        if reported:
            # Items are stored by (model, variant, dataset, seed), not by run: the stored ones are this
            # run's only where its committed rows were reported. A committed selection run that the
            # choice now reports has none (they are another rate's run of the same seed).
            own = [r for r in self.reported_rows(encoder, run) if r["dataset"] in columns]
            seeds = {(r["dataset"], int(r["seed"])) for r in own}
            old = {(r["model"], r["variant"]) for r in own}
            items = [{**i, "model": model, "variant": variant} for i in self.items
                     if (i["model"], i["variant"]) in old and (i["dataset"], i["seed"]) in seeds]
        return rows, items

    def outside(self, scope: set[tuple[str, str]]) -> tuple[list[dict], list[dict]]:
        """Committed rows (and their per-item scores) of columns that the experiments being
        assembled do not fill, ``scope`` being their (dataset, variant) pairs: another
        experiment of the same table (MZU Table 6's other domain), carried over untouched."""
        rows = [r for r in self.rows if (r["dataset"], r["variant"]) not in scope]
        for row in rows:
            self.use(row["encoder"], row["run"])
        items = [i for i in self.items if (i["dataset"], i["variant"]) not in scope]
        return rows, items

    def unused(self) -> list[str]:
        """Committed runs the current configs no longer select (dropped from the regenerated table)."""
        return sorted({run for (encoder, run) in self.by_run if (encoder, run) not in self.used})

    def unused_rows(self) -> list[dict]:
        return [r for key, rows in self.by_run.items() if key not in self.used for r in rows]


# Runs dropped from a table because its configs changed (a new cap, thread count, component
# version) are not deleted: their rows move to ``<table>.superseded.csv`` with the date they
# left, so a reader sees every run ever reported without digging in the git history.
SUPERSEDED_FIELDS = [*FIELDS, "superseded_on"]


def superseded_path(csv_path: Path) -> Path:
    return csv_path.with_name(f"{csv_path.stem}.superseded.csv")


def read_superseded(path: Path, scaled: bool = True) -> list[dict]:
    return read_csv(path, scaled) if path.exists() else []


def write_superseded(path: Path, rows: list[dict]) -> None:
    """The superseded-runs file: by date, then as a table's CSV."""
    write_csv(path, rows, SUPERSEDED_FIELDS, lambda r: (r["superseded_on"], *_sort_key(r), r["run"]))


def superseded_note(path: Path, current: list[dict]) -> str | None:
    """The footnote naming a table's superseded runs (those not back in ``current``), by date
    and encoder, or None when there are none."""
    live = {(r["encoder"], r["run"]) for r in current}
    runs: dict[str, dict[str, set[str]]] = {}
    for row in read_superseded(path):
        if (row["encoder"], row["run"]) not in live:
            runs.setdefault(row["superseded_on"], {}).setdefault(row["encoder"], set()).add(row["run"])
    if not runs:
        return None
    parts = []
    for when, by_encoder in sorted(runs.items()):
        count = sum(len(v) for v in by_encoder.values())
        parts.append(f"{count} on {when} ({', '.join(f'{enc} {len(v)}' for enc, v in sorted(by_encoder.items()))})")
    return (f"Superseded runs, not in this table (the current configs or the protocol's choices no longer select them: "
            f"another component version, or a rate or dropout chosen again; their evidence rows are kept in "
            f"{path.name}): {'; '.join(parts)}.")
