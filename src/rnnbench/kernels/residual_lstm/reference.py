"""The Res-V2 LSTM as a plain per-step loop: the specification of ``residual_lstm``."""
from __future__ import annotations

import torch


def reference(
    x: torch.Tensor,
    residual: torch.Tensor,
    mask: torch.Tensor,
    w_ih: torch.Tensor,
    w_hh: torch.Tensor,
    bias: torch.Tensor,
) -> torch.Tensor:
    """Forward-in-time Res-V2 LSTM, one plain step at a time.

    x [B, T, I], residual [B, T, H], mask [B, T] (padding at the end),
    w_ih [4H, I], w_hh [4H, H], bias [4H] (gate order i, f, g, o as nn.LSTM).
    Returns h [B, T, H], zero at padding; the state stops at each length.
    """
    B, T, _ = x.shape
    H = w_hh.shape[1]
    h = x.new_zeros(B, H)
    c = x.new_zeros(B, H)
    outputs = []
    for t in range(T):
        gates = x[:, t] @ w_ih.t() + h @ w_hh.t() + bias
        i, f, g, o = gates.chunk(4, dim=-1)
        c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h_new = torch.sigmoid(o) * torch.tanh(c_new) + residual[:, t]
        keep = mask[:, t].unsqueeze(-1).to(x.dtype)
        c = keep * c_new + (1 - keep) * c
        h = keep * h_new + (1 - keep) * h
        outputs.append(h_new * keep)
    return torch.stack(outputs, dim=1)
