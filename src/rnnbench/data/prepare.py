"""From a task config to numericalised splits, vocabulary and embedding matrix.

Parsed corpora are cached as Arrow files (``datasets``) keyed by the reader's
class, options and input files, so a second run skips parsing.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

import torch
from filelock import FileLock
from hydra.utils import get_class
from omegaconf import DictConfig, OmegaConf

from rnnbench.data.base import Reader, Splits
from rnnbench.data.batching import numericalise
from rnnbench.data.embeddings import load_vectors
from rnnbench.data.vocab import UNK, CharVocab, Vocab, text_fields
from rnnbench.errors import ConfigError, EmbeddingError


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
    reader.check_available(data_dir)  # a missing dataset fails here, before the imports and locks below
    if not reader.input_paths(data_dir):  # generated data (picking): nothing to cache (IMDb lists its files by layout)
        return reader.load(data_dir)
    try:
        import datasets
    except ImportError:  # the cache is only a speed-up: without the package, read the files every time
        return reader.load(data_dir)

    datasets.disable_progress_bars()
    cache = Path(cache_dir) / "records" / f"{reader.name}-{_cache_key(reader, data_dir)}"
    if (cache / "complete").exists():
        return _read_cache(cache)
    # Processes preparing the same corpus at once: one builds, the others wait and read it.
    cache.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(cache) + ".lock"):
        if (cache / "complete").exists():
            return _read_cache(cache)
        splits = reader.load(data_dir)
        dd = datasets.DatasetDict({name: datasets.Dataset.from_list(records) for name, records in splits.items()})
        tmp = cache.with_name(f".{cache.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")
        try:
            dd.save_to_disk(str(tmp))
            if cache.exists():  # a build that died before "complete"
                shutil.rmtree(cache)
            tmp.rename(cache)
            (cache / "complete").touch()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return splits


def _read_cache(cache: Path) -> Splits:
    import datasets

    loaded = datasets.load_from_disk(str(cache))
    return {name: loaded[name].to_list() for name in loaded}


def empty_split_error(task: str, reader: Reader, data_dir: Path, split: str) -> ConfigError:
    """Name the file to look at: an empty input first, else every input of the reader."""
    paths = reader.input_paths(data_dir) if reader.files else []
    empty = [p for p in paths if p.is_file() and p.stat().st_size == 0]
    if empty:
        where = f"{', '.join(map(str, empty))} {'is' if len(empty) == 1 else 'are'} empty"
    elif paths:
        where = f"read from {', '.join(map(str, paths))}"
    else:
        where = "generated (check task.reader's sizes)"
    return ConfigError(f"task {task!r}: no {split!r} examples ({where}); check that file or download it again")


def check_coverage(path, found: int, vocab_size: int, min_coverage: float) -> None:
    """Refuse embeddings that cover less than ``min_coverage`` of the vocabulary (specials excluded)."""
    words = max(vocab_size - 2, 1)
    coverage = found / words
    if coverage < min_coverage:
        raise EmbeddingError(
            f"embedding file {path} covers {found} of {words} vocabulary words ({coverage:.1%}), below "
            f"embedding.min_coverage={min_coverage}: check the file (its width, casing: embedding.lowercase, language), "
            "or set embedding.min_coverage=0 to train with random vectors for the missing words"
        )


def without_empty_texts(raw: Splits, fields: list[str]) -> Splits:
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
            raise empty_split_error(cfg.task.name, reader, Path(cfg.paths.data_dir), split)
    fields = text_fields(raw["train"][0], tuple(getattr(reader, "raw_fields", ())))
    raw = without_empty_texts(raw, fields)
    emb = cfg.embedding
    vocab = Vocab.build(raw["train"], fields, lowercase=emb.lowercase, min_freq=cfg.task.get("min_freq", 1))
    char = emb.get("char")
    if char is not None and str(char.get("kind", "none")) != "none":
        # Characters of the training split, cased (the word vocabulary may be lower-cased for GloVe).
        vocab.chars = CharVocab.build(raw["train"], fields, int(char.max_word_length))
    vectors, found = None, None
    if emb.kind == "glove":
        vectors, found = load_vectors(emb.path, vocab.itos, emb.dim, emb.lowercase, cfg.paths.cache_dir)
        check_coverage(emb.path, found, len(vocab), emb.get("min_coverage", 0.5))
    elif emb.kind != "random":
        raise ConfigError(f"embedding.kind must be 'glove' or 'random', got {emb.kind!r}")
    splits = {name: numericalise(records, vocab, fields) for name, records in raw.items()}
    return TaskData(splits, raw, vocab, vectors, list(reader.label_names), fields, found)
