"""``rnnbench train [OVERRIDE ...]`` and ``python train.py``: train one run, or a sweep with ``-m``.

The Hydra application both commands run. Finished runs are skipped, interrupted ones
resume from their last checkpoint, runs locked by another process are skipped, and a
failed job never stops the others: a sweep ends with a summary and exits with status 1
if a job failed. A bad input is one line on stderr (``error: ...``) and exit status 2;
Ctrl-C or SIGTERM saves a checkpoint and exits with status 130.
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
from rnnbench.conf_dir import conf_dir
from rnnbench.errors import RnnbenchError, RunInProgress, RunInterrupted

USAGE = "rnnbench train [OVERRIDE ...] [-m] [--cfg job] [--hydra-help]"
HELP = """Train one encoder on one task (a run), or every combination of comma-separated values with -m
(a sweep). Exactly what `python train.py` does; the arguments are Hydra overrides.

  rnnbench train                                       a BiLSTM on the synthetic picking task (the default)
  rnnbench train encoder=rcrn task=trec                another encoder and task (RNNBENCH_DATA: the data folder)
  rnnbench train encoder=rcrn task=trec trainer=smoke  a few batches: checks that the config runs end to end
  rnnbench train -m encoder=bilstm,rcrn task=trec seed=1,2,3
                                                       a sweep; add hydra/launcher=joblib to run jobs in parallel
  rnnbench train experiment=rcrn_table5 encoder=rcrn   one run of a paper table's experiment

The run folder is runs/<task>/<encoder>/s<seed>-<identity> (RNNBENCH_RUNS moves runs/); the same
command again skips a finished run and resumes an interrupted one. Config groups (`rnnbench list
encoders` and `rnnbench list tasks` describe their options): encoder, task, embedding, trainer
(default, smoke), logger (none, csv, tensorboard, wandb), experiment.

Hydra's own options: --cfg job (print the composed config: every key), -m/--multirun (a sweep),
--info, --hydra-help. docs/cli.md and docs/configuration.md say more."""


def add_parser(verbs, verb: str, summary: str) -> None:
    """Listed in `rnnbench --help`; its arguments never reach argparse (``run_hydra`` takes them)."""
    verbs.add_parser(verb, help=summary, usage=USAGE, description=HELP, add_help=False)


def _multirun() -> bool:
    try:
        return HydraConfig.get().mode == RunMode.MULTIRUN
    except ValueError:  # called outside Hydra
        return False


@hydra.main(config_path=str(conf_dir()), config_name="config", version_base="1.3")
def main(cfg: DictConfig) -> float | None:
    multirun = _multirun()
    try:
        from rnnbench.run import train_outcome  # torch: imported when a run starts, not for `rnnbench --help`

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


def run_hydra(argv: list[str], prog: str = "rnnbench train") -> int:
    """Run the Hydra application on ``argv`` (Hydra reads sys.argv) with one-line config errors."""
    if any(a in ("-h", "--help") for a in argv):
        print(f"usage: {USAGE.replace('rnnbench train', prog)}\n\n{HELP}")
        return 0
    one_line_hydra_errors()
    sys.argv = [prog, *argv]
    main()
    return 0
