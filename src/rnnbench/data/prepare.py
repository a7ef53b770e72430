"""From a task config to numericalised splits, vocabulary and embedding matrix.

Parsed corpora are cached as Arrow files (``datasets``) keyed by the reader's
class, options and input files, so a second run skips parsing.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import torch
from hydra.utils import get_class
from omegaconf import DictConfig, OmegaConf

from rnnbench.data.base import Reader, Splits
from rnnbench.data.batching import numericalise
from rnnbench.data.embeddings import load_vectors
from rnnbench.data.vocab import UNK, Vocab, text_fields
from rnnbench.errors import ConfigError


@dataclass
class TaskData:
    splits: Splits  # numericalised records
    raw: Splits  # records as read (for predictions files)
    vocab: Vocab
    vectors: torch.Tensor | None  # [V, dim] pre-trained vectors, None for random init
    label_names: list[str]
    fields: list[str]  # text fields
    found_in_embeddings: int | None


def build_reader(reader_cfg: DictConfig) -> Reader:
    options = OmegaConf.to_container(reader_cfg, resolve=True)
    target = options.pop("_target_")
    cls = get_class(target)
    try:
        return cls(**options)
    except TypeError as exc:
        raise ConfigError(f"task.reader ({target}): {exc}") from None


def _cache_key(reader: Reader, data_dir: Path) -> str:
    files = []
    for p in reader.input_paths(data_dir):
        if p.exists():
            st = p.stat()
            files.append((str(p.resolve()), st.st_size, int(st.st_mtime)))
    blob = json.dumps([type(reader).__module__, type(reader).__name__, reader.options(), files], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def load_splits(reader: Reader, data_dir: str | Path, cache_dir: str | Path) -> Splits:
    """Reader output, cached as Arrow datasets for file-based readers."""
    data_dir = Path(data_dir)
    if not reader.files:  # generated data (picking): nothing to cache
        return reader.load(data_dir)
    import datasets

    datasets.disable_progress_bars()
    cache = Path(cache_dir) / "records" / f"{reader.name}-{_cache_key(reader, data_dir)}"
    if (cache / "complete").exists():
        loaded = datasets.load_from_disk(str(cache))
        return {name: loaded[name].to_list() for name in loaded}
    splits = reader.load(data_dir)
    dd = datasets.DatasetDict({name: datasets.Dataset.from_list(records) for name, records in splits.items()})
    tmp = cache.with_name(cache.name + ".tmp")
    dd.save_to_disk(str(tmp))
    if cache.exists():
        import shutil

        shutil.rmtree(cache)
    tmp.rename(cache)
    (cache / "complete").touch()
    return splits


def _without_empty_texts(raw: Splits, fields: list[str]) -> Splits:
    """Training examples with an empty text teach nothing and are dropped; dev and test
    ones are kept (every example gets a prediction) with a single unknown token."""
    out = {"train": [r for r in raw["train"] if all(r[f] for f in fields)]}
    for name, records in raw.items():
        if name != "train":
            out[name] = [r if all(r[f] for f in fields) else {**r, **{f: r[f] or [UNK] for f in fields}} for r in records]
    return out


def prepare(cfg: DictConfig) -> TaskData:
    reader = build_reader(cfg.task.reader)
    raw = load_splits(reader, cfg.paths.data_dir, cfg.paths.cache_dir)
    for split in ("train", "dev", "test"):
        if not raw.get(split):
            raise ConfigError(f"task {cfg.task.name!r}: reader {reader.name!r} gave no {split!r} records")
    fields = text_fields(raw["train"][0], tuple(getattr(reader, "raw_fields", ())))
    raw = _without_empty_texts(raw, fields)
    emb = cfg.embedding
    vocab = Vocab.build(raw["train"], fields, lowercase=emb.lowercase, min_freq=cfg.task.get("min_freq", 1))
    vectors, found = None, None
    if emb.kind == "glove":
        vectors, found = load_vectors(emb.path, vocab.itos, emb.dim, emb.lowercase, cfg.paths.cache_dir)
    elif emb.kind != "random":
        raise ConfigError(f"embedding.kind must be 'glove' or 'random', got {emb.kind!r}")
    splits = {name: numericalise(records, vocab, fields) for name, records in raw.items()}
    return TaskData(splits, raw, vocab, vectors, list(reader.label_names), fields, found)
