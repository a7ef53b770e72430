"""Run identity: a hash of the resolved config minus keys that do not change the result."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

# Output locations, logging, progress display, thread count, device choice and the
# table a run is filed under do not change what a run computes.
EXCLUDED = {
    ("paths",),
    ("logger",),
    ("experiment",),
    ("table",),
    ("trainer", "progress"),
    ("trainer", "num_threads"),
    ("trainer", "device"),
    ("trainer", "checkpoint_every"),
    ("hydra",),
}


def identity_config(cfg: DictConfig) -> dict:
    """The resolved config that identifies a run. Paths are replaced by placeholders
    before resolving, so values built from them (embedding.path is
    ``${paths.data_dir}/glove/...``) do not depend on where the data lives."""
    cfg = cfg.copy()
    if "paths" in cfg:
        for key in list(cfg.paths):
            cfg.paths[key] = f"<paths.{key}>"
    resolved = OmegaConf.to_container(cfg, resolve=True)
    resolved.pop("hydra", None)
    for path in EXCLUDED:
        node = resolved
        for key in path[:-1]:
            node = node.get(key, {}) if isinstance(node, dict) else {}
        if isinstance(node, dict):
            node.pop(path[-1], None)
    return resolved


def run_identity(cfg: DictConfig) -> str:
    blob = json.dumps(identity_config(cfg), sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def run_dir(cfg: DictConfig) -> Path:
    """runs/<task>/<encoder>/s<seed>-<identity prefix>: readable, and unique by identity."""
    ident = run_identity(cfg)
    return Path(cfg.paths.runs_dir) / str(cfg.task.name) / str(cfg.encoder.name) / f"s{cfg.seed}-{ident[:12]}"
