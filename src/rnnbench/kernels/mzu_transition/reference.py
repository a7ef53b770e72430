"""The MZU transition's equations and its plain per-step loop: the specification of
``mzu_transition`` (equations in the package docstring). Tensor functions only: the
encoder's modules (``rnnbench.encoders.mzu``) hold the weights."""
from __future__ import annotations

import math
from typing import NamedTuple

import torch
import torch.nn.functional as F

GCN_ACTIVATIONS = {"relu": torch.relu, "sigmoid": torch.sigmoid}
# The weights of one M-function, by composition, in the order of the encoder's parameters.
M_NAMES = {
    "sat": ("zone_weight", "query", "key", "value", "ffn_in", "ffn_in_bias", "ffn_out", "ffn_out_bias", "aggregate", "aggregate_bias"),
    "gcn": ("zone_weight", "graph", "ffn_in", "ffn_in_bias", "ffn_out", "ffn_out_bias", "aggregate", "aggregate_bias"),
    "cap": ("zone_weight", "capsule", "ffn_in", "ffn_in_bias", "ffn_out", "ffn_out_bias", "aggregate", "aggregate_bias"),
}


class MZUOutput(NamedTuple):
    states: torch.Tensor  # [B, T, d_h], 0 at padding
    zone_cosine: torch.Tensor  # [B, T], sum of -D_zone over the step's M-functions, 0 at padding


def hidden_size(cells) -> int:
    return cells[0].ln_weight.shape[0]


def input_size(cell) -> int:
    """The cell's input width: the zone weights read [x; h]."""
    return cell.m_h["zone_weight"].shape[1] - cell.ln_weight.shape[0]


def _project(z, w):
    """z [..., B, N, d] @ w [..., d, e]: the weights' leading axes are batch axes, never broadcast over B."""
    return torch.einsum("...bnd,...de->...bne", z, w)


def self_attention(z, w_q, w_k, w_v):
    """Eq. 6 over zones z [..., B, N, d_z]. Returns (new zones [..., B, N, d_z], weights [..., B, N, N])."""
    q, k, v = _project(z, w_q), _project(z, w_k), _project(z, w_v)
    weights = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(z.shape[-1]), dim=-1)
    return weights @ v, weights


def normalised_adjacency(z):
    """D^-1/2 (A + I) D^-1/2 with A_ij = cos(z_i, z_j) (eqs. 7-8, self-loops added after).

    Cosines can be negative, so the paper's degree sum_j A_ij can be zero or
    negative; we use sum_j |A_ij|, which is the same whenever no cosine is negative.
    """
    unit = F.normalize(z, dim=-1)
    adjacency = unit @ unit.transpose(-1, -2) + torch.eye(z.shape[-2], dtype=z.dtype, device=z.device)
    d = adjacency.abs().sum(dim=-1).rsqrt()
    return d.unsqueeze(-1) * adjacency * d.unsqueeze(-2)


def graph_convolution(z, w_g, activation: str):
    """Eq. 9 over zones z [..., B, N, d_z]. Returns (new zones [..., B, N, d_g], normalised adjacency)."""
    adjacency = normalised_adjacency(z)
    return GCN_ACTIVATIONS[activation](_project(adjacency @ z, w_g)), adjacency


def squash(s, eps: float = 1e-9):
    """Eq. 13: ||s||^2 / (1 + ||s||^2) * s / ||s|| (eps keeps the gradient finite at s = 0)."""
    sq = s.pow(2).sum(dim=-1, keepdim=True)
    return s * sq / ((1 + sq) * torch.sqrt(sq + eps))


def dynamic_routing(z, w_c, iterations: int):
    """Eqs. 10-14: z [..., B, N, d_z] routed to J capsules by w_c [..., J, d_z, d_o].

    Returns (capsules [..., B, J, d_o], couplings [iterations, ..., B, J, N]): the
    coefficients c_ij of each iteration, stored output-major (softmax over J is dim -2).
    """
    predictions = torch.einsum("...bnd,...jde->...bjne", z, w_c)  # z^_{j|i}: [..., B, J, N, d_o]
    logits = torch.zeros(predictions.shape[:-1], dtype=z.dtype, device=z.device)  # b_ij, [..., B, J, N]
    couplings = []
    for it in range(iterations):
        c = torch.softmax(logits, dim=-2)
        couplings.append(c)
        o = squash((c.unsqueeze(-1) * predictions).sum(dim=-2))
        if it < iterations - 1:
            logits = logits + (predictions * o.unsqueeze(-2)).sum(dim=-1)
    return o, torch.stack(couplings)


