"""A campaign's jobs: each run of a table's protocol composed once into its config, and what is
known of it: its record (its run folder's, else its committed evidence's stand-in) and its status
under the patience rule. Nothing here trains."""
from __future__ import annotations

import copy
import functools
import json
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from rnnbench.compose import compose_config
from rnnbench.campaign import reruns
from rnnbench.campaign.dropout import dropout_overrides
from rnnbench.campaign import protocol
from rnnbench.results import evidence, patience
from rnnbench.results.identity import run_dir
from rnnbench.results.records import read_record
from rnnbench.training.checkpoint import LAST


def job_config(experiment: str, job: protocol.Job, extra: list[str]):
    """The run's config, composed once per process (``_composed``); a copy, so a caller that sets a
    key changes no other caller's config."""
    return copy.deepcopy(_composed(experiment, job, tuple(extra)))


@functools.lru_cache(maxsize=None)
def _composed(experiment: str, job: protocol.Job, extra: tuple[str, ...]):
    # Interpolations (the data folder's RNNBENCH_DATA) stay unresolved here: resolved where they are read.
    overrides = [f"experiment={experiment}", f"encoder={job.encoder}", *extra]
    cfg = compose_config(overrides)  # composed once for all the encoder's jobs
    if job.dropout is not None:  # a p of the dropout grid: where it goes depends on the composed encoder (campaign/dropout.py)
        cfg = compose_config([*overrides, *dropout_overrides(cfg, job.dropout)])
    return at_seed_and_rate(cfg, job.seed, job.lr, extra)


def at_seed_and_rate(cfg: DictConfig, seed: int, lr: float, extra) -> DictConfig:
    """``cfg`` with its seed and rate set. They are plain values: set here, they give the config the
    command line's `seed=` and `trainer.lr=` give, without composing again; a caller's own override
    of either (in ``extra``) wins, as it would there after them."""
    named = {o.split("=")[0].lstrip("+~") for o in extra}
    if "seed" not in named:
        cfg.seed = seed
    if "trainer.lr" not in named:
        cfg.trainer.lr = lr
    return cfg


def finished(experiment: str, job: protocol.Job, extra: list[str], committed: evidence.CommittedEvidence) -> dict | None:
    """The job's record if it has run: its run folder's, else its committed evidence's stand-in (also
    where the run folder's numbers differ from the committed ones: ``reruns.keeps_committed``),
    with its ``status`` under the patience rule (``with_status``). A run whose status is "needs
    re-run" is returned too (its dev score stands for the choice until it is re-run); ``ensure``
    and ``--plan`` count it as not finished."""
    cfg = _composed(experiment, job, tuple(extra))  # only read here: no copy
    folder = run_dir(cfg)
    record = read_record(folder)
    if record is None or reruns.keeps_committed(record, committed, job.encoder, folder.name):
        # no run folder here, or one whose numbers differ from its committed rows: those stand (campaign.reruns)
        record = committed.record(job.encoder, folder.name)
    return None if record is None else with_status(record, cfg)


def evaluated(record: dict, overrides: list[str], allowed: bool) -> dict | None:
    """The evaluation of a finished run's checkpoint with reader ``overrides`` (evaluate.py's
    record beside the run): read if it exists, else computed when ``allowed``."""
    from rnnbench.inference import evaluate_run, existing_evaluation

    done = existing_evaluation(record["run_dir"], "test", list(overrides))
    if done is not None or not allowed:
        return done
    return evaluate_run(record["run_dir"], "test", list(overrides))[0]


def evaluate_columns(cfg) -> None:
    """Score the run's checkpoint on the table's evaluated columns (``table.evaluated_columns``:
    FHE Table 4's longer test sequences) as soon as a campaign meets it finished, rather than when
    the table is written: a table stopped before its end keeps them. A run known from committed
    evidence alone has no checkpoint here: nothing to score."""
    columns = cfg.table.get("evaluated_columns") or {}
    folder = run_dir(cfg)
    record = read_record(folder) if columns else None
    if record is None:
        return
    for overrides in columns.values():
        evaluated({**record, "run_dir": str(folder)}, list(overrides), True)


