"""Compose the project's Hydra config outside of train.py (tests, scripts, tables)."""
from __future__ import annotations

import copy

from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import DictConfig

from rnnbench.conf_dir import conf_dir
from rnnbench.config import check_components  # importing it registers the structured-config schema

CONF_DIR = conf_dir()  # the package's configs (a wheel) or the checkout's conf/


# Each composition once per process (a table's jobs, its sanity rows and its deviations compose the same
# experiments again and again; a composition takes a fifth of a second). Interpolations (the data
# folder's RNNBENCH_DATA) stay unresolved in a config, so a later environment still applies.
_COMPOSED: dict[tuple, DictConfig] = {}


def compose_config(overrides: list[str] | None = None, config_name: str = "config", return_hydra_config: bool = False) -> DictConfig:
    """The composed config, a copy the caller may change; an encoder or head option no class takes,
    or of the wrong type or value for its class, is one ConfigError line here (a table's runs fail
    before any starts)."""
    overrides = list(overrides or [])
    if return_hydra_config:  # Hydra's node records the process's state (its working directory): never reused
        return _compose(overrides, config_name, True)
    key = (tuple(overrides), config_name)
    if key not in _COMPOSED:
        _COMPOSED[key] = _compose(overrides, config_name, False)
    return copy.deepcopy(_COMPOSED[key])


def _compose(overrides: list[str], config_name: str, return_hydra_config: bool) -> DictConfig:
    # Initialising Hydra is the slow part: do it once per process, then compose many times.
    if not GlobalHydra.instance().is_initialized():
        initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3")
    cfg = compose(config_name=config_name, overrides=overrides, return_hydra_config=return_hydra_config)
    # Not strict: a composed config may be the base of a sweep (an experiment's encoder block holds
    # options for each encoder of its sweep); a run of it is checked strictly (config.validate).
    check_components(cfg, strict=False)
    return cfg
