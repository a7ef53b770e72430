"""Run records on disk: atomic strict-JSON writes and a shared, lock-protected index.

Guarantees: a reader never sees half a file (write to a temporary file, then rename);
a failed write (a full disk included) leaves no temporary file behind; records are
strict JSON (NaN and infinities are written as null); a finished run missing from the
index (a crash between the ``done`` marker and the append) is appended when it is
next read; a damaged record is moved aside, with a warning, so the run is redone.
"""
from __future__ import annotations

import errno
import json
import math
import os
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock

from rnnbench.errors import DiskFullError, SmokeRunRefused
from rnnbench.results.record_format import Record

RECORD = "record.json"
PREDICTIONS = "predictions.jsonl"
DONE = "done"
INDEX_KEYS = ("identity", "run_dir", "task", "encoder", "seed", "test", "dev")


def strict(data):
    """``data`` with every NaN or infinite float replaced by None (JSON has no NaN)."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {k: strict(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [strict(v) for v in data]
    return data


def dumps(data, **kwargs) -> str:
    return json.dumps(strict(data), allow_nan=False, default=str, **kwargs)


def is_disk_full(exc: BaseException, folder: Path | None = None) -> bool:
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    # torch.save reports a full disk as a RuntimeError ("unexpected pos ...", "file write failed")
    text = str(exc)
    if isinstance(exc, RuntimeError) and ("unexpected pos" in text or "write failed" in text):
        return True
    return False


@contextmanager
def temporary_for(path: Path):
    """The temporary file to write ``path`` through; renamed onto ``path`` on success,
    removed on any failure (a full disk becomes one DiskFullError line)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.remove(tmp)
        except OSError:
            pass
        if is_disk_full(exc):
            raise DiskFullError(f"disk full while writing {path}: the partial file was removed; "
                                f"free space on that disk and run the same command again") from None
        raise


def write_json_atomic(path: Path, data) -> None:
    """Write to a temporary file then rename: a reader never sees half a file."""
    text = dumps(data, indent=1, sort_keys=True)
    with temporary_for(path) as tmp:
        tmp.write_text(text)


def write_lines_atomic(path: Path, rows: list[dict]) -> None:
    with temporary_for(path) as tmp:
        with open(tmp, "w") as handle:
            for row in rows:
                handle.write(dumps(row) + "\n")


def remove_temporaries(folder: Path) -> None:
    """This process's leftover temporary files in ``folder`` (after a failure)."""
    for tmp in folder.glob(f".*.{os.getpid()}.tmp"):
        try:
            tmp.unlink()
        except OSError:
            pass


def _index_line(record: dict) -> str:
    return dumps({k: record.get(k) for k in INDEX_KEYS})


def append_index(index: Path, record: dict) -> None:
    """Append one line to the runs index; a file lock keeps parallel writers from interleaving."""
    index.parent.mkdir(parents=True, exist_ok=True)
    line = _index_line(record)
    with FileLock(str(index) + ".lock"):
        try:
            with open(index, "a") as handle:
                handle.write(line + "\n")
        except OSError as exc:
            if is_disk_full(exc):
                raise DiskFullError(f"disk full while appending to {index}: free space and run the same command "
                                    "again (the finished run is added to the index then)") from None
            raise


def indexed_identities(index: Path) -> set[str]:
    """Identities listed in the index; an unreadable line (a torn write) is skipped."""
    if not index.exists():
        return set()
    out = set()
    for line in index.read_text().splitlines():
        try:
            out.add(json.loads(line)["identity"])
        except (ValueError, KeyError, TypeError):
            continue
    return out


def ensure_indexed(index: Path, record: dict) -> bool:
    """Append ``record`` to the index unless it is there already; True if it was appended."""
    index.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(index) + ".lock"):
        if record.get("identity") in indexed_identities(index):
            return False
        with open(index, "a") as handle:
            handle.write(_index_line(record) + "\n")
    return True


def is_done(run_dir: Path) -> bool:
    return (run_dir / DONE).exists() and (run_dir / RECORD).exists()


def _warn(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def set_aside(path: Path) -> Path | None:
    """Rename a damaged file to ``<name>.damaged-<time>`` (kept for inspection); None if already gone."""
    aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        os.replace(path, aside)
    except FileNotFoundError:
        return None
    return aside


def is_partial(record: dict) -> bool:
    """A smoke run: its test score covers only part of the test split."""
    return bool(record.get("smoke"))


def smoke_line(record: dict) -> str:
    """What a smoke run says last: its test score covers part of the test split, so it is no result."""
    scored = record.get("test_examples_scored")
    total = (record.get("data") or {}).get("test")
    limit = ((record.get("config") or {}).get("trainer") or {}).get("max_eval_batches")
    return (f"smoke run: test scored on {scored} of {total} examples (trainer.max_eval_batches={limit}): "
            "a check that the config runs end to end, not a result (tables refuse it)")


def index_entries(index: Path) -> list[dict]:
    """The runs index's lines as dicts, in order (an unreadable line, a torn write, is skipped)."""
    if not index.exists():
        return []
    entries = []
    for line in index.read_text().splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            entries.append(entry)
    return entries


def read_record(run_dir: Path, index: Path | None = None, allow_smoke: bool = False, say=_warn) -> dict | None:
    """The record of a finished run in the current shape (``record_format.Record``), else None.

    A damaged ``record.json`` (empty, not JSON, not a record) is moved aside and the
    ``done`` marker removed, with one warning line: the run is then redone (resuming from
    its last checkpoint, which only re-tests it). With ``index`` (the runs index), a
    finished run missing from it is appended. A smoke run (test scored on part of the
    split) is refused unless ``allow_smoke``: tables never show one.
    """
    if not is_done(run_dir):
        return None
    path = run_dir / RECORD
    try:
        record = json.loads(path.read_text())
        if not isinstance(record, dict) or "test" not in record or "identity" not in record:
            raise ValueError("not a run record")
    except (ValueError, UnicodeDecodeError) as exc:
        aside = set_aside(path)
        (run_dir / DONE).unlink(missing_ok=True)
        say(f"warning: {path} is damaged ({type(exc).__name__}: {str(exc)[:80] or 'empty file'}); moved it aside to "
            f"{aside.name if aside else 'nothing (already moved)'} and redoing the run from its last checkpoint")
        return None
    record = Record.from_json(record, path).as_dict()  # the current shape; a newer format is refused, not set aside
    if index is not None and ensure_indexed(index, record):
        say(f"note: {run_dir} was finished but missing from {index}; added it")
    if is_partial(record) and not allow_smoke:
        scored = record.get("test_examples_scored")
        total = (record.get("data") or {}).get("test")
        raise SmokeRunRefused(f"{run_dir} is a smoke run (test scored on {scored} of {total} examples, "
                              "trainer.max_eval_batches is set): tables use only runs scored on the whole test split")
    return record
