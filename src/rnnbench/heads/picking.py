"""Question-conditioned attention head for the FHE paper's picking task.

The question k gets a learned embedding q. It is passed to the encoder as its
``context`` (FHE conditions its boundary gates on it) and, with
``concat_question``, also appended to every token embedding (an input layer of
this head). The head attends over the encoder states with q (additive
attention, restricted to EncoderOutput.mask when the encoder gives one, e.g.
FHE's open gates) and classifies the attended summary with q into 10 digits.

``one_hot_input: true`` gives the encoder the paper's inputs (FHE section 4.1: "the input
digits are one-hot encoded vectors (size 10)") instead of the learned embeddings: one
dimension per word of the vocabulary (the 10 digits; padding is the zero vector), so the
embedding table goes unused. With ``concat_question: false`` the question then reaches the
encoder only as FHE's gate context, as in the paper (it adds the question to the lower
LSTM's input only for the large QA tasks, section 2.1). The output layer (ours: the paper's
"one layer feed-forward neural network" read as one hidden ReLU layer of ``attention_dim``)
is the same for every encoder.

``dropout`` (0.0; ours, the paper gives none): inverted dropout on the output layer's input
(the attended summary beside q), training only. Not listed in picking.yaml (a registered
default of 0.0 for ``task.head.dropout`` would move the classifier runs that list it):
``+task.head.dropout=0.2``.
"""
from __future__ import annotations

import torch
from torch import nn

import torch.nn.functional as F

from rnnbench.heads.base import Head, HeadOutput, classification_output, special_ids
from rnnbench.nn.util import masked_softmax


class PickingHead(Head):
    loss_is_example_mean = True  # classification_output

    def __init__(
        self,
        embedding_dim: int,
        encoder_output_size: int,
        num_classes: int,
        question_dim: int = 32,
        attention_dim: int = 64,
        concat_question: bool = True,
        max_question: int = 10000,
        one_hot_input: bool = False,
        vocab=None,
        dropout: float = 0.0,
    ):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.concat_question = concat_question
        self.one_hot_size = _one_hot_size(vocab) if one_hot_input else 0
        self.first_word = special_ids(vocab).unk + 1  # word ids start after padding and unknown
        self.question = nn.Embedding(max_question + 1, question_dim)
        self.key = nn.Linear(encoder_output_size, attention_dim, bias=False)
        self.query = nn.Linear(question_dim, attention_dim)
        self.score = nn.Linear(attention_dim, 1, bias=False)
        self.out = nn.Sequential(nn.Linear(encoder_output_size + question_dim, attention_dim), nn.ReLU(), nn.Linear(attention_dim, num_classes))

    @staticmethod
    def encoder_input_size(embedding_dim: int, question_dim: int = 32, concat_question: bool = True,
                           one_hot_input: bool = False, vocab=None, **_) -> int:
        width = _one_hot_size(vocab) if one_hot_input else embedding_dim
        return width + (question_dim if concat_question else 0)

    def _tokens(self, tokens: torch.Tensor, embed) -> torch.Tensor:
        if not self.one_hot_size:
            return embed(tokens)
        index = tokens - self.first_word  # padding and unknown (< 0) give the zero vector
        hot = F.one_hot(index.clamp(min=0), self.one_hot_size) * (index >= 0).unsqueeze(-1)
        return hot.to(self.key.weight.dtype)

    def forward(self, batch, embed, encoder) -> HeadOutput:
        tokens, mask = batch["tokens"], batch["tokens_mask"]
        q = self.question(batch["question"])
        x = self._tokens(tokens, embed)
        if self.concat_question:
            x = torch.cat([x, q.unsqueeze(1).expand(-1, x.shape[1], -1)], dim=-1)
        enc = encoder(x, mask, q)
        attend = enc.mask if enc.mask is not None else mask
        scores = self.score(torch.tanh(self.key(enc.states) + self.query(q).unsqueeze(1))).squeeze(-1)
        # A sequence with no attendable position (all gates shut) attends nowhere: zero summary.
        weights = masked_softmax(scores, attend)
        summary = torch.bmm(weights.unsqueeze(1), enc.states).squeeze(1)
        logits = self.out(self.dropout(torch.cat([summary, q], dim=-1)))
        return classification_output(logits, batch["label"], enc)


def _one_hot_size(vocab) -> int:
    """One dimension per word of ``vocab`` (its special ids excluded)."""
    if vocab is None:
        raise ValueError("task.head.one_hot_input needs the task's vocabulary (the head is built without one)")
    return len(vocab) - (special_ids(vocab).unk + 1)
