"""A run made again: a run folder whose identity matches rows of a table's committed evidence.

A run's identity covers its config, component versions, data and thread count, not the processor
it ran on. The same run on another processor kind takes other code paths in MKL, oneDNN and ATen,
rounds its floats differently and can select another epoch: RCRN Table 5's seed-1 BiLSTM run scores
test 90.2 on the Intel Xeon that made its committed row and 88.0 on an AMD EPYC, from the same
folder name (results/diagnostics/processor_numerics.md). So a run folder never silently replaces
the committed rows of its run:

- its numbers equal the committed ones (dev, test and selected epoch of each column, and each test
  item's score; a re-run on the same processor kind): nothing changes, the committed rows stay as
  they are (a column they lack, a new evaluated one, is added from the run folder);
- they differ: the committed rows are kept and one line says so, naming the table, the run, the
  committed and local test scores and processors, and the flag that replaces them;
- they differ and the table is written with ``--replace-committed`` (``POLICY.replace``): the run
  folder's rows replace them, and the committed rows move to ``results/<table>.superseded.csv``
  with the reason (``superseded_reason``); every regeneration names the replaced runs in a footnote.
"""
from __future__ import annotations

import math
import weakref
from pathlib import Path

from rnnbench.results import evidence

REPLACE_FLAG = "--replace-committed"
REASON = "superseded_reason"  # a superseded row's reason, where it has one (a replaced row); the column is written only then
REPLACED = "replaced by a re-run of the same identity with other numbers"


class Policy:
    """What the table command does with a run folder whose numbers differ from its committed rows:
    keep the committed rows (the default) or, with ``--replace-committed``, replace them."""

    def __init__(self):
        self.replace = False


POLICY = Policy()


def _blank(value) -> bool:
    return value is None or value == ""


def _same(a, b) -> bool:
    """Two stored numbers alike ("" and None alike); to 1e-9 relative, so only a different result differs."""
    if _blank(a) or _blank(b):
        return _blank(a) and _blank(b)
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)


def differences(record: dict, rows: list[dict]) -> list[str]:
    """What differs between a run folder's ``record`` and its committed ``rows`` (as stored: the
    records' units): "dev", "test", "selected epoch", in that order, each named once. Columns the
    rows hold from re-scoring the checkpoint (``evidence.rescored``: an evaluation's numbers, not the
    run's) are not compared."""
    found: list[str] = []
    for row in rows:
        if evidence.rescored(row):
            continue
        try:
            dev, test, _ = evidence.split_values(record, row["metric"])
        except (KeyError, TypeError):  # the record lacks the committed metric: not the same numbers
            dev, test = None, None
        if not _same(row.get("dev"), dev):
            found.append("dev")
        if not _same(row.get("test"), test):
            found.append("test")
        if not _blank(row.get("selected_epoch")) and not _same(row["selected_epoch"], record.get("best_epoch")):
            found.append("selected epoch")
    return list(dict.fromkeys(found))


_ITEMS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def committed_items(committed: evidence.CommittedEvidence, rows: list[dict], dataset: str) -> dict[str, float] | None:
    """The committed per-item test scores of a run's ``dataset`` column (its rows' labels and seed),
    as stored, or None where the committed evidence has none (the run was not reported)."""
    index = _ITEMS.get(committed)
    if index is None:
        index = {}
        for item in committed.items:
            index.setdefault((item["model"], item["variant"], item["dataset"], int(item["seed"])), {})[str(item["item"])] = item["score"]
        _ITEMS[committed] = index
    for row in rows:
        if row["dataset"] == dataset and row.get("reported") == "yes" and not evidence.rescored(row):
            found = index.get((row["model"], row["variant"], dataset, int(row["seed"])))
            if found:
                return found
    return None


def items_differ(local: dict[str, float], committed: dict[str, float]) -> bool:
    return local.keys() != committed.keys() or any(not _same(v, committed[k]) for k, v in local.items())


def keeps_committed(record: dict | None, committed: evidence.CommittedEvidence | None, encoder: str, run: str) -> bool:
    """Whether the committed rows of ``run`` stand for it instead of its run folder's ``record``:
    they exist, their dev, test or selected epoch differ, and they are not being replaced. (What
    the learning-rate choice and the plan read; the table also compares each test item.)"""
    if record is None or committed is None or POLICY.replace:
        return False
    rows = committed.by_run.get((encoder, run))
    return bool(rows) and bool(differences(record, rows))


