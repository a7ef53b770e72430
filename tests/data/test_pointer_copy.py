"""The synthetic question-conditioned copy task: the answer is the segment after the asked key."""
from __future__ import annotations

import pytest

from rnnbench.data.pointer_copy import PointerCopyReader
from rnnbench.errors import ConfigError


def test_answer_is_the_segment_after_the_asked_key_and_generation_is_seeded():
    reader = PointerCopyReader(num_segments=4, segment_length=2, num_words=50, num_keys=6, train_size=40, dev_size=3, test_size=5, seed=7)
    splits = reader.load()
    assert splits == reader.load()
    assert [len(splits[s]) for s in ("train", "dev", "test")] == [40, 3, 5]
    for r in splits["train"]:
        passage, (key,) = r["passage"], r["question"]
        assert len(passage) == 4 * 3 and key.startswith("k")
        keys = passage[::3]
        assert len(set(keys)) == 4 and passage.count(key) == 1  # distinct keys: one segment is asked
        at = passage.index(key)
        assert r["answer_tokens"] == passage[at + 1 : at + 3] and r["answers"] == [" ".join(r["answer_tokens"])]
    assert PointerCopyReader(train_size=40, seed=8).load()["train"] != PointerCopyReader(train_size=40, seed=7).load()["train"]


def test_more_segments_than_keys_is_refused():
    with pytest.raises(ConfigError, match="num_segments"):
        PointerCopyReader(num_segments=5, num_keys=4)
