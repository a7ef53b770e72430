"""RCRN: recurrently controlled recurrent networks (Tay et al., NeurIPS 2018).

Two controller BiRNNs produce the forget and output gates of a listener whose
input is a third BiRNN, all three reading the same x (no stacking):

    h1, h2, h3 = BiRNN_1(x), BiRNN_2(x), BiRNN_3(x)          (2*hidden channels each)
    c_t = sigmoid(h1_t) * c_{t-1} + (1 - sigmoid(h1_t)) * h3_t,  c_0 = 0
    h_t = sigmoid(h2_t) * c_t                                 (the output)

The listener is kernels.gated_scan; the BiRNNs are packed nn.LSTM/nn.GRU
(lstm.RecurrentLayer), so padding is never read.

Options (conf/encoder/rcrn.yaml, rcrn_gru.yaml):
  hidden_size         200. Units per direction of each BiRNN; output is 2*hidden_size.
  cell                lstm (default) | gru (the paper's GRU variant: nothing else changes).
  listener_direction  forward (default, the authors' code: one forward scan over all
                      2*hidden channels) | bidirectional (forward channels scanned forward,
                      backward channels scanned backward from each sequence's last token).
                      Our choice, the paper does not say; record it with the results.
  forget_bias         1.0. Initial forget-gate bias of the three BiLSTMs, as in our
                      BiLSTM baselines (our choice, the paper does not say); ignored
                      for cell=gru.
"""
from __future__ import annotations

import torch

from rnnbench.encoders.base import Encoder, EncoderOutput
from rnnbench.encoders.lstm import RecurrentLayer
from rnnbench.kernels import gated_scan as gated_scan_op

LISTENER_DIRECTIONS = ("forward", "bidirectional")


class RCRN(Encoder):
    """Controller-listener encoder; see the module docstring for options."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int = 200,
        cell: str = "lstm",
        listener_direction: str = "forward",
        forget_bias: float | None = 1.0,
    ):
        super().__init__(input_size, 2 * hidden_size)
        if cell not in ("lstm", "gru"):
            raise ValueError(f"encoder.cell must be 'lstm' or 'gru', got {cell!r}")
        if listener_direction not in LISTENER_DIRECTIONS:
            raise ValueError(
                f"encoder.listener_direction must be one of {', '.join(LISTENER_DIRECTIONS)}; got {listener_direction!r}"
            )
        self.hidden_size = hidden_size
        self.listener_direction = listener_direction

        def birnn() -> RecurrentLayer:
            return RecurrentLayer(
                input_size, hidden_size, bidirectional=True, cell=cell, forget_bias=forget_bias,
                shared_weights=False, lateral=False,
            )

        self.forget_controller = birnn()
        self.output_controller = birnn()
        self.listener_base = birnn()

    def forward(self, x, mask, context=None) -> EncoderOutput:
        f = self.forget_controller(x, mask)
        o = self.output_controller(x, mask)
        h3 = self.listener_base(x, mask)
        if self.listener_direction == "forward":
            h, _ = gated_scan_op.gated_scan(f, h3, mask, o=o, logits=True)
        else:
            d = self.hidden_size
            fwd, _ = gated_scan_op.gated_scan(f[..., :d], h3[..., :d], mask, o=o[..., :d], logits=True)
            bwd, _ = gated_scan_op.gated_scan(f[..., d:], h3[..., d:], mask, o=o[..., d:], logits=True, reverse=True)
            h = torch.cat([fwd, bwd], dim=-1)
        return EncoderOutput(states=h)  # the scan leaves padded positions at exactly 0
