"""Sentence-pair classification head of the RCRN paper (section 4.2, "Entailment Model").

Encoder-only setting (no cross-sentence attention):
  1. input layer: the word embeddings of each sentence go through a two-layer
     highway network of 300 units (Srivastava et al. 2015) before the encoder;
  2. premise and hypothesis are encoded by the same encoder (shared weights), each
     pooled over its real tokens by max and mean, concatenated: s1, s2;
  3. [s1, s2, s1 * s2, s1 - s2] goes through a two-layer highway network;
  4. a linear layer and softmax over the classes (cross-entropy loss).

Options (paper's value first, then ours where the paper says nothing):
  highway_dim            300 (paper). Width of the input highway network, and what the
                         encoder reads (``encoder_input_size``).
  input_highway_layers   2 (paper). 0 feeds the embeddings to the encoder directly.
  pooling                [max, mean] (paper).
  compare_highway_layers 2 (paper).
  compare_dim            300 (ours): the paper does not give the width of the second
                         highway network. The comparison vector (4 x 2 x encoder output,
                         3,200 for a 200-unit BiLSTM) is projected to this width first;
                         null keeps its full width (a 3,200-wide highway network has ~41M
                         parameters).
  dropout                0.0 (ours; the paper gives none): on the comparison features and
                         before the softmax layer.
  gate_bias              -1.0 (ours): initial bias of the highway gates, so that layers
                         start close to carrying their input (Srivastava et al. suggest a
                         negative bias).
  fields                 [premise, hypothesis]: the records' two text fields.
Not reproduced: the paper's CoVe vectors, character-level BiGRU and POS-tag embeddings
beside GloVe (the embedding stage here is GloVe only).

When the embedding width differs from ``highway_dim`` (GloVe 50d vs 300), a linear
projection without bias (ours) maps the embeddings to ``highway_dim`` first, since a
highway layer keeps its input's width.
"""
from __future__ import annotations

import torch
from torch import nn

from rnnbench.encoders.base import EncoderOutput, combine_outputs
from rnnbench.heads.base import POOLERS, Head, HeadOutput, classification_output
from rnnbench.nn.highway import Highway


class PairClassifierHead(Head):
    loss_is_example_mean = True  # classification_output

    @staticmethod
    def encoder_input_size(embedding_dim: int, highway_dim: int = 300, input_highway_layers: int = 2, **_) -> int:
        return highway_dim if input_highway_layers > 0 else embedding_dim

    def __init__(
        self,
        embedding_dim: int,
        encoder_output_size: int,
        num_classes: int,
        highway_dim: int = 300,
        input_highway_layers: int = 2,
        pooling: tuple[str, ...] = ("max", "mean"),
        compare_highway_layers: int = 2,
        compare_dim: int | None = 300,
        dropout: float = 0.0,
        gate_bias: float = -1.0,
        fields: tuple[str, str] = ("premise", "hypothesis"),
    ):
        super().__init__()
        unknown = [p for p in pooling if p not in POOLERS]
        if unknown:
            raise ValueError(f"task.head.pooling: unknown {unknown}; known: {sorted(POOLERS)}")
        if len(fields) != 2:
            raise ValueError(f"task.head.fields must name two text fields, got {list(fields)}")
        self.pooling = list(pooling)
        self.fields = list(fields)
        self.input_layer = nn.Identity()
        if input_highway_layers > 0:
            project = nn.Identity() if embedding_dim == highway_dim else nn.Linear(embedding_dim, highway_dim, bias=False)
            self.input_layer = nn.Sequential(project, Highway(highway_dim, input_highway_layers, gate_bias))
        features = 4 * len(self.pooling) * encoder_output_size
        width = compare_dim or features
        self.compare = nn.Sequential(
            nn.Linear(features, width) if compare_dim else nn.Identity(),
            Highway(width, compare_highway_layers, gate_bias),
        )
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(width, num_classes)

    def _sentence(self, batch: dict, field: str, embed, encoder) -> tuple[torch.Tensor, EncoderOutput]:
        tokens, mask = batch[field], batch[f"{field}_mask"]
        # Padded positions are zeroed after the input layer (its biases would make them non-zero).
        x = self.input_layer(embed(tokens)) * mask.unsqueeze(-1)
        enc = encoder(x, mask)
        return torch.cat([POOLERS[p](enc.states, mask) for p in self.pooling], dim=-1), enc

    def forward(self, batch, embed, encoder) -> HeadOutput:
        s1, enc1 = self._sentence(batch, self.fields[0], embed, encoder)
        s2, enc2 = self._sentence(batch, self.fields[1], embed, encoder)
        features = self.dropout(torch.cat([s1, s2, s1 * s2, s1 - s2], dim=-1))
        logits = self.out(self.dropout(self.compare(features)))
        return classification_output(logits, batch["label"], combine_outputs([enc1, enc2]))
