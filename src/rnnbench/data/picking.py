"""The synthetic picking task of the FHE paper (section 4.1): generated from a seed.

A sequence of n random digits and a question k in 1..n; the answer is the most
frequent digit among the first k (ties: the largest digit). No files needed.
Generalisation runs test on longer sequences (``test_length``) while k stays
in the trained range 1..length.
"""
from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

from rnnbench.data.base import Reader, Splits


def picking_answer(digits: list[int], k: int) -> int:
    counts = Counter(digits[:k])
    best = max(counts.values())
    return max(d for d, c in counts.items() if c == best)


class PickingReader(Reader):
    name = "picking"
    label_names = [str(d) for d in range(10)]
    inputs = ("question",)  # k: the answer is the most frequent digit among the first k

    def __init__(
        self,
        length: int = 100,
        train_size: int = 20000,
        dev_size: int = 1000,
        test_size: int = 1000,
        test_length: int | None = None,
        seed: int = 1234,
    ):
        self.length = length
        self.train_size = train_size
        self.dev_size = dev_size
        self.test_size = test_size
        self.test_length = test_length
        self.seed = seed

    def _examples(self, rng: random.Random, count: int, length: int, split: str) -> list[dict]:
        out = []
        for i in range(count):
            digits = [rng.randrange(10) for _ in range(length)]
            k = rng.randint(1, min(self.length, length))
            out.append(
                {"id": f"{split}-{i}", "tokens": [str(d) for d in digits], "question": k, "label": picking_answer(digits, k)}
            )
        return out

    def tokenize(self, text: str) -> list[str]:
        """Digits, one token each ("3 1 4" or "314"): the records' tokens."""
        return [c for c in text if not c.isspace()]

    def load(self, data_dir: str | Path | None = None) -> Splits:
        rng = random.Random(self.seed)  # one stream: splits never overlap in their draws
        return {
            "train": self._examples(rng, self.train_size, self.length, "train"),
            "dev": self._examples(rng, self.dev_size, self.length, "dev"),
            "test": self._examples(rng, self.test_size, self.test_length or self.length, "test"),
        }
