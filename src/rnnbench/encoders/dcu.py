"""DCU: dilated compositional units (Tay et al., EMNLP 2018), three encoders.

Gates come from multi-granular reasoning over blocks of words, not from a
recurrence, so they are computed for all positions at once:

    fold(r):    sum each block of r consecutive words (padding masked out of the
                sums; the sequence padded to a multiple of r), then ReLU(W_a^r s + b_a^r)
                with separate parameters per range r
    unfold(r):  word t gets block floor(t / r); crop back to T
    g_t       = F2(F1([w_t^{r1}; ...; w_t^{rk}])),   F1, F2: ReLU feed-forward layers

Because F2 ends in a ReLU (as the paper writes it), sigmoid(g_t) lies in [0.5, 1).
A block crossing a sequence's end holds only that sequence's real words, so
padding never changes a real position's output.

Encoders built on the gates:
  SimDCU   z_t = tanh(W_p w_t + b_p),  y_t = sigmoid(g_t) * w_t + (1 - sigmoid(g_t)) * z_t
  DCU      c_t = sigmoid(g_t) * c_{t-1} + (1 - sigmoid(g_t)) * z_t,  h_t = o_t * c_t,
           o_t = W_o w_t + b_o  (run by kernels.gated_scan)
  DCULSTM  a DCU layer on top of a one-layer BiLSTM (the paper's "DCU-LSTM").

Options common to all (conf/encoder/dcu.yaml, sim_dcu.yaml, dcu_lstm.yaml):
  hidden_size  200. SimDCU and DCU: output width (per direction for DCU);
               DCULSTM: BiLSTM units per direction, output 2*hidden_size.
  ranges       [1, 2, 4, 10, 25], the paper's block sizes.
  dropout      0.0. Inverted dropout on the input of each layer, in training only: the
               paper (section 4.4) tunes dropout "on all layers including the embedding
               layer" (the embedding layer's is ``embedding.dropout``, the heads' their
               ``dropout``). SimDCU and DCU: on the encoder's input (one mask read by the
               gates, the candidate and the output gate); DCULSTM: on the BiLSTM's input and
               on the BiLSTM's output, the DCU layer's input. Not listed in the configs (a
               registered default of 0.0 for ``encoder.dropout`` would move the LSTM and MZU
               runs that list it): ``+encoder.dropout=0.2``.
Our choices where the paper's widths are tied to d = input width: the fold layers
and F1 have hidden_size units; F2 has the gate width.
"""
from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn
from torch.nn import functional as F

from rnnbench.encoders.base import Encoder, EncoderOutput, zero_padding
from rnnbench.encoders.lstm import RecurrentLayer
from rnnbench.kernels.gated_scan import gated_scan

PAPER_RANGES = (1, 2, 4, 10, 25)


