"""PairClassifierHead (RCRN entailment model): input highway, shared encoder, comparison features, every encoder."""
from __future__ import annotations

import pytest
import torch
from torch import nn

from rnnbench.compose import compose_config
from rnnbench.data.batching import collate
from rnnbench.encoders.build import build_encoder, known_encoders
from rnnbench.heads.pair_classifier import PairClassifierHead
from rnnbench.nn.highway import Highway
from rnnbench.training.model import TaskModel
from tests.helpers import assert_scores_independent_of_batching, parameters_without_gradient

EMB, VOCAB, CLASSES = 12, 40, 3
FIELDS = ["premise", "hypothesis"]


def make_encoder(name: str, input_size: int, hidden: int = 8):
    cfg = compose_config([f"encoder={name}"]).encoder
    if "hidden_size" in cfg:
        cfg.hidden_size = hidden
    if "context_size" in cfg:
        cfg.context_size = 0  # this head passes no context: FHE gates are unconditional
    torch.manual_seed(0)
    return build_encoder(cfg, input_size)


def make_model(encoder_name: str = "bilstm", **head_options) -> TaskModel:
    torch.manual_seed(0)
    embedding = nn.Embedding(VOCAB, EMB, padding_idx=0)
    options = {"highway_dim": 10, "compare_dim": 16, **head_options}
    encoder = make_encoder(encoder_name, PairClassifierHead.encoder_input_size(EMB, **options))
    head = PairClassifierHead(EMB, encoder.output_size, CLASSES, **options)
    return TaskModel(embedding, encoder, head)


def batch_of(examples: list[tuple[list[int], list[int], int]]) -> dict:
    records = [{"id": str(i), "premise": p, "hypothesis": h, "label": y} for i, (p, h, y) in enumerate(examples)]
    return collate(records, FIELDS)


SHORT = ([3, 4, 5], [6, 7], 1)
LONG = ([8, 9, 10, 11, 12, 13, 14], [15, 16, 17, 18, 19], 2)
MIDDLE = ([20, 21, 22, 23], [24, 25, 26, 27, 28, 29, 30, 31], 0)


def test_input_size_is_the_highway_width():
    assert PairClassifierHead.encoder_input_size(50) == 300
    assert PairClassifierHead.encoder_input_size(50, highway_dim=64) == 64
    assert PairClassifierHead.encoder_input_size(50, input_highway_layers=0) == 50
    head = PairClassifierHead(300, 20, 3)  # GloVe 300d: no projection before the highway layers
    assert isinstance(head.input_layer[0], nn.Identity) and len(head.input_layer[1].gates) == 2
    head = PairClassifierHead(50, 20, 3)
    assert head.input_layer[0].weight.shape == (300, 50)


def test_shapes_and_loss():
    model = make_model().eval()
    out, loss = model(batch_of([SHORT, LONG, MIDDLE]))
    assert out.logits.shape == (3, CLASSES) and out.log_likelihood.shape == (3,)
    expected = nn.functional.cross_entropy(out.logits, torch.tensor([1, 2, 0]))
    torch.testing.assert_close(out.loss, expected)
    assert model.head.decode(out, None) == out.logits.argmax(-1).tolist()


def test_comparison_features_without_projection():
    model = make_model(compare_dim=None)
    width = 4 * 2 * model.encoder.output_size  # [s1, s2, s1*s2, s1-s2], each max and mean pooled
    assert isinstance(model.head.compare[0], nn.Identity) and model.head.compare[1].gates[0].in_features == width
    assert model(batch_of([SHORT, LONG]))[0].logits.shape == (2, CLASSES)


@pytest.mark.parametrize("name", known_encoders())
def test_prediction_does_not_depend_on_batch_padding(name):
    """An example scores the same alone as batched with longer premises and hypotheses."""
    model = make_model(name).eval()
    assert_scores_independent_of_batching(model, batch_of, [SHORT, LONG, MIDDLE])


def test_swapping_the_sentences_changes_the_features():
    """s1 - s2 makes the head order-aware: premise and hypothesis are not interchangeable."""
    model = make_model().eval()
    with torch.no_grad():
        a = model(batch_of([SHORT]))[0].logits
        b = model(batch_of([(SHORT[1], SHORT[0], SHORT[2])]))[0].logits
    assert not torch.allclose(a, b)


def test_gradients_reach_every_parameter():
    model = make_model().train()
    _, loss = model(batch_of([SHORT, LONG, MIDDLE]))
    loss.backward()
    assert not parameters_without_gradient(model)
    assert torch.all(model.embedding.weight.grad[0] == 0)  # padding row


def test_fhe_policy_sees_both_sentences():
    """The combined output sums FHE's gate log-probabilities of both calls per example; its REINFORCE loss trains the gates."""
    model = make_model("fhe").train()
    calls = []
    model.encoder.register_forward_hook(lambda m, args, out: calls.append(out.policy_log_prob))
    out, loss = model(batch_of([SHORT, LONG, MIDDLE]))
    assert len(calls) == 2
    torch.testing.assert_close(out.encoder_output.policy_log_prob, calls[0] + calls[1])
    loss.backward()
    assert any(p.grad is not None and torch.any(p.grad != 0) for p in model.encoder.gate.parameters())
    assert out.encoder_output.aux_loss is not None and "gate_openness" in out.encoder_output.stats


def test_highway_carries_or_transforms():
    x = torch.tensor([[1.0, -2.0, 3.0]])
    carry = Highway(3, 2, gate_bias=-100.0)  # gates shut: the input passes through
    torch.testing.assert_close(carry(x), x)
    transform = Highway(3, 1, gate_bias=100.0)  # gates open: relu(W x + b)
    with torch.no_grad():
        transform.transforms[0].weight.copy_(torch.eye(3))
        transform.transforms[0].bias.zero_()
    torch.testing.assert_close(transform(x), torch.tensor([[1.0, 0.0, 3.0]]))
