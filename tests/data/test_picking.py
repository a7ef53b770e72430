"""The FHE paper's picking task: generated from a seed, answer = mode of the first k digits."""
from __future__ import annotations

from rnnbench.data.picking import PickingReader, picking_answer


def test_answer_is_the_mode_of_the_first_k_with_ties_to_the_largest_digit():
    assert picking_answer([1, 2, 2, 3, 3, 3], 3) == 2
    assert picking_answer([1, 2, 2, 3, 3, 3], 6) == 3
    assert picking_answer([4, 7, 9, 9], 2) == 7  # tie between 4 and 7
    assert picking_answer([5], 1) == 5


def test_generation_is_seeded_and_splits_have_the_asked_sizes_and_lengths():
    r = PickingReader(length=12, train_size=30, dev_size=5, test_size=7, test_length=40, seed=3)
    a, b = r.load(), r.load()
    assert a == b
    assert [len(a[s]) for s in ("train", "dev", "test")] == [30, 5, 7]
    assert all(len(x["tokens"]) == 12 and 1 <= x["question"] <= 12 for x in a["train"])
    assert all(len(x["tokens"]) == 40 and 1 <= x["question"] <= 12 for x in a["test"])  # k stays in the trained range
    for x in a["train"]:
        assert x["label"] == picking_answer([int(t) for t in x["tokens"]], x["question"])
    assert PickingReader(length=12, train_size=30, seed=4).load()["train"] != a["train"]
