"""MZU transition (Meng et al., AAAI 2020): a gated recurrence whose gate and
candidate are multi-zone functions, with deep transition.

One cell has two M-functions, M_h (candidate) and M_g (gate), each with its own
weights. Zones are row vectors, as in the paper:

    z_i  = W_i [x_t; h_{t-1}]                 N zones of d_z = d_h / N, no bias    (eq. 4)
    O    = compose(Z)                          J new zones o_j                     (eqs. 6-14)
             sat: softmax(Q K^T / sqrt(d_z)) V with Q, K, V = Z W_q, Z W_k, Z W_v   (J = N)
             gcn: act(D^-1/2 A D^-1/2 Z W_g), A = cos(z_i, z_j) + I              (J = N)
             cap: dynamic routing of z_i W^c_j (W^c_j shared by all inputs)      (J capsules)
    f_j  = max(0, o_j W_1 + b_1) W_2 + b_2     FFN shared across zones            (eq. 5)
    M    = [f_1; ...; f_J] W_a + b_a           concatenation, final linear map
    g_t  = sigmoid(M_g(x_t, h_{t-1}))                                              (eq. 3)
    h~_t = dropout(tanh(LN(M_h(x_t, h_{t-1}))))                                    (eq. 2)
    h_t  = (1 - g_t) * h_{t-1} + g_t * h~_t                                        (eq. 1)

Deep transition (eqs. 15-17): each step runs the cell on x_t, then L transition
cells whose input is 0, each reading the state the previous cell wrote. Their
weights for the zero input could never matter, so they have none (zones come
from W_i^h h alone) unless they share the first cell's weights.

Zone disagreement (eq. 18): D_zone = -1/N^2 sum_ij cos(z_i, z_j) over the zones
of one M-function at one token. The op returns, per token, ``zone_cosine`` =
the sum of -D_zone over every M-function evaluated there (0 at padding); the
encoder weights it into a loss.

Padding: where ``mask`` is False the state carries over and the output is 0.

Implementations (``mzu_recurrence`` dispatches; ``impl=`` forces one):

- ``reference``: the specification, one plain step at a time under autograd.
- ``hoisted``: the x-part of zone generation (W_i [x; h] = W_i^x x + W_i^h h) for
  all steps in one matmul before the loop, M_h and M_g batched on a leading axis;
  autograd still records every step (1.2x the reference at length 150).
- ``fused`` (the default on every device): ``_mzu_fused``, the whole scan as one
  autograd node with a hand-written backward (no per-step graph), the zones of
  all N zones and both M-functions in each matrix multiply, weight gradients
  accumulated in place; the small per-step pieces (zone norms and cosine, N x N
  attention, layer norm, gate and state update) compiled in C on the CPU
  (``_mzu_cpu``; torch operations elsewhere or without a C compiler). About 4x
  the reference at length 150 on this project's CPU (results/benchmarks.md).

No Triton kernel: a step is five dependent matrix multiplies whose weights every
sequence of the batch shares (zones, Q/K/V, FFN in and out, aggregation), with
all-to-all mixing between them; a fused step kernel would either reload the
weights per sequence or re-implement a GEMM per stage, while on a GPU the same
loop runs these as cuBLAS calls. What a GPU would gain from fusion is launch
overhead, which CUDA graphs over the fused loop would remove without a kernel.
"""
from __future__ import annotations

import math
from types import SimpleNamespace
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

COMPOSITIONS = ("sat", "gcn", "cap")
GCN_ACTIVATIONS = {"relu": torch.relu, "sigmoid": torch.sigmoid}
IMPLS = ("reference", "hoisted", "fused")


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


def compose_and_aggregate(zones, p):
    """Zones -> M-function output: composition, shared FFN, concatenation, linear map.

    ``p`` holds one M-function's weights (an MFunction: zones [B, N, d_z], output
    [B, d_h]) or several M-functions' weights stacked on a leading axis (zones
    [F, B, N, d_z], output [F, B, d_h]).
    """
    if p.composition == "sat":
        o, _ = self_attention(zones, p.query, p.key, p.value)
    elif p.composition == "gcn":
        o, _ = graph_convolution(zones, p.graph, p.gcn_activation)
    else:
        o, _ = dynamic_routing(zones, p.capsule, p.routing_iterations)
    hidden = torch.relu(_project(o, p.ffn_in) + p.ffn_in_bias[..., None, None, :])
    f = _project(hidden, p.ffn_out) + p.ffn_out_bias[..., None, None, :]
    return torch.einsum("...bk,...kh->...bh", f.flatten(-2), p.aggregate) + p.aggregate_bias.unsqueeze(-2)


def _weight(*shape, fan_in: int) -> nn.Parameter:
    bound = 1.0 / math.sqrt(fan_in)
    return nn.Parameter(torch.empty(*shape).uniform_(-bound, bound))


