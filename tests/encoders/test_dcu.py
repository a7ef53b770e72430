"""DCU fold/unfold on hand-computed blocks, and the three encoders against the paper's equations.

The reference computes each sequence alone, word by word: the blocks of word t
are the real words b*r .. min(b*r + r, n) - 1 with b = floor(t/r).
"""
from __future__ import annotations

import pytest
import torch
from torch import nn

from rnnbench.encoders.dcu import DCU, DCULSTM, SimDCU, fold, unfold

RANGES = (1, 2, 3, 10)  # 10 > T: one block holds the whole sequence
LENGTHS = [7, 3, 5]
INPUT, HIDDEN = 3, 6


def ragged_batch(input_size=INPUT, seed=0):
    g = torch.Generator().manual_seed(seed)
    T = max(LENGTHS)
    x = torch.randn(len(LENGTHS), T, input_size, generator=g)  # noise at padding: it must never be read
    mask = torch.arange(T).unsqueeze(0) < torch.tensor(LENGTHS).unsqueeze(1)
    return x, mask


def test_fold_and_unfold_hand_example():
    """T=5, lengths 5 and 3: with r=2 the blocks are {0,1}, {2,3}, {4}; padding adds nothing."""
    w = torch.tensor([[1.0, 2, 3, 4, 5], [10, 20, 30, 99, 99]]).unsqueeze(-1)
    mask = torch.tensor([[True] * 5, [True] * 3 + [False] * 2])
    expected_blocks = {
        1: [[1, 2, 3, 4, 5], [10, 20, 30, 0, 0]],
        2: [[3, 7, 5], [30, 30, 0]],
        4: [[10, 5], [60, 0]],
        25: [[15], [60]],
    }
    expected_unfolded = {
        1: [[1, 2, 3, 4, 5], [10, 20, 30, 0, 0]],
        2: [[3, 3, 7, 7, 5], [30, 30, 30, 30, 0]],
        4: [[10, 10, 10, 10, 5], [60, 60, 60, 60, 0]],
        25: [[15] * 5, [60] * 5],
    }
    for r, blocks in expected_blocks.items():
        folded = fold(w, mask, r)
        torch.testing.assert_close(folded.squeeze(-1), torch.tensor(blocks, dtype=torch.float))
        torch.testing.assert_close(
            unfold(folded, r, 5).squeeze(-1), torch.tensor(expected_unfolded[r], dtype=torch.float)
        )


def linear(layer: nn.Linear, v):
    return v @ layer.weight.T + layer.bias


def gates_reference(gates, w):
    """Eqs. (1)-(2) for one sequence w [n, D] of real words: g [n, gate width]."""
    n = w.shape[0]
    per_range = []
    for r, layer in zip(gates.ranges, gates.fold_layers):
        rows = []
        for t in range(n):
            start = (t // r) * r
            block = w[start : min(start + r, n)].sum(dim=0)
            rows.append(torch.relu(linear(layer, block)))
        per_range.append(torch.stack(rows))
    return torch.relu(linear(gates.f2, torch.relu(linear(gates.f1, torch.cat(per_range, dim=-1)))))


def dcu_cell_reference(enc: DCU, x):
    """Eqs. (5)-(6) for one sequence x [n, I], step by step: (h, pre-sigmoid gates)."""
    gates = gates_reference(enc.gates, x)
    g = torch.sigmoid(gates)
    z = torch.tanh(linear(enc.candidate, x))
    o = linear(enc.output_gate, x)
    if enc.output_gate_sigmoid:
        o = torch.sigmoid(o)

    def scan(g, z, o):
        c = z.new_zeros(z.shape[1])
        out = []
        for g_t, z_t, o_t in zip(g, z, o):
            c = g_t * c + (1 - g_t) * z_t
            out.append(o_t * c)
        return torch.stack(out)

    if not enc.bidirectional:
        return scan(g, z, o), gates
    d = enc.hidden_size
    fwd = scan(g[:, :d], z[:, :d], o[:, :d])
    bwd = scan(g[:, d:].flip(0), z[:, d:].flip(0), o[:, d:].flip(0)).flip(0)
    return torch.cat([fwd, bwd], dim=-1), gates


def spread(enc):
    """Re-draw every parameter from N(0, 0.5): at default init and these tiny widths the
    ReLUs of F1/F2 can all be off, leaving every gate at sigmoid(0) and the fold untested."""
    with torch.no_grad():
        for p in enc.parameters():
            p.normal_(0.0, 0.5)
    return enc.eval()


def check_against_reference(enc, x, mask, reference):
    """reference(one sequence) -> (states, pre-sigmoid gates g)."""
    with torch.no_grad():
        out = enc(x, mask).states
        assert out.shape == (*mask.shape, enc.output_size)
        assert torch.all(out[~mask] == 0)
        gates = []
        for i, n in enumerate(LENGTHS):
            expected, g = reference(x[i, :n])
            torch.testing.assert_close(out[i, :n], expected, rtol=1e-4, atol=1e-5)
            gates.append(g)
    open_fraction = (torch.cat(gates) > 0).float().mean()
    assert open_fraction > 0.2, "gates mostly at sigmoid(0): the check would be vacuous"


@pytest.mark.parametrize("input_size", [INPUT, HIDDEN])
def test_sim_dcu_matches_paper_equations(input_size):
    """Eqs. (3)-(4): y = s(g) w + (1 - s(g)) tanh(W_p w + b_p); w is x projected when widths differ."""
    torch.manual_seed(0)
    enc = spread(SimDCU(input_size, HIDDEN, ranges=RANGES))
    assert (enc.input_projection is None) == (input_size == HIDDEN)

    def reference(x):
        w = x if enc.input_projection is None else linear(enc.input_projection, x)
        gates = gates_reference(enc.gates, w)
        g = torch.sigmoid(gates)
        return g * w + (1 - g) * torch.tanh(linear(enc.candidate, w)), gates

    x, mask = ragged_batch(input_size)
    check_against_reference(enc, x, mask, reference)


@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("output_gate_sigmoid", [False, True])
def test_dcu_cell_matches_paper_equations(output_gate_sigmoid, bidirectional):
    torch.manual_seed(0)
    enc = spread(DCU(INPUT, HIDDEN, ranges=RANGES, output_gate_sigmoid=output_gate_sigmoid, bidirectional=bidirectional))
    assert enc.output_size == HIDDEN * (2 if bidirectional else 1)
    x, mask = ragged_batch()
    check_against_reference(enc, x, mask, lambda seq: dcu_cell_reference(enc, seq))


@pytest.mark.parametrize("dcu_bidirectional", [False, True])
def test_dcu_lstm_is_a_dcu_cell_over_a_bilstm(dcu_bidirectional):
    """The BiLSTM part is checked against nn.LSTM run on each sequence alone, unpadded."""
    torch.manual_seed(0)
    enc = spread(DCULSTM(INPUT, HIDDEN, ranges=RANGES, dcu_bidirectional=dcu_bidirectional))
    assert enc.output_size == 2 * HIDDEN

    def reference(x):
        states, _ = enc.bilstm.rnn(x)  # nn.LSTM on an unbatched [n, I] sequence
        return dcu_cell_reference(enc.dcu, states)

    x, mask = ragged_batch()
    check_against_reference(enc, x, mask, reference)


def test_paper_ranges_are_the_default_and_bad_ranges_are_rejected():
    assert DCU(INPUT, HIDDEN).gates.ranges == (1, 2, 4, 10, 25)
    with pytest.raises(ValueError, match="ranges"):
        SimDCU(INPUT, HIDDEN, ranges=[1, 0])
