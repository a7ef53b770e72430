"""Masked softmax and masked pooling over padded sequences."""
from __future__ import annotations

import torch


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Softmax over ``dim`` restricted to ``mask``; a slice with no allowed position gives zeros."""
    return torch.nan_to_num(torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=dim), nan=0.0)


def masked_max(states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Max over the real positions (dim 1) of states [B, T, D]; mask [B, T]."""
    return states.masked_fill(~mask.unsqueeze(-1), float("-inf")).amax(dim=1)


def masked_min(states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return states.masked_fill(~mask.unsqueeze(-1), float("inf")).amin(dim=1)


def masked_mean(states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean over the real positions (dim 1); 0 for a sequence with none."""
    m = mask.unsqueeze(-1).to(states.dtype)
    return (states * m).sum(dim=1) / m.sum(dim=1).clamp(min=1.0)


POOLERS = {"max": masked_max, "mean": masked_mean, "min": masked_min}
