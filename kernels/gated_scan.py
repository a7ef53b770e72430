"""Gated linear scan: the recurrence of the RCRN listener and the DCU cell.

    c_t = f_t * c_{t-1} + (1 - f_t) * x_t
    h_t = o_t * c_t          (h_t = c_t when no output gate is given)

with f, o either gate values in [0, 1] or, with ``logits=True``, pre-sigmoid
values (the sigmoid is then applied inside the op, so a fused kernel can do it
in registers). Positions where ``mask`` is False are neither read nor written:
the state carries over them and their output is 0. ``reverse=True`` runs each
sequence from its own last token backwards.

``reference`` is the specification; ``gated_scan`` dispatches by device
(``impl=`` forces one implementation).
"""
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


def gated_scan(f, x, mask, o=None, c0=None, reverse=False, logits=False, impl: str | None = None):
    """Run the scan with the implementation for x's device (or ``impl``)."""
    impl = impl or "reference"
    if impl == "reference":
        return reference(f, x, mask, o=o, c0=c0, reverse=reverse, logits=logits)
    raise ValueError(f"gated_scan: unknown impl {impl!r} (known: reference)")
