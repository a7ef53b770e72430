"""Vocabularies built from the training split's text fields: words and, for the character-level
word encoder (``embedding.char``), characters."""
from __future__ import annotations

from collections import Counter

PAD, UNK = "<pad>", "<unk>"
CHARS_SUFFIX = "_chars"  # a text field's character ids in a numericalised record and a batch


def char_field(name: str) -> str:
    """The key of text field ``name``'s character ids (``tokens`` -> ``tokens_chars``)."""
    return name + CHARS_SUFFIX


def text_fields(record: dict, raw: tuple[str, ...] = ()) -> list[str]:
    """Fields holding a list of strings, except ``raw`` ones (e.g. reference answers kept
    as whole strings for the metrics): these get numericalised and masked."""
    return [k for k, v in record.items() if k not in raw and isinstance(v, list) and (not v or isinstance(v[0], str))]


class CharVocab:
    """Character <-> id; id 0 is padding, id 1 an unknown character. Characters keep their case
    whatever the word vocabulary does (GloVe 6B's words are lower-cased, their characters are not).

    A word is encoded as the ids of its first ``max_word_length`` characters; the special tokens
    (padding, and the unknown-word token that stands in for an empty text) have no characters."""

    def __init__(self, chars: list[str], max_word_length: int):
        if max_word_length < 1:
            raise ValueError(f"embedding.char.max_word_length must be at least 1, got {max_word_length}")
        self.max_word_length = int(max_word_length)
        self.itos = [PAD, UNK] + [c for c in chars if c not in (PAD, UNK)]
        self.stoi = {c: i for i, c in enumerate(self.itos)}
        self._words: dict[str, tuple[int, ...]] = {}  # each distinct word encoded once, its tuple shared

    @classmethod
    def build(cls, records: list[dict], fields: list[str], max_word_length: int) -> "CharVocab":
        counts: Counter[str] = Counter()
        for r in records:
            for f in fields:
                for token in r[f]:
                    if token not in (PAD, UNK):
                        counts.update(token)
        # Sorted by frequency then character, so the same data always gives the same ids.
        return cls([c for c, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))], max_word_length)

    @classmethod
    def from_itos(cls, itos: list[str], max_word_length: int) -> "CharVocab":
        return cls(list(itos[2:]), max_word_length)

    def __len__(self) -> int:
        return len(self.itos)

    def encode_word(self, token: str) -> tuple[int, ...]:
        ids = self._words.get(token)
        if ids is None:
            ids = () if token in (PAD, UNK) else tuple(self.stoi.get(c, 1) for c in token[: self.max_word_length])
            self._words[token] = ids
        return ids

    def encode(self, tokens: list[str]) -> list[tuple[int, ...]]:
        return [self.encode_word(t) for t in tokens]


class Vocab:
    """Token <-> id; id 0 is padding, id 1 the unknown token. ``chars``: the character vocabulary
    when the run encodes characters (``embedding.char``), else None."""

    def __init__(self, tokens: list[str], lowercase: bool, chars: CharVocab | None = None):
        self.lowercase = lowercase
        self.itos = [PAD, UNK] + [t for t in tokens if t not in (PAD, UNK)]
        self.stoi = {t: i for i, t in enumerate(self.itos)}
        self.chars = chars

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
