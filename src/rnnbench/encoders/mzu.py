"""MZU: Multi-Zone Unit RNN (Meng et al., AAAI 2020), as a (bi)directional encoder.

Each step's gate and candidate come from multi-zone functions (zone generation,
composition, aggregation) and a deep transition chain; the recurrence lives in
kernels.mzu_transition. The zone disagreement regulariser (eq. 18-19) is returned
as aux_loss.

Options (conf/encoder/mzu_sat.yaml, mzu_gcn.yaml, mzu_cap.yaml):
  hidden_size          200. State size per direction; output is 2*hidden_size when bidirectional.
  composition          sat (self-attention) | gcn (graph convolution) | cap (capsule routing).
  num_zones            4 (paper). Zones of size hidden_size / num_zones.
  transition_depth     1 (paper). Transition cells with zero input after the first cell, per step.
  num_capsules         2 (paper). Output capsules J of cap; ignored otherwise.
  routing_iterations   3 (paper). Dynamic-routing iterations of cap.
  dropout              0.0. Inverted dropout on the candidate activation (paper: 0.5 PTB, 0.3 text8);
                       a fresh mask per step and cell (our choice, the paper does not say).
  disagreement_weight  1.0 (paper's lambda). The loss is -lambda * sum of D_zone = +lambda * the
                       mean zone cosine (self-pairs included, eq. 18), summed over M-functions,
                       cells, directions and real tokens: minimising it pushes zones apart.
                       0 returns no aux_loss.
  disagreement_normalizer
                       token (default: divided by the number of real tokens, the ratio of
                       regulariser to likelihood of the paper's per-token language-model loss)
                       | sequence (the token sum per sequence, averaged over the batch: the
                       literal eq. 19 beside a per-sentence loss; on TREC it outweighs the
                       cross-entropy tens of times and stalls training for epochs). Our choice.
  bidirectional        true: forward and backward scans concatenated (each sequence's backward
                       scan starts at its own last token); false: forward only, causal.
  ffn_size             null = hidden_size. Filter size of the zone FFN (our default; paper: 1000
                       at hidden 800 on PTB, 3072 at 1536 on text8).
  gcn_activation       relu (default) | sigmoid. The sigma of eq. 9 (our choice: the paper
                       follows Kipf and Welling, whose sigma is ReLU; its eq. 3 uses sigma for sigmoid).
  share_transition     false (default) | true: transition cells reuse the first cell's weights
                       (the paper on Penn Treebank).

Fixed by the paper or by necessity, not options: zone generation has no bias (eq. 4);
layer norm is applied to M_h's output before the tanh (the paper only says it uses layer
norm); GCN degrees are sums of absolute edge weights, since cosines can be negative.
"""
from __future__ import annotations

import torch

from rnnbench.encoders.base import Encoder, EncoderOutput, lengths_of, reverse_padded
from rnnbench.kernels.mzu_transition import MZUTransition, mzu_recurrence

NORMALIZERS = ("sequence", "token")


class MZU(Encoder):
    """Multi-zone unit encoder; see the module docstring for options."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int = 200,
        composition: str = "sat",
        num_zones: int = 4,
        transition_depth: int = 1,
        num_capsules: int = 2,
        routing_iterations: int = 3,
        dropout: float = 0.0,
        disagreement_weight: float = 1.0,
        disagreement_normalizer: str = "token",
        bidirectional: bool = True,
        ffn_size: int | None = None,
        gcn_activation: str = "relu",
        share_transition: bool = False,
    ):
        super().__init__(input_size, hidden_size * (2 if bidirectional else 1))
        if disagreement_normalizer not in NORMALIZERS:
            raise ValueError(
                f"encoder.disagreement_normalizer must be one of {', '.join(NORMALIZERS)}; got {disagreement_normalizer!r}"
            )
        self.causal = not bidirectional
        self.disagreement_weight = disagreement_weight
        self.disagreement_normalizer = disagreement_normalizer
        options = dict(
            composition=composition,
            num_zones=num_zones,
            transition_depth=transition_depth,
            ffn_size=ffn_size,
            num_capsules=num_capsules,
            routing_iterations=routing_iterations,
            gcn_activation=gcn_activation,
            share_transition=share_transition,
            dropout=dropout,
        )
        self.forward_scan = MZUTransition(input_size, hidden_size, **options)
        self.backward_scan = MZUTransition(input_size, hidden_size, **options) if bidirectional else None

    def forward(self, x, mask, context=None) -> EncoderOutput:
        fwd = mzu_recurrence(x, mask, self.forward_scan)
        states, cosine = fwd.states, fwd.zone_cosine.sum()
        scans = 1
        if self.backward_scan is not None:
            lengths = lengths_of(mask)
            bwd = mzu_recurrence(reverse_padded(x, lengths), mask, self.backward_scan)
            states = torch.cat([states, reverse_padded(bwd.states, lengths)], dim=-1)
            cosine, scans = cosine + bwd.zone_cosine.sum(), 2
        tokens = mask.sum().clamp(min=1)
        evaluations = tokens * scans * self.forward_scan.m_functions_per_step
        stats = {"zone_cosine": float(cosine.detach() / evaluations)}
        aux_loss = None
        if self.disagreement_weight != 0.0:
            per = x.shape[0] if self.disagreement_normalizer == "sequence" else tokens
            aux_loss = self.disagreement_weight * cosine / per
        return EncoderOutput(states=states, aux_loss=aux_loss, stats=stats)
