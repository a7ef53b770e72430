"""Aspect-term sentiment head of the MZU paper (ABSA experiments, after Liang et al. 2019).

The sentence is encoded by the encoder and mean pooled over its tokens; the
aspect vector is the mean of the aspect term's word embeddings (the same shared
embedding); [sentence vector, aspect vector] goes into a softmax layer over the
polarities (cross-entropy loss).

Conditional encoders (FHE) also get the aspect as their ``context``: the aspect
vector through a linear layer of ``question_dim`` units (ours; conf/encoder/fhe.yaml
reads ``task.head.question_dim`` as its context size). Other encoders ignore the
context, and that projection then gets no gradient.

Options:
  question_dim  size of the context given to the encoder (ours); 0 gives none (FHE
                then runs with unconditional gates).
  dropout       0.0 (ours; the paper gives none): on the concatenated features.
  text_field, aspect_field   the records' text fields: tokens, aspect.
"""
from __future__ import annotations

import torch
from torch import nn

from rnnbench.heads.base import Head, HeadOutput, classification_output, masked_mean


class AspectHead(Head):
    loss_is_example_mean = True  # classification_output

    def __init__(
        self,
        embedding_dim: int,
        encoder_output_size: int,
        num_classes: int,
        question_dim: int = 0,
        dropout: float = 0.0,
        text_field: str = "tokens",
        aspect_field: str = "aspect",
    ):
        super().__init__()
        self.text_field, self.aspect_field = text_field, aspect_field
        self.context = nn.Linear(embedding_dim, question_dim) if question_dim > 0 else None
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(encoder_output_size + embedding_dim, num_classes)

    def aspect_vector(self, batch: dict, embed) -> torch.Tensor:
        """[B, embedding_dim]: the mean of the aspect term's word embeddings."""
        return masked_mean(embed(batch[self.aspect_field]), batch[f"{self.aspect_field}_mask"])

    def forward(self, batch, embed, encoder) -> HeadOutput:
        tokens, mask = batch[self.text_field], batch[f"{self.text_field}_mask"]
        aspect = self.aspect_vector(batch, embed)
        context = self.context(aspect) if self.context is not None else None
        enc = encoder(embed(tokens), mask, context)
        # Mean over every real token (as the classifier head: FHE's states are defined there too).
        sentence = masked_mean(enc.states, mask)
        logits = self.out(self.dropout(torch.cat([sentence, aspect], dim=-1)))
        return classification_output(logits, batch["label"], enc)
