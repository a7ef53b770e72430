"""Run identity: what a run computes from, hashed. Two runs share a folder only when
they would produce the same numbers.

The identity covers three things:
- the resolved config, minus keys that do not change the result (``EXCLUDED``) and
  minus options added later at the value that reproduces earlier results
  (``NEUTRAL_DEFAULTS``, so adding an option does not invalidate finished runs);
- the version of every component the run uses (``component_versions``): the
  encoder, head and reader classes' ``version`` attribute and the training
  pipeline's ``rnnbench.versions.TRAINING``. A change that alters a component's
  results bumps its version, which moves every affected run to a new folder;
- a fingerprint of the data actually read (``data_fingerprint``): the content
  hash of each dataset and embedding file, so a run on a truncated copy is never
  returned for the full data.
"""
from __future__ import annotations

import copy
import hashlib
import json
import os
from pathlib import Path

from filelock import FileLock
from hydra.utils import get_class
from omegaconf import DictConfig, OmegaConf

from rnnbench import versions

# Output locations, logging, progress display, device choice, checkpoint frequency and
# the table a run is filed under do not change what a run computes. The thread count
# does (float sums are ordered differently), so it is part of the identity.
EXCLUDED = {
    ("paths",),
    ("logger",),
    ("experiment",),
    ("table",),
    ("trainer", "progress"),
    ("trainer", "device"),
    ("trainer", "checkpoint_every"),
    ("embedding", "min_coverage"),  # a gate, not a setting: every run that passes it computes the same
    ("hydra",),
}

# Options added after runs were made, with the value that reproduces those runs: at that
# value the key is left out of the identity. Register every new result-neutral option here.
NEUTRAL_DEFAULTS: dict[tuple[str, ...], object] = {
    ("trainer", "kernel_impl"): "auto",
    ("trainer", "precision"): "32",  # float32, as every run before mixed precision
    ("trainer", "start_below_prior"): None,  # patience counts from the dev score alone, as before the option
    ("task", "head", "readout"): "pool",  # the classifier's pooling readout, as before the option existed
    ("encoder", "sparsity_penalty"): "loss",  # FHE: the differentiable penalty every earlier run used
    ("encoder", "penalty_from_dev_accuracy"): None,  # FHE: the penalty from the start (no Table 3 schedule)
    ("task", "head", "one_hot_input"): False,  # picking head: learned embeddings, as before the option existed
    ("encoder", "directions_meet"): "every_layer",  # LSTM family: directions joined at every layer, as nn.LSTM does
    ("encoder", "layer_norm"): "candidate",  # MZU: layer norm on M_h before the tanh, the only placement before the option
    ("task", "reader", "dev_split_by"): "pair",  # SciTail from its dev file: dev pairs drawn one by one, as first run
    ("encoder", "gate_layer_norm"): False,  # DT-GRU: no layer norm, as before the option
    ("encoder", "candidate_dropout"): 0.0,  # DT-GRU: no dropout, as before the option
    # No character-level word encoder (config.CharConf's defaults): the whole block is left out, so a
    # run with one has every one of its settings in its identity, and its CharEncoder version too.
    ("embedding", "char"): {"kind": "none", "dim": 30, "hidden": 25, "filters": 30, "widths": [3],
                            "max_word_length": 20, "dropout": 0.0},
}

# The config groups whose ``_target_`` class carries a ``version``.
VERSIONED = {"encoder": ("encoder",), "head": ("task", "head"), "reader": ("task", "reader")}


def _drop(resolved: dict, path: tuple[str, ...], only_if=None, check: bool = False) -> None:
    node = resolved
    for key in path[:-1]:
        node = node.get(key, {}) if isinstance(node, dict) else {}
    if isinstance(node, dict) and path[-1] in node and (not check or node[path[-1]] == only_if):
        node.pop(path[-1])


# identity_config of each config seen, by its unresolved content less its paths: a table asks for the
# identity of the same few configs hundreds of times, and copying a config to resolve it is the slow
# part. The paths, the only values read from the environment, are placeholders in the result, so the
# rest of the content decides it (whatever folders a caller names).
_IDENTITY_CONFIGS: dict[str, dict] = {}


def identity_config(cfg: DictConfig) -> dict:
    """The resolved config that identifies a run. Paths are replaced by placeholders
    before resolving, so values built from them (embedding.path is
    ``${paths.data_dir}/glove/...``) do not depend on where the data lives."""
    content = OmegaConf.to_container(cfg, resolve=False)
    content.pop("paths", None)
    key = json.dumps(content, sort_keys=True, default=str)
    if key not in _IDENTITY_CONFIGS:
        _IDENTITY_CONFIGS[key] = _resolved_identity_config(cfg)
    return copy.deepcopy(_IDENTITY_CONFIGS[key])  # the caller's to change


def _resolved_identity_config(cfg: DictConfig) -> dict:
    cfg = cfg.copy()
    if "paths" in cfg:
        for key in list(cfg.paths):
            cfg.paths[key] = f"<paths.{key}>"
    resolved = OmegaConf.to_container(cfg, resolve=True)
    resolved.pop("hydra", None)
    for path in EXCLUDED:
        _drop(resolved, path)
    for path, neutral in NEUTRAL_DEFAULTS.items():
        _drop(resolved, path, neutral, check=True)
    return resolved


