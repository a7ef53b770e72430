"""The FHE upper layer as a plain per-step loop over every token: the specification of ``fhe_upper``."""
from __future__ import annotations

import torch


def reference(
    x: torch.Tensor,
    gates: torch.Tensor,
    mask: torch.Tensor,
    w_ih: torch.Tensor,
    w_hh: torch.Tensor,
    b_ih: torch.Tensor,
    b_hh: torch.Tensor,
) -> torch.Tensor:
    """Plain per-step loop. x [B, T, I]; gates, mask [B, T] (bool or 0/1);
    w_ih [4H, I], w_hh [4H, H], b_ih, b_hh [4H]. Returns h [B, T, H]."""
    B, T, _ = x.shape
    H = w_hh.shape[1]
    h = x.new_zeros(B, H)
    c = x.new_zeros(B, H)
    update = (gates.bool() & mask.bool()).unsqueeze(-1)
    real = mask.bool().unsqueeze(-1)
    outputs = []
    for t in range(T):
        i, f, g, o = (x[:, t] @ w_ih.t() + b_ih + h @ w_hh.t() + b_hh).chunk(4, dim=-1)
        c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h_new = torch.sigmoid(o) * torch.tanh(c_new)
        c = torch.where(update[:, t], c_new, c)
        h = torch.where(update[:, t], h_new, h)
        outputs.append(torch.where(real[:, t], h, torch.zeros_like(h)))
    return torch.stack(outputs, dim=1)
