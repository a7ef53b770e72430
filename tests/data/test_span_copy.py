"""SpanCopyReader: the synthetic span task's targets."""
from __future__ import annotations

from rnnbench.data.span_copy import SpanCopyReader


def test_span_copy_targets_follow_the_asked_key():
    splits = SpanCopyReader(num_segments=4, segment_length=2, train_size=20, dev_size=3, test_size=3, seed=5).load()
    assert [len(splits[s]) for s in ("train", "dev", "test")] == [20, 3, 3]
    for r in splits["train"]:
        key = r["passage"].index(r["question"][0])
        assert (r["span_start"], r["span_end"]) == (key + 1, key + 2)
        assert r["answers"] == [" ".join(r["passage"][key + 1 : key + 3])]
    assert splits == SpanCopyReader(num_segments=4, segment_length=2, train_size=20, dev_size=3, test_size=3, seed=5).load()