def zone_cosine(z):
    """-D_zone of eq. 18: mean cosine over all N^2 ordered zone pairs (self-pairs included)."""
    unit = F.normalize(z, dim=-1)
    return (unit @ unit.transpose(-1, -2)).mean(dim=(-1, -2))


def compose_and_aggregate(zones, w, options):
    """Zones -> M-function output: composition, shared FFN, concatenation, linear map.

    ``w`` holds one M-function's weights by name (zones [B, N, d_z], output [B, d_h]) or
    several M-functions' weights stacked on a leading axis (zones [F, B, N, d_z], output
    [F, B, d_h]); ``options`` (``MZUOptions``) the composition and its settings.
    """
    if options.composition == "sat":
        o, _ = self_attention(zones, w["query"], w["key"], w["value"])
    elif options.composition == "gcn":
        o, _ = graph_convolution(zones, w["graph"], options.gcn_activation)
    else:
        o, _ = dynamic_routing(zones, w["capsule"], options.routing_iterations)
    hidden = torch.relu(_project(o, w["ffn_in"]) + w["ffn_in_bias"][..., None, None, :])
    f = _project(hidden, w["ffn_out"]) + w["ffn_out_bias"][..., None, None, :]
    return torch.einsum("...bk,...kh->...bh", f.flatten(-2), w["aggregate"]) + w["aggregate_bias"].unsqueeze(-2)


def m_function(x, h, w, options):
    """One multi-zone transformation M(x, h), eqs. 4-14 and aggregation: x [B, d_in],
    h [B, d_h] -> (M(x, h) [B, d_h], zones [B, N, d_z])."""
    zones = torch.einsum("bk,nkd->bnd", torch.cat([x, h], dim=-1), w["zone_weight"])
    return compose_and_aggregate(zones, w, options), zones


def layer_norm(m, cell, options):
    """The cell's layer norm over the last axis of m (an M-function's output)."""
    return F.layer_norm(m, m.shape[-1:], cell.ln_weight, cell.ln_bias, options.layer_norm_eps)


def cell_step(cell, options, x, h, drop=None):
    """One MZU (or transition) cell, eqs. 1-3 with layer norm (on M_g or M_h, ``options.layer_norm``)
    and dropout on the candidate. drop: [B, d_h] dropout multipliers or None. Returns (new
    state [B, d_h], zone cosine [B] summed over M_h and M_g)."""
    m_h, zones_h = m_function(x, h, cell.m_h, options)
    m_g, zones_g = m_function(x, h, cell.m_g, options)
    if options.layer_norm == "gate":
        m_g = layer_norm(m_g, cell, options)
    else:
        m_h = layer_norm(m_h, cell, options)
    candidate = torch.tanh(m_h)
    if drop is not None:
        candidate = candidate * drop
    g = torch.sigmoid(m_g)
    return (1 - g) * h + g * candidate, zone_cosine(zones_h) + zone_cosine(zones_g)


def reference(x, mask, cells, options, drop=None) -> MZUOutput:
    """Plain per-step loop. x [B, T, d_x], mask [B, T]; cells: the ``CellWeights`` of the
    first cell and the transition cells; drop [T, depth + 1, B, d_h] or None."""
    B, T, _ = x.shape
    h = x.new_zeros(B, hidden_size(cells))
    states, cosines = [], []
    for t in range(T):
        h_t, cos_t = h, x.new_zeros(B)
        for depth, cell in enumerate(cells):
            x_in = x[:, t] if depth == 0 else x.new_zeros(B, input_size(cell))
            h_t, cos = cell_step(cell, options, x_in, h_t, None if drop is None else drop[t, depth])
            cos_t = cos_t + cos
        keep = mask[:, t]
        h = torch.where(keep.unsqueeze(-1), h_t, h)
        states.append(torch.where(keep.unsqueeze(-1), h_t, torch.zeros_like(h_t)))
        cosines.append(torch.where(keep, cos_t, torch.zeros_like(cos_t)))
    return MZUOutput(torch.stack(states, dim=1), torch.stack(cosines, dim=1))