class MFunction(nn.Module):
    """One multi-zone transformation M(x, h): zone generation, composition, aggregation."""

    def __init__(self, input_size, hidden_size, num_zones, composition, ffn_size, num_capsules, routing_iterations, gcn_activation):
        super().__init__()
        self.input_size, self.num_zones = input_size, num_zones
        self.composition, self.routing_iterations, self.gcn_activation = composition, routing_iterations, gcn_activation
        d_z = hidden_size // num_zones
        outputs = num_capsules if composition == "cap" else num_zones
        d_o = hidden_size // outputs
        self.zone_weight = _weight(num_zones, input_size + hidden_size, d_z, fan_in=input_size + hidden_size)
        if composition == "sat":
            self.query, self.key, self.value = (_weight(d_z, d_z, fan_in=d_z) for _ in range(3))
        elif composition == "gcn":
            self.graph = _weight(d_z, d_z, fan_in=d_z)
        else:
            self.capsule = _weight(num_capsules, d_z, d_o, fan_in=d_z)
        self.ffn_in = _weight(d_o, ffn_size, fan_in=d_o)
        self.ffn_in_bias = nn.Parameter(torch.zeros(ffn_size))
        self.ffn_out = _weight(ffn_size, d_o, fan_in=ffn_size)
        self.ffn_out_bias = nn.Parameter(torch.zeros(d_o))
        self.aggregate = _weight(outputs * d_o, hidden_size, fan_in=outputs * d_o)
        self.aggregate_bias = nn.Parameter(torch.zeros(hidden_size))

    def forward(self, x, h):
        """x [B, input_size], h [B, d_h] -> (M(x, h) [B, d_h], zones [B, N, d_z])."""
        zones = torch.einsum("bk,nkd->bnd", torch.cat([x, h], dim=-1), self.zone_weight)
        return compose_and_aggregate(zones, self), zones


class MZUCell(nn.Module):
    """One MZU (or transition) cell: eqs. 1-3 with layer norm and dropout on the candidate."""

    def __init__(self, input_size, hidden_size, **m_options):
        super().__init__()
        self.input_size = input_size
        self.m_h = MFunction(input_size, hidden_size, **m_options)
        self.m_g = MFunction(input_size, hidden_size, **m_options)
        self.layer_norm = nn.LayerNorm(hidden_size)

    def forward(self, x, h, drop=None):
        """One step. drop: [B, d_h] dropout multipliers or None.

        Returns (new state [B, d_h], zone cosine [B] summed over M_h and M_g).
        """
        m_h, zones_h = self.m_h(x, h)
        m_g, zones_g = self.m_g(x, h)
        candidate = torch.tanh(self.layer_norm(m_h))
        if drop is not None:
            candidate = candidate * drop
        g = torch.sigmoid(m_g)
        return (1 - g) * h + g * candidate, zone_cosine(zones_h) + zone_cosine(zones_g)


