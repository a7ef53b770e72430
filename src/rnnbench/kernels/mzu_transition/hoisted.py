"""The MZU scan with the input projections hoisted out of the loop: a step between the
reference and the fused scan, kept as a tested, benchmarked variant (not an implementation
name of the dispatcher; see the package docstring)."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from rnnbench.kernels.mzu_transition.reference import MZUOutput, compose_and_aggregate, hidden_size, input_size, layer_norm


def _stacked(cell) -> dict:
    """M_h and M_g weights on a leading axis; zone weights split into x and h parts, zones flattened."""
    p = {name: torch.stack([weight, cell.m_g[name]]) for name, weight in cell.m_h.items()}
    zones = p["zone_weight"]  # [2, N, d_in + d_h, d_z] -> [d_in + d_h, 2 * N * d_z]
    zones = zones.permute(2, 0, 1, 3).reshape(zones.shape[2], -1)
    d_in = input_size(cell)
    p["zone_x"], p["zone_h"] = zones[:d_in], zones[d_in:]
    return p


def hoisted(x, mask, cells, options, drop=None) -> MZUOutput:
    """Same result as ``reference``; input projections hoisted out of the loop, M_h and M_g batched."""
    B, T, _ = x.shape
    N = cells[0].m_h["zone_weight"].shape[0]
    params = [_stacked(cell) for cell in cells]
    x_zones = (x @ params[0]["zone_x"]).view(B, T, 2, N, -1).permute(1, 2, 0, 3, 4)  # [T, 2, B, N, d_z]
    h = x.new_zeros(B, hidden_size(cells))
    states, cosines = [], []
    for t in range(T):
        h_t, cos_t = h, x.new_zeros(B)
        for depth, (cell, p) in enumerate(zip(cells, params)):
            zones = (h_t @ p["zone_h"]).view(B, 2, N, -1).transpose(0, 1)
            if depth == 0:
                zones = zones + x_zones[t]
            m = compose_and_aggregate(zones, p, options).unbind(0)  # (M_h, M_g)
            m_h, m_g = (layer_norm(mi, cell, options) if i == options.ln_row else mi for i, mi in enumerate(m))
            candidate = torch.tanh(m_h)
            if drop is not None:
                candidate = candidate * drop[t, depth]
            g = torch.sigmoid(m_g)
            h_t = (1 - g) * h_t + g * candidate
            cos_t = cos_t + F.normalize(zones, dim=-1).sum(dim=-2).pow(2).sum(dim=-1).sum(dim=0) / N**2
        keep = mask[:, t]
        h = torch.where(keep.unsqueeze(-1), h_t, h)
        states.append(torch.where(keep.unsqueeze(-1), h_t, torch.zeros_like(h_t)))
        cosines.append(torch.where(keep, cos_t, torch.zeros_like(cos_t)))
    return MZUOutput(torch.stack(states, dim=1), torch.stack(cosines, dim=1))
