"""Optional metric loggers: none, csv (metrics.csv in the run folder, one row per step and
metric), tensorboard (event files in the run folder), wandb (offline by default).

The loop logs each epoch's entry (train and dev losses, dev metrics) and the test
metrics at the global step reached (TensorBoard also gets the run's hyperparameters beside
those final metrics, in its HParams view), and ``train_loss_step`` every
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


def hyperparameters(cfg: DictConfig) -> dict[str, float | int | str | bool]:
    """The run's resolved config as flat ``section.key`` entries that TensorBoard's HParams view
    can show (numbers, strings and booleans; lists and None as text; paths left out)."""
    flat: dict = {}

    def walk(prefix: str, node) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                walk(f"{prefix}.{key}" if prefix else str(key), value)
        elif isinstance(node, bool) or isinstance(node, (int, float)):
            flat[prefix] = node
        else:
            flat[prefix] = str(node)

    config = OmegaConf.to_container(cfg, resolve=True, enum_to_str=True) if isinstance(cfg, DictConfig) else dict(cfg)
    config.pop("paths", None)
    config.pop("hydra", None)
    walk("", config)
    return flat


class TensorBoardLogger(NullLogger):
    """Event files in the run folder: ``tensorboard --logdir runs`` shows every run by its folder.

    At the end of the run the HParams view gets the run's hyperparameters (``hyperparameters``)
    with its final metrics: the ``test_*`` scalars logged last."""

    def __init__(self, run_dir: Path, cfg: DictConfig | None = None):
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError:  # torch's writer needs the tensorboard package
            raise ConfigError("logger=tensorboard needs the tensorboard package: pip install 'rnnbench[tensorboard]' (or pip install tensorboard)") from None
        self.writer = SummaryWriter(log_dir=str(run_dir))
        self.hparams = hyperparameters(cfg) if cfg is not None else {}
        self.final: dict[str, float] = {}

    def log(self, metrics: dict, step: int) -> None:
        for name, value in _scalars(metrics).items():
            self.writer.add_scalar(name, value, global_step=step)
            if name.startswith("test_"):
                self.final[name] = value
        self.writer.flush()

    def finish(self) -> None:
        if self.hparams and self.final:
            from torch.utils.tensorboard.summary import hparams

            # Written into the run's own event file: the HParams view reads each metric's
            # value from the scalar of the same tag logged above (add_hparams would open a
            # second run folder and log those scalars twice).
            writer = self.writer._get_file_writer()
            for summary in hparams(self.hparams, self.final):
                writer.add_summary(summary)
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
        return TensorBoardLogger(run_dir, cfg)
    if kind == "wandb":
        return WandbLogger(cfg, run_dir, name)
    raise ConfigError(f"logger.kind must be none, csv, tensorboard or wandb; got {kind!r}")
