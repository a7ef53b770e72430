"""RCRN: recurrently controlled recurrent networks (Tay et al., NeurIPS 2018).

Two controller BiRNNs produce the forget and output gates of a listener whose
input is a third BiRNN, all three reading the same x (no stacking):

    h1, h2, h3 = BiRNN_1(x), BiRNN_2(x), BiRNN_3(x)          (2*hidden channels each)
    c_t = sigmoid(h1_t) * c_{t-1} + (1 - sigmoid(h1_t)) * h3_t,  c_0 = 0
    h_t = sigmoid(h2_t) * c_t                                 (the output)

The listener is kernels.gated_scan. The three BiLSTMs read the same x, so by default
they run as one op, kernels.multi_lstm: one input projection for all three and all
steps, one batched matrix multiply and one fused cell update per step for all six
directions (three packed nn.LSTM calls would pay three projections and 6T small
steps). Their parameters stay three nn.LSTM(bidirectional) modules, so checkpoints
and parameter counts do not depend on the path. Padding is never read either way.

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
  fused               true (default): the three BiLSTMs as one kernels.multi_lstm op |
                      false: three packed nn.LSTM calls (same parameters, same outputs).
                      cell=gru always runs packed nn.GRU.
  dropout             0.0. Inverted dropout on the input of each direction of each of the
                      three BiRNNs, a mask of its own for each of the six, in training only:
                      where the authors' code puts it (every BiRNN gets ``keep_prob`` and drops
                      its forward and its backward input separately). The paper states no
                      dropout. Not listed in rcrn.yaml (a registered default of 0.0 for
                      ``encoder.dropout`` would move the LSTM and MZU runs that list it):
                      ``+encoder.dropout=0.2``. In training with dropout the BiRNNs run
                      unfused (six inputs); in evaluation they are fused as without it.
"""
from __future__ import annotations

import torch

from torch import nn

from rnnbench.encoders.base import Encoder, EncoderOutput, lengths_of
from rnnbench.encoders.lstm import RecurrentLayer, run_padded
from rnnbench.kernels.gated_scan import gated_scan
from rnnbench.kernels.multi_lstm import multi_lstm

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
        fused: bool = True,
        dropout: float = 0.0,
    ):
        super().__init__(input_size, 2 * hidden_size)
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"encoder.dropout must be in [0, 1), got {dropout}")
        self.dropout = nn.Dropout(dropout)
        if cell not in ("lstm", "gru"):
            raise ValueError(f"encoder.cell must be 'lstm' or 'gru', got {cell!r}")
        if listener_direction not in LISTENER_DIRECTIONS:
            raise ValueError(
                f"encoder.listener_direction must be one of {', '.join(LISTENER_DIRECTIONS)}; got {listener_direction!r}"
            )
        self.hidden_size = hidden_size
        self.listener_direction = listener_direction
        self.fused = fused and cell == "lstm"

        def birnn() -> RecurrentLayer:
            return RecurrentLayer(
                input_size, hidden_size, bidirectional=True, cell=cell, forget_bias=forget_bias,
                shared_weights=False, lateral=False,
            )

        self.forget_controller = birnn()
        self.output_controller = birnn()
        self.listener_base = birnn()

    def _birnns(self, x, mask):
        """The three BiRNN outputs h1, h2, h3, each [B, T, 2*hidden]."""
        layers = (self.forget_controller, self.output_controller, self.listener_base)
        if self.training and self.dropout.p > 0:  # each direction of each BiRNN reads its own mask of x
            lengths = lengths_of(mask)
            return [run_padded(layer.rnn, self.dropout(x), lengths, self.dropout(x)) for layer in layers]
        if not self.fused:
            return [layer(x, mask) for layer in layers]
        rnns = [layer.rnn for layer in layers]
        suffixes = ("l0", "l0_reverse")  # nn.LSTM's forward and backward directions
        w_ih = torch.stack([getattr(rnn, f"weight_ih_{s}") for rnn in rnns for s in suffixes])
        w_hh = torch.stack([getattr(rnn, f"weight_hh_{s}") for rnn in rnns for s in suffixes])
        bias = torch.stack([getattr(rnn, f"bias_ih_{s}") + getattr(rnn, f"bias_hh_{s}") for rnn in rnns for s in suffixes])
        h = multi_lstm(x, mask, w_ih, w_hh, bias, impl=self.kernel_impl)  # [B, T, 6, hidden]
        return h.flatten(2).chunk(3, dim=-1)

    def forward(self, x, mask, context=None) -> EncoderOutput:
        f, o, h3 = self._birnns(x, mask)
        if self.listener_direction == "forward":
            h, _ = gated_scan(f, h3, mask, o=o, logits=True, impl=self.kernel_impl)
        else:
            d = self.hidden_size
            fwd, _ = gated_scan(f[..., :d], h3[..., :d], mask, o=o[..., :d], logits=True, impl=self.kernel_impl)
            bwd, _ = gated_scan(f[..., d:], h3[..., d:], mask, o=o[..., d:], logits=True, reverse=True, impl=self.kernel_impl)
            h = torch.cat([fwd, bwd], dim=-1)
        return EncoderOutput(states=h)  # the scan leaves padded positions at exactly 0
