"""A one-layer BiLSTM over padded input, packed so that padding is never read."""
from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


def run_packed(rnn: nn.RNNBase, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Run an nn.LSTM/GRU (batch_first) over padded x [B, T, I] packed by ``lengths``, so each
    backward direction starts at its sequence's own last token; outputs at padding are 0.
    An empty sequence runs one (unread) step: packing needs length >= 1."""
    packed = pack_padded_sequence(x, lengths.clamp(min=1).cpu(), batch_first=True, enforce_sorted=False)
    out, _ = rnn(packed)
    out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
    return out


class PackedBiLSTM(nn.LSTM):
    """A one-layer BiLSTM whose backward direction starts at each sequence's own end:
    forward(x [B, T, I], mask [B, T]) -> [B, T, 2 * hidden], exactly 0 at padding."""

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__(input_size, hidden_size, batch_first=True, bidirectional=True)
        self.output_size = 2 * hidden_size
        self._register_load_state_dict_pre_hook(_unwrapped_names)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        out = run_packed(super().forward, x, mask.sum(dim=1))
        return out * mask.unsqueeze(-1).to(out.dtype)


def _unwrapped_names(state_dict, prefix, *_):
    """Checkpoints of the span head's former wrapper name its LSTM's weights ``rnn.*``."""
    for key in [k for k in state_dict if k.startswith(prefix + "rnn.")]:
        state_dict[prefix + key[len(prefix + "rnn."):]] = state_dict.pop(key)
