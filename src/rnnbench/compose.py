"""Compose the project's Hydra config outside of train.py (tests, scripts, tables)."""
from __future__ import annotations

from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import DictConfig

import rnnbench.config  # noqa: F401  (registers the structured-config schema)
from rnnbench.conf_dir import conf_dir

CONF_DIR = conf_dir()  # the package's configs (a wheel) or the checkout's conf/


def compose_config(overrides: list[str] | None = None, config_name: str = "config", return_hydra_config: bool = False) -> DictConfig:
    # Initialising Hydra is the slow part: do it once per process, then compose many times.
    if not GlobalHydra.instance().is_initialized():
        initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3")
    return compose(config_name=config_name, overrides=list(overrides or []), return_hydra_config=return_hydra_config)
