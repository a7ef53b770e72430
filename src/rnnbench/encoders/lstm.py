"""The (Bi)LSTM family: BiLSTM, stacked BiLSTM and the LSTM baseline paper's options.

Options (config keys of conf/encoder/bilstm.yaml and 3l_bilstm.yaml):
  hidden_size     units per direction.
  num_layers      stacked layers.
  bidirectional   forward and backward outputs concatenated (2*hidden channels).
  cell            lstm | gru.
  forget_bias     value the forget-gate bias starts at (LSTM baseline paper: 1.0).
  dropout         inverted dropout on each layer's input (paper: SST 0.5, IMDb 0.7).
  shared_weights  one set of weights runs both directions (baseline paper).
  directions_meet where a bidirectional stack joins its two directions: ``every_layer``
                  (default: each layer reads both directions of the layer below, as
                  nn.LSTM does) or ``top`` (each direction runs the whole stack on its
                  own and the two are concatenated once at the top: the baseline
                  paper's Bi-2-LSTM, section 6.2, whose "forward and backward passes'
                  final hidden states" meet at the softmax; with shared_weights it has
                  the parameters of the one-direction stack, as the paper's Table 1 says).
  residual        none | v1 (each layer's input added to its output, where sizes
                  match) | v2 (the paper's lateral residual h_t = o*tanh(c) + x_t, which
                  changes the recurrence; runs kernels.residual_lstm). In v2 the same h_t
                  goes to the next step and up to the next layer: the layer's output
                  already holds x_t, so the v1 sum is not added on top. Where the layer
                  input size differs from the hidden size, v2's lateral term uses a
                  learned linear projection of x_t: our choice, the paper's layers match.
                  The lateral term adds the layer's input before dropout, as v1 does:
                  the recurrence reads the dropped-out input, the residual the clean one,
                  so the states have the same scale in training and in evaluation.

Input dropout draws one mask for the word vectors: both directions read the same
dropped-out vectors (as a bidirectional nn.LSTM layer does), and ``EncoderOutput.inputs``
hands them to a head that averages them (the baseline paper, section 4: "the same dropout
mask to the word vectors when passing them to the RNN as when averaging them").
"""
from __future__ import annotations

import torch
from torch import nn

from rnnbench.encoders.base import Encoder, EncoderOutput, lengths_of, reverse_padded, zero_padding
from rnnbench.kernels.residual_lstm import residual_lstm
from rnnbench.nn.rnn import run_packed as _run_packed  # noqa: F401 (what run_padded must equal; tests compare)


