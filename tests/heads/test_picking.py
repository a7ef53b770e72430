"""PickingHead: the paper's one-hot digit inputs (FHE section 4.1) beside the learned embeddings."""
from __future__ import annotations

import torch
from torch import nn

from rnnbench.data.vocab import Vocab
from rnnbench.encoders.lstm import LSTMEncoder
from rnnbench.heads.picking import PickingHead

DIGITS = [str(d) for d in range(10)]


def test_one_hot_input_gives_the_encoder_one_dimension_per_digit():
    vocab = Vocab(DIGITS, lowercase=False)
    assert PickingHead.encoder_input_size(16, question_dim=4, concat_question=False, one_hot_input=True, vocab=vocab) == 10
    assert PickingHead.encoder_input_size(16, question_dim=4, concat_question=True, one_hot_input=True, vocab=vocab) == 14
    assert PickingHead.encoder_input_size(16, question_dim=4, concat_question=False) == 16
    head = PickingHead(16, 8, 10, question_dim=4, concat_question=False, one_hot_input=True, vocab=vocab)
    encoder = LSTMEncoder(10, 8, bidirectional=False)
    seen = []
    encoder.register_forward_hook(lambda m, args, out: seen.append(args[0]))
    tokens = torch.tensor([vocab.encode(["3", "0", "9"]), vocab.encode(["7", "7"]) + [0]])
    batch = {"tokens": tokens, "tokens_mask": tokens > 0, "question": torch.tensor([2, 1]), "label": torch.tensor([3, 7])}
    embedding = nn.Embedding(len(vocab), 16, padding_idx=0)
    out = head(batch, embedding, encoder)
    x = seen[0]
    assert x.shape == (2, 3, 10)
    expected = torch.zeros(2, 3, 10)
    for b, row in enumerate(tokens.tolist()):
        for t, i in enumerate(row):
            if i > 1:
                expected[b, t, i - 2] = 1.0  # word ids start after padding (0) and unknown (1)
    torch.testing.assert_close(x, expected)  # padding: the zero vector
    out.loss.backward()
    assert embedding.weight.grad is None  # the embedding table is not read
