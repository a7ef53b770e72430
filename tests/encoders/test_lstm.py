"""The BiLSTM family and the LSTM baseline paper's options."""
from __future__ import annotations

import pytest
import torch

from rnnbench.encoders.lstm import LSTMEncoder
from rnnbench.kernels import residual_lstm


def _batch(lengths, size=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    T = max(lengths)
    mask = torch.arange(T).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    return torch.randn(len(lengths), T, size, generator=g) * mask.unsqueeze(-1), mask


def test_forget_bias_starts_at_one():
    enc = LSTMEncoder(5, hidden_size=4, forget_bias=1.0)
    rnn = enc.layers[0].rnn
    H = 4
    assert torch.all(rnn.bias_ih_l0[H : 2 * H] == 1.0) and torch.all(rnn.bias_hh_l0[H : 2 * H] == 0.0)
    assert torch.all(rnn.bias_ih_l0_reverse[H : 2 * H] == 1.0)


def test_shared_weight_bidirectionality_halves_the_weights_and_reverses_correctly():
    shared = LSTMEncoder(6, hidden_size=5, shared_weights=True)
    separate = LSTMEncoder(6, hidden_size=5)
    assert shared.num_parameters() * 2 == separate.num_parameters()
    x, mask = _batch([4, 2])
    out = shared(x, mask).states
    # Backward half = the same LSTM run over each sequence reversed, reversed back.
    rnn = shared.layers[0].rnn
    for i, n in enumerate([4, 2]):
        rev, _ = rnn(x[i : i + 1, :n].flip(1))
        torch.testing.assert_close(out[i, :n, 5:], rev.flip(1)[0])


def test_res_v1_adds_each_layers_input_where_sizes_match():
    enc = LSTMEncoder(8, hidden_size=4, num_layers=2, residual="v1").eval()
    x, mask = _batch([3, 3], size=8)
    first = enc.layers[0](x, mask)  # 8 = 2*4: residual applies to layer 1 too
    second = enc.layers[1](x + first, mask)
    torch.testing.assert_close(enc(x, mask).states, x + first + second)


def test_res_v2_reference_matches_an_independent_lstm_cell_loop():
    torch.manual_seed(0)
    x, mask = _batch([5, 3], size=4)
    cell = torch.nn.LSTMCell(4, 4)
    out = residual_lstm.reference(x, x, mask, cell.weight_ih, cell.weight_hh, cell.bias_ih + cell.bias_hh)
    for i, n in enumerate([5, 3]):
        h = c = torch.zeros(1, 4)
        for t in range(n):
            _, c = cell(x[i : i + 1, t], (h, c))
            # nn.LSTMCell's h is o*tanh(c); Res-V2 feeds back o*tanh(c) + x_t
            gates = x[i : i + 1, t] @ cell.weight_ih.t() + h @ cell.weight_hh.t() + cell.bias_ih + cell.bias_hh
            o = torch.sigmoid(gates.chunk(4, dim=-1)[3])
            h = o * torch.tanh(c) + x[i : i + 1, t]
            torch.testing.assert_close(out[i, t], h[0])
        assert torch.all(out[i, n:] == 0)


def test_res_v2_encoder_runs_both_directions_and_learns():
    enc = LSTMEncoder(4, hidden_size=4, num_layers=2, residual="v2")
    x, mask = _batch([5, 2], size=4)
    out = enc(x, mask).states
    assert out.shape == (2, 5, 8) and torch.all(out[1, 2:] == 0)
    out.sum().backward()
    assert enc.layers[1].lateral_proj is not None  # 8 inputs -> 4 hidden: projected lateral term


@pytest.mark.parametrize("bad", [{"cell": "rnn"}, {"residual": "v3"}, {"cell": "gru", "residual": "v2"}])
def test_bad_options_are_refused(bad):
    with pytest.raises(ValueError):
        LSTMEncoder(4, hidden_size=4, **bad)


@pytest.mark.parametrize("cell", [torch.nn.LSTM, torch.nn.GRU])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_padded_run_equals_packed_run(cell, bidirectional):
    """The fast unpacked path gives what packing gives: outputs (zero at padding) and gradients."""
    from rnnbench.encoders.lstm import _run_packed, run_padded

    torch.manual_seed(0)
    rnn = cell(7, 5, batch_first=True, bidirectional=bidirectional)
    x = torch.randn(4, 9, 7, requires_grad=True)
    lengths = torch.tensor([9, 1, 4, 6])
    packed, padded = _run_packed(rnn, x, lengths), run_padded(rnn, x, lengths)
    torch.testing.assert_close(padded, packed, atol=1e-6, rtol=1e-5)
    assert (padded[1, 1:] == 0).all()
    params = [x, *rnn.parameters()]
    for a, b in zip(torch.autograd.grad(packed.pow(2).sum(), params), torch.autograd.grad(padded.pow(2).sum(), params)):
        torch.testing.assert_close(b, a, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("input_size", [4, 6], ids=["input-equals-hidden", "projected-first-layer"])
def test_res_v2_sends_the_recurrent_h_up_unchanged(input_size):
    """Res-V2 (LSTM baseline paper): h_t = o_t * tanh(c_t) + x_t, and the same h_t goes to the
    next layer as to the next step: the encoder adds no second copy of the layer input."""
    torch.manual_seed(0)
    enc = LSTMEncoder(input_size, hidden_size=4, num_layers=2, bidirectional=False, residual="v2").eval()
    x, mask = _batch([5, 3], size=input_size)
    h = x
    for layer in enc.layers:
        rnn = layer.rnn
        lateral = h if layer.lateral_proj is None else layer.lateral_proj(h)
        h = residual_lstm.reference(h, lateral, mask, rnn.weight_ih_l0, rnn.weight_hh_l0, rnn.bias_ih_l0 + rnn.bias_hh_l0)
    assert enc.layers[1].lateral_proj is None  # 4 -> 4: the lateral term is x_t itself
    torch.testing.assert_close(enc(x, mask).states, h)


def test_res_v2_bidirectional_layers_stack_without_the_v1_sum():
    """Bidirectional Res-V2 with projected lateral terms: each layer's output (which holds its
    residual already) is the next layer's input as it is."""
    enc = LSTMEncoder(6, hidden_size=4, num_layers=2, residual="v2").eval()
    x, mask = _batch([5, 3], size=6)
    expected = enc.layers[1](enc.layers[0](x, mask), mask)
    torch.testing.assert_close(enc(x, mask).states, expected)


@pytest.mark.parametrize("residual", ["none", "v2"])
def test_directions_meeting_at_the_top_run_the_whole_stack_each_way(residual):
    """The baseline paper's Bi-2-LSTM: each direction runs both layers; with shared weights the
    model has the one-direction 2-LSTM's parameters (its Table 1: 8.650M for both)."""
    torch.manual_seed(0)
    top = LSTMEncoder(6, hidden_size=6, num_layers=2, shared_weights=True, directions_meet="top", residual=residual).eval()
    one_way = LSTMEncoder(6, hidden_size=6, num_layers=2, bidirectional=False, residual=residual).eval()
    assert top.num_parameters() == one_way.num_parameters()
    one_way.load_state_dict(top.state_dict())
    x, mask = _batch([5, 3, 1])
    out = top(x, mask).states
    assert out.shape == (3, 5, 12)
    for i, n in enumerate([5, 3, 1]):
        seq, m = x[i : i + 1, :n], mask[i : i + 1, :n]
        torch.testing.assert_close(out[i, :n, :6], one_way(seq, m).states[0])
        torch.testing.assert_close(out[i, :n, 6:], one_way(seq.flip(1), m).states[0].flip(0))
    assert torch.all(out[1, 3:] == 0) and torch.all(out[2, 1:] == 0)
    # every_layer (the default) feeds layer 2 both directions: more parameters
    assert LSTMEncoder(6, hidden_size=6, num_layers=2, shared_weights=True).num_parameters() > top.num_parameters()
    # separate weights per direction: twice the one-direction stack
    assert LSTMEncoder(6, hidden_size=6, num_layers=2, directions_meet="top").num_parameters() == 2 * one_way.num_parameters()


def test_directions_meet_refuses_an_unknown_value():
    with pytest.raises(ValueError, match="directions_meet"):
        LSTMEncoder(6, hidden_size=4, directions_meet="middle")


@pytest.mark.parametrize("bidirectional", [False, True])
def test_res_v2_states_have_the_same_scale_in_training_and_evaluation(bidirectional):
    """Res-V2's lateral term adds the layer's clean input (as Res-V1 does), not the
    dropped-out input the recurrence reads: with inverted dropout at 0.7 the dropped input is
    scaled by 1/0.3, and adding it made the top final state's norm about 3x its eval value."""
    torch.manual_seed(0)
    x, mask = _batch([12, 9, 12, 7], size=16, seed=3)
    enc = LSTMEncoder(16, hidden_size=16, num_layers=2, bidirectional=bidirectional, residual="v2",
                      dropout=0.7, shared_weights=bidirectional, directions_meet="top" if bidirectional else "every_layer")
    enc.eval()
    with torch.no_grad():
        eval_norm = enc(x, mask).states.norm(dim=-1)[mask].mean()
        enc.train()
        train_norm = torch.stack([enc(x, mask).states.norm(dim=-1)[mask].mean() for _ in range(20)]).mean()
    assert 0.67 < (train_norm / eval_norm).item() < 1.5, (train_norm.item(), eval_norm.item())


def test_res_v2_lateral_term_is_the_clean_input():
    """The residual argument handed to the kernel is the layer's input before dropout."""
    torch.manual_seed(0)
    x, mask = _batch([5, 3], size=8)
    enc = LSTMEncoder(8, hidden_size=8, num_layers=1, bidirectional=False, residual="v2", dropout=0.5)
    enc.train()
    seen = []
    import rnnbench.encoders.lstm as lstm_module
    real = lstm_module.residual_lstm
    lstm_module.residual_lstm = lambda xin, r, *a, **k: (seen.append((xin, r)), real(xin, r, *a, **k))[1]
    try:
        enc(x, mask)
    finally:
        lstm_module.residual_lstm = real
    (xin, r), = seen
    assert torch.equal(r, x) and not torch.equal(xin, x)
