"""LSTM with the lateral residual of the LSTM baseline paper (Res-V2).

    i, f, g, o = split(W_ih x_t + W_hh h_{t-1} + b)
    c_t = sigmoid(f) * c_{t-1} + sigmoid(i) * tanh(g)
    h_t = sigmoid(o) * tanh(c_t) + r_t            (r_t: the residual input)

The same h_t goes up to the next layer and forward in time, which is why
nn.LSTM cannot run it. ``reference`` is the per-step specification;
``residual_lstm`` dispatches by device (``impl=`` forces one):

- "cpu" and "triton" run ``multi_lstm``'s fast recurrence with one direction and the
  residual: the input projections of all steps in one matrix multiply, per step one
  recurrent matrix multiply and one fused pointwise cell (gates, c, h with r_t), and
  a hand-written backward whose weight gradients are large matrix multiplies over
  chunks of steps. The cell is compiled C on the CPU (torch operations where there is
  no C compiler) and a Triton kernel on CUDA. About 4-5x the reference's speed on
  this project's CPU at length 150 (results/benchmarks.md).
"""
from __future__ import annotations

import torch

from rnnbench.kernels import multi_lstm

IMPLS = ("reference", "cpu", "triton")


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


def residual_lstm(x, residual, mask, w_ih, w_hh, bias, impl: str | None = None):
    """Same arguments and result as ``reference``; "triton" on CUDA, "cpu" elsewhere."""
    impl = impl or ("triton" if x.is_cuda else "cpu")
    if impl == "reference":
        return reference(x, residual, mask, w_ih, w_hh, bias)
    if impl not in IMPLS:
        raise ValueError(f"residual_lstm: unknown impl {impl!r} (known: {', '.join(IMPLS)})")
    h = multi_lstm.recurrence(
        x, mask, w_ih.unsqueeze(0), w_hh.unsqueeze(0), bias.unsqueeze(0), bidirectional=False,
        cell=multi_lstm.cell_for(impl), residual=residual.unsqueeze(2),
    )
    return h.squeeze(2)
