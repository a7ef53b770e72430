"""Sentence classification head of the RCRN paper (section 4.2).

Max, mean and min pooling of the encoder states over time, concatenated, one
dense ReLU layer (200), softmax. Option ``embed_avg_pool`` adds the LSTM
baseline paper's embed average pooling: the mean of the word vectors through a
one-hidden-layer MLP (300, 300), concatenated before the projection.
"""
from __future__ import annotations

import torch
from torch import nn

from rnnbench.heads.base import POOLERS, Head, HeadOutput, classification_output, masked_mean


class ClassifierHead(Head):
    def __init__(
        self,
        embedding_dim: int,
        encoder_output_size: int,
        num_classes: int,
        pooling: tuple[str, ...] = ("max", "mean", "min"),
        hidden: int = 200,
        dropout: float = 0.0,
        embed_avg_pool: bool = False,
        embed_avg_hidden: int = 300,
        text_field: str = "tokens",
    ):
        super().__init__()
        unknown = [p for p in pooling if p not in POOLERS]
        if unknown:
            raise ValueError(f"task.head.pooling: unknown {unknown}; known: {sorted(POOLERS)}")
        self.pooling = list(pooling)
        self.text_field = text_field
        self.dropout = nn.Dropout(dropout)
        features = encoder_output_size * len(self.pooling)
        self.embed_avg = None
        if embed_avg_pool:
            self.embed_avg = nn.Sequential(
                nn.Linear(embedding_dim, embed_avg_hidden), nn.ReLU(), nn.Linear(embed_avg_hidden, embed_avg_hidden), nn.ReLU()
            )
            features += embed_avg_hidden
        self.dense = nn.Sequential(nn.Linear(features, hidden), nn.ReLU())
        self.out = nn.Linear(hidden, num_classes)

    def forward(self, batch, embed, encoder) -> HeadOutput:
        tokens, mask = batch[self.text_field], batch[f"{self.text_field}_mask"]
        x = embed(tokens)
        enc = encoder(x, mask)
        # Pool over every real token: an encoder's states are defined there even where it
        # narrows attention (FHE copies its upper state across shut gates, and a sampled
        # gate sequence may have none open, which would leave nothing to pool).
        pooled = [POOLERS[p](enc.states, mask) for p in self.pooling]
        if self.embed_avg is not None:
            pooled.append(self.embed_avg(masked_mean(x, mask)))
        features = self.dropout(torch.cat(pooled, dim=-1))
        logits = self.out(self.dropout(self.dense(features)))
        return classification_output(logits, batch["label"], enc)
