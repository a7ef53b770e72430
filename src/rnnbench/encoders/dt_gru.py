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

The first cell is torch's ``GRUCell`` (the same gate convention: z keeps the old state):

    r = sigmoid(W_ir x + b_ir + W_hr h + b_hr),  z = sigmoid(W_iz x + b_iz + W_hz h + b_hz)
    n = tanh(W_in x + b_in + r * (W_hn h + b_hn))
    h' = (1 - z) * n + z * h

DTMT's linear-transformation-enhanced first cell (L-GRU) is not used: the MZU paper does
not name it. ``transition_depth: 0`` is a plain GRU (the paper's "No-DT" GRU of Table 4).

Options (conf/encoder/dt_gru.yaml):
  hidden_size        200. State size per direction; output is 2*hidden_size when bidirectional.
  transition_depth   1 (the paper's default depth L). T-GRU cells per step after the first cell.
  bidirectional      true: forward and backward scans concatenated (each sequence's backward
                     scan starts at its own last token, as the paper's Bi-RNN encoder); false:
                     forward only, causal (language models).
  gate_layer_norm    false (default: every run before the option) | true. The MZU paper's
                     footnote 3 (Table 4): "We also apply dropout and layer normalization to GRUs,
                     and build models with the same settings to our MZUs"; it does not say where.
                     true puts a layer norm on each gate's pre-activation, in every cell: r =
                     sigmoid(LN_r(a_r)), z = sigmoid(LN_z(a_z)), a_r and a_z the sums above, each
                     gate with its own norm (own gain and bias, over its hidden_size units), the
                     candidate left as it is. That is where the first author's public DTMT code
                     (its GRU cells with "LN") puts it, and where our MZU puts its default layer
                     norm (on M_g before the gate's sigmoid), so the two rows of MZU Table 6
                     normalise the same thing. The gates keep their biases (DTMT's have none: the
                     norm's bias replaces them); they are in the norm's input here.
  candidate_dropout  0.0 (default: every run before the option). Inverted dropout on the
                     candidate n of every cell (the first and each transition cell), a fresh
                     mask per step and cell, off in eval: where DTMT's code drops (its candidate,
                     in every cell) and where the MZU paper drops for its MZUs ("dropout to the
                     candidate activation"), so footnote 3's "same settings" are the MZU's
                     ``dropout`` here.

At the defaults the first cell is torch's ``GRUCell`` itself, as before the two options; with
either set it is computed from the same parameters by hand (the equations above), the input's
part for every step in one product before the loop.

Statistics (``EncoderOutput.stats``): ``candidate_cosine``, the MZU encoder's statistic for
this model's candidate: the first cell's n at every real token (before dropout), the mean cosine
over the ordered pairs of a sequence's distinct real tokens, averaged over the scans and over the
call's sequences of two tokens or more (the MZU module's docstring says how a run's value is
weighed). Computed in eval calls while ``eval_statistics`` is on (the training loop's dev passes
and one untimed pass over the test split), after the scan, in one batched product, without
gradients or random numbers: it changes no output and no recorded time.

The recurrence is a per-step Python loop (no fused kernel): the ABSA sentences it runs on are
short, and cuDNN has no deep-transition cell.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from rnnbench.encoders.base import Encoder, EncoderOutput, lengths_of, reverse_padded
from rnnbench.encoders.mzu import mean_pairwise_cosine


def _drop(n: torch.Tensor, p: float, training: bool) -> torch.Tensor:
    """Inverted dropout on a candidate (a fresh mask per call)."""
    return F.dropout(n, p, training) if p > 0.0 and training else n


class GateLayerNorm(nn.Module):
    """One layer norm per gate over a [..., 2 * H] pre-activation [a_r; a_z]."""

    def __init__(self, hidden_size: int):
        super().__init__()
        self.reset = nn.LayerNorm(hidden_size)
        self.update = nn.LayerNorm(hidden_size)

    def forward(self, a_r: torch.Tensor, a_z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.reset(a_r), self.update(a_z)


class TransitionGRUCell(nn.Module):
    """T-GRU: a GRU cell whose only input is the state (see the module docstring)."""

    def __init__(self, hidden_size: int, gate_layer_norm: bool = False, candidate_dropout: float = 0.0):
        super().__init__()
        self.gates = nn.Linear(hidden_size, 2 * hidden_size)
        self.candidate = nn.Linear(hidden_size, hidden_size)
        bound = hidden_size ** -0.5  # torch's GRUCell initialisation
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)
        self.gate_norm = GateLayerNorm(hidden_size) if gate_layer_norm else None
        self.candidate_dropout = candidate_dropout

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        if self.gate_norm is None:  # the expression of every run before the option, to the bit
            r, z = torch.sigmoid(self.gates(h)).chunk(2, dim=-1)
        else:
            r, z = (torch.sigmoid(a) for a in self.gate_norm(*self.gates(h).chunk(2, dim=-1)))
        n = _drop(torch.tanh(r * self.candidate(h)), self.candidate_dropout, self.training)
        return (1 - z) * n + z * h


class DeepTransitionScan(nn.Module):
    """One direction: a GRU cell then ``transition_depth`` T-GRU cells per time step."""

    def __init__(self, input_size: int, hidden_size: int, transition_depth: int, gate_layer_norm: bool = False,
                 candidate_dropout: float = 0.0):
        super().__init__()
        self.hidden_size = hidden_size
        self.first = nn.GRUCell(input_size, hidden_size)
        self.transitions = nn.ModuleList(
            TransitionGRUCell(hidden_size, gate_layer_norm, candidate_dropout) for _ in range(transition_depth)
        )
        # After every weight draw, so the defaults draw exactly what they drew before the options.
        self.first_gate_norm = GateLayerNorm(hidden_size) if gate_layer_norm else None
        self.candidate_dropout = candidate_dropout

    @property
    def by_hand(self) -> bool:
        """The first cell computed from GRUCell's parameters by hand (an option is set)."""
        return self.first_gate_norm is not None or self.candidate_dropout > 0.0

    def _first_gates(self, gi: torch.Tensor, gh: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(r, z) of the first cell from the input's and the state's parts [.., 3H] (r, z, n order)."""
        H = self.hidden_size
        a_r, a_z = gi[..., :H] + gh[..., :H], gi[..., H:2 * H] + gh[..., H:2 * H]
        if self.first_gate_norm is not None:
            a_r, a_z = self.first_gate_norm(a_r, a_z)
        return torch.sigmoid(a_r), torch.sigmoid(a_z)

    def _first_by_hand(self, gi_t: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        gh = F.linear(h, self.first.weight_hh, self.first.bias_hh)
        r, z = self._first_gates(gi_t, gh)
        H = self.hidden_size
        n = _drop(torch.tanh(gi_t[..., 2 * H:] + r * gh[..., 2 * H:]), self.candidate_dropout, self.training)
        return (1 - z) * n + z * h

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """x [B, T, d_in], mask [B, T] -> states [B, T, d_h], zero at padding; a padded step
        keeps the state, so a sequence's last real state is its final one."""
        B, T, _ = x.shape
        h = x.new_zeros(B, self.hidden_size)
        gi = F.linear(x, self.first.weight_ih, self.first.bias_ih) if self.by_hand else None
        states = []
        for t in range(T):
            h_t = self._first_by_hand(gi[:, t], h) if gi is not None else self.first(x[:, t], h)
            for cell in self.transitions:
                h_t = cell(h_t)
            keep = mask[:, t].unsqueeze(-1)
            h = torch.where(keep, h_t, h)
            states.append(torch.where(keep, h_t, torch.zeros_like(h_t)))
        return torch.stack(states, dim=1) if states else x.new_zeros(B, 0, self.hidden_size)

    @torch.no_grad()
    def candidates(self, x: torch.Tensor, states: torch.Tensor) -> torch.Tensor:
        """The first cell's candidate n at every position [B, T, d_h] (no dropout), from the scan's
        states (h_{t-1}: the state before t, zero at t = 0), all positions in one product."""
        B, T, H = states.shape
        h_prev = torch.cat([states.new_zeros(B, 1, H), states[:, :-1]], dim=1)
        gi = F.linear(x, self.first.weight_ih, self.first.bias_ih)
        gh = F.linear(h_prev, self.first.weight_hh, self.first.bias_hh)
        r, _ = self._first_gates(gi, gh)
        return torch.tanh(gi[..., 2 * H:] + r * gh[..., 2 * H:])


class DeepTransitionGRU(Encoder):
    """(Bi)directional deep-transition GRU; see the module docstring for options."""

    # True: eval calls add the ``candidate_cosine`` statistic (module docstring). The training loop
    # sets it for its dev passes and one untimed pass over the test split (training/loop.py,
    # ``eval_statistics``); off elsewhere, so no timed call pays for it. It changes no output: not an
    # option, not part of a run's identity.
    eval_statistics = False

    def __init__(self, input_size: int, hidden_size: int = 200, transition_depth: int = 1, bidirectional: bool = True,
                 gate_layer_norm: bool = False, candidate_dropout: float = 0.0):
        if transition_depth < 0:
            raise ValueError(f"encoder.transition_depth must be >= 0, got {transition_depth}")
        if not isinstance(gate_layer_norm, bool):
            raise ValueError(f"encoder.gate_layer_norm must be true or false, got {gate_layer_norm!r}")
        if not 0.0 <= candidate_dropout < 1.0:
            raise ValueError(f"encoder.candidate_dropout must be in [0, 1), got {candidate_dropout}")
        super().__init__(input_size, hidden_size * (2 if bidirectional else 1))
        self.causal = not bidirectional
        options = dict(gate_layer_norm=gate_layer_norm, candidate_dropout=candidate_dropout)
        self.forward_scan = DeepTransitionScan(input_size, hidden_size, transition_depth, **options)
        self.backward_scan = DeepTransitionScan(input_size, hidden_size, transition_depth, **options) if bidirectional else None

    def forward(self, x, mask, context=None) -> EncoderOutput:
        collect = self.eval_statistics and not self.training
        states = self.forward_scan(x, mask)
        stats = {}
        if collect:
            cosine, defined = mean_pairwise_cosine(self.forward_scan.candidates(x, states), mask)
        if self.backward_scan is not None:
            lengths = lengths_of(mask)
            backward_x = reverse_padded(x, lengths)
            backward = self.backward_scan(backward_x, mask)
            if collect:
                cosine = (cosine + mean_pairwise_cosine(self.backward_scan.candidates(backward_x, backward), mask)[0]) / 2
            states = torch.cat([states, reverse_padded(backward, lengths)], dim=-1)
        if collect and bool(defined.any()):
            stats["candidate_cosine"] = float(cosine[defined].mean())
        return EncoderOutput(states=states, stats=stats)
