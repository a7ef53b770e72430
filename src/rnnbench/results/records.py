"""Run records on disk: atomic JSON writes and a shared, lock-protected index."""
from __future__ import annotations

import json
import os
from pathlib import Path

from filelock import FileLock

RECORD = "record.json"
PREDICTIONS = "predictions.jsonl"
DONE = "done"


def write_json_atomic(path: Path, data) -> None:
    """Write to a temporary file then rename: a reader never sees half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True, default=str))
    os.replace(tmp, path)


def write_lines_atomic(path: Path, rows: list[dict]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w") as handle:
        for row in rows:
            handle.write(json.dumps(row, default=str) + "\n")
    os.replace(tmp, path)


def append_index(index: Path, record: dict) -> None:
    """Append one line to the runs index; a file lock keeps parallel writers from interleaving."""
    index.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps({k: record[k] for k in ("identity", "run_dir", "task", "encoder", "seed", "test", "dev")}, default=str)
    with FileLock(str(index) + ".lock"):
        with open(index, "a") as handle:
            handle.write(line + "\n")


def is_done(run_dir: Path) -> bool:
    return (run_dir / DONE).exists() and (run_dir / RECORD).exists()


def read_record(run_dir: Path) -> dict | None:
    if not is_done(run_dir):
        return None
    return json.loads((run_dir / RECORD).read_text())
