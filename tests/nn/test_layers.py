"""Shared layers: the numerics of the copies they replace, and old checkpoints still load."""
from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from rnnbench.nn.highway import Highway
from rnnbench.nn.rnn import PackedBiLSTM
from rnnbench.nn.util import masked_mean, masked_softmax


def test_masked_softmax_zero_outside_and_on_empty_rows():
    scores = torch.tensor([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    mask = torch.tensor([[True, False, True], [False, False, False]])
    w = masked_softmax(scores, mask)
    torch.testing.assert_close(w[0], torch.softmax(torch.tensor([1.0, -float("inf"), 3.0]), -1))
    assert torch.all(w[1] == 0) and torch.all(masked_softmax(scores.t(), mask.t(), dim=0)[:, 1] == 0)


def test_masked_mean_ignores_padding():
    states = torch.tensor([[[1.0], [3.0], [100.0]]])
    assert masked_mean(states, torch.tensor([[True, True, False]])).item() == 2.0


@pytest.mark.parametrize("gate_bias", [None, -1.0, 2.0])
def test_highway_gate_bias_is_a_constructor_argument(gate_bias):
    """None keeps nn.Linear's initialisation (the multiple-choice head's); a number sets every
    gate bias (the span head's -1, the pair classifier's option). Parameters are made in the
    order of the heads' former copies: every transform, then every gate."""
    torch.manual_seed(0)
    layer = Highway(4, layers=2, gate_bias=gate_bias)
    torch.manual_seed(0)
    plain = [nn.Linear(4, 4) for _ in range(4)]
    for made, want in zip([*layer.transforms, *layer.gates], plain):
        torch.testing.assert_close(made.weight, want.weight)
    for gate, want in zip(layer.gates, plain[2:]):
        expected = want.bias if gate_bias is None else torch.full((4,), gate_bias)
        torch.testing.assert_close(gate.bias.detach(), expected.detach())


def test_highway_with_shut_gates_passes_the_input_through():
    x = torch.randn(3, 4)
    torch.testing.assert_close(Highway(4, layers=2, gate_bias=-100.0)(x), x)


def test_highway_loads_the_one_layer_copies_checkpoints():
    old = {"transform.weight": torch.ones(2, 2), "transform.bias": torch.zeros(2),
           "gate.weight": torch.eye(2), "gate.bias": torch.full((2,), -1.0)}
    layer = Highway(2)
    layer.load_state_dict(old)
    assert torch.equal(layer.gates[0].bias, torch.full((2,), -1.0))


def test_packed_bilstm_is_the_packed_nn_lstm_with_zero_padding():
    torch.manual_seed(0)
    rnn = PackedBiLSTM(3, 4)
    x, mask = torch.randn(2, 5, 3), torch.tensor([[True] * 5, [True, True, False, False, False]])
    packed = pack_padded_sequence(x, torch.tensor([5, 2]), batch_first=True, enforce_sorted=False)
    want, _ = pad_packed_sequence(nn.LSTM.forward(rnn, packed)[0], batch_first=True, total_length=5)
    got = rnn(x, mask)
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    assert torch.all(got[1, 2:] == 0) and rnn.output_size == 8


def test_packed_bilstm_loads_the_wrapped_copys_checkpoint():
    source = PackedBiLSTM(3, 4)
    wrapped = {f"rnn.{k}": v for k, v in source.state_dict().items()}
    target = PackedBiLSTM(3, 4)
    target.load_state_dict(wrapped)
    for k, v in source.state_dict().items():
        assert torch.equal(target.state_dict()[k], v)
