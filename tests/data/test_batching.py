"""Vocabulary, length buckets, padding and masks."""
from __future__ import annotations

import torch

from rnnbench.data.batching import batch_indices, collate, numericalise
from rnnbench.data.vocab import Vocab


def _records(n=57):
    g = torch.Generator().manual_seed(0)
    return [{"id": str(i), "tokens": ["w"] * int(torch.randint(1, 30, (1,), generator=g)), "label": i % 3} for i in range(n)]


def test_vocab_ids_are_deterministic_and_unknowns_map_to_1():
    v = Vocab.build([{"tokens": ["B", "a", "a", "c"]}], ["tokens"], lowercase=True)
    assert v.itos[:2] == ["<pad>", "<unk>"] and v.itos[2] == "a"
    assert v.encode(["A", "b", "zzz"]) == [2, v.stoi["b"], 1]
    assert Vocab.build([{"tokens": ["x", "y"]}], ["tokens"], False, min_freq=2).itos == ["<pad>", "<unk>"]


def test_training_batches_cover_everything_once_and_depend_only_on_seed_and_epoch():
    recs = _records()
    b1 = batch_indices(recs, ["tokens"], 8, shuffle=True, seed=3, epoch=1, bucket_size=2)
    assert sorted(i for b in b1 for i in b) == list(range(len(recs)))
    assert b1 == batch_indices(recs, ["tokens"], 8, shuffle=True, seed=3, epoch=1, bucket_size=2)
    assert b1 != batch_indices(recs, ["tokens"], 8, shuffle=True, seed=3, epoch=2, bucket_size=2)
    # Within a bucket batches are length-sorted: padding stays small.
    for b in b1:
        lengths = [len(recs[i]["tokens"]) for i in b]
        assert lengths == sorted(lengths)


def test_collate_pads_and_masks():
    vocab = Vocab(["a", "b"], lowercase=False)
    recs = numericalise([{"id": "x", "tokens": ["a", "b", "a"], "label": 1}, {"id": "y", "tokens": ["b"], "label": 0}], vocab)
    batch = collate(recs, ["tokens"])
    assert batch["tokens"].tolist() == [[2, 3, 2], [3, 0, 0]]
    assert batch["tokens_mask"].tolist() == [[True, True, True], [True, False, False]]
    assert batch["label"].tolist() == [1, 0] and batch["id"] == ["x", "y"]
