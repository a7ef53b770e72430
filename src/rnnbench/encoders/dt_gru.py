"""Deep-transition GRU (the MZU paper's "GRU (With-DT)" baseline, Tables 4 and 6).

The MZU paper (Meng et al., AAAI 2020) compares its capMZRNN with "our implemented deep
transition GRU": per time step one GRU cell reads the input, then ``transition_depth``
transition cells (T-GRU) refine the state with the state alone as input, as its deep
transition MZU does ("the embedding input of t-MZU is a zero vector"); the last cell's
state is the step's output and the next step's state. It follows the deep transition
of Meng and Zhang's DTMT (2019) and of Liang et al. (2019), whose ABSA setup the paper
follows. Per transition cell (DTMT's T-GRU):

    r = sigmoid(W_r h + b_r),  z = sigmoid(W_z h + b_z)
    n = tanh(r * (W_n h + b_n))
    h' = (1 - z) * n + z * h

The first cell is torch's ``GRUCell`` (the same gate convention: z keeps the old state).
DTMT's linear-transformation-enhanced first cell (L-GRU) is not used: the MZU paper does
not name it. ``transition_depth: 0`` is a plain GRU (the paper's "No-DT" GRU of Table 4).

Options (conf/encoder/gru.yaml):
  hidden_size       200. State size per direction; output is 2*hidden_size when bidirectional.
  transition_depth  1 (the paper's default depth L). T-GRU cells per step after the first cell.
  bidirectional     true: forward and backward scans concatenated (each sequence's backward
                    scan starts at its own last token, as the paper's Bi-RNN encoder); false:
                    forward only, causal (language models).

The recurrence is a per-step Python loop (no fused kernel): the ABSA sentences it runs on are
short, and cuDNN has no deep-transition cell.
"""
from __future__ import annotations

import torch
from torch import nn

from rnnbench.encoders.base import Encoder, EncoderOutput, lengths_of, reverse_padded


class TransitionGRUCell(nn.Module):
    """T-GRU: a GRU cell whose only input is the state (see the module docstring)."""

    def __init__(self, hidden_size: int):
        super().__init__()
        self.gates = nn.Linear(hidden_size, 2 * hidden_size)
        self.candidate = nn.Linear(hidden_size, hidden_size)
        bound = hidden_size ** -0.5  # torch's GRUCell initialisation
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        r, z = torch.sigmoid(self.gates(h)).chunk(2, dim=-1)
        n = torch.tanh(r * self.candidate(h))
        return (1 - z) * n + z * h


class DeepTransitionScan(nn.Module):
    """One direction: a GRU cell then ``transition_depth`` T-GRU cells per time step."""

    def __init__(self, input_size: int, hidden_size: int, transition_depth: int):
        super().__init__()
        self.hidden_size = hidden_size
        self.first = nn.GRUCell(input_size, hidden_size)
        self.transitions = nn.ModuleList(TransitionGRUCell(hidden_size) for _ in range(transition_depth))

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """x [B, T, d_in], mask [B, T] -> states [B, T, d_h], zero at padding; a padded step
        keeps the state, so a sequence's last real state is its final one."""
        B, T, _ = x.shape
        h = x.new_zeros(B, self.hidden_size)
        states = []
        for t in range(T):
            h_t = self.first(x[:, t], h)
            for cell in self.transitions:
                h_t = cell(h_t)
            keep = mask[:, t].unsqueeze(-1)
            h = torch.where(keep, h_t, h)
            states.append(torch.where(keep, h_t, torch.zeros_like(h_t)))
        return torch.stack(states, dim=1) if states else x.new_zeros(B, 0, self.hidden_size)


class DeepTransitionGRU(Encoder):
    """(Bi)directional deep-transition GRU; see the module docstring for options."""

    def __init__(self, input_size: int, hidden_size: int = 200, transition_depth: int = 1, bidirectional: bool = True):
        if transition_depth < 0:
            raise ValueError(f"encoder.transition_depth must be >= 0, got {transition_depth}")
        super().__init__(input_size, hidden_size * (2 if bidirectional else 1))
        self.causal = not bidirectional
        self.forward_scan = DeepTransitionScan(input_size, hidden_size, transition_depth)
        self.backward_scan = DeepTransitionScan(input_size, hidden_size, transition_depth) if bidirectional else None

    def forward(self, x, mask, context=None) -> EncoderOutput:
        states = self.forward_scan(x, mask)
        if self.backward_scan is not None:
            lengths = lengths_of(mask)
            backward = self.backward_scan(reverse_padded(x, lengths), mask)
            states = torch.cat([states, reverse_padded(backward, lengths)], dim=-1)
        return EncoderOutput(states=states)