def is_done(record: dict | None) -> bool:
    """A finished run that need not run again (not one the patience rule would train further)."""
    return record is not None and record.get("status") != patience.NEEDS_RERUN


_MAJORITY: dict[str, float | None] = {}


def majority_of(cfg) -> float | None:
    """The dev split's majority-class score on the task's select metric (``patience.task_baseline``;
    None where the rule does not apply), read once per task and data folder."""
    if not patience.applies(cfg.task):
        return None
    key = json.dumps([OmegaConf.to_container(cfg.task.reader, resolve=True), str(cfg.task.select_metric), str(cfg.paths.data_dir)],
                     sort_keys=True, default=str)
    if key not in _MAJORITY:
        from rnnbench.data.prepare import build_reader, load_splits

        reader = build_reader(cfg.task.reader)
        # the baseline reads labels: a reader that has them without tokenising gives them so
        splits = reader.read_labels(Path(cfg.paths.data_dir)) or load_splits(reader, cfg.paths.data_dir, cfg.paths.cache_dir)
        _MAJORITY[key] = patience.task_baseline(cfg.task, splits["dev"])
    return _MAJORITY[key]


def with_status(record: dict, cfg) -> dict:
    """The record (or committed stand-in) with ``status`` and ``majority_baseline``: its own where
    it was made under the patience rule, else judged from its dev curve against the dev split's
    majority-class score (``patience.outcome``; "" where it has no curve of the select metric)."""
    if record.get("status"):
        return record
    select, lower = str(cfg.task.select_metric), cfg.task.get("select_mode", "max") == "min"
    majority = majority_of(cfg)
    if record.get("committed"):  # committed curves come in table units, at six significant digits
        curve, cap = record.get("dev_curves", {}).get(select, []), record.get("epoch_cap")
        baseline = None if majority is None else evidence.curve_baseline(majority, cfg.table.scale)
    else:
        curve, cap = [h.get(f"dev_{select}") for h in record.get("history", [])], record["config"]["trainer"]["epochs"]
        baseline = majority
    status = patience.outcome(curve, baseline, int(record["epochs_run"]), int(cap), lower) if curve and cap not in (None, "") else ""
    return {**record, "status": status, "majority_baseline": majority}


def jobs_of(base, enc: str, lr: float | None, choice: protocol.RateChoice | None,
            dropout: protocol.DropoutChoice | None = None) -> tuple[int, list[protocol.Job]]:
    """The protocol's run count for one encoder of an experiment (``base``) and its jobs known so
    far, for a known rate and choice (``rates.protocol_jobs``) and, with a dropout grid, the
    dropout choice at that rate (None while its runs are missing: the final seeds wait for it)."""
    # One rate: the final runs are known (and may have finished) before the selection runs have.
    jobs = protocol.choice_jobs(enc, base.table.protocol, base.trainer.lr, choice)
    at = lr if lr is not None else base.trainer.lr
    by_p = protocol.dropout_jobs(enc, base.table.protocol, at)
    finals = protocol.final_jobs(enc, base.table.protocol, at, dropout.p if dropout else None)
    finals_known = lr is not None and (not by_p or dropout is not None)
    return (len(jobs) + len(by_p) + len(finals),
            [*jobs, *(by_p if lr is not None else []), *(finals if finals_known else [])])


def started_runs(experiment: str, unfinished: list[protocol.Job], extra: list[str]) -> int:
    """How many of the ``unfinished`` jobs were interrupted with their progress saved (a run folder
    with a checkpoint): they resume where they stopped, so --plan says so."""
    return sum(1 for j in unfinished if (run_dir(job_config(experiment, j, extra)) / LAST).exists())
