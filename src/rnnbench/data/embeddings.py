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

from rnnbench.data.base import DAMAGED_ARCHIVE_ERRORS, damaged_input_error
from rnnbench.errors import DataFormatError, EmbeddingError, RnnbenchError
from rnnbench.progress import progress_bar

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


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _width(parts: list[str]) -> int:
    """How many numbers end a GloVe line (its vector width)."""
    count = 0
    for part in reversed(parts[1:]):  # the first field is always (part of) the word
        if not _is_number(part):
            break
        count += 1
    return count


def iter_glove(path: Path, dim: int) -> Iterator[tuple[int, str, list[str]]]:
    """(line number, word, value strings). Words may contain spaces (840B), so split from the right.
    The first line's width must be ``dim``: a 100-d file read as 50-d would otherwise give
    words such as "the 0.418 ..." that match nothing."""
    with _open_text(path) as handle:
        for number, line in enumerate(handle, start=1):
            parts = line.rstrip("\n").rstrip(" ").split(" ")
            if number == 1 and 0 < _width(parts) != dim:
                raise DataFormatError(path, number, f"holds {_width(parts)}-dimensional vectors but embedding.dim={dim}: "
                                      f"set embedding.dim={_width(parts)} (or use a {dim}-d file)")
            if len(parts) < dim + 1:
                raise DataFormatError(path, number, f"expected a word and {dim} numbers, got {len(parts)} fields")
            yield number, " ".join(parts[:-dim]), parts[-dim:]


def read_glove(path: Path, dim: int, cache_dir: str | Path) -> tuple[list[str], torch.Tensor]:
    """All words and vectors of a GloVe file; parsed once, then cached as a tensor file."""
    stat = path.stat()
    key = hashlib.sha256(repr((str(path.resolve()), stat.st_size, int(stat.st_mtime), dim)).encode()).hexdigest()[:16]
    cached = Path(cache_dir) / "embeddings" / f"{path.name}.{key}.pt"
    if cached.exists():
        try:
            saved = torch.load(cached)
            return saved["words"], saved["vectors"]
        except Exception as exc:  # noqa: BLE001 - a damaged cache is only a cache: parse the file again
            print(f"warning: the embedding cache {cached} is damaged ({type(exc).__name__}); parsing {path} again", flush=True)
            cached.unlink(missing_ok=True)
    words, rows = [], []
    try:
        for number, word, values in progress_bar(iter_glove(path, dim), desc=f"reading {path.name} (once; cached)", unit=" words", mininterval=2):
            try:
                rows.append([float(v) for v in values])
            except ValueError:
                raise DataFormatError(path, number, "a vector value is not a number") from None
            words.append(word)
    except DAMAGED_ARCHIVE_ERRORS as exc:
        raise damaged_input_error([path], exc, GLOVE_SOURCE) from None
    if not words:
        raise EmbeddingError(f"embedding file {path} holds no vectors (empty file): download it again from {GLOVE_SOURCE} "
                             "or use embedding=random")
    vectors = torch.tensor(rows, dtype=torch.float32)
    cached.parent.mkdir(parents=True, exist_ok=True)
    tmp = cached.with_name(f".{cached.name}.{os.getpid()}.tmp")
    torch.save({"words": words, "vectors": vectors}, tmp)
    os.replace(tmp, cached)
    return words, vectors


def load_vectors(path: str | Path, itos: list[str], dim: int, lowercase: bool, cache_dir: str | Path, seed: int = 0) -> tuple[torch.Tensor, int]:
    """Matrix [len(itos), dim] for the vocabulary, and how many words were found in the file."""
    path = Path(path)
    if not path.exists():
        raise RnnbenchError(
            f"embedding file {path} not found (set RNNBENCH_DATA, or embedding.path, or use embedding=random); "
            f"GloVe files: {GLOVE_SOURCE}"
        )
    words, table = read_glove(path, dim, cache_dir)
    g = torch.Generator().manual_seed(seed)
    vectors = torch.randn(len(itos), dim, generator=g) * 0.1
    vectors[0] = 0.0
    index = {w: i for i, w in enumerate(itos)}
    found: set[int] = set()
    for row, word in enumerate(words):
        # A cased file read for a lower-cased vocabulary keeps the first (most frequent) casing.
        i = index.get(word.lower() if lowercase else word)
        if i is not None and i not in found:
            vectors[i] = table[row]
            found.add(i)
    return vectors, len(found)
