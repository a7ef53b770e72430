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
    g_t  = sigmoid(LN(M_g(x_t, h_{t-1})))                                          (eq. 3)
    h~_t = dropout(tanh(M_h(x_t, h_{t-1})))                                        (eq. 2)
    h_t  = (1 - g_t) * h_{t-1} + g_t * h~_t                                        (eq. 1)

The paper applies layer normalisation without saying where. ``MZUOptions.layer_norm``
places it: ``gate`` (above: on M_g before the sigmoid, where the first author's code for
DTMT, the deep-transition RNN MZU builds on, puts it) or ``candidate`` (on M_h before the
tanh: h~_t = dropout(tanh(LN(M_h))), g_t = sigmoid(M_g); the encoder's version 2).

Deep transition (eqs. 15-17): each step runs the cell on x_t, then L transition
cells whose input is 0, each reading the state the previous cell wrote. Their
weights for the zero input could never matter, so they have none (zones come
from W_i^h h alone) unless they share the first cell's weights.

Zone disagreement (eq. 18): D_zone = -1/N^2 sum_ij cos(z_i, z_j) over the zones
of one M-function at one token. The op returns, per token, ``zone_cosine`` =
the sum of -D_zone over every M-function evaluated there (0 at padding); the
encoder weights it into a loss.

Padding: where ``mask`` is False the state carries over and the output is 0.

The op takes tensors: each cell's weights as a ``CellWeights`` (M_h's and M_g's weights
by name, the layer norm's affine parameters), a shared transition cell being the same
``CellWeights`` object as the first cell; the encoder's modules that hold them are in
``rnnbench.encoders.mzu``.

Implementations (names and fallback: ``rnnbench.kernels.dispatch``):

- ``reference`` (``reference.py``): the specification, one plain step at a time under
  autograd.
- ``torch`` (``fused.py``, the default on CUDA): the whole scan as one autograd node with
  a hand-written backward (no per-step graph), the zones of all N zones and both
  M-functions in each matrix multiply, weight gradients accumulated in place; the small
  per-step pieces (zone norms and cosine, N x N attention, layer norm, gate and state
  update) as torch operations.
- ``cpu`` (``cpu.py``, ``cpu.c``): the same fused scan with those small pieces compiled
  in C. About 4x the reference at length 150 on this project's CPU
  (results/benchmarks.md).
- ``hoisted`` (``hoisted.py``) is not a dispatcher name but a tested variant between the
  two: the x-part of zone generation (W_i [x; h] = W_i^x x + W_i^h h) for all steps in
  one matmul before the loop, M_h and M_g batched on a leading axis; autograd still
  records every step (1.2x the reference at length 150).

No Triton kernel (``impl="triton"`` is refused; as the process-wide default it runs
``torch`` with a warning): a step is five dependent matrix multiplies whose weights
every sequence of the batch shares (zones, Q/K/V, FFN in and out, aggregation), with
all-to-all mixing between them; a fused step kernel would either reload the weights per
sequence or re-implement a GEMM per stage, while on a GPU the same loop runs these as
cuBLAS calls. What a GPU would gain from fusion is launch overhead, which CUDA graphs
over the fused loop would remove without a kernel.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import torch

from rnnbench.kernels import dispatch
from rnnbench.kernels.mzu_transition.hoisted import hoisted
from rnnbench.kernels.mzu_transition.reference import (
    GCN_ACTIVATIONS,
    M_NAMES,
    MZUOutput,
    cell_step,
    compose_and_aggregate,
    dynamic_routing,
    graph_convolution,
    m_function,
    normalised_adjacency,
    reference,
    self_attention,
    squash,
    zone_cosine,
)

COMPOSITIONS = ("sat", "gcn", "cap")
LAYER_NORMS = ("gate", "candidate")  # where the layer norm sits: on M_g before the sigmoid, or on M_h before the tanh
IMPLS = ("reference", "torch", "cpu")

__all__ = [
    "COMPOSITIONS", "GCN_ACTIVATIONS", "IMPLS", "LAYER_NORMS", "M_NAMES", "CellWeights", "MZUOptions", "MZUOutput", "candidate_dropout",
    "cell_step", "compose_and_aggregate", "dynamic_routing", "graph_convolution", "hoisted", "m_function",
    "mzu_transition", "normalised_adjacency", "reference", "self_attention", "squash", "zone_cosine",
]


class CellWeights(NamedTuple):
    """One cell's weights. m_h, m_g: {name: tensor} as ``M_NAMES`` lists them, zone_weight
    [N, d_in + d_h, d_z] (d_in = 0 for a transition cell of its own); ln_weight, ln_bias [d_h]."""

    m_h: dict
    m_g: dict
    ln_weight: torch.Tensor
    ln_bias: torch.Tensor


@dataclass(frozen=True)
class MZUOptions:
    """What is not a weight: the composition and its settings, the layer norm's place and epsilon."""

    composition: str = "sat"
    routing_iterations: int = 3
    gcn_activation: str = "relu"
    layer_norm_eps: float = 1e-5
    layer_norm: str = "gate"  # LAYER_NORMS; "candidate" was the only placement before the option

    @property
    def ln_row(self) -> int:
        """The M-function the layer norm reads, as a row of the stacked [M_h; M_g]: 1 (gate) or 0 (candidate)."""
        return 1 if self.layer_norm == "gate" else 0


def mzu_transition(x, mask, cells, options: MZUOptions, drop=None, impl: str | None = None) -> MZUOutput:
    """Run one forward-in-time MZU scan. x [B, T, d_x], mask [B, T]; cells: the first
    cell's and each transition cell's ``CellWeights``; drop [T, len(cells), B, d_h]
    (``candidate_dropout``) or None. ``impl``: see ``dispatch``."""
    first = cells[0]
    dispatch.check_shapes(
        "mzu_transition", x=(x, "B T I"), mask=(mask, "B T"), drop=(drop, f"T {len(cells)} B H"),
        ln_weight=(first.ln_weight, "H"), zone_weight=(first.m_h["zone_weight"], "N K Z"),
    )
    if first.m_h["zone_weight"].shape[1] != x.shape[-1] + first.ln_weight.shape[0]:
        raise dispatch.KernelError(
            f"mzu_transition: the first cell's zone weights read {first.m_h['zone_weight'].shape[1]} = d_x + d_h values, "
            f"but x has d_x = {x.shape[-1]} and the state d_h = {first.ln_weight.shape[0]}"
        )
    impl = dispatch.resolve("mzu_transition", IMPLS, x, impl)
    if impl == "reference":
        return reference(x, mask, cells, options, drop)
    from rnnbench.kernels.mzu_transition import fused

    return MZUOutput(*fused.fused(x, mask, cells, options, drop, compiled=impl == "cpu"))


def candidate_dropout(x, cells: int, hidden_size: int, p: float) -> torch.Tensor | None:
    """Inverted-dropout multipliers for every step and cell, [T, cells, B, hidden_size];
    None when p is 0. Drawn once outside the loop so every implementation applies the same
    masks (the caller passes p = 0 in eval)."""
    if p == 0.0:
        return None
    B, T, _ = x.shape
    keep = 1.0 - p
    return torch.empty((T, cells, B, hidden_size), dtype=x.dtype, device=x.device).bernoulli_(keep).div_(keep)
