"""Train and evaluate one encoder on one task: `python train.py encoder=rcrn task=sst5`.

Sweeps: `python train.py -m encoder=bilstm,3l_bilstm task=trec seed=1,2,3`
(add `hydra/launcher=joblib` to run jobs in parallel). Finished runs are skipped,
interrupted ones resume from their last checkpoint, runs locked by another process are
skipped, and a failed job never stops the others: the sweep ends with a summary and
exits with status 1 if a job failed.

A bad input is one line on stderr (`error: ...`) and exit status 2; Ctrl-C or SIGTERM
saves a checkpoint and exits with status 130.
"""
from __future__ import annotations

import sys
import traceback

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig

import rnnbench.config  # noqa: F401  (registers the structured-config schema)
from rnnbench import sweep
from rnnbench.cli import one_line_hydra_errors
from rnnbench.errors import RnnbenchError, RunInProgress, RunInterrupted
from rnnbench.run import train_outcome


def _multirun() -> bool:
    try:
        return HydraConfig.get().mode == RunMode.MULTIRUN
    except ValueError:  # called outside Hydra
        return False


@hydra.main(config_path="conf", config_name="config", version_base="1.3")
def main(cfg: DictConfig) -> float | None:
    multirun = _multirun()
    try:
        outcome, record = train_outcome(cfg)
    except RunInterrupted as exc:  # Ctrl-C stops a whole sweep
        print(f"{exc}", file=sys.stderr, flush=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:  # before the run folder existed (validating, hashing the data)
        print("interrupted before training started; run the same command to start again", file=sys.stderr, flush=True)
        sys.exit(RunInterrupted.exit_code)
    except RunInProgress as exc:
        print(f"skipped: {exc}" if multirun else f"error: {exc}", file=sys.stderr, flush=True)
        if not multirun:
            sys.exit(exc.exit_code)
        sweep.report("locked", str(exc))
        return None
    except RnnbenchError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        if not multirun:
            sys.exit(exc.exit_code)
        sweep.report("failed", str(exc))
        return None
    except Exception as exc:  # a bug: its traceback, but in a sweep the other jobs go on
        if not multirun:
            raise
        traceback.print_exc()
        sweep.report("failed", f"{type(exc).__name__}: {exc}")
        return None
    sweep.report(outcome)
    return record["test"][cfg.task.select_metric]


if __name__ == "__main__":
    one_line_hydra_errors()
    main()
