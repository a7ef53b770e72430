"""Vocabulary built from the training split's text fields."""
from __future__ import annotations

from collections import Counter

PAD, UNK = "<pad>", "<unk>"


def text_fields(record: dict, raw: tuple[str, ...] = ()) -> list[str]:
    """Fields holding a list of strings, except ``raw`` ones (e.g. reference answers kept
    as whole strings for the metrics): these get numericalised and masked."""
    return [k for k, v in record.items() if k not in raw and isinstance(v, list) and (not v or isinstance(v[0], str))]


class Vocab:
    """Token <-> id; id 0 is padding, id 1 the unknown token."""

    def __init__(self, tokens: list[str], lowercase: bool):
        self.lowercase = lowercase
        self.itos = [PAD, UNK] + [t for t in tokens if t not in (PAD, UNK)]
        self.stoi = {t: i for i, t in enumerate(self.itos)}

    @classmethod
    def build(cls, records: list[dict], fields: list[str], lowercase: bool, min_freq: int = 1) -> "Vocab":
        counts: Counter[str] = Counter()
        for r in records:
            for f in fields:
                counts.update(t.lower() for t in r[f]) if lowercase else counts.update(r[f])
        # Sorted by frequency then token, so the same data always gives the same ids.
        tokens = [t for t, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if c >= min_freq]
        return cls(tokens, lowercase)

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, tokens: list[str]) -> list[int]:
        if self.lowercase:
            tokens = [t.lower() for t in tokens]
        return [self.stoi.get(t, 1) for t in tokens]
