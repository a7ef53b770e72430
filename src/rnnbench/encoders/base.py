"""The encoder contract: every encoder maps embedded tokens to per-token states.

Heads only ever see this interface, so any head works with any encoder
(AllenNLP's Seq2SeqEncoder idea). See docs in README "Encoder contract".
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn


@dataclass
class EncoderOutput:
    """What every encoder returns.

    states:   [B, T, output_size], exactly zero at padded positions.
    aux_loss: an already-weighted extra loss term (MZU zone disagreement,
              FHE sparsity penalty) or None.
    stats:    scalars for logging, e.g. FHE gate openness.
    mask:     optional [B, T] bool mask of the positions downstream attention
              may look at (FHE exposes its open gates here); None means the
              input mask.
    """

    states: torch.Tensor
    aux_loss: torch.Tensor | None = None
    stats: dict[str, float] = field(default_factory=dict)
    mask: torch.Tensor | None = None


class Encoder(nn.Module):
    """Base class of all encoders.

    Subclasses set ``input_size`` and ``output_size`` and implement ``forward``.
    ``causal`` is True when position t's state depends only on positions <= t
    (needed by language models).
    """

    causal: bool = False
    # Bump when a change alters what this encoder computes (part of the run identity:
    # finished runs of the old version are then re-run, never mixed with new ones).
    version: int = 1

    def __init__(self, input_size: int, output_size: int):
        super().__init__()
        self.input_size = input_size
        self.output_size = output_size

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor, context: torch.Tensor | None = None
    ) -> EncoderOutput:  # pragma: no cover - abstract
        raise NotImplementedError

    def feedback(self, log_likelihood: torch.Tensor) -> torch.Tensor | None:
        """Learning signal from the head after the forward pass.

        Called by the task model with the per-example log-likelihood of the
        correct answer ([B], detached by the caller). Encoders with a
        non-differentiable part (FHE's discrete gates, trained by REINFORCE)
        return an extra loss built from it; all others return None.
        """
        return None

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters() if p.requires_grad)


def lengths_of(mask: torch.Tensor) -> torch.Tensor:
    """Per-sequence lengths of a [B, T] boolean mask (padding at the end)."""
    return mask.long().sum(dim=1)


def reverse_padded(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Reverse each sequence of x [B, T, ...] within its own length.

    Padded positions stay in place, so running a forward recurrence over the
    result and reversing back gives a backward pass that starts at each
    sequence's own last token (what padding invariance needs).
    """
    B, T = x.shape[:2]
    t = torch.arange(T, device=x.device).unsqueeze(0).expand(B, T)
    lengths = lengths.to(x.device).unsqueeze(1)
    idx = torch.where(t < lengths, lengths - 1 - t, t)
    idx = idx.view(B, T, *([1] * (x.dim() - 2))).expand_as(x)
    return x.gather(1, idx)


def zero_padding(states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Zero the padded positions of [B, T, D] states."""
    return states * mask.unsqueeze(-1).to(states.dtype)
