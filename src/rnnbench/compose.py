"""Compose the project's Hydra config outside of train.py (tests, scripts, tables)."""
from __future__ import annotations

import copy

from hydra import compose, initialize_config_dir
from hydra._internal.config_loader_impl import ConfigLoaderImpl
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import DictConfig, open_dict

from rnnbench import compose_cache
from rnnbench.conf_dir import conf_dir
from rnnbench.config import check_components  # importing it registers the structured-config schema

CONF_DIR = conf_dir()  # the package's configs (a wheel) or the checkout's conf/


# Each composition once per process (a table's jobs, its sanity rows and its deviations compose the same
# experiments again and again; a composition takes a third of a second), and once for every process with
# the same configs and code (rnnbench.compose_cache, on disk). Interpolations (the data
# folder's RNNBENCH_DATA) stay unresolved in a config, so a later environment still applies.
_COMPOSED: dict[tuple, DictConfig] = {}
# The sweep of each composition (Hydra's ``hydra.sweeper.params``), kept from the same composition.
_SWEEPS: dict[tuple, dict[str, str]] = {}


def compose_config(overrides: list[str] | None = None, config_name: str = "config", return_hydra_config: bool = False) -> DictConfig:
    """The composed config, a copy the caller may change; an encoder or head option no class takes,
    or of the wrong type or value for its class, is one ConfigError line here (a table's runs fail
    before any starts)."""
    overrides = list(overrides or [])
    if return_hydra_config:  # Hydra's node records the process's state (its working directory): never reused
        return _compose(overrides, config_name, True)
    rest, folders = _split_folders(overrides)
    cfg = copy.deepcopy(_COMPOSED[_composed(rest, config_name)])
    if folders:  # Hydra's own step for value overrides (hydra-core is pinned to 1.3): the same parsing and errors
        ConfigLoaderImpl._apply_overrides_to_config(OverridesParser.create().parse_overrides(folders), cfg)
    return cfg


def _split_folders(overrides: list[str]) -> tuple[list[str], list[str]]:
    """(the other overrides, those that change a folder: ``paths.<key>=<value>``). A value override is
    applied after the composition, as Hydra applies it; the folders' are applied to a copy of the
    composition of the others, so an experiment is composed once whatever folders its callers name
    (every test names its own)."""
    folders = [o for o in overrides if o.startswith("paths.")]
    return [o for o in overrides if not o.startswith("paths.")], folders


def sweeper_params(overrides: list[str] | None = None, config_name: str = "config") -> dict[str, str]:
    """The composition's sweep, ``hydra.sweeper.params`` ({key: its comma-separated values}); a folder's
    override cannot change it (the sweep is Hydra's node, which a value override of ``paths`` leaves)."""
    return dict(_SWEEPS[_composed(_split_folders(list(overrides or []))[0], config_name)])


def _composed(overrides: list[str], config_name: str) -> tuple:
    """The composition's cache key, composed once: with Hydra's node, whose sweep is kept, then
    without it, as Hydra's ``compose`` removes it when not asked for it."""
    key = (tuple(overrides), config_name)
    if key not in _COMPOSED:
        entry = compose_cache.entry(CONF_DIR, overrides, config_name)
        kept = compose_cache.load(entry)  # another process's, the same inputs
        if kept is None:
            cfg = _compose(overrides, config_name, True)
            params = cfg.hydra.sweeper.get("params") or {}
            sweep = {str(k): str(v) for k, v in params.items()}
            with open_dict(cfg):
                del cfg["hydra"]
            compose_cache.store(entry, (cfg, sweep))
        else:
            cfg, sweep = kept
        _COMPOSED[key], _SWEEPS[key] = cfg, sweep
    return key


def initialize_hydra() -> None:
    """Hydra initialised on the package's configs, once per process (the slow part: then compose many
    times). compose_config does it when it composes; a caller of Hydra's own ``compose`` calls it
    first (a composition read from disk initialises nothing)."""
    if not GlobalHydra.instance().is_initialized():
        initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3")


def _compose(overrides: list[str], config_name: str, return_hydra_config: bool) -> DictConfig:
    initialize_hydra()
    cfg = compose(config_name=config_name, overrides=overrides, return_hydra_config=return_hydra_config)
    # Not strict: a composed config may be the base of a sweep (an experiment's encoder block holds
    # options for each encoder of its sweep); a run of it is checked strictly (config.validate).
    check_components(cfg, strict=False)
    return cfg
