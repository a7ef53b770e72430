"""encoders.base.combine_outputs: the one rule by which every head combines several encoder calls."""
from __future__ import annotations

import pytest
import torch

from rnnbench.compose import compose_config
from rnnbench.encoders.base import Encoder, EncoderOutput, combine_outputs
from rnnbench.encoders.build import build_encoder
from rnnbench.kernels import dispatch


def test_aux_losses_and_stats_are_averaged_over_calls():
    states = torch.zeros(2, 3, 4)
    one = EncoderOutput(states, torch.tensor(1.0), {"gate": 0.2})
    two = EncoderOutput(states, torch.tensor(3.0), {"gate": 0.6, "other": 5.0})
    both = combine_outputs([one, two])
    assert float(both.aux_loss) == 2.0
    assert both.stats == pytest.approx({"gate": 0.4, "other": 5.0})  # a stat averages over the calls that report it
    assert combine_outputs([EncoderOutput(states), EncoderOutput(states)]).aux_loss is None


def test_a_regulariser_weighs_the_same_whatever_the_number_of_calls():
    term = torch.tensor(0.7)
    for calls in (1, 2, 5):
        outputs = [EncoderOutput(torch.zeros(2, 3, 4), term) for _ in range(calls)]
        torch.testing.assert_close(combine_outputs(outputs).aux_loss, term)


def test_policy_log_probs_are_summed_and_penalties_averaged_per_example():
    states = torch.zeros(2, 3, 4)
    a = EncoderOutput(states, policy_log_prob=torch.tensor([-1.0, -2.0]), policy_penalty=torch.tensor([0.2, 0.0]))
    b = EncoderOutput(states, policy_log_prob=torch.tensor([-0.5, -4.0]), policy_penalty=torch.tensor([0.4, 0.1]))
    both = combine_outputs([a, b])
    torch.testing.assert_close(both.policy_log_prob, torch.tensor([-1.5, -6.0]))
    torch.testing.assert_close(both.policy_penalty, torch.tensor([0.3, 0.05]))
    none = combine_outputs([EncoderOutput(states), EncoderOutput(states)])
    assert none.policy_log_prob is None and none.policy_penalty is None


def test_states_and_mask_are_the_primary_calls():
    first = EncoderOutput(torch.zeros(2, 3, 4), mask=torch.ones(2, 3, dtype=torch.bool))
    last = EncoderOutput(torch.ones(2, 5, 4), mask=torch.zeros(2, 5, dtype=torch.bool))
    assert combine_outputs([first, last]).states is first.states
    assert combine_outputs([first, last]).mask is first.mask
    assert combine_outputs([first, last], primary=-1).states is last.states


def test_calls_not_aligned_with_the_examples_are_refused():
    states = torch.zeros(2, 3, 4)
    a = EncoderOutput(states, policy_log_prob=torch.zeros(2))
    b = EncoderOutput(states, policy_log_prob=torch.zeros(3))
    with pytest.raises(ValueError, match="aligned"):
        combine_outputs([a, b])
    with pytest.raises(ValueError, match="at least one"):
        combine_outputs([])


def test_the_base_encoder_has_no_policy_and_ignores_dev_scores():
    enc = Encoder(3, 3)
    out = EncoderOutput(torch.zeros(1, 2, 3), policy_log_prob=torch.zeros(1))
    assert enc.policy_loss(out, torch.zeros(1)) is None
    assert enc.on_dev_score(0.99) is False


@pytest.mark.parametrize("overrides, ran", [
    (["encoder=dcu_lstm"], {"gated_scan": "reference"}),  # the DCU layer inside DCU-LSTM gets it too
    (["encoder.residual=v2", "encoder.bidirectional=false"], {"residual_lstm": "reference"}),  # inside each layer
    (["encoder=rcrn"], {"multi_lstm": "reference", "gated_scan": "reference"}),
    (["encoder=fhe", "encoder.context_size=0"], {"fhe_upper": "reference"}),
    (["encoder=mzu_sat"], {"mzu_transition": "reference"}),
])
def test_use_kernels_reaches_every_kernel_call_of_the_encoder(overrides, ran, monkeypatch):
    monkeypatch.setattr(dispatch, "_default", "cpu")  # what the encoder must not read
    encoder = build_encoder(compose_config([*overrides, "encoder.hidden_size=4"]).encoder, 6).eval()
    encoder.use_kernels("reference")
    dispatch.reset_used()
    encoder(torch.randn(2, 3, 6), torch.tensor([[True, True, True], [True, True, False]]))
    assert dispatch.implementations_used() == ran
