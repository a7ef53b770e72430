"""A question-conditioned copy task for generative heads, generated from a seed (no files).

In the spirit of the FHE paper's synthetic tasks (section 4): the passage is a
run of segments, each a key ``k<j>`` followed by ``segment_length`` random words
``w<i>`` (``num_words`` of them); the question is one of the passage's keys and
the answer is the words after it. Words are drawn uniformly, so with a
shortlist much smaller than ``num_words`` most answer words can only be copied:
the task checks that a pointer-softmax decoder learns to find the asked segment
and copy it (and FHE, to open its gates there). Ours, not the paper's.

Records: ``{"id", "passage", "question": [key], "answers": [answer string],
"answer_tokens": answer words}`` (the fields of the MS MARCO reader).
"""
from __future__ import annotations

import random
from pathlib import Path

from rnnbench.data.base import Reader, Splits
from rnnbench.errors import ConfigError


class PointerCopyReader(Reader):
    """Options: ``num_segments`` per passage (distinct keys out of ``num_keys``), ``segment_length``,
    ``num_words``, split sizes and ``seed``."""

    raw_fields = ("answers",)  # reference strings for the metrics, not text to encode
    name = "pointer_copy"

    def __init__(self, num_segments: int = 6, segment_length: int = 3, num_words: int = 500, num_keys: int = 20,
                 train_size: int = 10000, dev_size: int = 500, test_size: int = 500, seed: int = 1234):
        if not 1 <= num_segments <= num_keys:
            raise ConfigError(f"task.reader.num_segments must be between 1 and num_keys ({num_keys}); got {num_segments}")
        if segment_length < 1 or num_words < 1:
            raise ConfigError("task.reader.segment_length and num_words must be at least 1")
        self.num_segments = num_segments
        self.segment_length = segment_length
        self.num_words = num_words
        self.num_keys = num_keys
        self.train_size = train_size
        self.dev_size = dev_size
        self.test_size = test_size
        self.seed = seed

    def _examples(self, rng: random.Random, count: int, split: str) -> list[dict]:
        out = []
        for i in range(count):
            keys = rng.sample(range(self.num_keys), self.num_segments)
            segments = [[f"w{rng.randrange(self.num_words)}" for _ in range(self.segment_length)] for _ in keys]
            asked = rng.randrange(self.num_segments)
            passage = [tok for key, words in zip(keys, segments) for tok in (f"k{key}", *words)]
            answer = segments[asked]
            out.append({"id": f"{split}-{i}", "passage": passage, "question": [f"k{keys[asked]}"],
                        "answers": [" ".join(answer)], "answer_tokens": list(answer)})
        return out

    def load(self, data_dir: str | Path | None = None) -> Splits:
        rng = random.Random(self.seed)  # one stream: the splits never share a draw
        return {
            "train": self._examples(rng, self.train_size, "train"),
            "dev": self._examples(rng, self.dev_size, "dev"),
            "test": self._examples(rng, self.test_size, "test"),
        }
