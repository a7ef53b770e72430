"""Batches bucketed by length, padded, with boolean masks.

Training order depends only on (seed, epoch), so an interrupted run resumed
from a checkpoint replays exactly the batches it had not yet seen.
"""
from __future__ import annotations

import torch

from rnnbench.data.vocab import CHARS_SUFFIX, Vocab, char_field, text_fields


def numericalise(records: list[dict], vocab: Vocab, fields: list[str] | None = None) -> list[dict]:
    """Records with each text field's tokens as word ids; with a character vocabulary
    (``vocab.chars``), also each token's character ids under ``<field>_chars``."""
    fields = fields if fields is not None else (text_fields(records[0]) if records else [])
    chars = getattr(vocab, "chars", None)
    out = []
    for r in records:
        item = dict(r)
        for f in fields:
            item[f] = vocab.encode(r[f])
            if chars is not None:
                item[char_field(f)] = chars.encode(r[f])
        out.append(item)
    return out


def _length(record: dict, fields: list[str]) -> int:
    return max(len(record[f]) for f in fields)


def batch_indices(records: list[dict], fields: list[str], batch_size: int, shuffle: bool, seed: int = 0, epoch: int = 0, bucket_size: int = 100) -> list[list[int]]:
    """Index lists, one per batch. Training: shuffled, sorted by length within buckets, batches shuffled."""
    n = len(records)
    if not shuffle:
        order = sorted(range(n), key=lambda i: _length(records[i], fields))
        return [order[i : i + batch_size] for i in range(0, n, batch_size)]
    g = torch.Generator().manual_seed(seed * 100003 + epoch)
    order = torch.randperm(n, generator=g).tolist()
    chunk = batch_size * bucket_size
    batches = []
    for start in range(0, n, chunk):
        bucket = sorted(order[start : start + chunk], key=lambda i: _length(records[i], fields))
        batches += [bucket[i : i + batch_size] for i in range(0, len(bucket), batch_size)]
    perm = torch.randperm(len(batches), generator=g).tolist()
    return [batches[i] for i in perm]


def collate(records: list[dict], fields: list[str]) -> dict:
    """Pad text fields (id 0) and give each a ``<field>_mask``; a text field's character ids
    (``<field>_chars``) become [B, T, L] (padding character 0; T the field's, so a record cut
    to fewer tokens keeps the characters of those only); ints become tensors; the rest stay lists."""
    batch: dict = {}
    for key in records[0]:
        values = [r[key] for r in records]
        if key.endswith(CHARS_SUFFIX) and key[: -len(CHARS_SUFFIX)] in fields:
            batch[key] = _char_ids(values, [len(r[key[: -len(CHARS_SUFFIX)]]) for r in records])
        elif key in fields:
            T = max(1, max(len(v) for v in values))
            ids = torch.zeros(len(values), T, dtype=torch.long)
            for i, v in enumerate(values):
                ids[i, : len(v)] = torch.tensor(v, dtype=torch.long)
            batch[key] = ids
            batch[f"{key}_mask"] = _mask(values, T)
        elif isinstance(values[0], (int, bool)) and not isinstance(values[0], str):
            batch[key] = torch.tensor(values, dtype=torch.long)
        elif isinstance(values[0], float):
            batch[key] = torch.tensor(values, dtype=torch.float)
        else:
            batch[key] = values
    return batch


def _char_ids(values: list[list[tuple[int, ...]]], lengths: list[int]) -> torch.Tensor:
    """[B, T, L] character ids of each record's first ``lengths[i]`` words, zero-padded."""
    T = max(1, max(lengths))
    words = [list(v[:n]) for v, n in zip(values, lengths)]
    L = max([1] + [len(w) for ws in words for w in ws])
    pad_word = [0] * L
    rows = []
    for ws in words:
        rows += [list(w) + [0] * (L - len(w)) for w in ws]
        rows += [pad_word] * (T - len(ws))
    return torch.tensor(rows, dtype=torch.long).view(len(values), T, L)


def _mask(values: list[list[int]], T: int) -> torch.Tensor:
    lengths = torch.tensor([len(v) for v in values])
    return torch.arange(T).unsqueeze(0) < lengths.unsqueeze(1)


def to_device(batch: dict, device: torch.device) -> dict:
    return {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in batch.items()}
