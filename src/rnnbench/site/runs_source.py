"""Your runs, as the report's "Your runs" page shows them: one plain dict per run under the
runs folder, read as ``rnnbench runs`` reads it (``rnnbench.results.run_folders``: the run folders
and the runs index ``records.jsonl`` of ``rnnbench.results.records``). Nothing is written
to the runs folder.

Each dict holds what the page's table and its comparison view need: task, encoder, seed, the
config keys set apart from the defaults, dev and test on the selection metric, every metric,
the dev curve per epoch, the flattened config (for the keys that differ between runs), status.
"""
from __future__ import annotations

from pathlib import Path

from rnnbench.results.run_folders import IGNORED_PREFIXES, collect, flatten, overrides_of


def _number(value):
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _curves(record: dict) -> dict[str, list[float | None]]:
    """dev_<metric> per epoch from the record's history: metric -> values."""
    curves: dict[str, list[float | None]] = {}
    history = record.get("history") or []
    for epoch in history:
        for key, value in epoch.items():
            if key.startswith("dev_"):
                curves.setdefault(key[len("dev_"):], [])
    for metric in curves:
        curves[metric] = [_number(epoch.get(f"dev_{metric}")) for epoch in history]
    return curves


def _config(record: dict) -> dict[str, str]:
    config = record.get("config")
    if not isinstance(config, dict):
        return {}
    return {k: str(v) for k, v in sorted(flatten(config).items()) if not k.startswith(IGNORED_PREFIXES) and k != "seed"}


def runs(runs_dir: Path) -> list[dict]:
    """Every run under ``runs_dir`` (none when it does not exist), finished ones with their record's numbers."""
    if not runs_dir.is_dir():
        return []
    out = []
    for entry in collect(runs_dir):
        record = entry.record if entry.status in ("done", "folder missing") else {}
        config = record.get("config") or {}
        select = (config.get("task") or {}).get("select_metric") if isinstance(config, dict) else None
        folder = entry.folder
        out.append({
            "id": (entry.identity or "")[:12] or (folder.name if folder else ""),
            "task": entry.task, "encoder": entry.encoder, "seed": entry.seed, "status": entry.status,
            "smoke": entry.smoke, "experiment": config.get("experiment") if isinstance(config, dict) else None,
            "overrides": overrides_of(record) if record else "",
            "select_metric": select, "dev": entry.score("dev"), "test": entry.score("test"),
            "metrics": {f"{split} {k}": _number(v) for split in ("dev", "test") for k, v in sorted((record.get(split) or {}).items())
                        if _number(v) is not None},
            "cost": {"epochs run": _number(record.get("epochs_run")), "best epoch": _number(record.get("best_epoch")),
                     "s / epoch": _number(record.get("seconds_per_epoch")),
                     "encoder parameters": _number(record.get("encoder_parameters"))},
            "curves": _curves(record), "config": _config(record),
            "folder": str(folder.relative_to(runs_dir)) if folder and folder.is_relative_to(runs_dir) else str(folder or ""),
        })
    return out
