"""Question-conditioned attention head for the FHE paper's picking task.

The question k gets a learned embedding q. It is passed to the encoder as its
``context`` (FHE conditions its boundary gates on it) and, with
``concat_question``, also appended to every token embedding (an input layer of
this head). The head attends over the encoder states with q (additive
attention, restricted to EncoderOutput.mask when the encoder gives one, e.g.
FHE's open gates) and classifies the attended summary with q into 10 digits.
"""
from __future__ import annotations

import torch
from torch import nn

from rnnbench.heads.base import Head, HeadOutput, classification_output
from rnnbench.nn.util import masked_softmax


class PickingHead(Head):
    def __init__(
        self,
        embedding_dim: int,
        encoder_output_size: int,
        num_classes: int,
        question_dim: int = 32,
        attention_dim: int = 64,
        concat_question: bool = True,
        max_question: int = 10000,
    ):
        super().__init__()
        self.concat_question = concat_question
        self.question = nn.Embedding(max_question + 1, question_dim)
        self.key = nn.Linear(encoder_output_size, attention_dim, bias=False)
        self.query = nn.Linear(question_dim, attention_dim)
        self.score = nn.Linear(attention_dim, 1, bias=False)
        self.out = nn.Sequential(nn.Linear(encoder_output_size + question_dim, attention_dim), nn.ReLU(), nn.Linear(attention_dim, num_classes))

    @staticmethod
    def encoder_input_size(embedding_dim: int, question_dim: int = 32, concat_question: bool = True, **_) -> int:
        return embedding_dim + (question_dim if concat_question else 0)

    def forward(self, batch, embed, encoder) -> HeadOutput:
        tokens, mask = batch["tokens"], batch["tokens_mask"]
        q = self.question(batch["question"])
        x = embed(tokens)
        if self.concat_question:
            x = torch.cat([x, q.unsqueeze(1).expand(-1, x.shape[1], -1)], dim=-1)
        enc = encoder(x, mask, q)
        attend = enc.mask if enc.mask is not None else mask
        scores = self.score(torch.tanh(self.key(enc.states) + self.query(q).unsqueeze(1))).squeeze(-1)
        # A sequence with no attendable position (all gates shut) attends nowhere: zero summary.
        weights = masked_softmax(scores, attend)
        summary = torch.bmm(weights.unsqueeze(1), enc.states).squeeze(1)
        logits = self.out(torch.cat([summary, q], dim=-1))
        return classification_output(logits, batch["label"], enc)
