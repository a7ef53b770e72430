"""The head interface and masked pooling shared by heads.

A head owns the task-specific layers around the encoder. It never knows which
encoder it holds: it calls ``encoder(x, mask, context)`` and reads the
EncoderOutput. Construction is in two steps so heads can add input layers:
``encoder_input_size(embedding_dim, **options)`` tells the builder what the
encoder reads, then ``__init__(embedding_dim, encoder_output_size, num_classes, **options)``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
from torch import nn

from rnnbench.encoders.base import Encoder, EncoderOutput

Embed = Callable[[torch.Tensor], torch.Tensor]


@dataclass
class HeadOutput:
    loss: torch.Tensor  # mean task loss over the batch
    log_likelihood: torch.Tensor  # [B] log-probability of the gold answer (the FHE reward)
    logits: torch.Tensor  # [B, C] class scores
    encoder_output: EncoderOutput


class Head(nn.Module):
    @staticmethod
    def encoder_input_size(embedding_dim: int, **options) -> int:
        return embedding_dim

    def forward(self, batch: dict, embed: Embed, encoder: Encoder) -> HeadOutput:  # pragma: no cover
        raise NotImplementedError

    def predict(self, logits: torch.Tensor) -> torch.Tensor:
        return logits.argmax(dim=-1)


def masked_max(states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return states.masked_fill(~mask.unsqueeze(-1), float("-inf")).amax(dim=1)


def masked_min(states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return states.masked_fill(~mask.unsqueeze(-1), float("inf")).amin(dim=1)


def masked_mean(states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    m = mask.unsqueeze(-1).to(states.dtype)
    return (states * m).sum(dim=1) / m.sum(dim=1).clamp(min=1.0)


POOLERS = {"max": masked_max, "mean": masked_mean, "min": masked_min}


def classification_output(logits: torch.Tensor, labels: torch.Tensor, enc: EncoderOutput) -> HeadOutput:
    log_probs = torch.log_softmax(logits, dim=-1)
    log_likelihood = log_probs.gather(1, labels.unsqueeze(1)).squeeze(1)
    return HeadOutput(loss=-log_likelihood.mean(), log_likelihood=log_likelihood, logits=logits, encoder_output=enc)