def _shown(value, scale) -> str:
    if _blank(value):
        return "none"
    return f"{round(float(value) * float(scale or 1), 6):g}"


def _hardware(record: dict) -> str:
    hw = record.get("hardware") or {}
    return hw.get("gpu") or hw.get("cpu") or "an unnamed processor"


def line(table: str, run: str, encoder: str, rows: list[dict], record: dict, what: list[str], superseded: Path) -> str:
    """The one line a differing run folder gets: kept (the default) or replaced (``POLICY.replace``)."""
    first = next((r for r in rows if not evidence.rescored(r)), rows[0])
    _, test, _ = evidence.split_values(record, first["metric"]) if "test" in record else (None, None, None)
    scale = first.get("scale") or 1
    committed = f"test {_shown(first.get('test'), scale)} on {first.get('hardware') or 'an unnamed processor'}"
    local = f"{_shown(test, scale)} on {_hardware(record)}"
    head = f"{table}: run {run} ({encoder}) here has other numbers than its committed row ({', '.join(what)} differ): "
    if POLICY.replace:
        return (f"{head}committed {committed}, replaced by this run folder's {local} ({REPLACE_FLAG}); "
                f"the committed row moved to {superseded}")
    return f"{head}committed {committed} kept, this run folder's {local} left out; {REPLACE_FLAG} replaces it"


def reason(record: dict, rows: list[dict], what: list[str]) -> str:
    """Why a committed row left its table: the run folder's numbers that replaced it."""
    first = next((r for r in rows if not evidence.rescored(r)), rows[0])
    _, test, _ = evidence.split_values(record, first["metric"])
    commit = str(record.get("git_commit") or "")[:12] or "unknown"
    return (f"{REPLACED} ({', '.join(what)} differ; {REPLACE_FLAG}): test {_shown(test, first.get('scale') or 1)} "
            f"on {_hardware(record)}, commit {commit}")


def _key(row: dict) -> tuple:
    """A superseded row: its run and column, and its numbers (a run replaced, then dropped, keeps both rows)."""
    numbers = tuple("" if _blank(row.get(k)) else repr(float(row[k])) for k in ("dev", "test", "selected_epoch"))
    return row["encoder"], row["run"], row["dataset"], row["metric"], numbers


def record_superseded(path: Path, rows: list[dict], when: str, why: str = "") -> list[dict]:
    """Add rows that left a table to its superseded-runs file, dated ``when``, with the reason
    ``why`` where there is one (a replaced row); rows already there keep their date. The reason
    column is written only where some row has one, so a file without is written as before."""
    kept = evidence.read_superseded(path, scaled=False)
    known = {_key(r) for r in kept}
    kept += [{**r, "superseded_on": when, REASON: why} for r in rows if _key(r) not in known]
    fields = list(evidence.SUPERSEDED_FIELDS)
    if any(not _blank(r.get(REASON)) for r in kept):
        fields.append(REASON)
    evidence.write_csv(path, kept, fields, lambda r: (r["superseded_on"], r["dataset"], r["model"], r["variant"], float(r["lr"]),
                                                      int(r["seed"]), r["run"], str(r.get(REASON) or "")))
    return kept


def replaced_note(path: Path, current: list[dict]) -> str | None:
    """The footnote naming the runs of the table whose committed rows were replaced by a re-run with
    other numbers (still in the table: ``evidence.superseded_note`` names the runs that left it)."""
    live = {(r["encoder"], r["run"]): r for r in current if not evidence.rescored(r)}
    parts = []
    for row in evidence.read_superseded(path):
        now = live.get((row["encoder"], row["run"]))
        if now is None or not str(row.get(REASON) or "").startswith(REPLACED) or evidence.rescored(row):
            continue
        part = (f"{row['run']} ({row['encoder']}, {row['dataset']}: test {row['test']:g} on {row['hardware']}, "
                f"now {now['test']:g} on {now['hardware']}; replaced on {row['superseded_on']})")
        if part not in parts:
            parts.append(part)
    if not parts:
        return None
    return (f"Re-run with other numbers (another processor kind rounds differently: docs/runs.md) and replaced with "
            f"{REPLACE_FLAG}; the committed rows are kept in {path.name}: {'; '.join(parts)}.")