class MZUTransition(nn.Module):
    """The weights of one MZU scan: the first cell and ``transition_depth`` transition cells.

    ``share_transition``: the transition cells reuse the first cell's M-functions
    with a zero input (the paper does this on Penn Treebank); otherwise each has its own.
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        composition: str = "sat",
        num_zones: int = 4,
        transition_depth: int = 1,
        ffn_size: int | None = None,
        num_capsules: int = 2,
        routing_iterations: int = 3,
        gcn_activation: str = "relu",
        share_transition: bool = False,
        dropout: float = 0.0,
    ):
        super().__init__()
        if composition not in COMPOSITIONS:
            raise ValueError(f"MZU composition must be one of {', '.join(COMPOSITIONS)}; got {composition!r}")
        if gcn_activation not in GCN_ACTIVATIONS:
            raise ValueError(f"MZU gcn_activation must be one of {', '.join(GCN_ACTIVATIONS)}; got {gcn_activation!r}")
        if hidden_size % num_zones:
            raise ValueError(f"MZU hidden_size ({hidden_size}) must be a multiple of num_zones ({num_zones})")
        if composition == "cap" and hidden_size % num_capsules:
            raise ValueError(f"MZU hidden_size ({hidden_size}) must be a multiple of num_capsules ({num_capsules})")
        if transition_depth < 0 or routing_iterations < 1 or not 0.0 <= dropout < 1.0:
            raise ValueError("MZU needs transition_depth >= 0, routing_iterations >= 1 and 0 <= dropout < 1")
        self.input_size, self.hidden_size, self.num_zones = input_size, hidden_size, num_zones
        self.dropout = dropout
        m_options = dict(
            num_zones=num_zones,
            composition=composition,
            ffn_size=ffn_size or hidden_size,
            num_capsules=num_capsules,
            routing_iterations=routing_iterations,
            gcn_activation=gcn_activation,
        )
        first = MZUCell(input_size, hidden_size, **m_options)
        self.cells = nn.ModuleList(
            [first] + [first if share_transition else MZUCell(0, hidden_size, **m_options) for _ in range(transition_depth)]
        )

    @property
    def m_functions_per_step(self) -> int:
        return 2 * len(self.cells)


class MZUOutput(NamedTuple):
    states: torch.Tensor  # [B, T, d_h], 0 at padding
    zone_cosine: torch.Tensor  # [B, T], sum of -D_zone over the step's M-functions, 0 at padding


def reference(x, mask, transition: MZUTransition, drop=None) -> MZUOutput:
    """Plain per-step loop. x [B, T, d_x], mask [B, T]; drop [T, depth + 1, B, d_h] or None."""
    B, T, _ = x.shape
    h = x.new_zeros(B, transition.hidden_size)
    states, cosines = [], []
    for t in range(T):
        h_t, cos_t = h, x.new_zeros(B)
        for depth, cell in enumerate(transition.cells):
            x_in = x[:, t] if depth == 0 else x.new_zeros(B, cell.input_size)
            h_t, cos = cell(x_in, h_t, None if drop is None else drop[t, depth])
            cos_t = cos_t + cos
        keep = mask[:, t]
        h = torch.where(keep.unsqueeze(-1), h_t, h)
        states.append(torch.where(keep.unsqueeze(-1), h_t, torch.zeros_like(h_t)))
        cosines.append(torch.where(keep, cos_t, torch.zeros_like(cos_t)))
    return MZUOutput(torch.stack(states, dim=1), torch.stack(cosines, dim=1))


def _stacked(cell: MZUCell) -> SimpleNamespace:
    """M_h and M_g weights on a leading axis; zone weights split into x and h parts, zones flattened."""
    p = SimpleNamespace(
        composition=cell.m_h.composition,
        routing_iterations=cell.m_h.routing_iterations,
        gcn_activation=cell.m_h.gcn_activation,
    )
    for name, weight in cell.m_h.named_parameters():
        setattr(p, name, torch.stack([weight, getattr(cell.m_g, name)]))
    zones = p.zone_weight  # [2, N, d_in + d_h, d_z] -> [d_in + d_h, 2 * N * d_z]
    zones = zones.permute(2, 0, 1, 3).reshape(zones.shape[2], -1)
    p.zone_x, p.zone_h = zones[: cell.input_size], zones[cell.input_size :]
    return p


def hoisted(x, mask, transition: MZUTransition, drop=None) -> MZUOutput:
    """Same result as ``reference``; input projections hoisted out of the loop, M_h and M_g batched."""
    B, T, _ = x.shape
    N = transition.num_zones
    cells = list(transition.cells)
    params = [_stacked(cell) for cell in cells]
    x_zones = (x @ params[0].zone_x).view(B, T, 2, N, -1).permute(1, 2, 0, 3, 4)  # [T, 2, B, N, d_z]
    h = x.new_zeros(B, transition.hidden_size)
    states, cosines = [], []
    for t in range(T):
        h_t, cos_t = h, x.new_zeros(B)
        for depth, (cell, p) in enumerate(zip(cells, params)):
            zones = (h_t @ p.zone_h).view(B, 2, N, -1).transpose(0, 1)
            if depth == 0:
                zones = zones + x_zones[t]
            m = compose_and_aggregate(zones, p)
            candidate = torch.tanh(cell.layer_norm(m[0]))
            if drop is not None:
                candidate = candidate * drop[t, depth]
            g = torch.sigmoid(m[1])
            h_t = (1 - g) * h_t + g * candidate
            cos_t = cos_t + F.normalize(zones, dim=-1).sum(dim=-2).pow(2).sum(dim=-1).sum(dim=0) / N**2
        keep = mask[:, t]
        h = torch.where(keep.unsqueeze(-1), h_t, h)
        states.append(torch.where(keep.unsqueeze(-1), h_t, torch.zeros_like(h_t)))
        cosines.append(torch.where(keep, cos_t, torch.zeros_like(cos_t)))
    return MZUOutput(torch.stack(states, dim=1), torch.stack(cosines, dim=1))


def candidate_dropout(transition: MZUTransition, x) -> torch.Tensor | None:
    """Inverted-dropout multipliers for every step and cell, [T, depth + 1, B, d_h]; None in eval.

    Drawn once outside the loop so every implementation applies the same masks.
    """
    if not transition.training or transition.dropout == 0.0:
        return None
    B, T, _ = x.shape
    keep = 1.0 - transition.dropout
    shape = (T, len(transition.cells), B, transition.hidden_size)
    return torch.empty(shape, dtype=x.dtype, device=x.device).bernoulli_(keep).div_(keep)


def fused(x, mask, transition: MZUTransition, drop=None) -> MZUOutput:
    """Same result as ``reference``, as one autograd node (see ``_mzu_fused``)."""
    from rnnbench.kernels import _mzu_fused

    return MZUOutput(*_mzu_fused.fused(x, mask, transition, drop))


def mzu_recurrence(x, mask, transition: MZUTransition, impl: str | None = None) -> MZUOutput:
    """Run one forward-in-time MZU scan; ``impl`` forces an implementation (default: fused)."""
    impl = impl or "fused"
    if impl not in IMPLS:
        raise ValueError(f"mzu_recurrence: unknown impl {impl!r} (known: {', '.join(IMPLS)})")
    run = {"reference": reference, "hoisted": hoisted, "fused": fused}[impl]
    return run(x, mask, transition, candidate_dropout(transition, x))
