"""Several directional LSTMs over one input as plain per-step loops: the specification
of ``multi_lstm``."""
from __future__ import annotations

import torch


def reference(x, mask, w_ih, w_hh, bias, bidirectional=True):
    """Each directional LSTM on its own, one plain step at a time.

    x [B, T, I]; mask [B, T] (padding at the end); w_ih [D, 4H, I], w_hh [D, 4H, H],
    bias [D, 4H] (b_ih + b_hh); gate order i, f, g, o as nn.LSTM. With
    ``bidirectional`` the D = 2N directions are ordered as N nn.LSTM(bidirectional)
    layers list them (LSTM 1 forward, LSTM 1 backward, LSTM 2 forward, ...), and a
    backward direction starts at each sequence's own last token. Returns
    h [B, T, D, H], zero at padding; the state does not change over padding.
    """
    B, T, _ = x.shape
    D, _, H = w_hh.shape
    directions = []
    for d in range(D):
        backward = bidirectional and d % 2 == 1
        h = c = x.new_zeros(B, H)
        outputs = [None] * T
        for t in range(T - 1, -1, -1) if backward else range(T):
            i, f, g, o = (x[:, t] @ w_ih[d].t() + h @ w_hh[d].t() + bias[d]).chunk(4, dim=-1)
            c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h_new = torch.sigmoid(o) * torch.tanh(c_new)
            keep = mask[:, t].unsqueeze(-1)
            c = torch.where(keep, c_new, c)
            h = torch.where(keep, h_new, h)
            outputs[t] = torch.where(keep, h_new, torch.zeros_like(h_new))
        directions.append(torch.stack(outputs, dim=1))
    return torch.stack(directions, dim=2)
