"""Optional metric loggers: none, csv (metrics.csv in the run folder, one row per step and
metric), tensorboard (event files in the run folder), wandb (offline by default).

The loop logs each epoch's entry (train and dev losses, dev metrics) and the test
metrics at the global step reached, and ``train_loss_step`` every
``logger.log_every_n_steps`` steps. A resumed run logs the steps between its last
checkpoint and the interruption again (the csv file then holds both rows).
"""
from __future__ import annotations

import csv
import os
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from rnnbench.errors import ConfigError


class NullLogger:
    def log(self, metrics: dict, step: int) -> None:
        pass

    def finish(self) -> None:
        pass


class CsvLogger(NullLogger):
    """Long format (step, name, value): epochs and the final test log different keys."""

    def __init__(self, path: Path):
        self.path = path

    def log(self, metrics: dict, step: int) -> None:
        new = not self.path.exists()
        with open(self.path, "a", newline="") as handle:
            writer = csv.writer(handle)
            if new:
                writer.writerow(["step", "name", "value"])
            writer.writerows([step, name, value] for name, value in metrics.items())


def _scalars(metrics: dict) -> dict[str, float]:
    """The numeric entries (bools and strings left out): what a scalar dashboard can plot."""
    return {k: float(v) for k, v in metrics.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


class TensorBoardLogger(NullLogger):
    """Event files in the run folder: ``tensorboard --logdir runs`` shows every run by its folder."""

    def __init__(self, run_dir: Path):
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError:  # torch's writer needs the tensorboard package
            raise ConfigError("logger=tensorboard needs the tensorboard package: pip install 'rnnbench[tensorboard]' (or pip install tensorboard)") from None
        self.writer = SummaryWriter(log_dir=str(run_dir))

    def log(self, metrics: dict, step: int) -> None:
        for name, value in _scalars(metrics).items():
            self.writer.add_scalar(name, value, global_step=step)
        self.writer.flush()

    def finish(self) -> None:
        self.writer.close()


class WandbLogger(NullLogger):
    def __init__(self, cfg: DictConfig, run_dir: Path, name: str):
        import wandb

        os.environ.setdefault("WANDB_MODE", cfg.logger.mode)
        self.run = wandb.init(project=cfg.logger.project, name=name, dir=str(run_dir), config=OmegaConf.to_container(cfg, resolve=True), reinit=True)

    def log(self, metrics: dict, step: int) -> None:
        self.run.log(metrics, step=step)

    def finish(self) -> None:
        self.run.finish()


def make_logger(cfg: DictConfig, run_dir: Path, name: str):
    kind = cfg.logger.kind
    if kind == "none":
        return NullLogger()
    if kind == "csv":
        return CsvLogger(run_dir / "metrics.csv")
    if kind == "tensorboard":
        return TensorBoardLogger(run_dir)
    if kind == "wandb":
        return WandbLogger(cfg, run_dir, name)
    raise ConfigError(f"logger.kind must be none, csv, tensorboard or wandb; got {kind!r}")
