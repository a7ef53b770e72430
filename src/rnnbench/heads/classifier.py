"""Sentence classification head of the RCRN paper (section 4.2), with the LSTM baseline
paper's variants as options.

Defaults (the RCRN paper): max, mean and min pooling of the encoder states over time,
concatenated, one dense ReLU layer (200), softmax.

Options:
  readout         ``pool`` (default): the ``pooling`` list over every real position.
                  ``final`` (LSTM baseline paper, section 6.2): the state at the last real
                  position of a forward (causal) encoder; for a bidirectional encoder the
                  forward half at the last real position beside the backward half at the
                  first position (each direction's final state), read from states laid out
                  ``[forward | backward]`` as every BiLSTM here (and ``nn.LSTM``) lays them.
  hidden          width of the dense ReLU layer; ``0``: none, the features go straight to
                  the projection and softmax (LSTM baseline paper: "a linear projection
                  layer at the end").
  dropout         on the features (the input of the dense layer, or of the projection when
                  ``hidden`` is 0) and on the dense layer's output.
  embed_avg_pool  the LSTM baseline paper's embed average pooling: the mean of the word
                  vectors (after the input dropout the encoder applies, with the same
                  mask: ``EncoderOutput.inputs``) through a
                  one-hidden-layer MLP (``embed_avg_hidden``: 300, 300), concatenated to the
                  readout before the projection.
"""
from __future__ import annotations

import torch
from torch import nn

from rnnbench.errors import ConfigError
from rnnbench.heads.base import POOLERS, Head, HeadOutput, classification_output, masked_mean

READOUTS = ("pool", "final")


def final_states(states: torch.Tensor, mask: torch.Tensor, bidirectional: bool) -> torch.Tensor:
    """Each direction's final state from states [B, T, D] (zero at padding) and mask [B, T]
    (padding at the end): the state at the last real position; for a bidirectional encoder,
    whose states are ``[forward | backward]`` halves, the forward half there beside the
    backward half at position 0 (where the backward pass ends). A sequence with no real
    position gives zeros."""
    last = (mask.long().sum(dim=1) - 1).clamp(min=0)
    at_last = states[torch.arange(states.shape[0], device=states.device), last]
    at_last = at_last * mask.any(dim=1, keepdim=True).to(states.dtype)
    if not bidirectional:
        return at_last
    half = states.shape[-1] // 2
    return torch.cat([at_last[:, :half], states[:, 0, half:]], dim=-1)


class ClassifierHead(Head):
    loss_is_example_mean = True  # classification_output

    @classmethod
    def version_for(cls, options) -> int:
        """One past ``version`` with embed average pooling, which now averages the encoder's
        dropped-out word vectors (one dropout mask, as the paper says) instead of the clean
        ones; ``version`` elsewhere (those runs are unchanged)."""
        return cls.version + 1 if options.get("embed_avg_pool", False) else cls.version

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
        readout: str = "pool",
    ):
        super().__init__()
        if readout not in READOUTS:
            raise ConfigError(f"task.head.readout={readout!r}: must be one of {', '.join(READOUTS)}")
        if hidden < 0:
            raise ConfigError(f"task.head.hidden={hidden}: the dense layer's width must be at least 0 (0: no dense layer)")
        unknown = [p for p in pooling if p not in POOLERS]
        if readout == "pool" and unknown:
            raise ValueError(f"task.head.pooling: unknown {unknown}; known: {sorted(POOLERS)}")
        self.readout = readout
        self.pooling = list(pooling)
        self.text_field = text_field
        self.dropout = nn.Dropout(dropout)
        features = encoder_output_size * (len(self.pooling) if readout == "pool" else 1)
        self.embed_avg = None
        if embed_avg_pool:
            self.embed_avg = nn.Sequential(
                nn.Linear(embedding_dim, embed_avg_hidden), nn.ReLU(), nn.Linear(embed_avg_hidden, embed_avg_hidden), nn.ReLU()
            )
            features += embed_avg_hidden
        # Made in this order whatever the options, so the default head's initial weights do not move.
        self.dense = nn.Sequential(nn.Linear(features, hidden), nn.ReLU()) if hidden > 0 else None
        self.out = nn.Linear(hidden if hidden > 0 else features, num_classes)

    def forward(self, batch, embed, encoder) -> HeadOutput:
        tokens, mask = batch[self.text_field], batch[f"{self.text_field}_mask"]
        x = embed(tokens)
        enc = encoder(x, mask)
        if self.readout == "final":
            pooled = [final_states(enc.states, mask, bidirectional=not encoder.causal)]
        else:
            # Pool over every real token: an encoder's states are defined there even where it
            # narrows attention (FHE copies its upper state across shut gates, and a sampled
            # gate sequence may have none open, which would leave nothing to pool).
            pooled = [POOLERS[p](enc.states, mask) for p in self.pooling]
        if self.embed_avg is not None:
            # The word vectors as the encoder read them: the same dropout mask on both paths.
            words = enc.inputs if enc.inputs is not None else x
            pooled.append(self.embed_avg(masked_mean(words, mask)))
        features = self.dropout(torch.cat(pooled, dim=-1))
        if self.dense is not None:
            features = self.dropout(self.dense(features))
        logits = self.out(features)
        return classification_output(logits, batch["label"], enc)
