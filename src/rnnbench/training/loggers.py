"""Optional metric loggers: none, csv (metrics.csv in the run folder, one row per step and metric), wandb (offline by default)."""
from __future__ import annotations

import csv
import os
from pathlib import Path

from omegaconf import DictConfig, OmegaConf


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
    if kind == "wandb":
        return WandbLogger(cfg, run_dir, name)
    raise ValueError(f"logger.kind must be none, csv or wandb; got {kind!r}")
