"""RCRN against a step-by-step computation of the paper's equations, and its parameter count.

The reference runs each sequence alone (so padding invariance is checked too),
with its own LSTM/GRU steps over the module's weights and its own listener loop.
"""
from __future__ import annotations

import pytest
import torch

from rnnbench.encoders.lstm import LSTMEncoder
from rnnbench.encoders.rcrn import RCRN

INPUT, HIDDEN = 3, 4
LENGTHS = [5, 2, 4]


def lstm_steps(x, w_ih, w_hh, b_ih, b_hh):
    """Eqs. (1)-(6) of the paper (PyTorch's gate order i, f, g, o) over one sequence [n, I]."""
    h = x.new_zeros(w_hh.shape[1])
    c = x.new_zeros(w_hh.shape[1])
    out = []
    for x_t in x:
        i, f, g, o = (w_ih @ x_t + b_ih + w_hh @ h + b_hh).chunk(4)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        out.append(h)
    return torch.stack(out)


def gru_steps(x, w_ih, w_hh, b_ih, b_hh):
    """The GRU step (PyTorch's gate order r, z, n) over one sequence [n, I]."""
    h = x.new_zeros(w_hh.shape[1])
    out = []
    for x_t in x:
        ir, iz, in_ = (w_ih @ x_t + b_ih).chunk(3)
        hr, hz, hn = (w_hh @ h + b_hh).chunk(3)
        r, z = torch.sigmoid(ir + hr), torch.sigmoid(iz + hz)
        h = (1 - z) * torch.tanh(in_ + r * hn) + z * h
        out.append(h)
    return torch.stack(out)


def birnn_steps(layer, x, cell):
    """Forward and backward passes of one BiRNN layer, concatenated: [n, 2H]."""
    steps = lstm_steps if cell == "lstm" else gru_steps
    rnn = layer.rnn
    fwd = steps(x, rnn.weight_ih_l0, rnn.weight_hh_l0, rnn.bias_ih_l0, rnn.bias_hh_l0)
    bwd = steps(
        x.flip(0), rnn.weight_ih_l0_reverse, rnn.weight_hh_l0_reverse, rnn.bias_ih_l0_reverse, rnn.bias_hh_l0_reverse
    ).flip(0)
    return torch.cat([fwd, bwd], dim=-1)


def listener_steps(h1, h2, h3):
    """Eqs. (15)-(16) forward in time: c4_t = s(h1) c4_{t-1} + (1 - s(h1)) h3, h4 = s(h2) c4."""
    c = h3.new_zeros(h3.shape[1])
    out = []
    for f, o, x in zip(torch.sigmoid(h1), torch.sigmoid(h2), h3):
        c = f * c + (1 - f) * x
        out.append(o * c)
    return torch.stack(out)


def rcrn_reference(enc: RCRN, x, cell, listener_direction):
    h1 = birnn_steps(enc.forget_controller, x, cell)
    h2 = birnn_steps(enc.output_controller, x, cell)
    h3 = birnn_steps(enc.listener_base, x, cell)
    if listener_direction == "forward":
        return listener_steps(h1, h2, h3)
    d = HIDDEN
    fwd = listener_steps(h1[:, :d], h2[:, :d], h3[:, :d])
    bwd = listener_steps(h1[:, d:].flip(0), h2[:, d:].flip(0), h3[:, d:].flip(0)).flip(0)
    return torch.cat([fwd, bwd], dim=-1)


