"""The deep-transition GRU (MZU paper's "GRU (With-DT)"), checked against a step loop written
here from the DTMT T-GRU equations, and with no transition cells against torch's GRU."""
from __future__ import annotations

import pytest
import torch

from rnnbench.encoders.base import lengths_of, reverse_padded
from rnnbench.encoders.dt_gru import DeepTransitionGRU

pytestmark = pytest.mark.usefixtures("one_thread")


def lengths_mask(lengths):
    return torch.arange(max(lengths)).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)


def gru_cell_by_hand(x, h, cell):
    """torch's GRUCell equations, written out: n = tanh(W_in x + b_in + r * (W_hn h + b_hn))."""
    wi, wh, bi, bh = cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh
    H = h.shape[-1]
    gi, gh = x @ wi.T + bi, h @ wh.T + bh
    r = torch.sigmoid(gi[:, :H] + gh[:, :H])
    z = torch.sigmoid(gi[:, H:2 * H] + gh[:, H:2 * H])
    n = torch.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])
    return (1 - z) * n + z * h


def t_gru_by_hand(h, cell):
    """DTMT's T-GRU: gates and candidate from the state alone, the reset gate inside the tanh."""
    H = h.shape[-1]
    g = h @ cell.gates.weight.T + cell.gates.bias
    r, z = torch.sigmoid(g[:, :H]), torch.sigmoid(g[:, H:])
    n = torch.tanh(r * (h @ cell.candidate.weight.T + cell.candidate.bias))
    return (1 - z) * n + z * h


def scan_by_hand(x, lengths, scan):
    """One direction, sequence by sequence (no padding at all)."""
    out = torch.zeros(x.shape[0], x.shape[1], scan.hidden_size, dtype=x.dtype)
    for b, n in enumerate(lengths):
        h = torch.zeros(1, scan.hidden_size, dtype=x.dtype)
        for t in range(n):
            h = gru_cell_by_hand(x[b:b + 1, t], h, scan.first)
            for cell in scan.transitions:
                h = t_gru_by_hand(h, cell)
            out[b, t] = h[0]
    return out


@pytest.mark.parametrize("depth", [0, 1, 2])
def test_each_direction_follows_the_equations_and_ignores_padding(depth):
    torch.manual_seed(0)
    enc = DeepTransitionGRU(5, hidden_size=6, transition_depth=depth).double()
    lengths = [4, 1, 3]
    mask = lengths_mask(lengths)
    x = torch.randn(3, 4, 5, dtype=torch.float64)
    x = torch.where(mask.unsqueeze(-1), x, torch.full_like(x, 9.0))  # padding must not leak in
    states = enc(x, mask).states
    forward = scan_by_hand(x, lengths, enc.forward_scan)
    reversed_x = reverse_padded(x, lengths_of(mask))
    backward = reverse_padded(scan_by_hand(reversed_x, lengths, enc.backward_scan), lengths_of(mask))
    torch.testing.assert_close(states, torch.cat([forward, backward], dim=-1))
    assert states.shape == (3, 4, 12) and not states[~mask].any()


def test_no_transition_cells_is_torchs_gru():
    torch.manual_seed(0)
    enc = DeepTransitionGRU(5, hidden_size=6, transition_depth=0, bidirectional=False)
    gru = torch.nn.GRU(5, 6, batch_first=True)
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(gru, f"{name}_l0").copy_(getattr(enc.forward_scan.first, name))
    x = torch.randn(2, 7, 5)
    torch.testing.assert_close(enc(x, torch.ones(2, 7, dtype=torch.bool)).states, gru(x)[0])
    assert enc.causal and enc.output_size == 6


def test_parameters_and_gradients():
    enc = DeepTransitionGRU(50, hidden_size=200, transition_depth=1)
    first = 3 * 200 * (50 + 200) + 2 * 3 * 200
    transition = 3 * 200 * 200 + 3 * 200
    assert sum(p.numel() for p in enc.parameters()) == 2 * (first + transition)
    x = torch.randn(2, 3, 50)
    enc(x, torch.ones(2, 3, dtype=torch.bool)).states.sum().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in enc.parameters())


def test_a_negative_depth_is_refused():
    with pytest.raises(ValueError, match="transition_depth"):
        DeepTransitionGRU(5, transition_depth=-1)
