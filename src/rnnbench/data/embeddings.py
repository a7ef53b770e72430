"""Pre-trained word vectors (GloVe text format) aligned to a vocabulary, cached.

Reads any GloVe text file: ``.txt``, ``.txt.gz`` or the official ``.zip``
(its single ``.txt`` member). Words missing from the file get small random
vectors (seeded); padding is zero.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import os
import zipfile
from pathlib import Path
from typing import Iterator

import torch
from tqdm import tqdm

from rnnbench.errors import DataFormatError, RnnbenchError

GLOVE_SOURCE = "https://nlp.stanford.edu/projects/glove/"


def _open_text(path: Path) -> io.TextIOBase:
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", errors="replace")
    if path.suffix == ".zip":
        archive = zipfile.ZipFile(path)
        members = [m for m in archive.namelist() if m.endswith(".txt")]
        if len(members) != 1:
            raise DataFormatError(path, None, f"expected one .txt member in the zip, found {members}")
        return io.TextIOWrapper(archive.open(members[0]), encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def iter_glove(path: Path, dim: int) -> Iterator[tuple[int, str, list[str]]]:
    """(line number, word, value strings). Words may contain spaces (840B), so split from the right."""
    with _open_text(path) as handle:
        for number, line in enumerate(handle, start=1):
            parts = line.rstrip("\n").rstrip(" ").split(" ")
            if len(parts) < dim + 1:
                raise DataFormatError(path, number, f"expected a word and {dim} numbers, got {len(parts)} fields")
            yield number, " ".join(parts[:-dim]), parts[-dim:]


def load_vectors(path: str | Path, itos: list[str], dim: int, lowercase: bool, cache_dir: str | Path, seed: int = 0) -> tuple[torch.Tensor, int]:
    """Matrix [len(itos), dim] for the vocabulary, and how many words were found in the file."""
    path = Path(path)
    if not path.exists():
        raise RnnbenchError(
            f"embedding file {path} not found (set RNNBENCH_DATA, or embedding.path, or use embedding=random); "
            f"GloVe files: {GLOVE_SOURCE}"
        )
    stat = path.stat()
    key = hashlib.sha256(repr((str(path.resolve()), stat.st_size, int(stat.st_mtime), dim, lowercase, seed, itos)).encode()).hexdigest()[:16]
    cached = Path(cache_dir) / "embeddings" / f"{path.name}.{key}.pt"
    if cached.exists():
        saved = torch.load(cached)
        return saved["vectors"], saved["found"]
    g = torch.Generator().manual_seed(seed)
    vectors = torch.randn(len(itos), dim, generator=g) * 0.1
    vectors[0] = 0.0
    index = {w: i for i, w in enumerate(itos)}
    found = set()
    for number, word, values in tqdm(iter_glove(path, dim), desc=f"reading {path.name}", unit=" words", mininterval=2):
        if lowercase:
            # A cased file read for a lower-cased vocab: keep the first (most frequent) casing.
            word = word.lower()
        i = index.get(word)
        if i is None or i in found:
            continue
        try:
            vectors[i] = torch.tensor([float(v) for v in values])
        except ValueError:
            raise DataFormatError(path, number, "a vector value is not a number") from None
        found.add(i)
    cached.parent.mkdir(parents=True, exist_ok=True)
    tmp = cached.with_suffix(f".tmp{os.getpid()}")
    torch.save({"vectors": vectors, "found": len(found)}, tmp)
    os.replace(tmp, cached)
    return vectors, len(found)