def component_versions(cfg: DictConfig) -> dict[str, str]:
    """{component: "<class>:<version>"} for the encoder, head and reader, plus the training pipeline
    and, when the run has one, the character-level word encoder."""
    out = {"training": str(versions.TRAINING)}
    for name, path in VERSIONED.items():
        node = cfg
        for key in path:
            node = node.get(key) if node is not None else None
        target = node.get("_target_") if node is not None else None
        if target:
            out[name] = f"{target}:{_version(get_class(target), node)}"
    char = (cfg.get("embedding") or {}).get("char") or {}
    if str(char.get("kind", "none")) != "none":  # only then: the other runs keep their identity
        from rnnbench.nn.char_encoder import CharEncoder

        out["char"] = f"{CharEncoder.__module__}.{CharEncoder.__name__}:{CharEncoder.version}"
    return out


def _version(cls, node) -> int:
    """A component's version for these options: ``version_for(options)`` where the class
    versions a fix by the options it changes (the other runs keep their identity), else
    its ``version``."""
    version_for = getattr(cls, "version_for", None)
    if version_for is None:
        return getattr(cls, "version", 1)
    return version_for(OmegaConf.to_container(node, resolve=True) if isinstance(node, DictConfig) else dict(node))


def _digest_key(path: Path) -> str:
    st = path.stat()
    return f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _file_digest(path: Path, cache: dict) -> str:
    """sha256 of a file's bytes, remembered per (path, size, mtime) so it is read once."""
    key = _digest_key(path)
    if key not in cache:
        cache[key] = file_sha256(path)
    return cache[key]


def _path_digest(path: Path, cache: dict) -> str:
    if path.is_dir():  # a folder of files (aclImdb, RACE's original layout): the digest of its listing and contents
        parts = [f"{p.relative_to(path)}:{_file_digest(p, cache)}" for p in sorted(path.rglob("*")) if p.is_file()]
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()
    if path.exists():
        return _file_digest(path, cache)
    return "missing"


def data_inputs(cfg: DictConfig) -> tuple[dict[str, Path], str | None]:
    """({name: path} of every file a run reads: the task's dataset files and the embeddings,
    the reader's hub copy, which it reads instead when its files are absent)."""
    from rnnbench.data.prepare import build_reader  # data knows nothing of results; this import stays local

    root = Path(str(cfg.paths.data_dir))
    reader = build_reader(cfg.task.reader)
    inputs = {}
    for path in reader.input_paths(root):
        try:
            inputs[str(path.relative_to(root))] = path
        except ValueError:
            inputs[str(path)] = path
    if cfg.embedding.get("kind") == "glove" and cfg.embedding.get("path"):
        inputs["embedding"] = Path(str(cfg.embedding.path))
    return inputs, getattr(reader, "hub_id", None)


def data_fingerprint(cfg: DictConfig) -> dict[str, str]:
    """{input name: sha256 of its content} ("missing" for an absent file); cached under paths.cache_dir."""
    cache_file = Path(str(cfg.paths.cache_dir)) / "fingerprints.json"
    cache: dict = {}
    if cache_file.exists():
        try:
            cache = json.loads(cache_file.read_text())
        except (OSError, ValueError):
            cache = {}  # a damaged cache is only a cache: rebuild it
    known = len(cache)
    inputs, hub = data_inputs(cfg)
    out = {name: _path_digest(path, cache) for name, path in inputs.items()}
    if hub and any(v == "missing" for k, v in out.items() if k != "embedding"):
        out["hub"] = hub  # the files are absent: the run reads the hub copy (Reader.load), named here
    if len(cache) != known:
        try:
            _merge_into(cache_file, cache)
        except (OSError, ValueError):
            pass  # an unwritable cache only costs re-hashing next time
    return out


def _merge_into(cache_file: Path, entries: dict) -> None:
    cache_file.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(cache_file) + ".lock"):
        merged = json.loads(cache_file.read_text()) if cache_file.exists() else {}
        merged.update(entries)
        tmp = cache_file.with_name(f".{cache_file.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(merged))
        os.replace(tmp, cache_file)


def record_file_digest(path: Path, digest: str, cache_dir: str | Path) -> None:
    """Make ``data_fingerprint`` report ``digest`` for the file now at ``path`` (until it changes).

    Only for a file that stands for another exactly: scripts/embedding_subset.py registers a GloVe
    subset under the full file's digest after checking that every checked experiment's embedding
    matrix is the same from both, so a run reading the subset keeps the full file's identity."""
    _merge_into(Path(cache_dir) / "fingerprints.json", {_digest_key(path): digest})


def identity_parts(cfg: DictConfig) -> dict:
    parts = {"config": identity_config(cfg), "versions": component_versions(cfg), "data": data_fingerprint(cfg)}
    world_size = int(os.environ.get("WORLD_SIZE", "1"))  # torchrun: ranks split each batch, so float sums differ
    if world_size > 1:
        parts["world_size"] = world_size
    return parts


def run_identity(cfg: DictConfig) -> str:
    blob = json.dumps(identity_parts(cfg), sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def run_dir(cfg: DictConfig, identity: str | None = None) -> Path:
    """runs/<task>/<encoder>/s<seed>-<identity prefix>: readable, and unique by identity
    (``identity``: the run's, when the caller has computed it)."""
    ident = identity or run_identity(cfg)
    return Path(cfg.paths.runs_dir) / str(cfg.task.name) / str(cfg.encoder.name) / f"s{cfg.seed}-{ident[:12]}"
