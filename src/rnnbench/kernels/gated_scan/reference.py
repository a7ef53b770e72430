"""The gated linear scan as a plain per-step loop: the specification (see ``gated_scan``)."""
from __future__ import annotations

import torch


def reference(
    f: torch.Tensor,
    x: torch.Tensor,
    mask: torch.Tensor,
    o: torch.Tensor | None = None,
    c0: torch.Tensor | None = None,
    reverse: bool = False,
    logits: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Plain per-step loop. f, x, o: [B, T, D]; mask: [B, T]; c0: [B, D].

    Returns (h [B, T, D] in x's dtype, c_last [B, D] float32: the state after
    each sequence's last real token).
    """
    B, T, D = x.shape
    c = torch.zeros(B, D, dtype=torch.float32, device=x.device) if c0 is None else c0.float()
    outputs = [None] * T
    steps = range(T - 1, -1, -1) if reverse else range(T)
    for t in steps:
        f_t = f[:, t].float()
        o_t = None if o is None else o[:, t].float()
        if logits:
            f_t = torch.sigmoid(f_t)
            o_t = None if o_t is None else torch.sigmoid(o_t)
        c_new = f_t * c + (1 - f_t) * x[:, t].float()
        keep = mask[:, t].unsqueeze(-1)
        c = torch.where(keep, c_new, c)
        h_t = c_new if o_t is None else o_t * c_new
        outputs[t] = torch.where(keep, h_t, torch.zeros_like(h_t)).to(x.dtype)
    return torch.stack(outputs, dim=1), c