def fold(w: torch.Tensor, mask: torch.Tensor | None, r: int) -> torch.Tensor:
    """Sum every r consecutive words of w [B, T, D]: [B, ceil(T/r), D], padding excluded
    (mask None: w is already zero at padding)."""
    B, T, D = w.shape
    if mask is not None:
        w = zero_padding(w, mask)
    if r == 1:
        return w
    blocks = -(-T // r)
    w = F.pad(w, (0, 0, 0, blocks * r - T))
    return w.view(B, blocks, r, D).sum(dim=2)


def unfold(blocks: torch.Tensor, r: int, length: int) -> torch.Tensor:
    """Give word t its block floor(t/r): [B, T/r, D] -> [B, length, D]."""
    if r == 1:
        return blocks[:, :length]
    B, n, D = blocks.shape
    # a broadcast copy, whose backward is a plain sum over each block
    return blocks.unsqueeze(2).expand(B, n, r, D).reshape(B, n * r, D)[:, :length]


class MultiGranularGates(nn.Module):
    """g_t = F2(F1([w_t^{r1}; ...; w_t^{rk}])) from folded-unfolded blocks."""

    def __init__(self, input_size: int, hidden_size: int, gate_size: int, ranges: Sequence[int]):
        super().__init__()
        if not ranges or any(int(r) < 1 for r in ranges):
            raise ValueError(f"encoder.ranges must be a non-empty list of positive block sizes, got {list(ranges)}")
        self.ranges = tuple(int(r) for r in ranges)
        self.fold_layers = nn.ModuleList(nn.Linear(input_size, hidden_size) for _ in self.ranges)
        self.f1 = nn.Linear(len(self.ranges) * hidden_size, hidden_size)
        self.f2 = nn.Linear(hidden_size, gate_size)

    def forward(self, w: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        T = w.shape[1]
        w = zero_padding(w, mask)  # once for every range
        # F1 of the concatenation [w^{r1}; ...; w^{rk}] is the sum of each range's share
        # W1_r w^r. w^r is constant over a block, so its share is computed once per block
        # (T/r rows, not T) and then given to the block's words: the same function with
        # sum_r 1/r row-products of F1 per word instead of k (1.9 instead of 5 with the
        # paper's ranges), and no [B, T, k * hidden] concatenation.
        shares = self.f1.weight.split(self.fold_layers[0].out_features, dim=1)
        pre = None
        for r, layer, share in zip(self.ranges, self.fold_layers, shares):
            part = unfold(F.linear(torch.relu(layer(fold(w, None, r))), share), r, T)
            pre = part if pre is None else pre + part
        return torch.relu(self.f2(torch.relu(pre + self.f1.bias)))


class SimDCU(Encoder):
    """Simple (non-recurrent) DCU encoding: a highway-like mix of w_t and tanh(W_p w_t + b_p).

    The mix needs w_t at the output width; where input_size != hidden_size the
    input first goes through a learned linear projection (our choice: the paper's
    encoder input already has the encoder's width).
    """

    def __init__(self, input_size: int, hidden_size: int = 200, ranges: Sequence[int] = PAPER_RANGES, dropout: float = 0.0):
        super().__init__(input_size, hidden_size)
        self.input_projection = nn.Linear(input_size, hidden_size) if input_size != hidden_size else None
        self.gates = MultiGranularGates(hidden_size, hidden_size, hidden_size, ranges)
        self.candidate = nn.Linear(hidden_size, hidden_size)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask, context=None) -> EncoderOutput:
        x = self.dropout(x)
        w = self.input_projection(x) if self.input_projection is not None else x
        g = torch.sigmoid(self.gates(w, mask))
        z = torch.tanh(self.candidate(w))
        return EncoderOutput(states=zero_padding(g * w + (1 - g) * z, mask))


class DCU(Encoder):
    """Recurrent DCU cell: gates precomputed by multi-granular reasoning, then a gated scan.

    Options beyond the module docstring's:
      output_gate_sigmoid  false (default, the paper: o_t = W_o w_t + b_o) | true
                           (the released code: o_t = sigmoid(W_o w_t + b_o)).
      bidirectional        false (default, the paper's forward-only cell) | true: the
                           gates are computed at twice the width, the first hidden_size
                           channels scanned forward and the rest backward from each
                           sequence's last token, concatenated (our choice).
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int = 200,
        ranges: Sequence[int] = PAPER_RANGES,
        output_gate_sigmoid: bool = False,
        bidirectional: bool = False,
        dropout: float = 0.0,
    ):
        directions = 2 if bidirectional else 1
        super().__init__(input_size, hidden_size * directions)
        self.dropout = nn.Dropout(dropout)
        self.hidden_size = hidden_size
        self.bidirectional = bidirectional
        self.output_gate_sigmoid = output_gate_sigmoid
        width = hidden_size * directions
        self.gates = MultiGranularGates(input_size, hidden_size, width, ranges)
        self.candidate = nn.Linear(input_size, width)
        self.output_gate = nn.Linear(input_size, width)

    def _scan(self, g, z, o, mask, reverse=False):
        if self.output_gate_sigmoid:
            h, _ = gated_scan(g, z, mask, o=o, logits=True, reverse=reverse, impl=self.kernel_impl)
            return h
        c, _ = gated_scan(g, z, mask, logits=True, reverse=reverse, impl=self.kernel_impl)
        return o * c  # c is 0 at padding, so h is too

    def forward(self, x, mask, context=None) -> EncoderOutput:
        x = self.dropout(x)
        g = self.gates(x, mask)
        z = torch.tanh(self.candidate(x))
        o = self.output_gate(x)
        if not self.bidirectional:
            return EncoderOutput(states=self._scan(g, z, o, mask))
        d = self.hidden_size
        fwd = self._scan(g[..., :d], z[..., :d], o[..., :d], mask)
        bwd = self._scan(g[..., d:], z[..., d:], o[..., d:], mask, reverse=True)
        return EncoderOutput(states=torch.cat([fwd, bwd], dim=-1))


class DCULSTM(Encoder):
    """DCU-LSTM: a recurrent DCU layer over a one-layer BiLSTM, keeping its 2*hidden width.

    Options beyond the module docstring's:
      output_gate_sigmoid  as in DCU (false, the paper).
      dcu_bidirectional    as DCU's bidirectional (false, the paper); when true each
                           DCU direction has hidden_size channels, so the output
                           stays 2*hidden_size.
      forget_bias          1.0, the BiLSTM's initial forget-gate bias, as in our
                           BiLSTM baselines (our choice, the paper does not say).
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int = 200,
        ranges: Sequence[int] = PAPER_RANGES,
        output_gate_sigmoid: bool = False,
        dcu_bidirectional: bool = False,
        forget_bias: float | None = 1.0,
        dropout: float = 0.0,
    ):
        super().__init__(input_size, 2 * hidden_size)
        self.dropout = nn.Dropout(dropout)  # the BiLSTM's input; the DCU layer drops its own
        self.bilstm = RecurrentLayer(
            input_size, hidden_size, bidirectional=True, cell="lstm", forget_bias=forget_bias,
            shared_weights=False, lateral=False,
        )
        dcu_width = hidden_size if dcu_bidirectional else 2 * hidden_size
        self.dcu = DCU(2 * hidden_size, dcu_width, ranges, output_gate_sigmoid, dcu_bidirectional, dropout)

    def forward(self, x, mask, context=None) -> EncoderOutput:
        return self.dcu(self.bilstm(self.dropout(x), mask), mask)
