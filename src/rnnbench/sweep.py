"""Sweeps: one job's failure or lock never stops the others; a summary at the end.

train.py never lets a job's error escape in a multirun (Hydra's launchers would stop
the sweep, and a joblib worker that exits takes its neighbours down): it reports the
job's outcome here instead. ``SweepSummary`` (a Hydra callback, ``hydra.callbacks`` in
conf/config.yaml) collects the outcomes, from joblib worker processes too (one small
file per job in a folder named by ``RNNBENCH_SWEEP_STATUS``), prints what ran, what was
skipped and what failed, and exits with status 1 if anything failed.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import uuid
from pathlib import Path

from hydra.experimental.callback import Callback

ENV = "RNNBENCH_SWEEP_STATUS"
OUTCOMES = ("ran", "done", "locked", "failed")

_last: dict | None = None


def report(outcome: str, message: str = "") -> None:
    """The current job's outcome (called by train.py, read by the callback's on_job_end)."""
    global _last
    assert outcome in OUTCOMES, outcome
    _last = {"outcome": outcome, "message": message}


def summary_lines(jobs: list[dict]) -> list[str]:
    count = {o: sum(j["outcome"] == o for j in jobs) for o in OUTCOMES}
    lines = [f"sweep summary: {len(jobs)} jobs: {count['ran']} ran, {count['done'] + count['locked']} skipped "
             f"({count['done']} finished earlier, {count['locked']} locked by another process), {count['failed']} failed"]
    for job in sorted(jobs, key=lambda j: j.get("num", 0)):
        if job["outcome"] in ("failed", "locked"):
            label = "failed" if job["outcome"] == "failed" else "skipped"
            lines.append(f"  {label}: job {job.get('num')} [{' '.join(job.get('overrides', []))}]: {job['message']}")
    return lines


class SweepSummary(Callback):
    def on_multirun_start(self, config, **kwargs) -> None:
        os.environ[ENV] = tempfile.mkdtemp(prefix="rnnbench-sweep-")

    def on_job_end(self, config, job_return, **kwargs) -> None:
        global _last
        folder = os.environ.get(ENV)
        if not folder or not Path(folder).is_dir():
            return  # a single run: nothing to collect
        outcome = _last
        _last = None
        status = getattr(job_return, "status", None)
        if status is not None and status.name == "FAILED":  # an exception train.py did not turn into an outcome
            outcome = {"outcome": "failed", "message": f"{type(job_return._return_value).__name__}: {job_return._return_value}"}
        if outcome is None:
            outcome = {"outcome": "ran", "message": ""}
        hydra_job = config.get("hydra", {}).get("job", {}) if hasattr(config, "get") else {}
        outcome["num"] = int(hydra_job.get("num", 0) or 0) if hydra_job else 0
        try:
            outcome["overrides"] = list(config.hydra.overrides.task)
        except Exception:  # noqa: BLE001 - a config without Hydra's node: no overrides to show
            outcome["overrides"] = []
        (Path(folder) / f"{outcome['num']}-{uuid.uuid4().hex}.json").write_text(json.dumps(outcome))

    def on_multirun_end(self, config, **kwargs) -> None:
        folder = os.environ.pop(ENV, None)
        if not folder:
            return
        jobs = [json.loads(p.read_text()) for p in Path(folder).glob("*.json")]
        shutil.rmtree(folder, ignore_errors=True)
        for line in summary_lines(jobs):
            print(line, flush=True)
        if any(j["outcome"] == "failed" for j in jobs):
            sys.exit(1)