def _one_way(rnn: nn.RNNBase, x: torch.Tensor, suffix: str) -> torch.Tensor:
    """One direction's weights of a one-layer nn.LSTM/GRU run forward over padded x, from a zero state."""
    weights = [getattr(rnn, f"{name}_l0{suffix}") for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    h0 = x.new_zeros(1, x.shape[0], rnn.hidden_size)
    if isinstance(rnn, nn.LSTM):
        return torch._VF.lstm(x, (h0, h0), weights, True, 1, 0.0, rnn.training, False, True)[0]
    return torch._VF.gru(x, h0, weights, True, 1, 0.0, rnn.training, False, True)[0]


def run_padded(rnn: nn.RNNBase, x: torch.Tensor, lengths: torch.Tensor, x_backward: torch.Tensor | None = None) -> torch.Tensor:
    """Same result as ``_run_packed``, without packing: packed sequences take a slow
    per-step path on the CPU (8-12x slower than padded input on ragged batches, measured).
    Trailing padding comes after every real step of the forward direction, so it cannot
    change a real output; the backward direction runs forward over each sequence reversed
    within its own length. Outputs at padding are zeroed, as packing leaves them.
    ``x_backward``: what the backward direction reads instead of x (RCRN's dropout draws a mask
    per direction); None: x."""
    real = (torch.arange(x.shape[1], device=x.device).unsqueeze(0) < lengths.to(x.device).unsqueeze(1)).unsqueeze(-1)
    out = _one_way(rnn, x, "")
    if rnn.bidirectional:
        x_backward = x if x_backward is None else x_backward
        backward = reverse_padded(_one_way(rnn, reverse_padded(x_backward, lengths), "_reverse"), lengths)
        out = torch.cat([out, backward], dim=-1)
    return out * real


def set_forget_bias(rnn: nn.RNNBase, value: float) -> None:
    H = rnn.hidden_size
    with torch.no_grad():
        for name, p in rnn.named_parameters():
            if name.startswith("bias_ih"):
                p[H : 2 * H].fill_(value)
            elif name.startswith("bias_hh"):
                p[H : 2 * H].fill_(0.0)


class RecurrentLayer(nn.Module):
    """One (bi)directional recurrent layer over padded input."""

    def __init__(self, input_size, hidden_size, bidirectional, cell, forget_bias, shared_weights, lateral):
        super().__init__()
        self.bidirectional = bidirectional
        self.shared_weights = shared_weights and bidirectional
        self.lateral = lateral
        self.hidden_size = hidden_size
        rnn_cls = {"lstm": nn.LSTM, "gru": nn.GRU}[cell]
        native_bidir = bidirectional and not self.shared_weights and not lateral
        self.rnn = rnn_cls(input_size, hidden_size, batch_first=True, bidirectional=native_bidir)
        if bidirectional and not native_bidir and not self.shared_weights:
            self.rnn_backward = rnn_cls(input_size, hidden_size, batch_first=True)
        else:
            self.rnn_backward = None
        if cell == "lstm" and forget_bias is not None:
            for rnn in (self.rnn, self.rnn_backward):
                if rnn is not None:
                    set_forget_bias(rnn, forget_bias)
        self.lateral_proj = (
            nn.Linear(input_size, hidden_size, bias=False) if lateral and input_size != hidden_size else None
        )

    def _one_direction(self, rnn, x, clean, mask, lengths, impl):
        if not self.lateral:
            return run_padded(rnn, x, lengths)
        r = self.lateral_proj(clean) if self.lateral_proj is not None else clean
        return residual_lstm(x, r, mask, rnn.weight_ih_l0, rnn.weight_hh_l0, rnn.bias_ih_l0 + rnn.bias_hh_l0, impl=impl)

    def forward(self, x, mask, clean=None, impl=None):
        """x: the layer's input as the recurrence reads it (after dropout); clean: the same
        input before dropout, which the lateral residual (v2) adds (default: x); impl: the
        lateral residual's kernel implementation (the encoder's ``kernel_impl``)."""
        clean = x if clean is None else clean
        lengths = lengths_of(mask)
        if not self.bidirectional or (self.rnn.bidirectional):
            return self._one_direction(self.rnn, x, clean, mask, lengths, impl)
        backward_rnn = self.rnn if self.shared_weights else self.rnn_backward
        fwd = self._one_direction(self.rnn, x, clean, mask, lengths, impl)
        bwd = self._one_direction(backward_rnn, reverse_padded(x, lengths), reverse_padded(clean, lengths), mask, lengths, impl)
        return torch.cat([fwd, reverse_padded(bwd, lengths)], dim=-1)


class LSTMEncoder(Encoder):
    """Stacked (bi)directional LSTM/GRU encoder; see the module docstring for options."""

    # 2: residual=v2 no longer adds each layer's input twice (once in the recurrence, once
    # more on the output). The version is per class, so it moved for every LSTMEncoder run,
    # though only residual=v2 results changed.
    # One more for the options ``version_for`` names (other runs keep their identity):
    # residual=v2 adds the clean input on its lateral path; directions meeting at the top
    # with input dropout read one mask for the word vectors in both directions.
    version = 2

    @classmethod
    def version_for(cls, options) -> int:
        """The version of a run with these options: one past ``version`` where the fixes
        named above change its numbers, ``version`` elsewhere (those runs are unchanged)."""
        residual = options.get("residual", "none")
        top = options.get("bidirectional", True) and options.get("directions_meet", "every_layer") == "top"
        fixed = residual == "v2" or (top and float(options.get("dropout", 0.0) or 0.0) > 0)
        return cls.version + 1 if fixed else cls.version

    def __init__(
        self,
        input_size: int,
        hidden_size: int = 200,
        num_layers: int = 1,
        bidirectional: bool = True,
        cell: str = "lstm",
        forget_bias: float | None = 1.0,
        dropout: float = 0.0,
        shared_weights: bool = False,
        residual: str = "none",
        directions_meet: str = "every_layer",
    ):
        directions = 2 if bidirectional else 1
        super().__init__(input_size, hidden_size * directions)
        if directions_meet not in ("every_layer", "top"):
            raise ValueError(f"encoder.directions_meet must be 'every_layer' or 'top', got {directions_meet!r}")
        if cell not in ("lstm", "gru"):
            raise ValueError(f"encoder.cell must be 'lstm' or 'gru', got {cell!r}")
        if residual not in ("none", "v1", "v2"):
            raise ValueError(f"encoder.residual must be one of none, v1, v2; got {residual!r}")
        if residual == "v2" and cell != "lstm":
            raise ValueError("encoder.residual=v2 (lateral residual) is defined for the LSTM cell only")
        self.causal = not bidirectional
        self.residual = residual
        self.dropout = nn.Dropout(dropout)
        # top: each direction is a one-direction stack (the backward one the same modules
        # when weights are shared); every_layer: each layer is bidirectional itself.
        self.meet_at_top = bidirectional and directions_meet == "top"
        per_layer = bidirectional and not self.meet_at_top

        def stack():
            layers, size = nn.ModuleList(), input_size
            for _ in range(num_layers):
                layers.append(RecurrentLayer(size, hidden_size, per_layer, cell, forget_bias, shared_weights, lateral=residual == "v2"))
                size = hidden_size * (2 if per_layer else 1)
            return layers

        self.layers = stack()
        self.layers_backward = stack() if self.meet_at_top and not shared_weights else None

    def _run_stack(self, layers, x, dropped_x, mask):
        """x: the stack's input; dropped_x: x after the input dropout (drawn once by the caller)."""
        h = x
        for i, layer in enumerate(layers):
            out = layer(dropped_x if i == 0 else self.dropout(h), mask, clean=h, impl=self.kernel_impl)
            if self.residual == "v1" and out.shape[-1] == h.shape[-1]:
                out = out + h
            h = zero_padding(out, mask)
        return h

    def forward(self, x, mask, context=None) -> EncoderOutput:
        dropped_x = self.dropout(x)  # one mask for the word vectors (see the module docstring)
        h = self._run_stack(self.layers, x, dropped_x, mask)
        if self.meet_at_top:
            lengths = lengths_of(mask)
            layers = self.layers if self.layers_backward is None else self.layers_backward
            backward = self._run_stack(layers, reverse_padded(x, lengths), reverse_padded(dropped_x, lengths), mask)
            h = torch.cat([h, reverse_padded(backward, lengths)], dim=-1)
        return EncoderOutput(states=h, inputs=dropped_x)