@pytest.mark.parametrize(
    "cell, listener_direction", [("lstm", "forward"), ("lstm", "bidirectional"), ("gru", "forward"), ("gru", "bidirectional")]
)
def test_rcrn_matches_paper_equations(cell, listener_direction):
    torch.manual_seed(0)
    enc = RCRN(INPUT, HIDDEN, cell=cell, listener_direction=listener_direction).eval()
    T = max(LENGTHS)
    x = torch.randn(len(LENGTHS), T, INPUT)  # padded positions hold noise: they must never be read
    mask = torch.arange(T).unsqueeze(0) < torch.tensor(LENGTHS).unsqueeze(1)
    with torch.no_grad():
        out = enc(x, mask).states
        assert out.shape == (len(LENGTHS), T, 2 * HIDDEN)
        assert torch.all(out[~mask] == 0)
        for i, n in enumerate(LENGTHS):
            expected = rcrn_reference(enc, x[i, :n], cell, listener_direction)
            torch.testing.assert_close(out[i, :n], expected, rtol=1e-4, atol=1e-5)


def one_layer_bilstm_parameters(input_size: int, hidden: int) -> int:
    return LSTMEncoder(input_size, hidden, num_layers=1).num_parameters()


@pytest.mark.parametrize("input_size", [50, 300, 400])
def test_parameters_are_three_birnns_and_match_3l_bilstm_up_to_layer_input_widths(input_size):
    """The paper: "a single RCRN model is equivalent to a stacked BiLSTM of 3 layers".

    RCRN is exactly three one-layer BiLSTMs on the input. A 3L-BiLSTM's layers 2 and 3
    read 2*hidden channels instead of input_size, so the two are equal exactly when
    input_size == 2*hidden (400 here) and differ by 2 layers x 2 directions x 4 gates x
    hidden x (2*hidden - input_size) otherwise: RCRN is 52% of it with 50-d input and
    88% with the paper's 300-d GloVe.
    """
    hidden = 200
    rcrn = RCRN(input_size, hidden).num_parameters()
    stacked = LSTMEncoder(input_size, hidden, num_layers=3).num_parameters()
    assert rcrn == 3 * one_layer_bilstm_parameters(input_size, hidden)
    assert stacked - rcrn == 2 * 2 * 4 * hidden * (2 * hidden - input_size)
    if input_size == 2 * hidden:
        assert rcrn == stacked


def test_gru_variant_has_three_quarters_of_the_lstm_parameters():
    assert 4 * RCRN(50, 200, cell="gru").num_parameters() == 3 * RCRN(50, 200).num_parameters()


def test_unknown_options_are_rejected():
    with pytest.raises(ValueError, match="listener_direction"):
        RCRN(INPUT, HIDDEN, listener_direction="backward")
    with pytest.raises(ValueError, match="cell"):
        RCRN(INPUT, HIDDEN, cell="rnn")


@pytest.mark.parametrize("listener_direction", ["forward", "bidirectional"])
def test_fused_birnns_match_three_packed_lstms_with_gradients(listener_direction):
    """fused=true (kernels.multi_lstm) and fused=false (three packed nn.LSTM) are the same model."""
    torch.manual_seed(0)
    fused = RCRN(INPUT, HIDDEN, listener_direction=listener_direction)
    packed = RCRN(INPUT, HIDDEN, listener_direction=listener_direction, fused=False)
    packed.load_state_dict(fused.state_dict())
    lengths = [7, 2, 5, 1]
    T = max(lengths)
    mask = torch.arange(T).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    x = torch.randn(len(lengths), T, INPUT)  # noise in the padding
    grad = torch.randn(len(lengths), T, 2 * HIDDEN)
    results = []
    for enc in (fused, packed):
        xi = x.clone().requires_grad_()
        out = enc(xi, mask).states
        out.backward(grad)
        results.append((out, xi.grad, {n: p.grad for n, p in enc.named_parameters()}))
    (out_f, dx_f, dp_f), (out_p, dx_p, dp_p) = results
    torch.testing.assert_close(out_f, out_p, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(dx_f, dx_p, rtol=1e-5, atol=1e-6)
    assert dp_f.keys() == dp_p.keys()
    for name in dp_f:
        torch.testing.assert_close(dp_f[name], dp_p[name], rtol=1e-5, atol=1e-6, msg=lambda m, name=name: f"{name}: {m}")
