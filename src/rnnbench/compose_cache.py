"""Compositions kept on disk, so that every process composing the same experiment reads one.

A table, its tests and each command compose the same experiments again in each process (a test
suite's workers, every ``rnnbench`` command), about a third of a second each. A composition depends
only on the config files, the code (the structured schema, the options each class takes, the
checks), the Hydra and OmegaConf versions and the overrides: the key is a digest of all of them,
so a changed file or a new version is a new key, never a stale config. Interpolations stay
unresolved in a kept composition, as in one just composed, so the environment still applies where
they are read. Experiments defined in memory (``rnnbench compare``'s, in Hydra's ConfigStore) are
outside the files: their content is part of the key too.

Where: ``${RNNBENCH_CACHE:-.cache/rnnbench}/compositions/<inputs digest>/``, the folders of the
``KEEP`` most recent digests kept (each edit of a config or of the code starts a new one). A damaged
or unreadable entry is composed again; one that cannot be written only costs composing again next time.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import pickle
import shutil
import sys
from pathlib import Path

import hydra
import omegaconf
from hydra.core.config_store import ConfigStore
from omegaconf import OmegaConf

PACKAGE_DIR = Path(__file__).resolve().parent
SUFFIXES = (".py", ".yaml")
KEEP = 8  # digests' folders kept: a few checkouts or versions in use at once


def folder() -> Path:
    return Path(os.environ.get("RNNBENCH_CACHE", ".cache/rnnbench")) / "compositions"


def inputs_digest(conf_dir: Path, package_dir: Path = PACKAGE_DIR) -> str:
    """A digest of everything a composition is made from but its overrides: the versions, every
    config file and every source file of the package."""
    digest = hashlib.sha256(f"{sys.version}|{hydra.__version__}|{omegaconf.__version__}".encode())
    for root in (conf_dir, package_dir):
        for path in sorted(p for p in root.rglob("*") if p.suffix in SUFFIXES and p.is_file()):
            digest.update(f"\0{path.relative_to(root)}\0".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


@functools.cache
def _inputs_digest_once(conf_dir: Path) -> str:
    # Once per process, as the process's own memo of compositions (rnnbench.compose) is.
    return inputs_digest(conf_dir)


def _in_memory(node) -> list:
    """The experiments defined in memory under ``node`` of the ConfigStore, as text (name, package, YAML)."""
    if isinstance(node, dict):
        return [item for name in sorted(node) for item in _in_memory(node[name])]
    return [[node.name, node.package, OmegaConf.to_yaml(node.node)]]


def entry(conf_dir: Path, overrides: list[str], config_name: str) -> Path:
    """Where this composition is kept."""
    key = json.dumps([config_name, overrides, _in_memory(ConfigStore.instance().repo.get("experiment", {}))])
    return folder() / _inputs_digest_once(conf_dir) / f"{hashlib.sha256(key.encode()).hexdigest()}.pkl"


def _prune(current: Path) -> None:
    """Remove all but the ``KEEP`` most recently written digests' folders (``current`` stays)."""
    try:
        others = sorted((d for d in current.parent.iterdir() if d.is_dir() and d != current),
                        key=lambda d: d.stat().st_mtime, reverse=True)
    except OSError:
        return
    for old in others[KEEP - 1:]:
        shutil.rmtree(old, ignore_errors=True)  # a process still reading it composes again


def load(path: Path):
    """The (config, sweep) kept at ``path`` (an ``entry``), or None."""
    try:
        with open(path, "rb") as handle:
            return pickle.load(handle)
    except Exception:  # absent, damaged or from elsewhere: compose it again
        return None


def store(path: Path, kept) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        if not path.parent.is_dir():  # a new digest: the first composition kept for these inputs
            path.parent.mkdir(parents=True, exist_ok=True)
            _prune(path.parent)
        tmp.write_bytes(pickle.dumps(kept))
        os.replace(tmp, path)  # whole or not at all: another process may be reading it
    except OSError:
        tmp.unlink(missing_ok=True)
